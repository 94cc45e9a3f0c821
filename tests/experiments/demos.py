"""The demos as the tests of tests/experiments/ run them, shared by the module files and by
test_analytic_demos.py / test_training_demos.py (each run once per test session).

- An analytic demo: with its settings from config/config.yaml, through pipeline.job.run_demo
  (the rows a job writes): `run(demo, seed)`.
- A training demo: at the tiny settings of .test/config/config.yaml, at one of its grid points,
  its arguments as pipeline.job passes them (its `train:` block as a TrainSettings):
  `kwargs(demo, point, …)`, and one run per grid point, `tiny_run(demo, point_index)` (seed 0).
"""

import dataclasses
import itertools
from functools import cache

import pandas as pd
import yaml
from conftest import CONFIG, TEST_CONFIG

from lecture17.experiments import DEMOS
from lecture17.pipeline.job import as_arguments, load_demo, run_demo


@cache
def config(path=CONFIG) -> dict:
    """The demos of a config (config/config.yaml unless told)."""
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)["demos"]


def seeds(demo: str) -> list[int]:
    return config()[demo]["seeds"]


@cache
def run(demo: str, seed: int = 0) -> pd.DataFrame:
    """One run of an analytic demo at config/config.yaml's settings (shared: never modify it)."""
    return run_demo(demo, config()[demo]["settings"], seed)


# --- training demos at the .test config ---------------------------------------------------------


def spec(demo: str) -> dict:
    """The demo's entry in .test/config/config.yaml."""
    return config(TEST_CONFIG)[demo]


def grid_points(demo: str) -> list[dict]:
    """The jobs of a demo, in the workflow's order (common.smk's grid_points)."""
    grid = spec(demo)["grid"]
    return [dict(zip(grid, combo, strict=True)) for combo in itertools.product(*grid.values())]


def kwargs(
    demo: str, point: dict | None = None, device: str = "cpu", train=None, **overrides
) -> dict:
    """The demo's arguments as run.py passes them (its `train:` block as a TrainSettings), at a
    grid point; `train` changes fields of the TrainSettings, `overrides` other settings."""
    point = grid_points(demo)[0] if point is None else point
    values = {**spec(demo)["settings"], **point, "device": device, **overrides}
    arguments = as_arguments(load_demo(demo), values)
    if DEMOS[demo].reads_models:  # no kept models: the demo trains them again (pipeline.job)
        arguments["trained"] = None
    if train:
        arguments["train"] = dataclasses.replace(arguments["train"], **train)
    return arguments


@cache
def tiny_run(demo: str, point_index: int = 0) -> pd.DataFrame:
    """One tiny run per (demo, grid point), shared by the tests (seed 0; never modify it)."""
    return load_demo(demo)(**kwargs(demo, grid_points(demo)[point_index]), seed=0)


def untimed(demo: str, table: pd.DataFrame) -> pd.DataFrame:
    """Everything but the demo's declared timings, which differ on every run."""
    return table[~table["quantity"].isin(DEMOS[demo].timings)]
