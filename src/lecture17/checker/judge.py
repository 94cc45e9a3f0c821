"""The student's tables judged by the ledger against the committed reference's, claim by claim.

Deterministic numbers are the same on every CPU kind measured, so the committed reference
(report/reference/, tables and config) is the control: no second run of the reference is
needed. A claim is judged when the lecture's number is the code's (exact, reconstructed,
precision, seeded; the beyond-the-lecture claims marked `property`); it *changed* when its
status under the student's tables differs from the reference's (a machine-precision claim
has a status that is its bound, never its digits, so a correct file that rounds differently
keeps it). Timing, cited and echo claims are never judged.

A claim whose check reads a floating-point result exactly (`digits`, `equal`: PRECISE_WORDS)
is judged within its precision: when each of the numbers it read lies within PRECISION of the
reference's, the student's computation is the reference's up to rounding (another order of
summation, a log-sum-exp softmax), and the claim keeps the reference's verdict, said so
(`Change.rounding`). A real slip moves them by 1e-3 and more (checker/property_base.py).
Which claims this covers is listed in docs/CHECK.md (`python -m lecture17.checker.judge`).

Why a flagged file is flagged is checker/explain.py's: the catalogue explains, never detects.
"""

from dataclasses import dataclass

import numpy as np

from lecture17.reporting import ledger as ledger_mod

JUDGED = (*ledger_mod.COUNTED, "reconstructed")
PRECISE_WORDS = ("digits", "equal")  # check words that read a float exactly
PRECISION = 1e-12  # relative: 1e4 ulps of float64; a correct reordering is ~1e-16


def judged(entry: dict) -> bool:
    return entry["class"] in JUDGED or bool(entry.get("property"))


def entry_demos(entry: dict) -> set[str]:
    """The demos whose tables an entry reads."""
    found = {entry.get("demo")}
    try:
        found |= {s.get("demo", entry.get("demo")) for s in ledger_mod.selectors(entry).values()}
    except (ValueError, KeyError, TypeError):
        pass
    recorded = (entry.get("decide") or {}).get("recorded") or []
    return (found | set(recorded if isinstance(recorded, list) else [recorded])) - {None}


@dataclass
class Change:
    entry: dict
    reference: object  # ledger.Outcome on the reference's tables
    student: object  # on the student's
    rounding: bool = False  # its status moved, but only by rounding: kept (PRECISION)


def precise(entry: dict) -> bool:
    """Whether an entry is an exact reading of a floating-point number: an exact or
    reconstructed claim whose check compares digits or an equality (the default, `digits`).
    A machine-precision claim has its own bound, never loosened here."""
    if entry.get("class") not in ("exact", "reconstructed"):
        return False
    steps = entry.get("check") or [{"digits": {}}]
    return any(
        (next(iter(step)) if isinstance(step, dict) else step) in PRECISE_WORDS for step in steps
    )


def within_precision(a: dict, b: dict) -> bool:
    """Whether two outcomes' numbers (name -> float or list) are the same up to rounding:
    each within PRECISION of the other, relatively (a 0 only equals a 0)."""
    if a.keys() != b.keys() or not a:
        return False
    for name in a:
        x = np.asarray(a[name], dtype=float)
        y = np.asarray(b[name], dtype=float)
        if x.shape != y.shape or not np.array_equal(np.isnan(x), np.isnan(y)):
            return False
        gap = np.abs(np.nan_to_num(x - y))
        if np.any(gap > PRECISION * np.abs(np.nan_to_num(y))):
            return False
    return True


def changed_claims(entries, reference_tables, student_tables, settings, demos) -> tuple:
    """(changes, kept): the judged claims reading `demos` whose status changed, and those
    that kept it (a precise claim whose numbers moved by rounding only is kept)."""
    chosen = [e for e in entries if judged(e) and entry_demos(e) & set(demos)]
    ref = ledger_mod.evaluate_all(chosen, reference_tables, settings)
    new = ledger_mod.evaluate_all(chosen, student_tables, settings)
    changes, kept = [], []
    for a, b in zip(ref, new, strict=True):
        change = Change(a.entry, a, b)
        if a.status != b.status and precise(a.entry) and within_precision(b.numbers, a.numbers):
            change.rounding = True
        (changes if a.status != b.status and not change.rounding else kept).append(change)
    return changes, kept


def precise_claims(entries, reached) -> list[dict]:
    """The judged entries that read a float exactly from a demo reaching a student block
    (`reached`: demo -> blocks): the claims the precision rule covers (docs/CHECK.md)."""
    return [
        e
        for e in entries
        if judged(e) and precise(e) and any(reached.get(d) for d in entry_demos(e))
    ]
