"""A build told to stop stops: Snakemake's SIGTERM handler, without its deadlock.

Snakemake (9.27) binds SIGTERM to `JobScheduler.exit_gracefully`, which takes the scheduler's
lock, a non-reentrant `threading.Lock`. The main thread holds that lock while it selects the
next jobs (`run_selector`, the ILP solver CBC included) and in a few other places; a signal
handler runs on the main thread, so a SIGTERM that lands there waits for a lock its own thread
holds, for ever (seen: a build stopped by `timeout 300` hung 7 minutes until killed).

`graceful_sigterm` (the Snakefile's `onstart`) binds SIGTERM to a handler that hands the same
`exit_gracefully` to a thread of its own and returns at once: the main thread finishes what
it was doing, releases the lock, and the thread asks the scheduler to stop after the running
jobs, as Snakemake meant. SIGINT raises KeyboardInterrupt on the main thread, which leaves a
`with lock:` block and releases it on the way: it never deadlocked.
"""

import base64
import signal
import threading
from pathlib import Path


def graceful_sigterm(scheduler) -> None:
    """SIGTERM → scheduler.exit_gracefully, called from a new thread (never under its lock)."""
    stop = scheduler.exit_gracefully

    def handler(signum, frame):
        threading.Thread(target=stop, name="graceful-sigterm", daemon=True).start()

    try:
        signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread (Snakemake's --gui): Snakemake's own stays
        pass


# A stop can land between a job's last rename (csvio.write_csvs: every CSV written to a .tmp
# and renamed at the end, so a CSV of ours that exists is whole) and Snakemake noting the job
# done: its "incomplete" marker stays (.snakemake/incomplete/<base64 of the path>), and the
# next build refuses to start (IncompleteFilesException) instead of completing what is missing.
# Seen: SIGINT 1.0 s into a build, 1 stop in 4 (tests/pipeline/test_stop.py). The Snakefile
# forgets, before the DAG is built, the markers of results CSVs that exist; a marked file that
# is not a CSV of ours, or that is missing, keeps its marker and Snakemake decides as before.
INCOMPLETE = Path(".snakemake") / "incomplete"


def forget_whole_csvs(root: Path = Path(".")) -> list[str]:
    """Remove the incomplete markers of results/**.csv files that exist; the paths forgotten."""
    folder = Path(root) / INCOMPLETE
    if not folder.is_dir():
        return []
    forgotten = []
    for marker in folder.iterdir():
        try:
            name = base64.b64decode(marker.name, validate=True).decode()
        except (ValueError, UnicodeDecodeError):
            continue
        whole = name.startswith("results/") and name.endswith(".csv")
        if whole and (Path(root) / name).is_file() and marker.is_file():
            marker.unlink()
            forgotten.append(name)
    return forgotten
