# Shared helpers: config validation, the list of runs, and each rule's code inputs.

import json
import os
import re
import sys
from pathlib import Path

# this checkout's code, as the jobs get it (PYTHONPATH=src below): not whatever copy of the
# package the environment installed (an editable install of another clone, say)
sys.path.insert(0, str(Path(workflow.basedir, "src")))

from snakemake.exceptions import WorkflowError
from snakemake.logging import logger
from snakemake.utils import validate

from lecture17.pipeline.csvio import timing_path
from lecture17.pipeline.deps import code_inputs
from lecture17.experiments import DEMOS, rules
from lecture17.reporting.figures import FIGURES
from lecture17.pipeline import record, stopping, warm
from lecture17.pipeline.job import check_demo, jobs
from lecture17.scripts import apply_edits, script_edits

validate(config, schema="../schemas/config.schema.yaml")

ROOT = Path(workflow.basedir)
# runs of GPU-only demos recorded on a GPU (`python -m lecture17 run 06.3 --device cuda`,
# bench/gpu_session.sh), which a CPU build aggregates instead of rerunning them
MEASURED = record.MEASURED
WARM_SERVER = []  # the build's warm-start server, while it runs (Snakefile: onstart)

# One thread per job, numpy's BLAS included (torch.set_num_threads does not reach it):
# `--cores 2` then runs two jobs side by side, and every number is computed the same way.
# (GOTO_NUM_THREADS too: Snakemake sets it to the job's threads, which a timing job has more of.)
# PYTHONPATH=src: the jobs run this checkout's code, in the venv or in a --use-conda env alike.
THREAD_VARIABLES = (
    "OMP_NUM OPENBLAS_NUM MKL_NUM GOTO_NUM VECLIB_MAXIMUM NUMEXPR_NUM".split()
)
JOB_ENV = {f"{name}_THREADS": "1" for name in THREAD_VARIABLES}
JOB_ENV["PYTHONPATH"] = os.pathsep.join(
    ["src"] + [p for p in [os.environ.get("PYTHONPATH")] if p]
)
shell.prefix(
    "export "
    + " ".join(
        f"{name}={value}" for name, value in JOB_ENV.items() if name != "PYTHONPATH"
    )
    + " PYTHONPATH=src${{PYTHONPATH:+:$PYTHONPATH}}; "
)


wildcard_constraints:
    demo=r"\d\d\.\d",
    seed=r"\d+",
    setting=r"[^/=]+=[^/]+(/[^/=]+=[^/]+)*",


# An exercise done as the lecture says it (scripts/05_transformer_vs_rnn.py: STEPS = 1500)
# edits the config this build runs; the scripts' constants are None (no edit) as committed.
config["demos"] = apply_edits(config["demos"], script_edits(ROOT))

# Every demo's settings and grid must match its function's arguments, names and types: a typo
# fails here, before any job (pipeline.job.check_demo).
for _demo, _spec in config["demos"].items():
    check_demo(_demo, _spec, config["device"])


# Snakemake rule name -> the registered demos it runs (workflow/rules/experiments.smk).
EXPERIMENT_RULES = rules()


def demo_pattern(demos):
    """The `demo` wildcard of one experiment rule: exactly its demos' ids ("01\\.1|01\\.2|…")."""
    return "|".join(re.escape(d.id) for d in demos)


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


def runs_here(demo):
    """A demo runs in this build unless its `devices` leave out the build's `device`, or it is
    a recorded demo (07.x, 08.x: run by `snakemake robustness`, aggregated from its recording)
    or a study (06.7, 06.8: its seeds are its recorded demos', 07.9 and 09.1).
    """
    if DEMOS[demo].kind == "recorded" or DEMOS[demo].study:
        return False
    return config["device"] in config["demos"][demo].get("devices", ["cpu", "cuda"])


# The recorded demos of this config (`snakemake robustness` runs and records them).
RECORDED_DEMOS = [d for d in config["demos"] if DEMOS[d].kind == "recorded"]


def grid_json(wildcards):
    """This job's grid point, with the config's types ("8" -> 8), in the config's order."""
    grid = config["demos"][wildcards.demo]["grid"]
    folder = dict(part.split("=", 1) for part in wildcards.setting.split("/"))
    point = {key: next(v for v in grid[key] if str(v) == folder[key]) for key in grid}
    return json.dumps(point)


def models_argument(wildcards, input):
    """`--models <file> ` for a job of a reading demo (registry `reads_models`), else nothing:
    decided from the job's own demo, never from a variable of the loop that made the rule.
    """
    return f"--models {input.models} " if DEMOS[wildcards.demo].reads_models else ""


def read_models(wildcards):
    """A reading demo's input (registry `reads_models`): the models the demo it reads kept for
    the same grid point and seed (results/05.1/<setting>/seed<s>.models.pt for 06.6)."""
    source = DEMOS[wildcards.demo].reads_models
    return f"results/{source}/{wildcards.setting}/seed{wildcards.seed}.models.pt"


# A reading demo's every job must have its model: its grid points and seeds among those of the
# demo it reads, with the same sizes and training (else the job would refuse the kept model).
for _demo, _spec in config["demos"].items():
    if _source := DEMOS[_demo].reads_models:
        _read = config["demos"].get(_source)
        if _read is None:
            raise WorkflowError(
                f"demo {_demo} reads the models of {_source}, not configured"
            )
        _have = {(json.dumps(p, sort_keys=True), s) for _, p, s in jobs(_source, _read)}
        _missing = [
            (p, s)
            for _, p, s in jobs(_demo, _spec)
            if (json.dumps(p, sort_keys=True), s) not in _have
        ]
        _differ = [
            k
            for k in ("sizes", "train")
            if _spec["settings"].get(k) != _read["settings"].get(k)
        ]
        if _missing or _differ:
            raise WorkflowError(
                f"demo {_demo} reads {_source}'s models: "
                + (f"jobs {_missing} have none; " if _missing else "")
                + (f"its {_differ} differ from {_source}'s" if _differ else "")
            )


