"""Compare two builds number by number, or a build against the lecture.

    python -m lecture17 diff A B          # A, B: build folders (a checkout, or report/reference)
    python -m lecture17 diff A lecture    # A against the values the lecture prints (the ledger)

A build folder holds `results/tables/*.csv` (a checkout after `snakemake`) or `tables/*.csv`
(a reference build). Every claim of the ledger is evaluated on both sides and compared by class:
- exact      the printed digits must be the same;
- precision  both values must stay under their bound (1e-13 unless the ledger says otherwise);
- seeded     |A − B| within the tolerance: the ledger's `tol` where it declares one, else the
             larger seed spread (max − min) of the two builds, else 1e-9 relative;
- timing     shown with --timing, never a difference;
- cited      no number to compare.
Against the lecture, exact and precision claims must agree; seeded claims whose stated trend
does not hold are listed (an honest difference, not a failure). Exit status 1 when anything
fails, 0 otherwise.
"""

import sys
from pathlib import Path

import numpy as np

from lecture17 import ledger as ledger_mod
from lecture17.aggregate import read_tables

RTOL = 1e-9  # a single-seed value computed the same way on the same machine is bit-identical


def load_tables(build: Path) -> dict:
    build = Path(build)
    for folder in (build / "results" / "tables", build / "tables"):
        if folder.is_dir():
            return read_tables(folder.glob("*.csv"))
    raise ValueError(f"{build}: no results/tables/ or tables/ folder; build it first (snakemake)")


def _values(outcome) -> np.ndarray:
    return np.concatenate([np.atleast_1d(v) for v in outcome.numbers.values()]).astype(float)


def compare_claim(a, b) -> tuple[bool, str]:
    """Whether two builds agree on one claim, and why not."""
    entry = a.entry
    cls = entry["class"]
    if cls in ("cited", "timing"):  # never a difference, even if one side lacks it (a GPU's)
        return True, ""
    if {a.status, b.status} & {"missing", "gpu"}:
        same = a.status == b.status
        return same, "" if same else "一边没有构建 built on one side only"
    if cls == "exact":
        return a.ours == b.ours, f"{a.ours} ≠ {b.ours}"
    if cls == "precision":
        return a.agrees and b.agrees, f"超出界限 over the bound: {a.ours} / {b.ours}"
    va, vb = _values(a), _values(b)
    if va.shape != vb.shape:
        return False, "行数不同 different number of rows"
    spread = max([*a.spread.values(), *b.spread.values(), 0.0])
    tol = float(entry.get("tol", spread))
    ok = bool(np.all(np.abs(va - vb) <= np.maximum(tol, RTOL * np.abs(vb))))
    return ok, f"{a.ours} vs {b.ours}（容差 tol {tol:.2g}）"


def diff_builds(entries, tables_a, tables_b, show_timing=False) -> tuple[list[str], int]:
    lines, failures = [], 0
    outcomes_a = ledger_mod.evaluate_all(entries, tables_a)
    outcomes_b = ledger_mod.evaluate_all(entries, tables_b)
    for a, b in zip(outcomes_a, outcomes_b, strict=True):
        ok, reason = compare_claim(a, b)
        if a.entry["class"] == "timing" and show_timing:
            lines.append(_line(a.entry, f"计时 timing: {a.ours or '—'} vs {b.ours or '—'}"))
        elif not ok:
            failures += 1
            lines.append(_line(a.entry, reason))
    return lines, failures


def diff_lecture(entries, tables) -> tuple[list[str], int]:
    lines, failures = [], 0
    for o in ledger_mod.evaluate_all(entries, tables):
        if o.agrees:
            continue
        known = o.entry.get("expect") == "differs"  # the lecture's own error (a reading-aid flag)
        hard = not known and (o.entry["class"] in ("exact", "precision") or o.status == "missing")
        failures += hard
        tag = "讲义有误 lecture's error" if known else "不一致 FAIL" if hard else "趋势不同 differs"
        lines.append(
            _line(
                o.entry,
                f"{tag}: 讲义 lecture {o.entry['lecture']}, 我们 ours "
                f"{o.ours or '—'} {o.reason}".rstrip(),
            )
        )
    return lines, failures


def _line(entry, text) -> str:
    return f"{entry['id']:>6} {entry['section']:<8} {entry['claim']}: {text}"


def main(a: str, b: str, ledger_path: Path, show_timing: bool = False) -> int:
    entries = ledger_mod.load_ledger(ledger_path)
    tables_a = load_tables(Path(a))
    if b == "lecture":
        lines, failures = diff_lecture(entries, tables_a)
        title = f"{a} 对照讲义 vs the lecture"
    else:
        lines, failures = diff_builds(entries, tables_a, load_tables(Path(b)), show_timing)
        title = f"{a} 对照 vs {b}"
    print(f"比较 diff: {title} — {len(entries)} 个数字 claims, {failures} 处不同 differ")
    for line in lines:
        print(line)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3], Path("report/ledger.yaml")))
