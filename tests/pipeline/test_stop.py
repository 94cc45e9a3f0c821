"""A build told to stop stops (pipeline/stopping.py): SIGTERM while the scheduler holds its
lock no longer deadlocks, and a real build stopped at several moments of its scheduling
exits within STOP_BOUND seconds each time, leaving no partial CSV, and the next build
completes it.

CI runs a sample of stops; `make stop-test` runs STOP_ALL=1 (every delay, both signals).
"""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from builds import OUTPUTS, build, checkout, start
from conftest import ROOT

STOP_BOUND = 60  # seconds from the signal to the exit: the running job's own time, and more
ALL = os.environ.get("STOP_ALL") == "1"

# The deadlock, as Snakemake has it: its own exit_gracefully (taking the scheduler's lock)
# called on a stand-in scheduler whose lock the main thread holds when SIGTERM arrives.
LOCKED = textwrap.dedent(
    """
    import os, signal, sys, threading, time
    from snakemake.scheduling.job_scheduler import JobScheduler
    from lecture17.pipeline import stopping

    class Scheduler:
        def __init__(self):
            self._lock, self._open_jobs = threading.Lock(), threading.Semaphore(0)
            self._user_kill = None
        exit_gracefully = JobScheduler.exit_gracefully

    scheduler = Scheduler()
    if sys.argv[1] == "ours":
        stopping.graceful_sigterm(scheduler)
    else:  # Snakemake's own binding
        signal.signal(signal.SIGTERM, scheduler.exit_gracefully)
    with scheduler._lock:  # the main thread selecting jobs (run_selector)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.2)
    assert scheduler._open_jobs.acquire(timeout=10), "never told to stop"
    print(scheduler._user_kill)
    """
)


def locked(handler: str) -> subprocess.CompletedProcess | None:
    """The script under `handler`; None when it hung (killed after 10 s)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    try:
        return subprocess.run(
            [sys.executable, "-c", LOCKED, handler],
            env=env,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except subprocess.TimeoutExpired:
        return None


def test_sigterm_under_the_schedulers_lock_stops_instead_of_deadlocking():
    assert locked("snakemake") is None  # Snakemake's binding deadlocks: the bug, reproduced
    done = locked("ours")
    assert done is not None and done.returncode == 0, done and done.stderr
    assert done.stdout.strip() == "graceful"


DELAYS = [0.2, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]  # seconds after the build starts
CASES = [(s, d) for s in (signal.SIGTERM, signal.SIGINT) for d in DELAYS]
SAMPLE = [(signal.SIGTERM, 0.5), (signal.SIGTERM, 2.0), (signal.SIGINT, 1.0)]


@pytest.mark.slow
@pytest.mark.parametrize("stop, delay", CASES if ALL else SAMPLE, ids=str)
def test_a_build_stopped_during_its_scheduling_exits_in_time_and_leaves_no_partial_csv(
    tmp_path, stop, delay
):
    work = checkout(tmp_path / "work")
    running = start(work)
    time.sleep(delay)
    running.send_signal(stop)  # to snakemake alone, as `timeout` and a terminal's kill do
    sent = time.monotonic()
    try:
        running.wait(timeout=STOP_BOUND)
    except subprocess.TimeoutExpired:
        os.killpg(running.pid, signal.SIGKILL)
        pytest.fail(f"{stop.name} {delay} s in: no exit within {STOP_BOUND} s")
    assert time.monotonic() - sent <= STOP_BOUND
    assert not list((work / "results").rglob("*.tmp")), "a partial CSV was left"
    build(work, "--unlock")  # a lock left by a stop is Snakemake's one question
    build(work)  # the next build completes what is missing
    assert {p for p in OUTPUTS if (work / p).exists()} == OUTPUTS


def test_a_whole_csv_marked_incomplete_by_a_stop_is_forgotten_and_nothing_else(tmp_path):
    """A stop between a job's last rename and Snakemake noting it done leaves a marker on a
    whole CSV (csvio renames a finished file into place): forgotten before the next DAG. A
    missing file, or one that is not a results CSV, keeps its marker."""
    import base64

    from lecture17.pipeline import stopping

    folder = tmp_path / stopping.INCOMPLETE
    folder.mkdir(parents=True)
    for name in ("results/01.1/seed1.csv", "results/01.1/seed2.csv", "report/lecture17.md"):
        (folder / base64.b64encode(name.encode()).decode()).write_text("")
    for name in ("results/01.1/seed1.csv", "report/lecture17.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x\n")
    assert stopping.forget_whole_csvs(tmp_path) == ["results/01.1/seed1.csv"]
    left = sorted(base64.b64decode(p.name).decode() for p in folder.iterdir())
    assert left == ["report/lecture17.md", "results/01.1/seed2.csv"]
