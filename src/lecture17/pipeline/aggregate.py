"""Seed-averaged tables: one per demo, mean and min–max over seeds (as the lecture prints them).

    python -m lecture17.pipeline.aggregate results/05.1/*/seed*.csv --out results/tables/05.1.csv

Input: the tidy per-run CSVs that `lecture17.pipeline.job` writes (demo, seed, label columns…,
quantity, value), timing files included. Output: one row per (label columns, quantity) with `mean`,
`min`, `max`, `std` (the sample standard deviation over seeds, 0 for one seed) and `n_seeds`;
the timings go to `05.1.timing.csv` beside the table. `python -m lecture17 diff` compares two
builds' trained cells with mean, std and n_seeds (Welch's test).
"""

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from lecture17.pipeline.csvio import exit_on_sigterm, is_temporary, timing_path, write_with_timing

STATS = ["mean", "min", "max"]
# every column of an aggregated table that is not a label: a row's statistics over seeds, and
# `seeds`, its value in each seed, in seed order ("0:0.93 1:0.81 2:0.97", each float's
# shortest repr), from which a claim about how often something happens across seeds is
# counted (a rate), or judged seed by seed (seed_table)
STAT_COLUMNS = ("mean", "min", "max", "std", "n_seeds", "seeds")


def read_runs(paths) -> pd.DataFrame:
    if not paths:
        raise ValueError("no run CSVs given; expected at least one results/<demo>/…/seed<k>.csv")
    if partial := [str(p) for p in paths if is_temporary(p)]:  # left by a job killed mid-write
        raise ValueError(f"{partial}: unfinished writes, never a run; expected seed<k>.csv files")
    # Labels keep their text form ("8", "True", "l'Afrique"): a label is a name, not a number.
    frames = [pd.read_csv(p, dtype=str, keep_default_na=False) for p in paths]
    runs = pd.concat(frames, ignore_index=True).fillna("")
    runs["value"] = runs["value"].astype(float)
    return runs


def label_columns(runs: pd.DataFrame) -> list[str]:
    return [c for c in runs.columns if c not in ("seed", "value")]


def aggregate(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean and min–max over seeds of every (labels, quantity); row order as first seen."""
    labels = label_columns(runs)
    grouped = runs.groupby(labels, sort=False, dropna=False)["value"]
    table = grouped.agg(STATS).reset_index()
    table["std"] = grouped.std(ddof=1).fillna(0.0).to_numpy()  # one seed: no spread measured
    table["n_seeds"] = grouped.size().to_numpy()
    by_seed = runs.assign(_seed=runs["seed"].astype(int)).sort_values("_seed", kind="stable")
    joined = by_seed.groupby(labels, sort=False, dropna=False)["value"].agg(
        lambda values: " ".join(
            f"{seed}:{float(v)!r}"
            for seed, v in zip(by_seed.loc[values.index, "_seed"], values, strict=True)
        )
    )
    return table.merge(joined.rename("seeds").reset_index(), on=labels, how="left")


def per_seed(text: str) -> dict[int, float]:
    """A `seeds` cell ("0:0.93 1:0.81") as {seed: value}."""
    return {int(s): float(v) for s, v in (pair.split(":") for pair in text.split())}


def seed_values(rows: pd.DataFrame) -> np.ndarray:
    """The per-seed values of an aggregated table's rows (their `seeds`), row after row."""
    if "seeds" not in rows.columns:
        raise ValueError("this table has no per-seed values (built before the `seeds` column)")
    return np.array([v for text in rows["seeds"] for v in per_seed(text).values()], dtype=float)


def table_seeds(table: pd.DataFrame) -> list[int]:
    """Every seed a table's rows were aggregated over, in order."""
    return sorted({s for text in table["seeds"] for s in per_seed(text)})


def seed_table(table: pd.DataFrame, seed: int) -> pd.DataFrame:
    """The aggregated table as one seed alone would have given it: the rows that seed has,
    mean = min = max = its value, std 0, n_seeds 1 (a claim judged seed by seed)."""
    values = table["seeds"].map(lambda text: per_seed(text).get(seed))
    rows = table[values.notna()].copy()
    rows["mean"] = rows["min"] = rows["max"] = values[values.notna()].astype(float)
    rows["std"], rows["n_seeds"], rows["seeds"] = 0.0, 1, f"{seed}:" + rows["mean"].map(repr)
    rows.attrs = dict(table.attrs)
    return rows.reset_index(drop=True)


def read_table(path) -> pd.DataFrame:
    """Read an aggregated table back (labels as text, stats as float)."""
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    for col in [*STATS, "std"]:
        if col in table.columns:  # tables from before the std column have none
            table[col] = table[col].astype(float)
    table["n_seeds"] = table["n_seeds"].astype(int)
    return table


def read_tables(paths) -> dict:
    """{demo: table} from aggregated CSVs, each demo's timing table merged back into it; the
    timing quantities are kept in `table.attrs["timings"]` (what diff leaves out)."""
    tables = {}
    for path in sorted(map(Path, paths)):
        if path.name.endswith(".timing.csv"):
            continue
        table, timings = read_table(path), frozenset()
        timing = timing_path(path)
        if timing.exists():
            timing_table = read_table(timing)
            timings = frozenset(timing_table["quantity"])
            table = pd.concat([table, timing_table], ignore_index=True)
        table.attrs["timings"] = timings
        tables[path.stem] = table
    return tables


class NoRows(LookupError):
    """A selection that names rows the table does not have (a strict `select`)."""


def select(table: pd.DataFrame, quantity=None, *, strict: bool = False, **labels) -> pd.DataFrame:
    """The rows of a tidy table (a run's or a seed-averaged one) with these labels.

    `quantity` is one name, a list of names, or None (every quantity); each label is one value
    or a list of values. Labels compare as text, so `seq_len=8` finds the run's 8 and the
    aggregated table's "8". A label column the table lacks is a ValueError; with `strict`, a
    listed value that selects no row is NoRows (a typo is never silently dropped). The rows
    keep the table's order.
    """
    rows = table
    wanted = {"quantity": quantity} if quantity is not None else {}
    for label, value in {**wanted, **labels}.items():
        if label not in rows.columns:
            raise ValueError(
                f"the table has no label column {label!r}; it has {list(rows.columns)}"
            )
        values = [str(v) for v in (value if isinstance(value, list | tuple) else [value])]
        text = rows[label].astype(str)
        if strict and (absent := sorted(set(values) - set(text))):
            raise NoRows(f"{label} = {absent}")
        rows = rows[text.isin(values).to_numpy()]
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lecture17.pipeline.aggregate", description=__doc__.splitlines()[0]
    )
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    exit_on_sigterm()  # a stopped build: remove the temporary CSVs on the way out (csvio)
    runs = read_runs(args.runs)
    # the timings are what the jobs wrote to their .timing.csv files (the demo's declared ones)
    timed = [p for p in args.runs if p.name.endswith(".timing.csv")]
    timings = set(read_runs(timed)["quantity"]) if timed else set()
    write_with_timing(aggregate(runs), args.out, timings)
    print(f"汇总 aggregate: {len(args.runs)} 个运行 runs → {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
