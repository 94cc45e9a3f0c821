"""Writing result CSVs: exact floats, fixed line endings, never half a file, timings apart.

Timings (the quantities a demo's registry entry declares, lecture17.experiments.DEMOS) change
from run to run (§0.5). They go to a CSV of their own
(`seed0.timing.csv` beside `seed0.csv`, `05.1.timing.csv` beside `05.1.csv`), so every other
CSV is byte-identical between two builds, with `--cores 1` or `--cores 2`.

A killed job leaves no CSV that a later step trusts. A job's CSVs appear only at its very end,
each by the rename of its complete temporary file (`.seed0.csv.tmp`), so a job stopped before
has none of them and Snakemake runs it again. An exception, Ctrl-C or SIGTERM (see
`exit_on_sigterm`) removes the temporary files; SIGKILL cannot be caught and leaves them behind,
where nothing reads them (every reader is given explicit paths, and no `*.csv` glob matches a
name ending in `.tmp`) and the job's next run overwrites them. tests/pipeline/test_csvio.py
kills jobs and builds to show it.
"""

import os
import signal
import sys
from pathlib import Path

import pandas as pd

FLOAT_FORMAT = (
    "%.17g"  # round-trips every float64 exactly: the CSV is the result, not a rounding of it
)


def temporary_path(out: Path) -> Path:
    """results/01.4/seed0.csv -> results/01.4/.seed0.csv.tmp (hidden; `*.csv` never matches it)"""
    out = Path(out)
    return out.with_name(f".{out.name}.tmp")


def is_temporary(path: Path) -> bool:
    """A file `write_csvs` had not finished: what a job killed mid-write leaves behind."""
    name = Path(path).name
    return name.startswith(".") and name.endswith(".tmp")


def write_csv(table: pd.DataFrame, out: Path) -> None:
    """Write to a temporary file and rename, so a failed job leaves nothing half-written."""
    write_csvs({out: table})


def write_csvs(tables: dict) -> None:
    """Write every table to its temporary file, then rename them all, in the dict's order.
    A value may also be a function that writes its output to the path it is given (a job's
    kept models, experiments/kept_models.py).

    Until the renames a job has none of its outputs, so a job killed before them is simply run
    again; an output of a job that Snakemake saw start and never finish would instead stop the
    next build (IncompleteFilesException: "rerun with --rerun-incomplete").
    """
    renames = {}
    try:
        for out, table in tables.items():
            out = Path(out)
            tmp = temporary_path(out)  # a stale one (a SIGKILLed job's) is overwritten
            renames[tmp] = out  # before the write: a half-written one is removed too
            out.parent.mkdir(parents=True, exist_ok=True)
            if callable(table):  # another kind of output (kept models): a writer of a path
                table(tmp)
            else:
                table.to_csv(tmp, index=False, float_format=FLOAT_FORMAT, lineterminator="\n")
        for tmp, out in renames.items():
            os.replace(tmp, out)  # atomic: `out` is the old file or the whole new one
    except BaseException:  # KeyboardInterrupt and SystemExit (SIGTERM) too
        for tmp in renames:
            tmp.unlink(missing_ok=True)
        raise


def _exit_on_signal(signum, frame):
    sys.exit(128 + signum)  # 143, the exit status a shell reports for SIGTERM


def exit_on_sigterm() -> None:
    """Make SIGTERM exit through `finally` and `except` blocks, so `write_csvs` removes its
    temporary files. Python's default is to die on the spot; a CLI calls this first.

    SIGTERM reaches a job when the whole build is stopped (`kill -- -<pgid>`, `timeout`, a
    cluster's time limit); Snakemake alone, sent SIGTERM, lets its running jobs finish.
    """
    signal.signal(signal.SIGTERM, _exit_on_signal)


def split_timing(table: pd.DataFrame, timings) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(reproducible rows, timing rows): the timings are the quantities named in `timings`."""
    timing = table["quantity"].isin(list(timings)).astype(bool)
    return table[~timing], table[timing]


def timing_path(path: Path) -> Path:
    """results/01.5/seed0.csv -> results/01.5/seed0.timing.csv"""
    path = Path(path)
    return path.with_name(f"{path.stem}.timing.csv")


def write_with_timing(table: pd.DataFrame, out: Path, timings, extra=None) -> None:
    """The reproducible rows to `out`, the rows of the quantities in `timings` (declared by the
    demo's registry entry; maybe none: header only) to `<out stem>.timing.csv` beside it;
    `extra` ({path: writer}) first, so `out` is always renamed last."""
    stable, timing = split_timing(table, timings)
    write_csvs({**(extra or {}), timing_path(out): timing, out: stable})
