# Shared helpers: config validation, the list of runs, and each rule's code inputs.

import itertools
import os
import json
from pathlib import Path

from snakemake.utils import validate

from lecture17.csvio import timing_path
from lecture17.deps import code_inputs
from lecture17.experiments import DEMOS
from lecture17.run import check_settings, load_demo

validate(config, schema="../schemas/config.schema.yaml")

ROOT = Path(workflow.basedir)

# One thread per job, numpy's BLAS included (torch.set_num_threads does not reach it):
# `--cores 2` then runs two jobs side by side, and every number is computed the same way.
# PYTHONPATH=src: the jobs run this checkout's code, in the venv or in a --use-conda env alike.
shell.prefix(
    "export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 "
    "VECLIB_MAXIMUM_THREADS=1 NUMEXPR_NUM_THREADS=1 PYTHONPATH=src${{PYTHONPATH:+:$PYTHONPATH}}; "
)


wildcard_constraints:
    demo=r"\d\d\.\d",
    seed=r"\d+",
    setting=r"[^/=]+=[^/]+(/[^/=]+=[^/]+)*",


# Every demo's settings must match its function's arguments: a typo fails here, before any job.
for _demo, _spec in config["demos"].items():
    _first_point = {key: values[0] for key, values in _spec.get("grid", {}).items()}
    _device = {"device": config["device"]} if _first_point else {}
    check_settings(load_demo(_demo), {**_spec["settings"], **_first_point, **_device})


def demos_of(script):
    """The configured demo ids of one lecture script ("01" -> ["01.1", …])."""
    return [d for d in config["demos"] if d.startswith(f"{script}.")]


def settings_json(wildcards):
    """Only this demo's settings: editing another demo's block reruns nothing here."""
    return json.dumps(config["demos"][wildcards.demo]["settings"], sort_keys=True)


def training_settings_json(wildcards):
    """A training demo's settings plus the workflow's `device` (cpu by default, or cuda)."""
    settings = {
        **config["demos"][wildcards.demo]["settings"],
        "device": config["device"],
    }
    return json.dumps(settings, sort_keys=True)


def is_training(demo):
    return bool(config["demos"][demo].get("grid"))


def grid_points(demo):
    """A training demo's jobs, as Hive-style folders: ["model=gru/seq_len=8", …]."""
    grid = config["demos"][demo].get("grid", {})
    folders = []
    for values in itertools.product(*grid.values()):
        parts = [f"{key}={value}" for key, value in zip(grid, values)]
        folders.append(os.path.join(*parts))
    return folders


def grid_json(wildcards):
    """This job's grid point, with the config's types ("8" -> 8), in the config's order."""
    grid = config["demos"][wildcards.demo]["grid"]
    folder = dict(part.split("=", 1) for part in wildcards.setting.split("/"))
    point = {key: next(v for v in grid[key] if str(v) == folder[key]) for key in grid}
    return json.dumps(point)


def run_csvs(demo):
    seeds = config["demos"][demo]["seeds"]
    if config["demos"][demo].get("grid"):
        return [
            f"results/{demo}/{p}/seed{s}.csv" for p in grid_points(demo) for s in seeds
        ]
    return [f"results/{demo}/seed{seed}.csv" for seed in seeds]


def code(*modules):
    """The src/ files these modules import (see src/lecture17/deps.py)."""
    return code_inputs(*modules, root=ROOT)


from lecture17.figures import FIGURES

# Every configured demo gets a seed-averaged table; a figure is drawn when its demo is configured.
TABLES = list(config["demos"])
FIGURE_NAMES = [name for name, (demo, _) in FIGURES.items() if demo in config["demos"]]

# The report lists the code every result came from (its provenance block hashes these files).
ALL_CODE = code(
    "lecture17.report",
    "lecture17.aggregate",
    "lecture17.figures",
    "lecture17.run",
    *{f"lecture17.experiments.{DEMOS[d][0]}" for d in config["demos"]},
)
