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

import signal
import threading


def graceful_sigterm(scheduler) -> None:
    """SIGTERM → scheduler.exit_gracefully, called from a new thread (never under its lock)."""
    stop = scheduler.exit_gracefully

    def handler(signum, frame):
        threading.Thread(target=stop, name="graceful-sigterm", daemon=True).start()

    try:
        signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread (Snakemake's --gui): Snakemake's own stays
        pass
