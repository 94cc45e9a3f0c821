"""Seed-averaged tables: one per demo, mean and min–max over seeds (as the lecture prints them).

    python -m lecture17.aggregate results/05.1/*/seed*.csv --out results/tables/05.1.csv

Input: the tidy per-run CSVs that `lecture17.run` writes (demo, seed, label columns…, quantity,
value), timing files included. Output: one row per (label columns, quantity) with `mean`,
`min`, `max`, `std` (the sample standard deviation over seeds, 0 for one seed) and `n_seeds`;
the timings go to `05.1.timing.csv` beside the table. `python -m lecture17 diff` compares two
builds' trained cells with mean, std and n_seeds (Welch's test).
"""

import argparse
import sys
from pathlib import Path

import pandas as pd

from lecture17.csvio import exit_on_sigterm, is_temporary, timing_path, write_with_timing

STATS = ["mean", "min", "max"]


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
    return table


def read_table(path) -> pd.DataFrame:
    """Read an aggregated table back (labels as text, stats as float)."""
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    for col in [*STATS, "std"]:
        if col in table.columns:  # tables from before the std column have none
            table[col] = table[col].astype(float)
    table["n_seeds"] = table["n_seeds"].astype(int)
    return table


def read_tables(paths) -> dict:
    """{demo: table} from aggregated CSVs, each demo's timing table merged back into it."""
    tables = {}
    for path in sorted(map(Path, paths)):
        if path.name.endswith(".timing.csv"):
            continue
        table = read_table(path)
        timing = timing_path(path)
        if timing.exists():
            table = pd.concat([table, read_table(timing)], ignore_index=True)
        tables[path.stem] = table
    return tables


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lecture17.aggregate", description=__doc__.splitlines()[0]
    )
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    exit_on_sigterm()  # a stopped build: remove the temporary CSVs on the way out (csvio)
    table = aggregate(read_runs(args.runs))
    write_with_timing(table, args.out)
    print(f"汇总 aggregate: {len(args.runs)} 个运行 runs → {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
