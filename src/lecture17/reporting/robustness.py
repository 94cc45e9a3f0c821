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

Tables are Markdown (views.markdown_table; the page converts them); claim ids link to their
cards in HTML.
"""

import numpy as np

from lecture17.pipeline.aggregate import (
    per_seed,
    seed_table,
    select,
    table_seeds,
)
from lecture17.reporting import claims as claims_mod
from lecture17.reporting import ledger as ledger_mod
from lecture17.reporting.ledger import robustness_table  # noqa: F401 - its home is the ledger
from lecture17.reporting.rates import rate_text
from lecture17.reporting.views import markdown_table

DECIDED = ("holds", "same", "differs")  # a verdict, not "not resolvable" or "not built"
NOT_BUILT = ("missing", "gpu")  # a table (or rows) this build does not have


def per_seed_claim(entry: dict) -> bool:
    """Whether a claim reads one run's numbers only: seed means of its own demo's table."""
    selectors = ledger_mod.selectors(entry)
    return entry["class"] == "seeded" and all(
        "stat" not in s and s.get("demo", entry["demo"]) == entry["demo"]
        for s in selectors.values()
    )


def _status_text(status: str) -> str:
    return f"{claims_mod.SYMBOL[status]} {claims_mod.LABELS[status]}"


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
    header = ["编号 id", "讲义 lecture", "协议的种子 protocol", "更多种子 more seeds（k/N）"]
    lines, spread = [], []
    for o in outcomes:
        if o.entry.get("demo") != protocol or o.entry["class"] != "seeded":
            continue
        if not per_seed_claim(o.entry):
            spread.append(claims_mod.claim_ref(o, html))
            continue
        statuses = [_judge(o.entry, protocol, seed_table(table, s), settings) for s in seeds]
        statuses = [s for s in statuses if s not in NOT_BUILT]  # seeds without this claim's rows
        judged = [s for s in statuses if s != "unresolved"]
        holds = sum(s in ("holds", "same") for s in judged)
        cell = "成立 holds " + rate_text(holds, len(judged)) if judged else "—"
        if undecided := len(statuses) - len(judged):
            cell += f"；{undecided} 个种子无法分辨 not resolvable"
        lines.append(
            [
                claims_mod.claim_ref(o, html),
                str(o.entry["lecture"]),
                _status_text(claims_mod.verdict(o.protocol or o)),
                cell,
            ]
        )
    text = markdown_table(header, lines)
    if spread:
        text += (
            f"\n\n在所有记录的种子上一起判断的说法 claims judged once on all the recorded seeds"
            f"（{'、'.join(spread)}）：它们读的是种子的平均、波动或比率，不是一个种子的结果 "
            "they read the seeds' mean, spread or a rate, not one seed's run。"
        )
    return text


def _judge(entry: dict, protocol: str, table, settings) -> str:
    """A claim's status on one table (or a dict of tables); a seed that lacks rows the checks
    pair up (a cell with no step count) cannot be judged: not resolvable."""
    tables = table if isinstance(table, dict) else {protocol: table}
    try:
        return ledger_mod.evaluate_protocol(entry, tables, settings).status
    except (ValueError, IndexError):
        return "unresolved"


def by_reading(outcomes, tables, settings, protocol: str, readings_demo: str, html: bool):
    """Markdown: the pre-registered sensitivity table, claim × reading → verdict."""
    table = tables[readings_demo]
    readings = list(dict.fromkeys(table["reading"]))
    header = ["编号 id", "主读法 main（02.3）", *readings]
    lines = []
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
        lines.append(cells)
    return markdown_table(header, lines) + _changes(changed, html, "换任何一种读法，结论都不变")


def _own(entry, demo: str) -> list[dict]:
    """The entry's selectors that read `demo`."""
    sels = ledger_mod.selectors(entry).values()
    return [s for s in sels if str(s.get("demo", entry["demo"])) == demo]


def _reading_of(entry, demo: str, by: list[str]) -> dict | None:
    """The one reading every selector of `demo` names, or None (not a reading claim)."""
    found = {
        tuple(str(s.get("where", {}).get(b)) for b in by)
        if set(by) <= set(s.get("where", {}))
        else None
        for s in _own(entry, demo)
    }
    if len(found) != 1 or None in found:
        return None
    return dict(zip(by, found.pop(), strict=True))


