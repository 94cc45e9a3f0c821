"""Faults injected into real builds: a job killed mid-write, a build stopped, a bad config.

A killed job must leave no CSV that a later step trusts, and the next `snakemake` must finish
the build with the bytes an uninterrupted one writes (csvio's docstring says how). A bad config
must fail when the workflow is parsed, before any job, naming the key and what was expected.

The builds run in a copy of the repository (tests/repository.py) on a small config of their
own: demo 01.1 with two seeds, so two cheap jobs and their aggregation, one at a time. The fault
is injected from outside the project's code: a `sitecustomize.py` on the jobs' PYTHONPATH
(STALL below) stops one job halfway through writing its CSV, with the header and one row on
disk, and tells the test its pid; the test then sends the signal.
"""

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pandas as pd
import pytest
import yaml
from repository import ROOT, copy_repository

from lecture17.pipeline.aggregate import read_runs
from lecture17.pipeline.csvio import is_temporary, temporary_path, write_csvs
from lecture17.pipeline.job import check_demo, fits

TEST_CONFIG = ".test/config/config.yaml"
DEMO, SEEDS = "01.1", [0, 1]
RUNS = [f"results/{DEMO}/seed{seed}.csv" for seed in SEEDS]
TABLE = f"results/tables/{DEMO}.csv"
JOBS = [{path, path.replace(".csv", ".timing.csv")} for path in [*RUNS, TABLE]]  # their outputs
OUTPUTS = set().union(*JOBS)
STALLED = f"results/{DEMO}/.seed0.csv.tmp"  # csvio.temporary_path of seed 0's CSV
TIMEOUT = 300  # seconds for a build, or a job to stall: generous, for a loaded 2-core machine
slow = pytest.mark.slow

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


# --- builds -------------------------------------------------------------------------------------


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


def stalled_job(build: subprocess.Popen, stall: Path) -> int:
    """Wait for the job that stalls mid-write; its pid."""
    wait_until(lambda: (stall / "pid").exists() or build.poll() is not None, "the stalled job")
    assert build.poll() is None, "the build ended before a job stalled"
    return int((stall / "pid").read_text())


