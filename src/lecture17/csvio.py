"""Writing result CSVs: exact floats, fixed line endings, never half a file, timings apart.

Timings (quantities named `ms…`) change from run to run (§0.5). They go to a CSV of their own
(`seed0.timing.csv` beside `seed0.csv`, `05.1.timing.csv` beside `05.1.csv`), so every other
CSV is byte-identical between two builds, with `--cores 1` or `--cores 2`.
"""

import os
from pathlib import Path

import pandas as pd

FLOAT_FORMAT = (
    "%.17g"  # round-trips every float64 exactly: the CSV is the result, not a rounding of it
)


def write_csv(table: pd.DataFrame, out: Path) -> None:
    """Write to a temporary file and rename, so a failed job leaves nothing half-written."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    table.to_csv(tmp, index=False, float_format=FLOAT_FORMAT, lineterminator="\n")
    os.replace(tmp, out)


def is_timing(quantity: str) -> bool:
    """A machine-dependent number: its quantity name starts with `ms` (milliseconds)."""
    return str(quantity).startswith("ms")


def split_timing(table: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    timing = table["quantity"].map(is_timing).astype(bool)
    return table[~timing], table[timing]


def timing_path(path: Path) -> Path:
    """results/01.5/seed0.csv -> results/01.5/seed0.timing.csv"""
    path = Path(path)
    return path.with_name(f"{path.stem}.timing.csv")


def write_with_timing(table: pd.DataFrame, out: Path) -> None:
    """The reproducible rows to `out`, the timings (maybe none: header only) beside it."""
    stable, timing = split_timing(table)
    write_csv(timing, timing_path(out))
    write_csv(stable, out)
