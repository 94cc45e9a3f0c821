"""Where a student's code runs: a scratch folder of its own, in a bubblewrap sandbox.

`python -m lecture17 check FILE` runs the whole check of one file (run.check and the forked
children it starts) in a child process, `python -m lecture17.checker.sandbox`, inside
Debian's bubblewrap (`bwrap`):
- the whole filesystem read-only (--ro-bind / /), the checkout, $HOME and /tmp included;
- a scratch folder, made for this file, the one writable place: its work/ is the working
  directory and $HOME, its .checker/ holds the checker's temporary files and reports;
- no network (--unshare-net);
- its own process ids (--unshare-pid, --die-with-parent): nothing it starts outlives it.
Each forked child adds a memory and a file-size limit (child.py). The sandboxed process writes
the summary, the JSON and the page into the scratch folder's out/; this side reads them as
text and JSON (never unpickles what the student's code could have touched), copies the page
where it belongs and removes the scratch folder. The student's code cannot write outside the
scratch folder, so `results/`, `report/` and the user's files are what they were; the files
it left in work/ are listed to the student (`Outcome.written`) and removed with the folder.

Where bwrap is missing or refused (a container without user namespaces), `available()` says
why: the check goes on with the scratch folder as the working directory only, and says so.
The sandbox protects the machine, not the grade: a file written to fool the checker can make
its own summary say anything (docs/CHECK.md).
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
# CI sets it: no check runs outside bubblewrap
REQUIRED = os.environ.get("LECTURE17_REQUIRE_SANDBOX") == "1"


@dataclass
class Outcome:
    """What the sandboxed check of one file left: its exit code and its texts."""

    status: int
    summary: str = ""  # the terminal summary
    data: dict = field(default_factory=dict)  # the JSON report (render.as_json)
    page: str = ""  # the HTML page
    contained: bool = True  # False: bwrap was missing or refused (warning)
    why: str = ""  # why not contained, or why no report came back
    written: list = field(default_factory=list)  # files the student's code left in work/


@lru_cache(maxsize=1)
def available() -> str:
    """ "" when bwrap can make the sandbox here; else why not, in one line."""
    bwrap = shutil.which("bwrap")
    if not bwrap:
        return "没有 bubblewrap（bwrap）：apt-get install bubblewrap"
    probe = subprocess.run(
        [bwrap, "--ro-bind", "/", "/", "--unshare-net", "--", "true"],
        capture_output=True,
        text=True,
        check=False,
    )
    if probe.returncode:
        return f"bwrap 不能用 refused: {probe.stderr.strip().splitlines()[-1:] or probe.returncode}"
    return ""


def command(inner: list[str], scratch: Path) -> list[str]:
    """`inner` wrapped in bwrap: read-only system, `scratch` the one writable folder."""
    scratch = str(Path(scratch).resolve())
    return [
        shutil.which("bwrap") or "bwrap",
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        "--bind", scratch, scratch,
        "--unshare-net",
        "--unshare-pid",
        "--die-with-parent",
        "--chdir", f"{scratch}/work",
        "--",
        *inner,
    ]  # fmt: skip


def environment(scratch: Path) -> dict:
    """The sandboxed check's environment: $HOME the work folder, temporary files the checker's."""
    return {
        **os.environ,
        "HOME": str(scratch / "work"),
        "TMPDIR": str(scratch / ".checker" / "tmp"),
        "MPLCONFIGDIR": str(scratch / ".checker" / "matplotlib"),
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def check_file(path: Path, timeout: float, only=None, require: bool = False) -> Outcome:
    """The whole check of one file, contained; `require`: fail instead of running without
    bwrap (CI)."""
    why = available()
    if why and require:
        raise RuntimeError(f"LECTURE17_REQUIRE_SANDBOX=1 但是 {why}")
    scratch = Path(tempfile.mkdtemp(prefix="lecture17-student-")).resolve()
    for folder in ("work", ".checker/tmp", ".checker/out"):
        (scratch / folder).mkdir(parents=True)
    out = scratch / ".checker" / "out"
    try:
        inner = [sys.executable, "-m", "lecture17.checker.sandbox", str(Path(path).resolve())]
        inner += ["--out", str(out), "--timeout", str(timeout)]
        inner += ["--only", *only] if only else []
        argv = inner if why else command(inner, scratch)
        try:
            done = subprocess.run(
                argv,
                cwd=scratch / "work",
                env=environment(scratch),
                capture_output=True,
                text=True,
                errors="replace",
                timeout=OVERALL * timeout + 60,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return Outcome(1, why=f"整个检查超过 {OVERALL * timeout + 60:g} 秒", contained=not why)
        outcome = _read(out, done, why)
        outcome.written = sorted(
            os.path.relpath(p, scratch / "work")
            for p in scratch.rglob("*")
            if p.is_file() and ".checker" not in p.relative_to(scratch).parts
        )
        if isinstance(outcome.data, dict):
            outcome.data["written"] = outcome.written
        return outcome
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _read(out: Path, done, why: str) -> Outcome:
    try:
        data = json.loads((out / "report.json").read_text(encoding="utf-8"))
        summary = (out / "summary.txt").read_text(encoding="utf-8")
        page = (out / "page.html").read_text(encoding="utf-8")
    except (OSError, ValueError):
        tail = (done.stderr or done.stdout or "").strip().splitlines()[-3:]
        return Outcome(1, why="检查没有留下报告 no report: " + " / ".join(tail), contained=not why)
    status = data.get("exit", 1) if isinstance(data, dict) else 1
    return Outcome(int(status), summary, data, page, contained=not why, why=why)


def main(argv=None) -> int:
    """Inside the sandbox: check the file, write summary.txt, report.json and page.html."""
    p = argparse.ArgumentParser(prog="python -m lecture17.checker.sandbox")
    p.add_argument("file", type=Path)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--timeout", type=float, required=True)
    p.add_argument("--only", nargs="*")
    args = p.parse_args(argv)
    from lecture17.checker import child, notebook, render, run

    args.out.mkdir(parents=True, exist_ok=True)
    path, notes = args.file, []
    if path.suffix == ".ipynb":
        code = args.out.parent / f"{path.stem}.py"  # in .checker/, not the student's work/
        try:
            code, where, notes = notebook.to_python(path, code)
        except ValueError as error:
            (args.out / "summary.txt").write_text(f"检查 check {path}：{error}", encoding="utf-8")
            data = {"schema": render.SCHEMA, "file": str(path), "exit": run.UNUSABLE}
            (args.out / "report.json").write_text(json.dumps(data), encoding="utf-8")
            (args.out / "page.html").write_text("", encoding="utf-8")
            return 0
        child.NOTEBOOK_LINES[str(code.resolve())] = where
        path = code
    report = run.check(path, timeout=args.timeout, only=args.only)
    report.path, report.notes = args.file, notes
    (args.out / "summary.txt").write_text("\n".join(render.lines(report)), encoding="utf-8")
    (args.out / "report.json").write_text(render.json_text(report), encoding="utf-8")
    (args.out / "page.html").write_text(render.page(report), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
