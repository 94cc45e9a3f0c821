"""Which of the lecture's functions a job ran: a `sitecustomize` on the jobs' PYTHONPATH.

Only in the builds of `make mutants` (mutants/run.py puts this folder on PYTHONPATH and sets
LECTURE17_TRACE_SRC and LECTURE17_TRACE_DIR). A global trace function notes the file and the
qualified name of every Python function called from under LECTURE17_TRACE_SRC and returns
None (no line tracing), so a training step pays one callback per Python call. At exit a job
(a process started with `--out <csv>`; Snakemake itself is not traced) writes them to
LECTURE17_TRACE_DIR/<csv path>.json; a mutant whose function a job never ran cannot change
that job's CSV, so its build keeps the control's.
"""

import atexit
import json
import os
import sys
import threading
from pathlib import Path

_SRC = os.environ.get("LECTURE17_TRACE_SRC")
_DIR = os.environ.get("LECTURE17_TRACE_DIR")
_seen: set[tuple[str, str]] = set()


def _trace(frame, event, arg):
    code = frame.f_code
    if code.co_filename.startswith(_SRC):
        _seen.add((code.co_filename, code.co_qualname))


def _write() -> None:
    sys.settrace(None)
    out = Path(sys.argv[sys.argv.index("--out") + 1])
    target = Path(_DIR, out if not out.is_absolute() else out.relative_to(Path.cwd()))
    target = target.with_suffix(".json")
    root = Path(_SRC).parents[1]  # the build folder: <root>/src/lecture17
    calls = sorted(f"{Path(f).relative_to(root)}::{name}" for f, name in _seen)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(calls, indent=0) + "\n", encoding="utf-8")


if _SRC and _DIR and "--out" in sys.argv[:-1]:  # a job (`--out <csv>`), not Snakemake
    sys.settrace(_trace)
    threading.settrace(_trace)
    atexit.register(_write)
