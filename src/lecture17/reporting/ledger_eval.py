"""A ledger entry evaluated against the seed-averaged tables: its values selected, its checks
run, its status named; a trained claim decided on the recorded seeds of its protocol
(decided_on_recorded); the counts of the report's first table.
"""

import numpy as np
import pandas as pd

from lecture17.pipeline import aggregate as tables_mod
from lecture17.reporting import checks
from lecture17.reporting.ledger_entry import (
    CLASSES,
    PASSED,
    REDUCE,
    REPRODUCED,
    STATUS,
    Outcome,
    _has_values,
    _selectors,
    _show_names,
    counts,
    fmt_values,
    lecture_numbers,
    scalar_or_list,
    steps_of,
)
from lecture17.reporting.ledger_labels import value_labels

# -----------------------------------------------------------------------------
# selecting our numbers from the seed-averaged tables


class MissingTable(LookupError):
    """The table, or the rows a selector names, are not in this build (e.g. a small config)."""


def select(tables: dict, selector: dict, default_demo: str | None = None) -> pd.DataFrame:
    """The rows of a seed-averaged table that a selector names (mean, min, max, n_seeds).

    `quantity` is one name or a list of names (rows in the listed order); `where` is a dict
    (every combination of the listed labels) or a list of dicts (their rows, in that order),
    e.g. one row per head: [{head: who, key: Jane}, {head: where, key: …}].
    """
    demo = str(selector.get("demo", default_demo))
    if demo not in tables:
        raise MissingTable(demo)
    quantities = selector["quantity"]
    where = selector.get("where", {})
    try:
        picked = pd.concat(
            [
                tables_mod.select(tables[demo], q, strict=True, **w)
                for w in (where if isinstance(where, list) else [where])
                for q in (quantities if isinstance(quantities, list) else [quantities])
            ]
        )
    except tables_mod.NoRows as absent:
        raise MissingTable(f"{demo}: {absent}") from None
    except ValueError as error:  # a wrong label name is a ledger bug
        raise ValueError(f"table {demo}: {error}") from None
    if picked.empty:
        raise MissingTable(f"{demo}: {quantities} {where}")
    return picked


# -----------------------------------------------------------------------------
# deciding agreement


def evaluate(entry: dict, tables: dict, settings: dict | None = None) -> Outcome:
    """One claim: select our numbers, run its checks, and name the status.

    `settings` is the config's `demos` mapping (for `settings.KEY` references), or None. A
    claim with `decide: {recorded: [07.x, …], where: {labels}}` is decided on those recorded
    seeds (decided_on_recorded); its protocol outcome is kept beside (Outcome.protocol).
    """
    if "decide" in entry:
        return decided_on_recorded(entry, tables, settings)
    return evaluate_protocol(entry, tables, settings)


def robustness_table(tables: dict, recorded: list[str], where: dict | None = None):
    """The recorded demos' tables as one (05.3's two models live in 07.6 and 07.7), restricted
    to `where`'s labels (e.g. seq_len 16, the protocol's), whose columns are then dropped. Two
    demos that give the same row (the same labels and quantity) are a ValueError: a claim would
    read it twice."""
    parts = []
    for demo in recorded:
        rows = tables[demo]
        for label, value in (where or {}).items():
            if label not in rows.columns:
                raise ValueError(f"{demo} has no label {label!r} (its labels: {list(rows)})")
            rows = rows[rows[label].astype(str) == str(value)].drop(columns=label)
        parts.append(rows)
    table = pd.concat(parts, ignore_index=True)
    labels = [c for c in table.columns if c not in tables_mod.STAT_COLUMNS]
    table[labels] = table[labels].fillna("")  # a label one demo has and another lacks
    if table.duplicated(labels).any():
        twice = table.loc[table.duplicated(labels), labels].head(1).to_dict("records")
        raise ValueError(f"{recorded} give the same row twice, e.g. {twice}")
    timings = [t for d in recorded for t in tables[d].attrs.get("timings", ())]
    table.attrs = {**tables[recorded[0]].attrs, "timings": frozenset(timings)}
    return table


def recorded_table(tables: dict, recorded: list[str], where: dict | None = None):
    """The recorded demos' tables as one, restricted to `where`'s labels (dropped)."""
    return robustness_table(tables, recorded, where)


