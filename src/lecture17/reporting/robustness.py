"""The protocol's claims judged again: seed by seed on the robustness seeds, and under each
reading of a set-up (the recorded demos 07.x, beside the lecture's protocol).

- by_seed: a claim about one run's numbers (its values are seed means: no `stat`, no other
  demo) is judged on each robustness seed alone (aggregate.seed_table) with the protocol's own
  checks: "holds in k of N seeds", with the 95% Wilson interval (rates). A claim about the
  seeds' spread (min, max, std) is a statement about a distribution: it is left to the rates
  of 07_robustness.yaml and named as such.
- by_reading: the same claims on each reading of a sensitivity demo (07.2's `reading`), one
  verdict per cell, beside the protocol's: the pre-registered sensitivity table.
- rates: how many seeds of each group fall below a threshold (e.g. 07.5's failed seeds).

Tables are Markdown (the page converts them); claim ids link to their cards in HTML.
"""

import numpy as np

from lecture17.pipeline.aggregate import per_seed, seed_table, select, table_seeds
from lecture17.reporting import claims as claims_mod
from lecture17.reporting import ledger as ledger_mod
from lecture17.reporting.rates import rate_text

JUDGED = ("holds", "same", "differs", "unresolved")


def per_seed_claim(entry: dict) -> bool:
    """Whether a claim reads one run's numbers only: seed means of its own demo's table."""
    selectors = ledger_mod.selectors(entry)
    return entry["class"] == "seeded" and all(
        "stat" not in s and s.get("demo", entry["demo"]) == entry["demo"]
        for s in selectors.values()
    )


def _status_text(status: str) -> str:
    return f"{claims_mod.SYMBOL[status]} {claims_mod.LABELS[status]}"


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def by_seed(outcomes, tables: dict, settings: dict, protocol: str, recorded: str, html: bool):
    """Markdown: each seeded claim of `protocol`, its verdict there, and on `recorded`'s seeds."""
    table = tables[recorded]
    seeds = table_seeds(table)
    lines = [
        _row(
            [
                "编号 id",
                "讲义 lecture",
                "协议的种子 protocol",
                f"更多种子 {len(seeds)} seeds",
            ]
        ),
        "|---|---|---|---|",
    ]
    spread = []
    for o in outcomes:
        if o.entry.get("demo") != protocol or o.entry["class"] != "seeded":
            continue
        if not per_seed_claim(o.entry):
            spread.append(claims_mod.claim_ref(o, html))
            continue
        statuses = [_judge(o.entry, protocol, seed_table(table, s), settings) for s in seeds]
        judged = [s for s in statuses if s != "unresolved"]
        holds = sum(s in ("holds", "same") for s in judged)
        cell = rate_text(holds, len(judged)) if judged else "—"
        if undecided := len(statuses) - len(judged):
            cell += f"；{undecided} 个种子无法分辨 not resolvable"
        lines.append(
            _row(
                [
                    claims_mod.claim_ref(o, html),
                    str(o.entry["lecture"]),
                    _status_text(claims_mod.verdict(o)),
                    "成立 holds " + cell,
                ]
            )
        )
    text = "\n".join(lines)
    if spread:
        text += (
            f"\n\n关于种子之间的波动的说法 claims about the seeds' spread（{'、'.join(spread)}）"
            "是关于一个分布的，逐个种子判断没有意义 are about a distribution, not judged per seed。"
        )
    return text


def _judge(entry: dict, protocol: str, table, settings) -> str:
    """A claim's status on one table; a seed that lacks rows the checks pair up (a cell with
    no step count) cannot be judged: not resolvable."""
    try:
        return ledger_mod.evaluate(entry, {protocol: table}, settings).status
    except (ValueError, IndexError):
        return "unresolved"


def by_reading(outcomes, tables, settings, protocol: str, readings_demo: str, html: bool):
    """Markdown: the pre-registered sensitivity table, claim × reading → verdict."""
    table = tables[readings_demo]
    readings = list(dict.fromkeys(table["reading"]))
    header = ["编号 id", "主读法 main（02.3）", *readings]
    lines = [_row(header), "|" + "---|" * len(header)]
    changed = []
    for o in outcomes:
        if o.entry.get("demo") != protocol or o.entry["class"] != "seeded":
            continue
        cells = [claims_mod.claim_ref(o, html), _status_text(claims_mod.verdict(o))]
        for reading in readings:
            rows = select(table, reading=reading).drop(columns="reading").reset_index(drop=True)
            rows.attrs = dict(table.attrs)
            status = _judge(o.entry, protocol, rows, settings)
            cells.append(_status_text(status))
            if status != o.status:
                changed.append((o, reading))
        lines.append(_row(cells))
    text = "\n".join(lines)
    if changed:
        named = "、".join(f"{claims_mod.claim_ref(o, html)}（{r}）" for o, r in changed)
        text += f"\n\n换一种读法结论就变的 a reading changes the verdict：{named}。"
    else:
        text += "\n\n换任何一种读法，结论都不变 no reading changes a verdict。"
    return text


def rates(table, quantity: str, below: float, by: list[str], labels: dict) -> str:
    """Markdown: per group of `by`, the seeds whose `quantity` is below `below`, k/N."""
    rows = select(table, quantity)
    header = [*(labels.get(b, b) for b in by), f"{labels.get(quantity, quantity)} < {below}"]
    lines = [_row(header), "|" + "---|" * len(header)]
    for _, row in rows.iterrows():
        values = np.array(list(per_seed(row["seeds"]).values()))
        k = int(np.sum(values < below))
        lines.append(
            _row([*(labels.get(str(row[b]), str(row[b])) for b in by), rate_text(k, len(values))])
        )
    return "\n".join(lines)
