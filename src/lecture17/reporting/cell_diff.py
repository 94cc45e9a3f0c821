"""Two builds' tables compared cell by cell: a deterministic cell by the digits the report
prints, a trained one by Welch's t-test with Holm's correction over every tested cell (the
rules are reporting.diff's), and the statistics they use.
"""

import math
from dataclasses import dataclass

import mpmath
import numpy as np
import pandas as pd

from lecture17.experiments import DEMOS
from lecture17.pipeline.aggregate import STAT_COLUMNS, STATS
from lecture17.reporting.builds import Build

ALPHA = 0.01  # family-wise false-alarm rate of one comparison of two builds (Holm)
ROUNDING = 1e-12  # below this, a value is the rounding error of an equivalence
DEFAULT_FMT = ".4g"


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


# Long on purpose: one pass over every cell of both builds feeds the two Holm families (cells,
# rows on one side) and the unexplained differences; split, the accumulators would be shared.
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
        if list(ta.index.names) != list(tb.index.names):  # another version of the demo
            names = f"{list(ta.index.names)} vs {list(tb.index.names)}"
            differ.append(((demo,), f"两边的表标签列不同 label columns differ: {names}"))
            continue
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
