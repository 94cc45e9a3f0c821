"""Run one demo for one seed and write its tidy CSV — the command every experiment rule calls.

    python -m lecture17.run 01.4 --seed 0 --settings '{"seq_len": 64, ...}' \
        --out results/01.4/seed0.csv
    python -m lecture17.run 05.1 --seed 0 --grid '{"model": "gru", "seq_len": 8}' \
        --out results/05.1/model=gru/seq_len=8/seed0.csv

The CSV is written to a temporary file and renamed at the end, so a failed job leaves nothing
half-written behind (Snakemake also deletes the outputs of failed jobs). Timings (`ms…`
quantities) go to `<out stem>.timing.csv` beside it, so the CSV itself is reproducible.

`runs(demo, spec)` lists a demo's jobs as the workflow names them (one per grid point and
seed, `results/<demo>/<k=v/…>/seed<s>.csv`); the Snakefile and `python -m lecture17 run` both
use it.
"""

import argparse
import importlib
import inspect
import itertools
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from lecture17.csvio import write_with_timing
from lecture17.experiments import DEMOS


def load_demo(demo: str):
    if demo not in DEMOS:
        raise ValueError(f"unknown demo {demo!r}; expected one of {sorted(DEMOS)}")
    module, function = DEMOS[demo]
    return getattr(importlib.import_module(f"lecture17.experiments.{module}"), function)


def check_settings(fn, settings: dict) -> None:
    """Unknown or missing settings are a config error: say which, before any work is done."""
    params = inspect.signature(fn).parameters
    expected = {name for name in params if name != "seed"}
    unknown, missing = set(settings) - expected, expected - set(settings)
    if unknown or missing:
        raise ValueError(
            f"{fn.__name__}: unknown settings {sorted(unknown)}, "
            f"missing settings {sorted(missing)}; "
            f"expected exactly {sorted(expected)}"
        )


def grid_points(spec: dict) -> list[dict]:
    """A demo's grid as a list of points, in the config's order ([{}] without a grid)."""
    grid = spec.get("grid", {})
    return [dict(zip(grid, values, strict=True)) for values in itertools.product(*grid.values())]


def grid_folder(point: dict) -> str:
    """{"model": "gru", "seq_len": 8} -> "model=gru/seq_len=8" (Hive-style folders)."""
    return "/".join(f"{key}={value}" for key, value in point.items())


def runs(demo: str, spec: dict, root: str = "results") -> list[tuple[str, dict, int]]:
    """(CSV path, grid point, seed) of every job of one demo, as the workflow names them."""
    return [
        ("/".join(filter(None, (root, demo, grid_folder(point), f"seed{seed}.csv"))), point, seed)
        for point in grid_points(spec)
        for seed in spec["seeds"]
    ]


def run_demo(demo: str, settings: dict, seed: int, grid_point: dict | None = None) -> pd.DataFrame:
    """One run. `grid_point` (training demos) adds settings that also label the rows."""
    grid_point = grid_point or {}
    fn = load_demo(demo)
    check_settings(fn, {**settings, **grid_point})
    table = fn(**settings, **grid_point, seed=seed)
    if not {"quantity", "value"} <= set(table.columns):
        raise ValueError(
            f"demo {demo} returned columns {list(table.columns)}; needs 'quantity' and 'value'"
        )
    table = table.assign(value=table["value"].astype(np.float64))
    if table["value"].isna().any():  # e.g. a mean over an empty window: the settings don't fit
        bad = sorted(set(table.loc[table["value"].isna(), "quantity"]))
        raise ValueError(f"demo {demo} computed NaN for {bad}; check its settings {settings}")
    for position, (key, value) in enumerate(grid_point.items()):
        if key not in table.columns:
            table.insert(position, key, value)
    table.insert(0, "seed", seed)
    table.insert(0, "demo", demo)
    return table


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lecture17.run", description=__doc__.splitlines()[0]
    )
    parser.add_argument("demo")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--settings", default="{}", help="JSON object of the demo's settings")
    parser.add_argument("--grid", default="{}", help="JSON object: this job's point of the grid")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    table = run_demo(args.demo, json.loads(args.settings), args.seed, json.loads(args.grid))
    write_with_timing(table, args.out)  # timings to <out>.timing.csv
    print(
        f"演示 {args.demo} · seed {args.seed}: {len(table)} 行 rows → {args.out}", file=sys.stderr
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