def exited(pid: int) -> bool:
    """Gone, or a zombie (dead, not yet reaped: its parent shell died first)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def present(work: Path) -> set[str]:
    return {path for path in OUTPUTS if (work / path).exists()}


def temporary_files(work: Path) -> list[str]:
    return sorted(str(p.relative_to(work)) for p in (work / "results").rglob("*.tmp"))


def reproducible(work: Path) -> dict[str, bytes]:
    """The outputs there are, timings aside (they differ on every run)."""
    return {p: (work / p).read_bytes() for p in sorted(present(work)) if ".timing." not in p}


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    """What an uninterrupted build writes."""
    work = checkout(tmp_path_factory.mktemp("uninterrupted"))
    assert ran(build(work)) == OUTPUTS
    return reproducible(work)


def assert_stalled_mid_write(work: Path, uninterrupted: dict) -> None:
    """The stalled job has no output yet, and its CSV is half written: a prefix of the whole."""
    partial, whole = (work / STALLED).read_bytes(), uninterrupted[RUNS[0]]
    assert whole.startswith(partial) and partial.count(b"\n") == 2 < whole.count(b"\n")
    assert not present(work) & JOBS[0]


def assert_nothing_of_the_job(work: Path) -> None:
    """Neither output of the interrupted job, and no table (aggregation never ran)."""
    assert not present(work) & (JOBS[0] | JOBS[-1])


def assert_the_next_build_completes_it(work: Path, uninterrupted: dict, *args: str) -> None:
    """The next `snakemake` runs exactly the jobs that lack an output and writes what an
    uninterrupted build writes; no temporary file is left."""
    unfinished = set().union(*(job for job in JOBS if job - present(work)))
    assert ran(build(work, *args)) == unfinished
    assert reproducible(work) == uninterrupted
    assert temporary_files(work) == []


# --- a job killed mid-write, a build stopped ----------------------------------------------------


@slow
def test_a_job_killed_mid_write_leaves_no_csv_and_the_next_build_completes_it(
    tmp_path, uninterrupted
):
    """SIGKILL to the job alone (what the OOM killer sends) while its CSV is half written."""
    work = checkout(tmp_path / "work")
    running = start(work, stall=tmp_path / "stall")
    job = stalled_job(running, tmp_path / "stall")
    assert_stalled_mid_write(work, uninterrupted)
    os.kill(job, signal.SIGKILL)
    returncode, log = finish(running, work)
    assert returncode != 0 and "Error in rule self_attention" in log, log
    assert_nothing_of_the_job(work)
    # SIGKILL cannot be caught: the job's temporary files stay, never taken for a run (below).
    assert temporary_files(work) == [STALLED, STALLED.replace(".csv", ".timing.csv")]
    assert_the_next_build_completes_it(work, uninterrupted)


@slow
def test_a_build_killed_mid_write_leaves_no_csv_and_after_unlock_the_next_build_completes_it(
    tmp_path, uninterrupted
):
    """SIGKILL to snakemake and its jobs at once (`kill -9 -- -<pgid>`, a cluster's hard kill):
    nothing cleans up after the job, so only csvio's renames keep its outputs away. Were one of
    them there, the next build would stop (IncompleteFilesException)."""
    work = checkout(tmp_path / "work")
    running = start(work, stall=tmp_path / "stall")
    stalled_job(running, tmp_path / "stall")
    os.killpg(running.pid, signal.SIGKILL)
    finish(running, work)
    assert_nothing_of_the_job(work)
    assert any((work / ".snakemake/incomplete").iterdir())  # Snakemake saw it start, not end
    build(work, "--unlock")  # Snakemake's own lock, left by its kill: the one step it asks for
    assert_the_next_build_completes_it(work, uninterrupted)


@slow
def test_snakemake_sent_sigterm_finishes_the_running_job_and_the_next_build_the_rest(
    tmp_path, uninterrupted
):
    """SIGTERM to snakemake alone while a job is mid-write: Snakemake lets that job finish and
    starts no other."""
    work = checkout(tmp_path / "work")
    running = start(work, stall=tmp_path / "stall")
    stalled_job(running, tmp_path / "stall")
    running.send_signal(signal.SIGTERM)
    said = "Will exit after finishing currently running jobs"
    wait_until(lambda: said in (work / "build.log").read_text(), repr(said))
    (tmp_path / "stall" / "release").touch()  # the job goes on once Snakemake has stopped
    returncode, log = finish(running, work)
    assert returncode != 0, log
    done = reproducible(work)
    assert RUNS[0] in done and TABLE not in done  # the stalled job completed, aggregation never ran
    assert done == {path: uninterrupted[path] for path in done}  # and what is there is whole
    assert temporary_files(work) == []
    assert_the_next_build_completes_it(work, uninterrupted)


@slow
def test_a_build_stopped_with_sigterm_leaves_no_partial_csv_and_the_next_build_completes_it(
    tmp_path, uninterrupted
):
    """SIGTERM to snakemake and its jobs (what `timeout`, `kill -- -<pgid>` or a cluster's time
    limit send) while a job's CSV is half written: the job removes its temporary files."""
    work = checkout(tmp_path / "work")
    running = start(work, stall=tmp_path / "stall")
    job = stalled_job(running, tmp_path / "stall")
    assert_stalled_mid_write(work, uninterrupted)
    os.killpg(running.pid, signal.SIGTERM)  # snakemake, the job's shell and the job
    returncode, log = finish(running, work)
    wait_until(lambda: exited(job), "the job to exit")
    assert returncode != 0, log
    assert_nothing_of_the_job(work)
    assert temporary_files(work) == []  # csvio.exit_on_sigterm: the job removed them
    assert_the_next_build_completes_it(work, uninterrupted)


# --- the pieces those builds rely on, one by one ----------------------------------------------


class Interrupted:
    """A table whose writing is cut short by Ctrl-C (KeyboardInterrupt), a header in."""

    def to_csv(self, path, **kwargs):
        Path(path).write_text("demo,seed,quantity,value\n")
        raise KeyboardInterrupt


def test_a_write_cut_short_leaves_no_csv_and_no_temporary_file(tmp_path):
    whole = pd.DataFrame({"quantity": ["weight"], "value": [0.614]})
    first, second = tmp_path / "seed0.timing.csv", tmp_path / "seed0.csv"
    with pytest.raises(KeyboardInterrupt):
        write_csvs({first: whole, second: Interrupted()})
    assert list(tmp_path.iterdir()) == []  # not even the first, whole one: all or none


def test_a_temporary_file_is_never_taken_for_a_run(tmp_path):
    run = tmp_path / "results" / "01.1" / "seed0.csv"
    tmp = temporary_path(run)
    tmp.parent.mkdir(parents=True)
    tmp.write_text("demo,seed,quantity,value\n01.1,0,weight,0.614\n")
    assert is_temporary(tmp) and not is_temporary(run)
    # the globs of the code (reference.py, diff.py: "*.csv") and of a shell never match it
    assert not tmp.match("*.csv") and tmp.name.startswith(".")
    assert list(tmp.parent.glob("*.csv")) == []
    with pytest.raises(ValueError, match="unfinished writes"):
        read_runs([tmp])


# --- a bad config -------------------------------------------------------------------------------

DELETE = object()
BAD_CONFIGS = {
    # what: (where in the .test config, the value put there (DELETE: removed), what the error says)
    "unknown key": (["seed"], 3, ["'seed' is not one of ['device', 'demos']"]),
    "unknown key of a demo": (
        ["demos", "01.1", "seed"],
        [0],
        ["'seed' is not one of ['seeds', 'settings', 'devices', 'grid']", "['demos']['01.1']"],
    ),
    "unknown setting": (
        ["demos", "01.2", "settings", "dk"],
        64,
        ["config demos['01.2']", "unknown settings ['dk']", "expected exactly ['d_k', 'd_v',"],
    ),
    "unknown grid key": (
        ["demos", "02.3", "grid", "optimiser"],
        ["adam"],
        ["config demos['02.3']", "unknown settings ['optimiser']", "'optimizer'"],
    ),
    "wrong type of the seeds": (
        ["demos", "01.1", "seeds"],
        "a",
        ["'a' is not of type 'array'", "['demos']['01.1']['seeds']"],
    ),
    "wrong type of a setting": (
        ["demos", "01.1", "settings", "strength"],
        "4",
        ["config demos['01.1']: setting 'strength' is '4' (str), expected float"],
    ),
    "wrong type of a grid value": (
        ["demos", "05.1", "grid", "seq_len"],
        [32, "64"],
        ["config demos['05.1']: grid value of 'seq_len' is '64' (str), expected int"],
    ),
    "unknown demo": (
        ["demos", "99.9"],
        {"seeds": [0], "settings": {}},
        ["'99.9' does not match '^(0[1-6]|13)\\\\.[1-9]$'", "['demos']"],
    ),
    "unknown demo of a known script": (
        ["demos", "01.9"],
        {"seeds": [0], "settings": {}},
        ["unknown demo '01.9'; expected one of ['01.1', '01.2',"],
    ),
    "missing setting": (
        ["demos", "01.2", "settings", "d_k"],
        DELETE,
        ["config demos['01.2']", "missing settings ['d_k']", "expected exactly ['d_k', 'd_v',"],
    ),
    "setting also a grid key": (
        ["demos", "02.3", "settings", "d_k"],
        16,
        ["config demos['02.3']: ['d_k'] in both `settings` and `grid`; expected one of the two"],
    ),
    "training demo without its grid": (
        ["demos", "02.3", "grid"],
        DELETE,
        ["config demos['02.3']: expected a `grid` (a training demo) for lookup_task"],
    ),
}


def edited(config: dict, keys: list[str], value) -> dict:
    *parents, last = keys
    block = config
    for key in parents:
        block = block[key]
    if value is DELETE:
        del block[last]
    else:
        block[last] = value
    return config


def dry_run(work: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "snakemake", "--dry-run", "--cores", "1", TABLE, *args]
    return subprocess.run(
        cmd, cwd=work, env=environment(work), capture_output=True, text=True, timeout=TIMEOUT
    )


@pytest.fixture(scope="module")
def repository(tmp_path_factory):
    return copy_repository(tmp_path_factory.mktemp("configs"))


@slow
@pytest.mark.parametrize("what", BAD_CONFIGS)
def test_a_bad_config_fails_before_any_job_naming_the_key_and_what_was_expected(
    what, repository, tmp_path
):
    keys, value, said = BAD_CONFIGS[what]
    config = edited(yaml.safe_load((repository / TEST_CONFIG).read_text()), keys, value)
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(config))
    done = dry_run(
        repository, "--configfile", str(tmp_path / "bad.yaml"), "--replace-workflow-config"
    )
    text = done.stdout + done.stderr
    assert done.returncode != 0, text
    assert "Building DAG of jobs" not in text, text  # it failed while the workflow was parsed
    for words in said:
        assert words in text, text


