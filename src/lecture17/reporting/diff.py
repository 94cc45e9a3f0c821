"""Compare two builds cell by cell and claim by claim, or a build against the lecture.

    python -m lecture17 diff A B          # A, B: build folders (a checkout, or report/reference)
    python -m lecture17 diff A lecture    # A against the values the lecture prints (the ledger)

A build folder holds `results/tables/*.csv` and `results/config.yaml` (a checkout after
`snakemake`: the config it ran with; `config/config.yaml` if the report was not built) or
`tables/*.csv` and `config.yaml` (a reference build).

Two builds, every cell of every table (timings apart), by what the cell is:
- deterministic (a demo without training): the same digits at the precision the report prints
  (the views' `fmt`, else 4 significant digits); two values both below 1e-12 are rounding
  errors of an equivalence and agree (their bound is a claim's business); a measurement of
  the process that is not a timing (the registry's `measured`: 06.1's peak memory) agrees
  within its stated relative tolerance;
- trained (a demo with a grid: a sample of training runs, one per seed): flagged only when the
  two builds' per-seed values differ by more than seed-to-seed variation explains — Welch's
  t-test on (mean, std, n) per cell, with Holm's correction over every tested cell, so that
  the chance of any false alarm in the whole comparison is at most ALPHA. A cell with a single
  seed on either side cannot be judged: it is listed as such, never as a difference. A trained
  row present on one side only (one that only the seeds crossing a threshold produce, 07.2's
  steps_to_90) is Fisher's exact test of k of n seeds against 0, in a family of its own (Holm
  at ALPHA), so the whole comparison's false-alarm rate is at most 2 ALPHA.
Claims follow their cells: an exact (reconstructed, echo) claim must print the same digits, a
precision claim must stay under its bound on both sides, a seeded claim differs when one of its
cells is flagged (or, for a deterministic demo, prints other digits); a beyond-the-lecture
claim is judged as an exact one on deterministic cells and as a seeded one on trained cells.
A verdict that flips while its cells agree is listed with that context. Timing and cited
claims are never compared.

Against the lecture: exact, reconstructed, echo and precision claims must agree (except the
lecture's own errors, `expect: differs`), and so must the beyond-the-lecture claims marked
`property: true` (a property of our code: the cache changes no token); seeded claims that
differ, pre-registered beyond-the-lecture findings that do not hold (where a published result
fails here: a result, not a bug), claims that cannot be resolved and timings that do not hold
here are listed, not failed.
A verdict flip — a counted claim (exact, precision, seeded) whose status differs between the two
builds (holds ↔ differs ↔ not resolvable ↔ not built) — is a failure whatever its cells say:
a verdict must be a fact about the lecture and the code, not about one CPU's sample.

Both sides are read as their reports read them: only the tables a build's report listed in
its manifest.json (complete_tables); a build that did not finish is refused (exit 2) unless
`--incomplete`. Exit status 1 when anything fails, 0 otherwise.

The builds are read by reporting.builds and their cells compared by reporting.cell_diff; this
module compares the claims and writes what `diff` prints. Their names are importable from here.
"""

import sys
from dataclasses import dataclass
from pathlib import Path

from lecture17.reporting import ledger as ledger_mod
from lecture17.reporting.builds import (  # noqa: F401 - diff's names, kept here
    MANIFEST,
    Build,
    IncompleteBuild,
    complete_tables,
    load_build,
    load_tables,
)
from lecture17.reporting.cell_diff import (  # noqa: F401 - diff's names, kept here
    ALPHA,
    DEFAULT_FMT,
    ROUNDING,
    CellReport,
    cell_key,
    compare_cells,
    fisher_p,
    holm,
    keyed,
    print_formats,
    spread_floors,
    timings_of,
    welch_p,
)
from lecture17.reporting.views import load_views

# -----------------------------------------------------------------------------
# claims


def compare_claim(a, b, cells: CellReport, trained: set) -> tuple[str, str]:
    """("same" | "differs" | "one_seed" | "flips", why) for one claim of two builds."""
    entry = a.entry
    cls = entry["class"]
    if cls in ("cited", "timing") or not ledger_mod._has_values(entry):
        return "same", ""
    if {a.status, b.status} & {"missing", "gpu"}:
        same = a.status == b.status
        return ("same", "") if same else ("differs", "一边没有构建 built on one side only")
    # a beyond-the-lecture claim reads either deterministic cells (06.5's construction: the
    # same digits everywhere) or trained ones (06.6's beams on 05.1's models: another sample on
    # another CPU, judged by its cells as a seeded claim is)
    reads_trained = any(demo in trained for demo, _ in [*a.cells, *b.cells])
    if cls in ("exact", "reconstructed", "echo") or cls == "beyond" and not reads_trained:
        return ("same", "") if a.ours == b.ours else ("differs", f"{a.ours} ≠ {b.ours}")
    if cls == "precision":
        ok = a.agrees and b.agrees
        return ("same", "") if ok else ("differs", f"超出界限 over the bound: {a.ours} / {b.ours}")
    keys = {_claim_cell(c) for c in a.cells} | {_claim_cell(c) for c in b.cells}
    if keys & cells.bad:
        return "differs", f"{a.ours} vs {b.ours}：种子间的波动解释不了 beyond seed variation"
    flip = (
        f"结论翻转 verdict flips: {ledger_mod.STATUS[a.status]} → {ledger_mod.STATUS[b.status]}；"
        if a.status != b.status
        else ""
    )
    if keys & {k for k, _ in cells.one_seed}:
        return "one_seed", (
            f"{flip}{a.ours} vs {b.ours}：只有一个种子（或表里没有种子间的标准差），无法判断 "
            "one seed (or no seed spread in the table): not judged"
        )
    if flip:
        return (
            "flips",
            f"{flip}{a.ours} vs {b.ours}，单元格在种子间的波动之内 cells within seed variation",
        )
    return "same", ""


