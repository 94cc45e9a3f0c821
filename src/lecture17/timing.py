"""Wall-clock timing, the one clock of the demos, train() and bench/ (§3.4, §9.5, §10.4).

Every timing is machine-dependent (§0.5): each demo declares its timing quantities in its
registry entry (experiments.DEMOS), and the job runner writes them to `<run>.timing.csv`,
apart from the reproducible numbers.

- `timed(fn, *args, device=...)`: one call and its seconds; the clock stops when a cuda
  device has finished (cuda runs its kernels asynchronously: without the wait the clock would
  time only the launches). This is the one place that synchronises.
- `best_ms`, `median_ms`: one closure called `repeats` times, the fastest (the call least
  disturbed by other processes) or the median.
- `interleaved_ms`: several closures timed in rounds, each round running every closure in
  turn, so a slow drift of the machine hits all of them alike.

torch is imported only to synchronise a cuda device: the numpy demos never pay for it.
"""

import statistics
import time


def synchronize(device: str) -> None:
    """Wait until `device` has run every kernel queued so far (cuda); nothing to wait for on cpu."""
    if device == "cuda":
        import torch

        torch.cuda.synchronize()


def timed(fn, *args, device: str = "cpu"):
    """fn(*args) and the wall-clock seconds it took, work queued before the call excluded."""
    synchronize(device)
    start = time.perf_counter()
    result = fn(*args)
    synchronize(device)
    return result, time.perf_counter() - start


def _seconds(fn, repeats: int, device: str) -> list[float]:
    """The seconds of `repeats` calls of fn(), one clock reading each."""
    return [timed(fn, device=device)[1] for _ in range(repeats)]


def best_ms(fn, repeats: int, device: str = "cpu") -> float:
    """The fastest of `repeats` calls of fn(), in milliseconds."""
    return 1e3 * min(_seconds(fn, repeats, device))


def median_ms(fn, repeats: int, device: str = "cpu") -> float:
    """The median of `repeats` calls of fn(), in milliseconds."""
    return 1e3 * statistics.median(_seconds(fn, repeats, device))


def _run(fn, block: int) -> None:
    """fn() `block` times: what interleaved_ms times with one clock reading."""
    for _ in range(block):
        fn()


def interleaved_ms(calls: dict, rounds: int, device: str = "cpu", block: int = 1) -> dict:
    """Median ms per call of each closure in `calls`, timed in `rounds` interleaved rounds.

    Each round runs every closure `block` times in turn (one clock reading per block, divided
    by `block`), so a slow drift of the machine hits all of them alike.
    """
    seconds = {name: [] for name in calls}
    for _ in range(rounds):
        for name, fn in calls.items():
            seconds[name].append(timed(_run, fn, block, device=device)[1] / block)
    return {name: 1e3 * statistics.median(s) for name, s in seconds.items()}
