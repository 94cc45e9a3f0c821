"""Where a student's code runs: a bubblewrap sandbox with nothing of the machine's to write.

`python -m lecture17 check FILE` runs the whole check of one file (run.check and the forked
children it starts) in a child process, `python -m lecture17.checker.sandbox`, inside Debian's
bubblewrap (`bwrap`, `command`):
- the whole filesystem read-only (--ro-bind / /), the checkout and $HOME included;
- /tmp, /run and /dev/shm fresh, size-limited tmpfs: host sockets there are out of sight, and
  the student's working directory and $HOME (/tmp/work) and the checker's temporary files
  (/tmp/checker) live in memory, gone when the check ends;
- the student's file and the .py files beside it (its helpers) bound read-only;
- no network (--unshare-net), no capabilities in a user namespace of its own (--unshare-user
  --cap-drop ALL: root cannot remount), its own process ids (--unshare-pid, --die-with-parent:
  nothing it starts outlives it), a new terminal session and no stdin (no keystrokes pushed
  into the user's terminal), an environment of a few named variables (ENVIRONMENT).
Each forked child adds a memory and a file-size limit (child.py). Nothing is written to the
machine's disk: the sandboxed process prints its one result line (RESULT, then JSON: the
summary, the report, the page, the files the student's code left) on its standard output,
which this side reads as JSON, never as a pickle.

Where bwrap is missing or refused (a container without user namespaces), `available()` says
why and the check goes on without it, in a temporary working folder of its own, and says so;
LECTURE17_REQUIRE_SANDBOX=1 (CI) makes that an error. The sandbox protects the machine, not
the grade: a file written to fool the checker can make its own summary say anything.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

OVERALL = 20  # the sandboxed check's limit, in per-call timeouts
SUFFIXES = (".py", ".ipynb")  # what a student may hand in
REQUIRED = os.environ.get("LECTURE17_REQUIRE_SANDBOX") == "1"  # CI: no check outside bwrap
RESULT = "LECTURE17-CHECK-RESULT "  # the sandboxed process's one line of result
TMP_SIZE = 512 * 2**20  # bytes of /tmp (the student's work folder and the checker's files)
SMALL_SIZE = 64 * 2**20  # bytes of /run and /dev/shm
HELPERS = 200  # at most this many .py files beside the student's are bound (its helpers)
# what the sandboxed check sees of the environment (plus LECTURE17_*)
ENVIRONMENT = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "PYTHONPATH", "VIRTUAL_ENV")
ENVIRONMENT += ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


@dataclass
class Outcome:
    """What the sandboxed check of one file left: its exit code and its texts."""

    status: int
    summary: str = ""  # the terminal summary
    data: dict = field(default_factory=dict)  # the JSON report (render.as_json)
    page: str = ""  # the HTML page
    contained: bool = True  # False: bwrap was missing or refused (warning)
    why: str = ""  # why not contained, or why no report came back
    written: list = field(default_factory=list)  # files the student's code left (removed)


def _isolation() -> list[str]:
    return [
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        "--size", str(TMP_SIZE), "--tmpfs", "/tmp",
        "--size", str(SMALL_SIZE), "--tmpfs", "/run",
        "--size", str(SMALL_SIZE), "--tmpfs", "/dev/shm",
        "--unshare-user", "--cap-drop", "ALL",
        "--unshare-net",
        "--unshare-pid",
        "--new-session",
        "--die-with-parent",
    ]  # fmt: skip


@lru_cache(maxsize=1)
def available() -> str:
    """ "" when bwrap can make the sandbox here; else why not, in one line."""
    bwrap = shutil.which("bwrap")
    if not bwrap:
        return "没有 bubblewrap（bwrap）：apt-get install bubblewrap"
    probe = subprocess.run(
        [bwrap, *_isolation(), "--", "true"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    if probe.returncode:
        last = (probe.stderr.strip().splitlines() or [f"exit {probe.returncode}"])[-1]
        return f"bwrap 不能用 refused: {last}"
    return ""


def student_files(path: Path, helpers: bool = True) -> list[Path]:
    """The student's file and, with `helpers`, the .py files beside it (what it may import:
    not when the folder is a class's, where they are the classmates'), resolved."""
    path = Path(path).resolve()
    if not helpers:
        return [path]
    beside = sorted(p.resolve() for p in path.parent.glob("*.py") if p.is_file())
    return [path, *[p for p in beside if p != path][:HELPERS]]


def _needed() -> list[Path]:
    """What the check itself reads, to be seen again under a hidden folder: Python, the
    virtual environment and the checkout (never the working folder: it may hold a class)."""
    from lecture17.pipeline.deps import SRC

    found = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix), SRC.parent}
    return sorted(p.resolve() for p in found)


def command(inner: list[str], path: Path, helpers: bool = True, hide=()) -> list[str]:
    """`inner` wrapped in bwrap, the student's files bound read-only at their own paths.
    $HOME and the folders in `hide` (a class's) are empty there, but for what the check
    needs that lies under them (the checkout, Python, the environment)."""
    hidden = [Path.home().resolve(), *(Path(h).resolve() for h in hide)]
    hidden = [h for h in hidden if h != Path("/")]
    cover = [arg for h in hidden for arg in ("--tmpfs", str(h))]
    emptied = [Path("/tmp"), Path("/run"), *hidden]  # /tmp and /run: _isolation's tmpfs
    back = [p for p in _needed() if any(h in p.parents for h in emptied)]
    back = [arg for p in back for arg in ("--ro-bind", str(p), str(p))]
    mine = student_files(path, helpers)
    binds = [arg for p in mine for arg in ("--ro-bind", str(p), str(p))]
    return [
        shutil.which("bwrap") or "bwrap",
        *_isolation(),
        *cover,
        *back,
        *binds,
        "--dir", "/tmp/work",
        "--dir", "/tmp/checker",
        "--chdir", "/tmp/work",
        "--",
        *inner,
    ]  # fmt: skip


def environment(root: Path) -> dict:
    """The check's environment: a few named variables; $HOME the work folder, temporary files
    the checker's folder (`root`: /tmp in the sandbox, a temporary folder without it)."""
    kept = {k: v for k, v in os.environ.items() if k in ENVIRONMENT or k.startswith("LECTURE17_")}
    return kept | {
        "HOME": str(root / "work"),
        "TMPDIR": str(root / "checker"),
        "MPLCONFIGDIR": str(root / "checker" / "matplotlib"),
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def check_file(
    path: Path,
    timeout: float,
    only=None,
    require: bool = False,
    helpers: bool = True,
    hide=(),
) -> Outcome:
    """The whole check of one file, contained; `require`: fail instead of running without
    bwrap (CI); `helpers`: bind the .py files beside it; `hide`: folders it must not read
    (the class's, when grading)."""
    why = available()
    if why and require:
        raise RuntimeError(f"LECTURE17_REQUIRE_SANDBOX=1 但是 {why}")
    host = None if not why else Path(tempfile.mkdtemp(prefix="lecture17-student-")).resolve()
    root = host or Path("/tmp")
    try:
        inner = [sys.executable, "-m", "lecture17.checker.sandbox", str(Path(path).resolve())]
        inner += ["--root", str(root), "--timeout", str(timeout)]
        inner += [arg for block in only or [] for arg in ("--only", block)]
        inner += [] if helpers else ["--alone"]
        if host:
            for folder in ("work", "checker"):
                (host / folder).mkdir()
        try:
            done = subprocess.run(
                command(inner, path, helpers, hide) if not host else inner,
                cwd=root / "work" if host else None,
                env=environment(root),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=OVERALL * timeout + 60,
                check=False,
            )
        except subprocess.TimeoutExpired:
            limit = OVERALL * timeout + 60
            return Outcome(1, why=f"整个检查超过 {limit:g} 秒", contained=not why)
        return _read(done, why)
    finally:
        if host:
            shutil.rmtree(host, ignore_errors=True)


def _read(done, why: str) -> Outcome:
    """The one RESULT line of a check that exited 0 (split on "\n" only; the JSON is ASCII)."""
    lines = [line for line in done.stdout.split("\n") if line.startswith(RESULT)]
    try:
        if done.returncode != 0 or len(lines) != 1:
            raise ValueError(f"exit {done.returncode}, {len(lines)} result lines")
        bundle = json.loads(lines[0][len(RESULT) :])
        data = bundle["report"]
        outcome = Outcome(int(data["exit"]), bundle["summary"], data, bundle["page"])
        outcome.written = [str(w) for w in bundle.get("written", [])]
    except (IndexError, KeyError, TypeError, ValueError):
        tail = (done.stderr or done.stdout or "").strip().splitlines()[-3:]
        text = "检查没有留下报告 no report: " + " / ".join(tail)
        return Outcome(1, text, {"schema": None, "exit": 1, "error": text}, why=text)
    outcome.contained, outcome.why = not why, why
    return outcome


def _written(root: Path, students: list[Path]) -> list[str]:
    """What the student's code left under `root`, relative to its work folder: not the
    checker's folder, nor what is bound there read-only (the student's files; the checkout,
    Python and the environment when they live under /tmp)."""
    skip = {(root / "checker").resolve(), *_needed()}
    own = {p.resolve() for p in students}
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if (Path(folder) / d).resolve() not in skip]
        for name in files:
            path = Path(folder) / name
            if not path.is_symlink() and path.resolve() not in own:
                found.append(os.path.relpath(path, root / "work"))
    return sorted(found)


def main(argv=None) -> int:
    """Inside the sandbox: check the file, print one RESULT line with everything it found."""
    p = argparse.ArgumentParser(prog="python -m lecture17.checker.sandbox")
    p.add_argument("file", type=Path)
    p.add_argument("--root", type=Path, required=True)
    p.add_argument("--timeout", type=float, required=True)
    p.add_argument("--only", action="append")
    p.add_argument("--alone", action="store_true", help="no helpers beside the file")
    args = p.parse_args(argv)
    _undumpable()
    from lecture17.checker import child, notebook, render, run

    path, notes = args.file, []
    sys.path.insert(0, str(args.file.parent))  # its helpers, also for a notebook
    if path.suffix == ".ipynb":
        code = args.root / "checker" / f"{path.stem}.py"
        try:
            code, where, notes = notebook.to_python(path, code)
        except ValueError as error:
            data = {"schema": render.SCHEMA, "file": str(path), "exit": run.UNUSABLE}
            bundle = {"summary": f"检查 check {path}：{error}", "report": data, "page": ""}
            print(RESULT + json.dumps(bundle))
            return 0
        child.NOTEBOOK_LINES[str(code.resolve())] = where
        path = code
    report = run.check(path, timeout=args.timeout, only=args.only)
    report.path, report.notes = args.file, notes
    data = render.as_json(report)
    data["written"] = _written(args.root, student_files(args.file, not args.alone))
    bundle = {
        "summary": "\n".join(render.lines(report)),
        "report": data,
        "page": render.page(report),
        "written": data["written"],
    }
    print(RESULT + json.dumps(bundle))  # ASCII: no character of a name can split the line
    return 0


def _undumpable() -> None:
    """PR_SET_DUMPABLE 0 (Linux): the student's code, forked from here, cannot open this
    process's /proc/PID/fd/1 to print a result line of its own."""
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 4
    except (OSError, AttributeError):
        pass


if __name__ == "__main__":
    sys.exit(main())