# Long on purpose: the rulebook's one rule for trained claims, its two cases (one run judged
# seed by seed, the seeds' spread judged once) side by side, as the rule reads.
def decided_on_recorded(entry: dict, tables: dict, settings: dict | None = None) -> Outcome:
    """The rulebook's "a trained claim is decided on the recorded seeds of its protocol".

    The recorded demos in `decide.recorded` (07.x, fixed files: the same on every machine) stand in
    for the protocol demo they extend. A claim about one run (per_seed_claim: seed means of one
    demo) is judged on each recorded seed alone with its own checks, and holds when the rate
    of seeds on which it holds has its 95 % Wilson interval above 1/2 (a typical run of the
    protocol shows it; rates.decide), differs below, is not resolvable in between. A claim
    about the seeds' spread (min, max, seeds) is judged once, on all the recorded seeds. The
    default build's protocol seeds are evaluated too and kept as `protocol`: shown, never
    deciding."""
    from lecture17.experiments import DEMOS
    from lecture17.reporting.rates import decide, untraced

    with untraced():  # shown beside, never deciding
        protocol = evaluate_protocol(entry, tables, settings)
    recorded = list(entry["decide"]["recorded"])
    replaced = {DEMOS[d].extends for d in recorded}
    if missing := [d for d in recorded if d not in tables]:
        finding = checks.Finding(None, f"本次构建没有记录的运行 not recorded here: {missing}")
        return Outcome(entry, "missing", findings=[finding], protocol=protocol)
    table = recorded_table(tables, recorded, entry["decide"].get("where"))
    plain = {k: v for k, v in entry.items() if k != "decide"}
    if not per_seed_run_claim(plain):
        whole = evaluate_protocol(plain, {**tables, **dict.fromkeys(replaced, table)}, settings)
        whole.protocol = protocol
        return whole
    with untraced():  # each seed alone; the rate over them decides
        statuses = [
            evaluate_protocol(
                plain,
                {**tables, **dict.fromkeys(replaced, tables_mod.seed_table(table, s))},
                settings,
            ).status
            for s in tables_mod.table_seeds(table)
        ]
    judged = [s for s in statuses if s in ("holds", "differs")]
    if not judged:
        text = f"记录的 {len(statuses)} 个种子都无法分辨 no recorded seed decides"
        finding, ok = checks.Finding(None, text), None
    else:
        k = sum(s == "holds" for s in judged)
        ok, text = decide(k, len(judged))
        finding = checks.Finding(
            ok, f"记录的种子里讲义的话成立的 recorded seeds on which it holds: {text}"
        )
    status = "unresolved" if ok is None else "holds" if ok else "differs"
    with untraced():  # the seeds together: shown as the detail
        whole = evaluate_protocol(plain, {**tables, **dict.fromkeys(replaced, table)}, settings)
    return Outcome(
        entry,
        status,
        whole.ours,
        [finding],
        whole.numbers,
        protocol.cells + whole.cells,
        protocol,
        whole.seeds,
        whole.findings,
        whole.why,
    )


def per_seed_run_claim(entry: dict) -> bool:
    """A claim about one run's numbers: every value a seed mean (no `stat`)."""
    return all("stat" not in s for s in _selectors(entry).values())


def _status(entry: dict, ok: bool | None) -> str:
    """A claim's status from its checks' verdict and its class."""
    cls = entry["class"]
    if ok is None:
        return "unresolved"
    if not ok:
        return "timing_fails" if cls == "timing" else "differs"
    # an exact (or beyond) claim judged by a check of its own (within 3 SE, equal to another
    # cell, below a bound) rather than by its printed digits holds; it does not show "the same
    # digits"
    steps = [checks.parse_step(step) for step in entry.get("check", [])]
    explicit = cls in ("exact", "reconstructed", "beyond") and steps
    explicit = explicit and not any(map(_to_lecture, steps))
    return "holds" if explicit else PASSED[cls]


def evaluate_protocol(entry: dict, tables: dict, settings: dict | None = None) -> Outcome:
    """One claim on the tables as given (the protocol's seeds, or a recorded table)."""
    cls = entry["class"]
    if cls == "cited":
        return Outcome(entry, "cited")
    if cls == "echo" and not _has_values(entry):  # the lecture's arithmetic, no table
        return Outcome(entry, "echo")
    try:
        picked = {
            name: (sel, select(tables, sel, entry.get("demo")))
            for name, sel in _selectors(entry).items()
        }
    except MissingTable as missing:
        if entry.get("needs") == "cuda":  # a GPU demo: a CPU build cannot have its table
            finding = checks.Finding(None, "本次构建在 CPU 上 a CPU build: `--config device=cuda`")
            return Outcome(entry, "gpu", findings=[finding])
        finding = checks.Finding(None, f"本次构建没有 not in this build: {missing}")
        return Outcome(entry, "missing", findings=[finding])
    named = {n: _reduce(sel, rows) for n, (sel, rows) in picked.items()}
    cells = [
        (str(sel.get("demo", entry.get("demo"))), key)
        for sel, rows in picked.values()
        for key in _row_keys(rows)
    ]
    fmt = entry.get("fmt", ".3g")
    shown = np.concatenate([np.atleast_1d(named[n]) for n in _show_names(entry) or [*named][:1]])
    ours = fmt_values(scalar_or_list(shown), fmt)
    if "shown_as" in entry:  # a coded value shown as what it means, the badge judging that
        ours = "、".join(str(entry["shown_as"].get(float(v), format(v, fmt))) for v in shown)
    demo_settings = _settings(settings, entry)
    context = checks.Context(
        named,
        lecture_numbers(entry),
        str(entry["lecture"]),
        demo_settings,
        fmt,
        labels=value_labels(entry),
    )
    findings = checks.run(steps_of(entry), context)
    status = _status(entry, checks.verdict(findings))
    numbers = {n: scalar_or_list(v) for n, v in named.items()}
    shown_rows = [picked[n][1] for n in _show_names(entry) or [*picked][:1]]
    seeds = sorted(
        {s for rows in shown_rows if "seeds" in rows for s in tables_mod.table_seeds(rows)}
    )
    why = ""
    if "why" in entry and checks.verdict(checks.run(entry["why"]["check"], context)):
        why = entry["why"]["text"]
    return Outcome(entry, status, ours, findings, numbers, cells, seeds=seeds, why=why)


