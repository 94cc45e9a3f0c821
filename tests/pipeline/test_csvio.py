"""Faults injected into real builds: a job killed mid-write, a build stopped; and the pieces of
csvio those builds rely on (all-or-none writes, temporary files never taken for a run).

A killed job must leave no CSV that a later step trusts, and the next `snakemake` must finish
the build with the bytes an uninterrupted one writes (csvio's docstring says how). The builds
(builds.py) run in a copy of the repository on demo 01.1 with two seeds; a `sitecustomize.py` on
the jobs' PYTHONPATH stops one job halfway through writing its CSV, with the header and one row
on disk, and tells the test its pid; the test then sends the signal.
"""

import os
import signal
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from builds import (
    JOBS,
    OUTPUTS,
    RUNS,
    STALLED,
    TABLE,
    build,
    checkout,
    finish,
    ran,
    start,
    wait_until,
)

from lecture17.pipeline.aggregate import read_runs
from lecture17.pipeline.csvio import is_temporary, temporary_path, write_csvs

slow = pytest.mark.slow


# --- builds -------------------------------------------------------------------------------------


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