def run_csvs(demo):
    """The run CSVs a demo's table is aggregated from (see pipeline.job.jobs)."""
    return [path for path, _, _ in jobs(demo, config["demos"][demo])]


def recorded_csvs(demo):
    """A demo's runs recorded on another machine under report/measured/<demo>/ (a GPU's, for
    06.3), if every one is there and they are what this checkout's config and code compute
    (their record.json: settings, code hashes, registry entry); else [] with a warning.
    """
    if not Path(MEASURED, demo).is_dir():
        return []
    spec = config["demos"][demo]
    if stale := record.problems(demo, spec, MEASURED, ROOT):
        device = (record.read(Path(MEASURED, demo)) or {}).get("device", "cuda")
        hint = (
            "rerun: make robustness"
            if DEMOS[demo].kind == "recorded"
            else record.rerun_hint(demo, device)
        )
        logger.warning(f"{MEASURED}/{demo}/ not used: {'; '.join(stale)} ({hint})")
        return []
    return [path for path, _, _ in jobs(demo, spec, MEASURED)]


def table_inputs(demo):
    """This build's runs of the demo, or, for a GPU demo in a CPU build, the recorded ones."""
    if runs_here(demo):
        return run_csvs(demo)
    recorded = recorded_csvs(demo)
    if not recorded and DEMOS[demo].kind == "recorded":
        raise WorkflowError(
            f"demo {demo} is run by `snakemake robustness` (make robustness), and "
            f"{MEASURED}/{demo}/ holds no runs recorded with this config and code"
        )
    if not recorded and DEMOS[demo].study:
        extended = [d for d in config["demos"] if DEMOS[d].extends == demo]
        raise WorkflowError(
            f"demo {demo} is a study outside the default build: its seeds are {extended}'s, "
            f"run by `snakemake robustness` (one seed alone: python -m lecture17 run {demo})"
        )
    if not recorded:  # e.g. `python -m lecture17 show 06.3` in a CPU build
        raise WorkflowError(
            f"demo {demo} runs only in a build with device in "
            f"{config['demos'][demo]['devices']} (`--config device=cuda` on a GPU), and "
            f"{MEASURED}/{demo}/ holds no runs recorded with this config's settings"
        )
    return recorded


def code(*modules):
    """The src/ files these modules import (see src/lecture17/pipeline/deps.py)."""
    return code_inputs(*modules, root=ROOT)


# The registry is read when the workflow is parsed. What a job takes from it (its function
# and its declared timings) is the job's `registry` param, so editing another fact (a title, a
# §, another demo's entry) reruns no experiment; the registry file is left out of the code.
# The demo's own module is left out too: the lines of it that the job's function runs are the
# job's `code` param, so adding or editing another demo of the module reruns none of this one's
# jobs (pipeline/record.py: job_code, function_code, registry_entry; a recorded run hashes the
# same files and lines).


# Once per demo and parse (every job of a demo imports and runs the same code): reading the
# imports and cutting the modules for each of a build's jobs would take most of a dry run.
_JOB_CODE, _FUNCTION_CODE = {}, {}


def job_code(wildcards):
    """The code inputs of an experiment job: the files it imports, less the registry and the
    experiments modules it runs only part of (whose lines are the `code` param)."""
    if wildcards.demo not in _JOB_CODE:
        _JOB_CODE[wildcards.demo] = record.job_code(wildcards.demo, ROOT)
    return _JOB_CODE[wildcards.demo]


def function_code(wildcards):
    """The sha256 of the experiments lines the job's demo function runs."""
    if wildcards.demo not in _FUNCTION_CODE:
        _FUNCTION_CODE[wildcards.demo] = record.function_code(wildcards.demo, ROOT)
    return _FUNCTION_CODE[wildcards.demo]


def registry_entry(wildcards):
    """The facts of this job's registry entry that decide what the job computes and writes."""
    return record.registry_entry(wildcards.demo)


# Every demo that runs in this build gets a seed-averaged table; a GPU-only demo (06.3) gets one
# in a `device=cuda` build, or from its runs recorded under report/measured/. A figure is drawn
# when its demo has a table.
TABLES = [demo for demo in config["demos"] if runs_here(demo) or recorded_csvs(demo)]
RECORDED = [demo for demo in TABLES if not runs_here(demo)]
FIGURE_NAMES = [name for name, fig in FIGURES.items() if fig.table in TABLES]

# The report lists the code every result came from (its provenance block hashes these files).
ALL_CODE = code(
    "lecture17.reporting.report",
    "lecture17.pipeline.aggregate",
    "lecture17.reporting.figures",
    "lecture17.pipeline.job",
    *{f"lecture17.experiments.{DEMOS[d].module}" for d in config["demos"]},
)


def job_threads(wildcards):
    """A timing demo's job (its registry entry says `alone`) takes every core of the build, so
    nothing runs beside it while it is timed; it still computes on one thread (shell.prefix).
    """
    return workflow.cores if DEMOS[wildcards.demo].alone else 1


def slurm_extra(wildcards):
    """On a cluster (workflow/profiles/slurm) threads say nothing about neighbours: a timing
    demo's job asks SLURM for a node of its own (`--exclusive`)."""
    return "--exclusive" if DEMOS[wildcards.demo].alone else ""