def _to_lecture(step: tuple[str, dict]) -> bool:
    """Whether a check step compares with the lecture's own number (its digits, or `equal` /
    `near` to `lecture…`; a bound such as `between` is not): an exact claim passing such a step
    shows the same digits."""
    word, args = step
    return (
        word == "digits"
        or word in ("equal", "near")
        and any(isinstance(v, str) and v.startswith("lecture") for v in (args or {}).values())
    )


def _row_keys(rows: pd.DataFrame) -> list[tuple]:
    """Each row's labels (quantity included): the same key in any build of the table."""
    labels = [c for c in rows.columns if c not in ("demo", *tables_mod.STAT_COLUMNS)]
    return [tuple(r) for r in rows[labels].itertuples(index=False)]


def _reduce(selector: dict, rows: pd.DataFrame) -> np.ndarray:
    if selector.get("stat") == "seeds":  # every seed's value (a rate's sample)
        return _per_seed(selector, rows)
    values = rows[selector.get("stat", "mean")].to_numpy(float)
    if "reduce" in selector:
        return np.atleast_1d(REDUCE[selector["reduce"]](values))
    return values


def _per_seed(selector: dict, rows: pd.DataFrame) -> np.ndarray:
    """stat: seeds. Without `reduce`, every row's per-seed values, row after row; with it, one
    value per seed, reduced over the rows (e.g. the largest of a model's heads, per model)."""
    if "reduce" not in selector:
        return tables_mod.seed_values(rows)
    per_row = [tables_mod.per_seed(text) for text in rows["seeds"]]
    seeds = sorted(per_row[0]) if per_row else []
    if any(sorted(r) != seeds for r in per_row):
        raise ValueError("stat: seeds with reduce needs every row to have the same seeds")
    matrix = np.array([[r[seed] for seed in seeds] for r in per_row], dtype=float)
    return REDUCE[selector["reduce"]](matrix, axis=0)


def _settings(settings: dict | None, entry: dict) -> dict | None:
    """The demo's settings and grid; for a view-only demo (05.2), its first selector's demo."""
    if settings is None:
        return None
    demo = entry.get("demo")
    if demo not in settings:
        demo = next((str(s["demo"]) for s in _selectors(entry).values() if "demo" in s), None)
    if demo not in settings:
        return None
    spec = settings[demo]
    return {**spec.get("settings", {}), **spec.get("grid", {}), "seeds": spec.get("seeds", [])}


def evaluate_all(entries: list[dict], tables: dict, settings: dict | None = None) -> list:
    outcomes = []
    for entry in entries:
        try:
            outcomes.append(evaluate(entry, tables, settings))
        except (KeyError, ValueError, TypeError, IndexError) as error:  # name the claim
            raise ValueError(
                f"ledger entry {entry['id']!r}: {type(error).__name__}: {error}"
            ) from error
    return outcomes


def summary(outcomes: list[Outcome]) -> pd.DataFrame:
    """Claims per class (rows) and status (columns), for the report's first table."""
    counts = pd.DataFrame(0, index=list(CLASSES), columns=list(STATUS))
    for o in outcomes:
        counts.loc[o.entry["class"], o.status] += 1
    return counts.loc[counts.sum(axis=1) > 0, counts.sum(axis=0) > 0]


def reproduced(outcomes: list[Outcome]) -> dict:
    """How many claims were reproduced, reproduced from a reconstructed input, or shown back."""
    return {
        # a verdict that needs data not built here ("needs a GPU") is never counted as agreeing
        "reproduced": sum(counts(o.entry) and o.status in REPRODUCED for o in outcomes),
        "counted": sum(counts(o.entry) for o in outcomes),
        "reconstructed": sum(o.entry["class"] == "reconstructed" and o.agrees for o in outcomes),
        "echo": sum(o.entry["class"] == "echo" for o in outcomes),
    }
