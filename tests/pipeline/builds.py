"""Small Snakemake builds in a copy of the repository (tests/repository.py), for the fault tests:
test_csvio.py (a job killed mid-write, a build stopped) and test_job.py (a bad config).

The builds run on a small config of their own: demo 01.1 of the .test config with two seeds, so
two cheap jobs and their aggregation, one at a time. A fault is injected from outside the
project's code: a `sitecustomize.py` on the jobs' PYTHONPATH (STALL below) stops one job halfway
through writing its CSV, with the header and one row on disk, and tells the test its pid.
"""

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import yaml
from repository import copy_repository

TEST_CONFIG = ".test/config/config.yaml"  # relative: the copy's own
DEMO, SEEDS = "01.1", [0, 1]
RUNS = [f"results/{DEMO}/seed{seed}.csv" for seed in SEEDS]
TABLE = f"results/tables/{DEMO}.csv"
JOBS = [{path, path.replace(".csv", ".timing.csv")} for path in [*RUNS, TABLE]]  # their outputs
OUTPUTS = set().union(*JOBS)
STALLED = f"results/{DEMO}/.seed0.csv.tmp"  # csvio.temporary_path of seed 0's CSV
TIMEOUT = 300  # seconds for a build, or a job to stall: generous, for a loaded 2-core machine

# The fault, as the jobs' sitecustomize: a write to the file named $LECTURE17_STALL_FILE stops
# before its third line (header and first row flushed to disk), writes the job's pid to
# $LECTURE17_STALL_DIR/pid, and waits until $LECTURE17_STALL_DIR/release exists (or a signal).
STALL = """
import builtins, os, time
from pathlib import Path

_name, _dir = os.environ["LECTURE17_STALL_FILE"], Path(os.environ["LECTURE17_STALL_DIR"])
_open = builtins.open


def _stall(handle):
    handle.flush()
    (_dir / "pid.part").write_text(str(os.getpid()))
    os.replace(_dir / "pid.part", _dir / "pid")
    while not (_dir / "release").exists():
        time.sleep(0.05)


def _open_stalling(file, mode="r", *args, **kwargs):
    handle = _open(file, mode, *args, **kwargs)
    if "w" in mode and isinstance(file, (str, os.PathLike)) and os.path.basename(file) == _name:
        write, lines = handle.write, []

        def stalling_write(text):
            lines.append(text)
            if len(lines) == 3:
                _stall(handle)
            return write(text)

        handle.write = stalling_write
    return handle


builtins.open = _open_stalling
"""


def checkout(work: Path) -> Path:
    """A copy of the repository with faults.yaml: demo 01.1 of the .test config, two seeds."""
    copy_repository(work)
    spec = yaml.safe_load((work / TEST_CONFIG).read_text())["demos"][DEMO]
    config = {"device": "cpu", "demos": {DEMO: {**spec, "seeds": SEEDS}}}
    (work / "faults.yaml").write_text(yaml.safe_dump(config))
    return work


def environment(work: Path, stall: Path | None = None) -> dict:
    env = dict(
        os.environ,
        PYTHONPATH=str(work / "src"),
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    )
    if stall is not None:  # the jobs' shell prefix puts their src/ before this PYTHONPATH
        stall.mkdir()
        (stall / "sitecustomize.py").write_text(STALL)
        env.update(
            PYTHONPATH=f"{env['PYTHONPATH']}{os.pathsep}{stall}",
            LECTURE17_STALL_FILE=Path(STALLED).name,
            LECTURE17_STALL_DIR=str(stall),
        )
    return env


def start(work: Path, *args: str, stall: Path | None = None) -> subprocess.Popen:
    """`snakemake --cores 1` of 01.1's table, in the background, its output to build.log; in a
    process group of its own with its jobs, as a build started from a shell is."""
    cmd = [sys.executable, "-m", "snakemake", "--cores", "1", "--configfile", "faults.yaml"]
    cmd += ["--replace-workflow-config", *args, TABLE]
    with (work / "build.log").open("w") as log:
        return subprocess.Popen(
            cmd,
            cwd=work,
            env=environment(work, stall),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def finish(build: subprocess.Popen, work: Path) -> tuple[int, str]:
    return build.wait(timeout=TIMEOUT), (work / "build.log").read_text()


def build(work: Path, *args: str) -> str:
    """A build that must succeed; its log."""
    returncode, log = finish(start(work, *args), work)
    assert returncode == 0, log
    return log


def ran(log: str) -> set[str]:
    """The outputs of the jobs a build's log says it ran."""
    found = (match.group(1) for match in re.finditer(r"^\s+output: (.*)$", log, re.M))
    return {path.strip() for paths in found for path in paths.split(",")}


def wait_until(done, what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not done():
        assert time.monotonic() < deadline, f"waited {TIMEOUT} s for {what}"
        time.sleep(0.1)