@pytest.mark.parametrize("config", ["config/config.yaml", TEST_CONFIG])
def test_the_configs_we_ship_pass_the_schema_and_check_demo(config):
    """What common.smk runs on them (test_lint and test_workflow also parse the workflow)."""
    schema = yaml.safe_load((ROOT / "workflow/schemas/config.schema.yaml").read_text())
    loaded = yaml.safe_load((ROOT / config).read_text())
    jsonschema.Draft202012Validator(schema).validate(loaded)
    for demo, spec in loaded["demos"].items():
        check_demo(demo, spec, loaded.get("device", "cpu"))


@slow
def test_a_bad_config_starts_no_job(tmp_path):
    """Not a dry run: the build stops before it runs or writes anything."""
    work = checkout(tmp_path)
    config = yaml.safe_load((work / "faults.yaml").read_text())
    (work / "faults.yaml").write_text(
        yaml.safe_dump(edited(config, ["demos", DEMO, "settings", "strenght"], 4))
    )
    returncode, log = finish(start(work), work)
    assert returncode != 0 and "unknown settings ['strenght']" in log, log
    assert not any((work / folder).exists() for folder in ("results", "logs", "benchmarks"))


@pytest.mark.parametrize(
    "value, annotation, fit",
    [
        (4, float, True),  # YAML's 4 for a float setting
        (True, float, False),  # `true` is no number
        (True, int, False),
        (True, bool, True),
        (yaml.safe_load("lr: 1e-3")["lr"], float, False),  # YAML 1.1: no dot, a string
        (yaml.safe_load("lr: 1.0e-3")["lr"], float, True),
        ([64, 128], list[int], True),
        ([64, 128.5], list[int], False),
        (64, list[int], False),
        (["gru", "nn.GRU"], list[str], True),
        ({"gru": {"hidden": 128}}, dict, True),
        ("small", str, True),
        (8, str, False),
    ],
)
def test_a_config_value_fits_its_argument_annotation_or_not(value, annotation, fit):
    assert fits(value, annotation) is fit


def test_a_grid_on_a_demo_that_trains_nothing_is_a_config_error():
    spec = {"seeds": [0], "settings": {}, "grid": {"strength": [4, 6]}}
    with pytest.raises(ValueError, match=r"expected no `grid` \(not a training demo\)"):
        check_demo("01.1", spec, "cpu")
    check_demo("01.1", {"seeds": [0], "settings": {"strength": 4}}, "cpu")  # the same, right
