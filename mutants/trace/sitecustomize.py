"""Which of the lecture's functions a job ran: a `sitecustomize` on the jobs' PYTHONPATH.

Only in the builds of `make mutants` (mutants/run.py puts this folder on PYTHONPATH and sets
LECTURE17_TRACE_SRC and LECTURE17_TRACE_DIR). A global trace function notes the file and the
qualified name of every Python function called from under LECTURE17_TRACE_SRC and returns
None (no line tracing), so a training step pays one callback per Python call. At its end a job
(a process started with `--out <csv>`; Snakemake and the warm server are not traced) writes
them to LECTURE17_TRACE_DIR/<csv path>.json; a mutant whose function a job never ran cannot
change that job's CSV, so its build keeps the control's.

A warm-started job is two processes (lecture17/pipeline/warm.py): the client, started with the
job's argv, and the child forked from a server that imported this module once. Each traces
itself; the client removes an old trace when it starts, and each adds its calls to the file at
its end (the child first: the client waits for it), so the trace is the job's, warm or cold.
"""

import atexit
import json
import os
import sys
import threading
from pathlib import Path

_seen: set[tuple[str, str]] = set()
_src = ""


def _trace(frame, event, arg):
    code = frame.f_code
    if code.co_filename.startswith(_src):
        _seen.add((code.co_filename, code.co_qualname))


def _write(argv: list[str]) -> None:
    sys.settrace(None)
    threading.settrace(None)
    target = _target(argv)
    root = Path(_src).parents[1]  # the build folder: <root>/src/lecture17
    calls = {f"{Path(f).relative_to(root)}::{name}" for f, name in _seen}
    if target.is_file():  # the warm child's, when this is its client
        calls |= set(json.loads(target.read_text(encoding="utf-8")))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(sorted(calls), indent=0) + "\n", encoding="utf-8")


def _target(argv: list[str]) -> Path:
    out = Path(argv[argv.index("--out") + 1])
    out = out if not out.is_absolute() else out.relative_to(Path.cwd())
    return (Path(os.environ["LECTURE17_TRACE_DIR"]) / out).with_suffix(".json")


def start_job(argv: list[str]):
    """Trace a job (`--out <csv>` in its argv; Snakemake and the warm server are not jobs);
    returns what writes its calls at its end. A new process calls it below (and writes at exit);
    a warm-started job's child, forked from a server that imported this module once, calls it
    itself (lecture17/pipeline/warm.py job_hook)."""
    global _src
    _src = os.environ.get("LECTURE17_TRACE_SRC", "")
    if not (_src and os.environ.get("LECTURE17_TRACE_DIR") and "--out" in argv[:-1]):
        return None
    _seen.clear()
    sys.settrace(_trace)
    threading.settrace(_trace)
    return lambda: _write(argv)


_finish = start_job(sys.argv)
if _finish is not None:  # a new process: the job itself, or a warm job's client
    _target(sys.argv).unlink(missing_ok=True)
    atexit.register(_finish)
