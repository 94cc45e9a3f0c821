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

Long on purpose: two comparisons (a build against a build, a build against the lecture) that
share the cell and claim model and the statistics.
"""

import hashlib
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import mpmath
import numpy as np
import pandas as pd

from lecture17.experiments import DEMOS
from lecture17.pipeline import yamlio
from lecture17.pipeline.aggregate import STAT_COLUMNS, STATS, read_tables
from lecture17.reporting import ledger as ledger_mod
from lecture17.reporting.views import load_views

MANIFEST = "manifest.json"  # written by the report (reporting.report.write_manifest)
ALPHA = 0.01  # family-wise false-alarm rate of one comparison of two builds (Holm)
ROUNDING = 1e-12  # below this, a value is the rounding error of an equivalence
DEFAULT_FMT = ".4g"


@dataclass
class Build:
    """A build folder's tables, its config's demos, and which demos are trained."""

    path: Path
    tables: dict
    demos: dict  # config["demos"], or {} when the folder has no config

    @property
    def trained(self) -> set:
        return {d for d, spec in self.demos.items() if spec.get("grid")}


class IncompleteBuild(ValueError):
    """A build whose tables are not the ones its report read (reporting.report's manifest)."""


def complete_tables(folder: Path, build: Path, incomplete: bool = False) -> list[Path]:
    """The tables of `folder` that the build's report read: those its manifest.json (beside
    results/ or in a reference folder) lists with the same sha256. A table it does not list
    (left from an earlier build, e.g. of a recording that is now stale) is not built, as in the
    report. IncompleteBuild, naming what is wrong, when there is no manifest, a listed table is
    missing or was rewritten after it, or a run CSV is newer (a build that did not finish) —
    unless `incomplete`, which keeps the tables that still match."""
    build = Path(build)
    manifest = next(
        (p for p in (build / "results" / MANIFEST, build / MANIFEST) if p.is_file()), None
    )
    if manifest is None:
        raise IncompleteBuild(
            f"{build}: no {MANIFEST}: its report was never built; run snakemake to finish it"
        )
    listed = json.loads(manifest.read_text(encoding="utf-8"))["tables"]
    problems, tables = [], []
    for name, digest in sorted(listed.items()):
        path = Path(folder, name)
        if not path.is_file():
            problems.append(f"{name} is missing")
        elif digest and hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            problems.append(f"{name} was rewritten after the report")
        else:
            tables.append(path)  # a table or its timing table (read_tables merges them)
    runs = build / "results"
    newer = [
        p
        for p in runs.glob("*/**/seed*.csv")
        if not p.name.endswith(".timing.csv") and p.stat().st_mtime > manifest.stat().st_mtime
    ]
    if newer:
        problems.append(f"{len(newer)} run CSVs are newer than the report, e.g. {newer[0]}")
    if problems and not incomplete:
        raise IncompleteBuild(
            f"{build}: the build did not finish ({'; '.join(problems)}); run snakemake to finish "
            "it, or pass --incomplete to compare the tables that still match its report"
        )
    return tables


def load_tables(build: Path, incomplete: bool = False) -> dict:
    build = Path(build)
    for folder in (build / "results" / "tables", build / "tables"):
        if folder.is_dir():
            return read_tables(complete_tables(folder, build, incomplete))
    raise ValueError(f"{build}: no results/tables/ or tables/ folder; build it first (snakemake)")


def load_build(path: Path, incomplete: bool = False) -> Build:
    path = Path(path)
    # the config the build ran with (its report copies it), a reference build's, a checkout's
    candidates = (
        path / "results" / "config.yaml",
        path / "config.yaml",
        path / "config" / "config.yaml",
    )
    for config in candidates:
        if config.is_file():
            with open(config, encoding="utf-8") as f:
                demos = yamlio.load(f)["demos"]
            break
    else:
        raise ValueError(f"{path}: no config/config.yaml or config.yaml beside the tables")
    return Build(path, load_tables(path, incomplete), demos)


# -----------------------------------------------------------------------------
# statistics


def welch_p(a, b) -> float:
    """Two-sided p-value of Welch's t-test for the means of two per-seed samples."""
    se2 = a["std"] ** 2 / a["n_seeds"] + b["std"] ** 2 / b["n_seeds"]
    gap = abs(a["mean"] - b["mean"])
    if se2 == 0:  # no variation on either side: equal or not at all
        return 1.0 if gap == 0 else 0.0
    t = gap / math.sqrt(se2)
    df = se2**2 / (
        (a["std"] ** 2 / a["n_seeds"]) ** 2 / (a["n_seeds"] - 1)
        + (b["std"] ** 2 / b["n_seeds"]) ** 2 / (b["n_seeds"] - 1)
    )
    # P(|T| > t) for Student's t with df degrees of freedom = I_{df/(df+t²)}(df/2, 1/2)
    x = df / (df + t * t)
    return float(mpmath.betainc(df / 2, 0.5, 0, x, regularized=True))


def fisher_p(k_a: int, n_a: int, k_b: int, n_b: int) -> float:
    """Two-sided Fisher exact p of k_a of n_a vs k_b of n_b (the sum of the tables' hypergeometric
    probabilities no larger than the observed one's)."""
    k, n = k_a + k_b, n_a + n_b

    def prob(x):
        return math.comb(n_a, x) * math.comb(n_b, k - x) / math.comb(n, k)

    observed = prob(k_a)
    support = range(max(0, k - n_b), min(k, n_a) + 1)
    return min(1.0, sum(p for x in support if (p := prob(x)) <= observed * (1 + 1e-9)))


def holm(p_values: dict, alpha: float = ALPHA, m: int | None = None) -> set:
    """The keys Holm's step-down procedure rejects at family-wise level alpha.

    `m` is the size of the family when some of its tests are not listed (cells that print the
    same digits on both sides: never flagged, but tested all the same)."""
    if any(not 0 <= p <= 1 for p in p_values.values()):  # NaN included
        raise ValueError(f"p-values must lie in [0, 1]: {p_values}")
    m = len(p_values) if m is None else max(m, len(p_values))
    rejected = set()
    for i, (key, p) in enumerate(sorted(p_values.items(), key=lambda kv: kv[1])):
        if p > alpha / (m - i):
            break
        rejected.add(key)
    return rejected


# -----------------------------------------------------------------------------
# cells


def print_formats(views: dict) -> dict:
    """(demo, quantity) -> the format the report prints it with (the first view that shows it)."""
    formats = {}
    for demo, items in views.items():
        for view in items:
            fmt = view.get("fmt", DEFAULT_FMT)
            for quantity in view.get("quantities", []):
                chosen = fmt.get(quantity, DEFAULT_FMT) if isinstance(fmt, dict) else fmt
                formats.setdefault((demo, quantity), chosen)
    return formats


def keyed(table: pd.DataFrame) -> pd.DataFrame:
    """The table indexed by its label columns (quantity included), timings left out."""
    labels = [c for c in table.columns if c not in ("demo", *STAT_COLUMNS)]
    if "std" not in table.columns:  # a table from before the std column: no variation known
        table = table.assign(std=np.nan)
    return table.set_index(labels)


def cell_key(demo: str, row_key) -> tuple:
    return (demo, *(row_key if isinstance(row_key, tuple) else (row_key,)))


@dataclass
class CellReport:
    differ: list  # (key, text): deterministic cells with other digits, or missing rows
    flagged: list  # (key, text): trained cells that seed variation does not explain
    one_seed: list  # (key, text): trained cells that differ, with one seed on a side
    tested: int  # trained cells tested (the family of Holm's correction)
    p_values: dict

    @property
    def bad(self) -> set:
        return {k for k, _ in self.differ} | {k for k, _ in self.flagged}


def timings_of(table: pd.DataFrame) -> frozenset:
    """The table's timing quantities: the rows read from its .timing.csv (aggregate.read_tables)."""
    return table.attrs.get("timings", frozenset())


def compare_cells(a: Build, b: Build, formats: dict) -> CellReport:
    differ, one_seed, p_values, texts, tested = [], [], {}, {}, 0
    presence = {}  # rows on one side only of a trained demo: their own family (Holm)
    for demo in sorted(set(a.tables) | set(b.tables)):
        if demo not in a.tables or demo not in b.tables:
            only = a.tables.get(demo, b.tables.get(demo))
            if not only["quantity"].isin(timings_of(only)).all():  # a GPU build's timings: never
                differ.append(((demo,), "一边没有这张表 table on one side only"))
            continue
        timings = timings_of(a.tables[demo]) | timings_of(b.tables[demo])
        ta, tb = keyed(a.tables[demo]), keyed(b.tables[demo])
        trained = demo in a.trained or demo in b.trained
        for key in ta.index.difference(tb.index, sort=False).union(
            tb.index.difference(ta.index, sort=False), sort=False
        ):
            ck, text = cell_key(demo, key), "一边没有这一行 row on one side only"
            if (key[-1] if isinstance(key, tuple) else key) in timings:
                continue  # a timing row, e.g. the wall time of jobs that ran in one checkout
            if not trained:
                differ.append((ck, text))
                continue
            # a trained row that only the seeds crossing a threshold produce (07.2's
            # steps_to_90): k of n seeds on one side, 0 on the other, is a test of the family
            seeds = [len(build.demos.get(demo, {}).get("seeds", ())) for build in (a, b)]
            k = [int(t.loc[key, "n_seeds"]) if key in t.index else 0 for t in (ta, tb)]
            if min(seeds) < 2:
                one_seed.append((ck, text))
                continue
            presence[ck] = fisher_p(k[0], seeds[0], k[1], seeds[1])
            texts[ck] = f"{text}: {k[0]}/{seeds[0]} vs {k[1]}/{seeds[1]} seeds"
        tolerances = dict(getattr(DEMOS.get(demo), "measured", ()))
        floors = spread_floors(ta, tb) if trained else {}
        rows_a, rows_b = _rows(demo, ta), _rows(demo, tb)  # dicts: .loc per cell cost seconds
        for key in ta.index.intersection(tb.index, sort=False):
            ra, rb = rows_a[key], rows_b[key]
            quantity = key[-1] if isinstance(key, tuple) else key
            if quantity in timings:
                continue
            ck = cell_key(demo, key)
            fmt = formats.get((demo, quantity), DEFAULT_FMT)
            shown = f"{_fmt(ra, fmt)} vs {_fmt(rb, fmt)}"
            if quantity in tolerances:  # a measurement: within its tolerance, not by digits
                same = _within(ra, rb, tolerances[quantity])
            else:
                same = _same_print(ra, rb, fmt)
            judged = (
                min(ra["n_seeds"], rb["n_seeds"]) >= 2
                and _finite(ra)
                and _finite(rb)
                and np.isfinite([ra["std"], rb["std"]]).all()  # no std: an old table
            )
            if trained and judged:  # every such cell is a test of the family, same or not
                tested += 1
                if not same:
                    floor = floors.get(quantity, 0.0)
                    p_values[ck] = welch_p(_floored(ra, floor), _floored(rb, floor))
                    texts[ck] = shown
            elif same:
                continue
            elif not trained or not (_finite(ra) and _finite(rb)):
                differ.append((ck, shown))  # NaN or inf on a side: never explained by seeds
            else:
                one_seed.append((ck, shown))
    # two families, each at ALPHA: the cells (thousands), and the rows present on one side only
    # (a handful: in the cells' family even 10 of 10 seeds against 0 could never be flagged)
    flagged = [(k, f"{texts[k]}（p = {p_values[k]:.1e}）") for k in holm(p_values, m=tested)]
    flagged += [(k, f"{texts[k]}（p = {presence[k]:.1e}）") for k in holm(presence)]
    return CellReport(differ, sorted(flagged), one_seed, tested, p_values)


def spread_floors(ta: pd.DataFrame, tb: pd.DataFrame) -> dict:
    """quantity -> the median seed std of that quantity over the table's rows (both builds).

    A cell whose seeds all tie (accuracies of 0 or 1, in steps of 1/n_test) has std 0 and so
    no yardstick of its own; the quantity's typical seed-to-seed spread in the same table is
    the yardstick instead (0 for a quantity that never varies, e.g. a parameter count).
    """
    both = pd.concat([ta[["std", "n_seeds"]], tb[["std", "n_seeds"]]])
    both = both[(both["n_seeds"] >= 2) & np.isfinite(both["std"])]
    quantities = both.index.get_level_values(-1) if both.index.nlevels > 1 else both.index
    return both.groupby(quantities)["std"].median().to_dict()


def _rows(demo: str, table: pd.DataFrame) -> dict:
    """A keyed table's rows as {label key: {column: value}}; its labels must be unique."""
    if not table.index.is_unique:
        key = table.index[table.index.duplicated()][0]
        raise ValueError(f"table {demo}: labels {key} are not unique")
    return dict(zip(table.index, table.to_dict("records"), strict=True))


def _floored(row: dict, floor: float) -> dict:
    return {**row, "std": max(float(row["std"]), floor)}


def _finite(row: pd.Series) -> bool:
    return bool(np.isfinite([row["mean"], row["min"], row["max"]]).all())


def _within(ra, rb, rel: float) -> bool:
    return all(
        math.isclose(float(ra[stat]), float(rb[stat]), rel_tol=rel, abs_tol=ROUNDING)
        for stat in STATS
    )


def _same_print(ra, rb, fmt) -> bool:
    for stat in STATS:
        x, y = float(ra[stat]), float(rb[stat])
        if abs(x) < ROUNDING and abs(y) < ROUNDING:
            continue
        if format(x, fmt) != format(y, fmt):
            return False
    return True


def _fmt(row, fmt) -> str:
    if row["n_seeds"] > 1 and row["min"] != row["max"]:
        return f"{format(row['mean'], fmt)} [{format(row['min'], fmt)}, {format(row['max'], fmt)}]"
    return format(row["mean"], fmt)


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
