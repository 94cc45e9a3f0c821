"""Run one demo for one seed and write its tidy CSV — the command every experiment rule calls.

    python -m lecture17.pipeline.job 01.4 --seed 0 --settings '{"seq_len": 64, ...}' \
        --out results/01.4/seed0.csv
    python -m lecture17.pipeline.job 05.1 --seed 0 --grid '{"model": "gru", "seq_len": 8}' \
        --out results/05.1/model=gru/seq_len=8/seed0.csv

The CSV is written to a temporary file and renamed at the end, so a failed job leaves nothing
half-written behind (Snakemake also deletes the outputs of failed jobs). Timings (the
quantities the demo's registry entry declares) go to `<out stem>.timing.csv` beside it, so the
CSV itself is reproducible.

`check_demo(demo, spec, device)` checks a demo's block of the config against its function (names
and types of its settings and grid), so a bad config fails when the workflow is parsed, before
any job, saying which key and what was expected (the schema, workflow/schemas/, checks the rest).

`jobs(demo, spec)` lists a demo's jobs as the workflow names them (one per grid point and
seed, `results/<demo>/<k=v/…>/seed<s>.csv`); the Snakefile and `python -m lecture17 run` both
use it.
"""

import argparse
import dataclasses
import importlib
import inspect
import itertools
import json
import sys
import types
import typing
from pathlib import Path

import numpy as np
import pandas as pd

from lecture17.experiments import DEMOS, kept_models
from lecture17.pipeline.csvio import exit_on_sigterm, write_with_timing


def load_demo(demo: str):
    if demo not in DEMOS or DEMOS[demo].kind == "view":
        runnable = sorted(d for d, spec in DEMOS.items() if spec.kind != "view")
        raise ValueError(f"unknown demo {demo!r}; expected one of {runnable}")
    spec = DEMOS[demo]
    return getattr(
        importlib.import_module(f"lecture17.experiments.{spec.module}"), spec.function_name
    )


# arguments a job passes that no config gives: the seed, and a reading demo's kept models
NOT_SETTINGS = ("seed", "trained")


def check_settings(fn, settings: dict) -> None:
    """Unknown or missing settings are a config error: say which, before any work is done."""
    expected = sorted(name for name in inspect.signature(fn).parameters if name not in NOT_SETTINGS)
    found = {
        "unknown settings": sorted(set(settings) - set(expected)),
        "missing settings": sorted(set(expected) - set(settings)),
    }
    if any(found.values()):
        said = "; ".join(f"{what} {names}" for what, names in found.items() if names)
        raise ValueError(f"{fn.__name__}: {said}; expected exactly {expected}")


def fits(value, annotation) -> bool:
    """Whether a config value fits a demo argument's annotation (int, float, str, bool, dict,
    list[...], or a dataclass given as a mapping of its fields). YAML's `4` fits float; `true`
    is no number, and `1e-3` (no dot) is a string."""
    if dataclasses.is_dataclass(annotation):
        return isinstance(value, dict) and not settings_problems(annotation, value)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):  # int | None
        return any(fits(value, option) for option in typing.get_args(annotation))
    if typing.get_origin(annotation) is list:
        (item,) = typing.get_args(annotation)
        return isinstance(value, list) and all(fits(v, item) for v in value)
    if isinstance(value, bool) and annotation is not bool:
        return False
    if annotation is float:
        return isinstance(value, int | float)
    return not isinstance(annotation, type) or isinstance(value, annotation)


def settings_problems(cls, value: dict) -> list[str]:
    """What is wrong with a mapping given for the dataclass `cls` (a nested block of settings,
    e.g. a training demo's `train:`): unknown or missing fields, values of the wrong type."""
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    required = {
        name
        for name, f in fields.items()
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }
    hints = typing.get_type_hints(cls)
    problems = [f"unknown key {k!r}" for k in sorted(set(value) - set(fields))]
    problems += [f"missing key {k!r}" for k in sorted(required - set(value))]
    for name in sorted(set(value) & set(fields)):
        if name in hints and not fits(value[name], hints[name]):
            problems.append(
                f"{name!r} is {value[name]!r} ({type(value[name]).__name__}), "
                f"expected {type_name(hints[name])}"
            )
    return problems


def type_name(annotation) -> str:
    return annotation.__name__ if isinstance(annotation, type) else str(annotation)


def check_types(fn, values) -> None:
    """(what, argument, value) triples against fn's annotations (unannotated ones pass)."""
    hints = typing.get_type_hints(fn)
    for what, name, value in values:
        if name not in hints:
            continue
        if dataclasses.is_dataclass(hints[name]) and isinstance(value, dict):
            if problems := settings_problems(hints[name], value):
                expected = [f.name for f in dataclasses.fields(hints[name]) if f.init]
                raise ValueError(f"{what}: {'; '.join(problems)}; its keys are {expected}")
        elif not fits(value, hints[name]):
            raise ValueError(
                f"{what} is {value!r} ({type(value).__name__}), expected {type_name(hints[name])}"
            )


