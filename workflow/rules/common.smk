# Shared helpers: config validation, the list of runs, and each rule's code inputs.

import json
from pathlib import Path

from snakemake.utils import validate

from lecture17.deps import code_inputs
from lecture17.experiments import DEMOS
from lecture17.run import check_settings, load_demo


validate(config, schema="../schemas/config.schema.yaml")

ROOT = Path(workflow.basedir)

# One thread per job, numpy's BLAS included (torch.set_num_threads does not reach it):
# `--cores 2` then runs two jobs side by side, and every number is computed the same way.
shell.prefix(
    "export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 "
    "VECLIB_MAXIMUM_THREADS=1 NUMEXPR_NUM_THREADS=1; "
)


wildcard_constraints:
    demo=r"\d\d\.\d",
    seed=r"\d+",


# Every demo's settings must match its function's arguments: a typo fails here, before any job.
for _demo, _spec in config["demos"].items():
    check_settings(load_demo(_demo), _spec["settings"])


def demos_of(script):
    """The configured demo ids of one lecture script ("01" -> ["01.1", …])."""
    return [d for d in config["demos"] if d.startswith(f"{script}.")]


def settings_json(wildcards):
    """Only this demo's settings: editing another demo's block reruns nothing here."""
    return json.dumps(config["demos"][wildcards.demo]["settings"], sort_keys=True)


def run_csvs(demo):
    return [f"results/{demo}/seed{seed}.csv" for seed in config["demos"][demo]["seeds"]]


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
