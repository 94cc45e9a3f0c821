"""The student's tables judged by the ledger against the committed reference's, claim by claim,
and the closest known mistake.

Deterministic numbers are the same on every CPU kind measured, so the committed reference
(report/reference/, tables and config) is the control: no second run of the reference is
needed. A claim is judged when the lecture's number is the code's (exact, reconstructed,
precision, seeded; the beyond-the-lecture claims marked `property`); it *changed* when its
status under the student's tables differs from the reference's (a machine-precision claim
has a status that is its bound, never its digits, so a correct file that rounds differently
keeps it). Timing, cited and echo claims are never judged.

The catalogue explains, it never detects: a mistake is named only for a file already flagged
by its claims or properties. Each catalogued mistake of a student-facing block has a
fingerprint, computed by this same check on the reference file with that one mistake in it
(`python -m mutants.fingerprints` writes mutants/fingerprints.csv): the claims it changes and
the properties and conventions it breaks, once for a file that writes every block and once
for its blocks alone. A mistake is named when two things hold:
- its fingerprint and the student's are alike: Jaccard similarity |A ∩ B| / |A ∪ B| of the
  student's set and the closer of the two at least THRESHOLD (properties of blocks the
  student did not write are left out first);
- the student's blocks that the mistake edits compute what the mistake's blocks compute, on
  the same fixed inputs (properties.probe). Claims and properties alone cannot tell apart
  slips that break the same sentences: a look-ahead mask that shows t + 1 and one that hides t
  change the same claims, and so do an unbiased variance and ε outside the square root.
Both were chosen on mistakes that are not in the catalogue (tests/checker_files/
other_mistakes.py): none of them is named (tests/test_checker.py, `make check-catalogue`).
"""

import csv
import functools
import types
from dataclasses import dataclass
from pathlib import Path

from lecture17.checker import blocks as blocks_mod
from lecture17.checker import properties as props
from lecture17.checker.patch import mutate_source
from lecture17.pipeline.deps import SRC
from lecture17.reporting import ledger as ledger_mod

JUDGED = (*ledger_mod.COUNTED, "reconstructed")
THRESHOLD = 0.5
FINGERPRINTS = SRC.parent / "mutants" / "fingerprints.csv"


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


def changed_claims(entries, reference_tables, student_tables, settings, demos) -> tuple:
    """(changes, kept): the judged claims reading `demos` whose status changed, and those
    that kept it."""
    chosen = [e for e in entries if judged(e) and entry_demos(e) & set(demos)]
    ref = ledger_mod.evaluate_all(chosen, reference_tables, settings)
    new = ledger_mod.evaluate_all(chosen, student_tables, settings)
    changes, kept = [], []
    for a, b in zip(ref, new, strict=True):
        (changes if a.status != b.status else kept).append(Change(a.entry, a, b))
    return changes, kept


@dataclass(frozen=True)
class Mistake:
    name: str
    block: str  # the blocks it changes, space-separated
    hint: str  # the question, in the lecture's terms
    marks: frozenset  # the claims it changes, the properties and conventions it breaks
    marks_block: frozenset = frozenset()  # the same, for a file with its blocks alone
    function: str = ""  # the edit (checker.patch) of attention_numpy that makes it
    old: str = ""
    new: str = ""


def load_fingerprints(path: Path = FINGERPRINTS) -> list[Mistake]:
    if not Path(path).is_file():
        return []
    with open(path, encoding="utf-8", newline="") as f:
        return [
            Mistake(
                r["mutant"],
                r["block"],
                r["hint"],
                frozenset(r["marks"].split()),
                frozenset(r["marks_block"].split()),
                r["function"],
                r["old"],
                r["new"],
            )
            for r in csv.DictReader(f)
        ]


def jaccard(a, b) -> float:
    a, b = set(a), set(b)
    return len(a & b) / len(a | b) if a | b else 0.0


def comparable(marks, replaced) -> frozenset:
    """A mistake's marks as a file that replaces only `replaced` could show them: properties
    of blocks the student did not write go (the claims stay)."""
    keep = set(replaced)
    return frozenset(
        m
        for m in marks
        if m.split(".", 1)[0] not in blocks_mod.BLOCKS or m.split(".", 1)[0] in keep
    )


def similarity(marks, mistake: Mistake, replaced=None) -> float:
    """Jaccard of the student's marks and the closer of the mistake's two fingerprints (every
    block written, or its blocks alone)."""
    variants = [v for v in (mistake.marks, mistake.marks_block) if v]
    if replaced is not None:
        variants = [comparable(v, replaced) for v in variants]
    return max((jaccard(marks, v) for v in variants), default=0.0)


@functools.lru_cache(maxsize=64)
def mistake_module(mistake: Mistake):
    """attention_numpy with the mistake in it, as a module of its own (never on sys.path)."""
    source = (SRC / "lecture17" / "attention_numpy.py").read_text(encoding="utf-8")
    module = types.ModuleType(f"mistake_{mistake.name}")
    code = mutate_source(source, mistake.function, mistake.old, mistake.new, mistake.name)
    exec(compile(code, module.__name__, "exec"), module.__dict__)  # noqa: S102 - our own code
    return module


def behaves_like(mistake: Mistake, probes: dict) -> bool:
    """The student's blocks that the mistake edits compute what the mistake's blocks compute
    on the probe inputs (at least one such block written by the student)."""
    if not mistake.function:
        return False
    mine = [b for b in mistake.block.split() if probes.get(b) is not None]
    module = mistake_module(mistake)
    return bool(mine) and all(
        props.same_probe(probes[b], props.probe(b, getattr(module, b))) for b in mine
    )


def closest(marks, mistakes, replaced=None, probes=None) -> tuple[Mistake | None, float]:
    """The catalogued mistake most like `marks` (None below THRESHOLD, or, with `probes`
    ({block: probe}), when its blocks compute something else), and its Jaccard score."""
    if not marks or not mistakes:
        return None, 0.0

    def score(m):
        return similarity(marks, m, replaced)

    ranked = sorted(mistakes, key=lambda m: (-score(m), len(m.marks)))
    for m in ranked:
        if score(m) < THRESHOLD:
            break
        if probes is None or behaves_like(m, probes):
            return m, score(m)
    return None, score(ranked[0])