def as_arguments(fn, values: dict) -> dict:
    """Config values as fn's arguments: a mapping given for a dataclass-annotated argument
    becomes that dataclass (TrainSettings(**block)); everything else passes as it is."""
    hints = typing.get_type_hints(fn)
    return {
        name: hints[name](**value)
        if dataclasses.is_dataclass(hints.get(name)) and isinstance(value, dict)
        else value
        for name, value in values.items()
    }


def check_demo(demo: str, spec: dict, device: str) -> None:
    """One demo's block of the config (`seeds`, `settings`, `grid`) against its function: every
    argument given once, in `settings` or as a grid key, and every value of its annotated type.
    A training demo (one that takes `device`) has a grid; an analytic one has none."""
    where = f"config demos[{demo!r}]"
    fn = load_demo(demo)
    settings, grid = spec["settings"], spec.get("grid", {})
    training = "device" in inspect.signature(fn).parameters
    if training != (DEMOS[demo].kind != "analytic"):
        raise ValueError(
            f"{where}: {fn.__name__} is registered as {DEMOS[demo].kind!r} "
            f"(lecture17.experiments.DEMOS), but it {'takes' if training else 'takes no'} `device`"
        )
    if bool(grid) != training:
        expected = "a `grid` (a training demo)" if training else "no `grid` (not a training demo)"
        raise ValueError(f"{where}: expected {expected} for {fn.__name__}")
    if both := sorted(set(settings) & set(grid)):
        raise ValueError(f"{where}: {both} in both `settings` and `grid`; expected one of the two")
    given = {**settings, **dict.fromkeys(grid), **({"device": device} if training else {})}
    values = [(f"setting {k!r}", k, v) for k, v in settings.items()]
    values += [(f"grid value of {k!r}", k, v) for k, vs in grid.items() for v in vs]
    try:
        check_settings(fn, given)
        check_types(fn, values)
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from None


def grid_points(spec: dict) -> list[dict]:
    """A demo's grid as a list of points, in the config's order ([{}] without a grid)."""
    grid = spec.get("grid", {})
    return [dict(zip(grid, values, strict=True)) for values in itertools.product(*grid.values())]


def grid_folder(point: dict) -> str:
    """{"model": "gru", "seq_len": 8} -> "model=gru/seq_len=8" (Hive-style folders)."""
    return "/".join(f"{key}={value}" for key, value in point.items())


def jobs(demo: str, spec: dict, root: str = "results") -> list[tuple[str, dict, int]]:
    """(CSV path, grid point, seed) of every job of one demo, as the workflow names them."""
    return [
        ("/".join(filter(None, (root, demo, grid_folder(point), f"seed{seed}.csv"))), point, seed)
        for point in grid_points(spec)
        for seed in spec["seeds"]
    ]


def run_demo(
    demo: str, settings: dict, seed: int, grid_point: dict | None = None, models: Path | None = None
) -> pd.DataFrame:
    """One run. `grid_point` (training demos) adds settings that also label the rows. A demo
    that reads kept models (registry `reads_models`) gets those of `models` as `trained`; with
    no file it trains them again (the same settings and seed: the same models)."""
    grid_point = grid_point or {}
    fn = load_demo(demo)
    check_settings(fn, {**settings, **grid_point})
    arguments = as_arguments(fn, {**settings, **grid_point})
    if DEMOS[demo].reads_models:
        arguments["trained"] = kept_models.load(models) if models else None
    elif models:
        raise ValueError(f"demo {demo} reads no kept models; got {models}")
    table = fn(**arguments, seed=seed)
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


def run_job(
    demo: str, settings: dict, seed: int, grid_point: dict, out: Path, models: Path | None = None
) -> pd.DataFrame:
    """One job: run the demo and write its CSV, the declared timings to `<out>.timing.csv`, and
    for a demo that keeps its models, what it kept to `<out stem>.models.pt` (kept_models)."""
    if not DEMOS[demo].keeps_models:
        table = run_demo(demo, settings, seed, grid_point, models)
        write_with_timing(table, out, DEMOS[demo].timings)
        return table
    with kept_models.keeping() as kept:
        table = run_demo(demo, settings, seed, grid_point, models)
    if not kept:
        raise ValueError(f"demo {demo} is registered with keeps_models but kept no model")
    path = kept_models.models_path(out)
    write_with_timing(
        table, out, DEMOS[demo].timings, {path: lambda tmp: kept_models.save(kept, tmp)}
    )
    return table


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lecture17.pipeline.job", description=__doc__.splitlines()[0]
    )
    parser.add_argument("demo")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--settings", default="{}", help="JSON object of the demo's settings")
    parser.add_argument("--grid", default="{}", help="JSON object: this job's point of the grid")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--models", type=Path, help="the kept models a reading demo reads")
    args = parser.parse_args(argv)
    exit_on_sigterm()  # a stopped build: remove the temporary CSVs on the way out (csvio)
    settings, grid_point = json.loads(args.settings), json.loads(args.grid)
    table = run_job(args.demo, settings, args.seed, grid_point, args.out, args.models)
    print(
        f"演示 {args.demo} · seed {args.seed}: {len(table)} 行 rows → {args.out}", file=sys.stderr
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