def _claim_cell(cell) -> tuple:
    demo, key = cell
    return cell_key(demo, key)


@dataclass
class Comparison:
    """Two builds compared once: their cells, both builds' claims, and `diff`'s lines."""

    cells: CellReport
    outcomes_a: list
    outcomes_b: list
    lines: list
    failures: int  # what `diff` counts: claims and cells that differ, and verdict flips


def diff_builds(entries, a: Build, b: Build, views: dict, show_timing=False):
    """(lines, number of differences) for two builds."""
    done = compare(entries, a, b, views, show_timing)
    return done.lines, done.failures


def compare(entries, a: Build, b: Build, views: dict, show_timing=False, outcomes_a=None):
    """diff_builds with what it computed on the way; `outcomes_a`: build a's claims, if the
    caller evaluated them already (make mutants compares one control with each mutant)."""
    cells = compare_cells(a, b, print_formats(views))
    trained = a.trained | b.trained
    if outcomes_a is None:
        outcomes_a = ledger_mod.evaluate_all(entries, a.tables, a.demos)
    outcomes_b = ledger_mod.evaluate_all(entries, b.tables, b.demos)
    lines, failures, notes, flips = [], 0, [], []
    for oa, ob in zip(outcomes_a, outcomes_b, strict=True):
        kind, why = compare_claim(oa, ob, cells, trained)
        if oa.entry["class"] == "timing" and show_timing:
            lines.append(_line(oa.entry, f"计时 timing: {oa.ours or '—'} vs {ob.ours or '—'}"))
        if oa.entry["class"] in ledger_mod.COUNTED and oa.status != ob.status:
            # a counted verdict must not depend on the build: any change of status fails
            flips.append(_line(oa.entry, why or f"{oa.ours} vs {ob.ours}"))
        elif kind in ("one_seed", "flips"):
            notes.append(_line(oa.entry, why))
        if kind == "differs":
            failures += 1
            lines.append(_line(oa.entry, why))
    for key, text in cells.differ + cells.flagged:
        failures += 1
        lines.append(f"  单元格 cell {' · '.join(map(str, key))}: {text}")
    header = (
        f"单元格 cells: {len(cells.differ)} 个确定性的不同 deterministic differ, "
        f"{len(cells.flagged)} / {cells.tested} 个训练的超出种子波动 trained beyond seed "
        f"variation (Welch + Holm, α = {ALPHA}), {len(cells.one_seed)} 个只有一个种子、"
        "无法判断 one seed, not judged"
    )
    flip_lines = [f"结论翻转 verdict flips（计入的数字 counted claims）: {len(flips)}", *flips]
    notes = ["说明 notes:"] + notes if notes else []
    lines = [header, *flip_lines, *lines, *notes]
    return Comparison(cells, outcomes_a, outcomes_b, lines, failures + len(flips))


def diff_lecture(entries, tables, demos=None) -> tuple[list[str], int]:
    lines, failures = [], 0
    for o in ledger_mod.evaluate_all(entries, tables, demos):
        if o.agrees:
            continue
        known = o.entry.get("expect") == "differs"  # the lecture's own error (a reading-aid flag)
        hard = not known and (
            o.entry["class"] in ("exact", "reconstructed", "echo", "precision")
            or o.entry.get("property", False)  # a beyond claim that a bug of ours would break
            or o.status == "missing"
        )
        failures += hard
        finding = o.entry["class"] == "beyond" and not hard and o.status == "differs"
        tag = (
            "讲义有误 lecture's error"
            if known
            else "不一致 FAIL"
            if hard
            else "超出讲义的发现：预先登记的读法不成立 beyond the lecture, a finding: the "
            "pre-registered reading does not hold"
            if finding
            else ledger_mod.STATUS[o.status]
        )
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


def main(
    a: str, b: str, ledger_path: Path, show_timing: bool = False, incomplete: bool = False
) -> int:
    entries = ledger_mod.load_ledger(ledger_path)
    try:
        build_a = load_build(Path(a), incomplete)
        build_b = None if b == "lecture" else load_build(Path(b), incomplete)
    except IncompleteBuild as error:
        print(f"比较 diff: 构建不完整 incomplete build — {error}", file=sys.stderr)
        return 2
    if b == "lecture":
        lines, failures = diff_lecture(entries, build_a.tables, build_a.demos)
        title = f"{a} 对照讲义 vs the lecture"
    else:
        views = load_views(Path(ledger_path).parent / "views")
        lines, failures = diff_builds(entries, build_a, build_b, views, show_timing)
        title = f"{a} 对照 vs {b}"
    print(headline(title, entries, failures))
    for line in lines:
        print(line)
    return 1 if failures else 0


def headline(title: str, entries, failures: int) -> str:
    return f"比较 diff: {title} — {len(entries)} 个数字 claims, {failures} 处不同 differ"


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3], Path("report/ledger")))