def _read_as(entry, reading: dict, demo: str) -> dict:
    """The entry with its selectors of `demo` moved to `reading`, its rule unchanged."""
    own = _own(entry, demo)
    values = {
        name: {**sel, "where": {**sel["where"], **reading}} if sel in own else sel
        for name, sel in ledger_mod.selectors(entry).items()
    }
    entry = {k: v for k, v in entry.items() if k != "value"}
    return {**entry, "values": values}


def across_readings(outcomes, tables, settings, demo: str, by: list[str], names: dict, html: bool):
    """Markdown: the rate claims on `demo` (`stat: seeds`; their selectors of `demo` all fix
    the same value of every label in `by`) judged again under each reading of the demo's grid —
    each `by` combination its table has, with its seed count — beside the reading the entry
    names (07.5's Luong readings). The claim, its pass rule and the other demos it compares
    with stay as pre-registered; only the reading changes. `names` labels a reading's values."""
    table = tables[demo]
    if absent := [b for b in by if b not in table.columns]:
        raise ValueError(f"{demo} has no label {absent} (its labels: {list(table.columns)})")
    readings = [
        {b: str(v) for b, v in zip(by, r, strict=True)}
        for r in table[by].drop_duplicates().to_numpy()
    ]

    claims = [
        o
        for o in outcomes
        if o.entry.get("demo") == demo
        and claims_mod.is_rate(o.entry)
        and _reading_of(o.entry, demo, by) is not None
    ]
    if not claims:
        raise ValueError(f"{demo}: no rate claim (stat: seeds) names one reading of {by}")
    labels = ["，".join(names.get(r[b], r[b]) for b in by) for r in readings]
    seeds = [len(table_seeds(select(table, **r))) for r in readings]
    title = [f"{label}（{n} 个种子 seeds）" for label, n in zip(labels, seeds, strict=True)]
    lines = []
    changed, undecided = [], []
    for o in claims:
        main = _reading_of(o.entry, demo, by)
        cells = [claims_mod.claim_ref(o, html)]
        for reading, label in zip(readings, labels, strict=True):
            if reading == main:
                cells.append(f"{_status_text(claims_mod.verdict(o))}（主读法 main）")
                continue
            status = _judge(_read_as(o.entry, reading, demo), o.entry["demo"], tables, settings)
            cells.append(_status_text(status))
            if status not in DECIDED:
                undecided.append((o, label))
            elif status != o.status:
                changed.append((o, label))
        lines.append(cells)
    text = markdown_table(["编号 id", *title], lines)
    text += _changes(changed, html, f"在这 {len(readings)} 种读法下，结论都不变")
    if undecided:
        text += f"判断不了的 not judged：{_named(undecided, html)}。"
    return text


def _named(pairs, html: bool) -> str:
    """ "C040（layer）、C041（layer）": claims, each with the reading it names."""
    return "、".join(f"{claims_mod.claim_ref(o, html)}（{r}）" for o, r in pairs)


def _changes(changed, html: bool, unchanged: str) -> str:
    """The one sentence after a readings table: which reading changes which verdict."""
    if changed:
        return f"\n\n换一种读法结论就变的 a reading changes the verdict：{_named(changed, html)}。"
    return f"\n\n{unchanged} no reading changes a verdict。"


def rates(table, quantity: str, below: float, by: list[str], labels: dict) -> str:
    """Markdown: per group of `by`, the seeds whose `quantity` is below `below`, k/N."""
    rows = select(table, quantity)
    header = [*(labels.get(b, b) for b in by), f"{labels.get(quantity, quantity)} < {below}"]
    lines = []
    for _, row in rows.iterrows():
        values = np.array(list(per_seed(row["seeds"]).values()))
        k = int(np.sum(values < below))
        lines.append(
            [*(labels.get(str(row[b]), str(row[b])) for b in by), rate_text(k, len(values))]
        )
    return markdown_table(header, lines)
