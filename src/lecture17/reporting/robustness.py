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
import pandas as pd

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


def robustness_table(tables: dict, recorded: list[str], where: dict | None = None):
    """The recorded demos' tables as one (05.3's two models live in 07.6 and 07.7), restricted
    to `where`'s labels (e.g. seq_len 16, the protocol's), whose columns are then dropped."""
    parts = []
    for demo in recorded:
        rows = tables[demo]
        for label, value in (where or {}).items():
            if label not in rows.columns:
                raise ValueError(f"{demo} has no label {label!r} (its labels: {list(rows)})")
            rows = rows[rows[label].astype(str) == str(value)].drop(columns=label)
        parts.append(rows)
    table = pd.concat(parts, ignore_index=True)
    labels = [c for c in table.columns if table[c].dtype == object]
    table[labels] = table[labels].fillna("")  # a label one demo has and another lacks
    table.attrs = dict(tables[recorded[0]].attrs)
    return table


def by_seed(
    outcomes,
    tables: dict,
    settings: dict,
    protocol: str,
    recorded: str | list[str],
    html: bool,
    where: dict | None = None,
):
    """Markdown: each seeded claim of `protocol`, its verdict there, and on the seeds of the
    `recorded` demo(s) (at `where`'s labels). A seed without the rows a claim reads (a model one
    recorded demo ran on fewer seeds) is not counted for that claim: each cell says k/N."""
    recorded = [recorded] if isinstance(recorded, str) else list(recorded)
    table = robustness_table(tables, recorded, where)
    seeds = table_seeds(table)
    lines = [
        _row(["编号 id", "讲义 lecture", "协议的种子 protocol", "更多种子 more seeds（k/N）"]),
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
        statuses = [s for s in statuses if s != "missing"]  # seeds that lack this claim's rows
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


def across_readings(outcomes, tables, settings, demo: str, by: list[str], names: dict, html: bool):
    """Markdown: the rate claims on `demo` (those whose `demo` selectors fix every label in
    `by`) judged again under each reading of the demo's grid — each `by` combination its table
    has — beside the reading the entry names (07.5's Luong readings). The claim, its pass rule
    and the other demos it compares with stay as pre-registered; only the reading changes."""
    table = tables[demo]
    readings = [dict(zip(by, r, strict=True)) for r in table[by].drop_duplicates().to_numpy()]

    def own(selector, entry):
        return str(selector.get("demo", entry["demo"])) == demo

    def reading_of(entry):
        sel = next(s for s in ledger_mod.selectors(entry).values() if own(s, entry))
        return {b: str(sel["where"][b]) for b in by}

    def read_as(entry, reading):
        entry = {**entry, "values": dict(ledger_mod.selectors(entry))}
        entry.pop("value", None)
        for name, sel in entry["values"].items():
            if own(sel, entry):
                entry["values"][name] = {**sel, "where": {**sel["where"], **reading}}
        return entry

    claims = [
        o
        for o in outcomes
        if o.entry.get("demo") == demo
        and all(
            set(by) <= set(s.get("where", {}))
            for s in ledger_mod.selectors(o.entry).values()
            if own(s, o.entry)
        )
    ]
    title = ["，".join(names.get(str(r[b]), str(r[b])) for b in by) for r in readings]
    lines = [_row(["编号 id", *title]), "|" + "---|" * (len(title) + 1)]
    changed = []
    for o in claims:
        main = reading_of(o.entry)
        cells = [claims_mod.claim_ref(o, html)]
        for reading, text in zip(readings, title, strict=True):
            if reading == main:
                status = claims_mod.verdict(o)
                cells.append(f"{_status_text(status)}（主读法 main）")
                continue
            status = ledger_mod.evaluate(read_as(o.entry, reading), tables, settings).status
            cells.append(_status_text(status))
            if status != o.status:
                changed.append((o, text))
        lines.append(_row(cells))
    text = "\n".join(lines)
    if changed:
        named = "、".join(f"{claims_mod.claim_ref(o, html)}（{r}）" for o, r in changed)
        return text + f"\n\n换一种读法结论就变的 a reading changes the verdict：{named}。"
    return text + "\n\n换任何一种读法，结论都不变 no reading changes a verdict。"


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
