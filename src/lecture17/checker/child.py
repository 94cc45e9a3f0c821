"""Run a piece of the check in a forked child: a student's file may crash, hang or print.

The parent has imported numpy, pandas, the demos (and torch when a demo needs it) once; each
child is a fork of it, so it starts in milliseconds, loads the student's file itself, and
sends back its result or what went wrong. A child that runs past its time limit is killed:
a hang costs the student one message, never the whole check.

Each child is held in: its address space may grow by MEMORY_LIMIT beyond what the checker
had mapped when it forked (a 20 GB allocation is a MemoryError, not a dead machine), a file
it writes stops at FILE_LIMIT, and what it prints (file descriptors 1 and 2, C code included)
goes to a file of its own, of which the first PRINTED_LINES lines come back with a count
(`Printed`). The scratch folder and the sandbox around the whole check are checker/sandbox.py.
"""

import importlib.util
import multiprocessing
import os
import resource
import signal
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path


def _memory_limit() -> int:
    """Bytes a child may map beyond the checker's own: 4 GB, less on a machine whose memory
    would not hold one such child per core for two checks at a time."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 4 * 2**30
    return max(2**30, min(4 * 2**30, total // (4 * (os.cpu_count() or 1))))


MEMORY_LIMIT = _memory_limit()
FILE_LIMIT = 64 * 2**20  # the largest file a child may write (its prints included)
PRINTED_LINES = 8  # a child's printed lines shown, the rest counted
PRINTED_CHARS = 240  # characters of each shown line
NOTEBOOK_LINES: dict = {}  # path of a notebook's code as .py -> [(cell, line)] per line


@dataclass
class Failure:
    """What went wrong in a child, in words a student can act on."""

    kind: str  # "load", "crash", "hang", "shape", "memory"
    text: str  # the exception (or the hang) in one line
    line: int | None = None  # the line of the student's file where it happened
    source: str = ""  # that line's text
    place: str = ""  # where, in the student's words: "第 5 行" or "cell 3, line 2"
    function: str = ""  # a WrongShape's block, else the deepest function of the student's
    functions: tuple = ()  # the student's functions on the traceback, outermost first


@dataclass
class Printed:
    """What a child printed: its first lines and how many lines in all."""

    lines: list = field(default_factory=list)
    total: int = 0


def place(path, line: int | None) -> str:
    """A line of the student's file as the student finds it (a notebook's cell and line)."""
    if not line:
        return ""
    cells = NOTEBOOK_LINES.get(str(Path(path).resolve()))
    if cells and 0 < line <= len(cells):
        cell, at = cells[line - 1]
        return f"cell {cell}, line {at}"
    return f"第 {line} 行"


class StudentError(Exception):
    """Carries a Failure out of a child."""

    def __init__(self, failure: Failure):
        super().__init__(failure.text)
        self.failure = failure


def load_student(path: Path):
    """Import the student's file as a module of its own (its folder on sys.path for its
    helpers); StudentError(load) with the line on a syntax error or a failing import."""
    path = Path(path).resolve()
    sys.path.insert(0, str(path.parent))
    name = f"student_{abs(hash(str(path)))}"
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    except SyntaxError as error:
        raise StudentError(
            Failure(
                "load",
                f"语法错误 SyntaxError: {error.msg}",
                error.lineno,
                error.text or "",
                place(path, error.lineno),
            )
        ) from None
    except BaseException as error:  # noqa: BLE001 - anything the file raises on import
        raise StudentError(where(error, path, "load")) from None
    return module


def where(error: BaseException, path: Path, kind: str) -> Failure:
    """The exception and the deepest line of the student's file in its traceback."""
    path = str(Path(path).resolve())
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == path]
    last = frames[-1] if frames else None
    text = f"{type(error).__name__}: {error}"
    if isinstance(error, MemoryError):
        kind, text = "memory", f"MemoryError：超过内存上限 {MEMORY_LIMIT // 2**30} GB"
    line = last.lineno if last else None
    shape_of = getattr(error, "block", "")  # a WrongShape names the block that returned it
    function = shape_of or (last.name if last else "")
    source = (last.line or "") if last else ""
    names = tuple(f.name for f in frames)
    return Failure(kind, text, line, source, place(path, line), function, names)


def _vm_size() -> int:
    """Bytes this process has mapped now (Linux); 0 where /proc does not say."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _contain(output) -> None:
    """In the child, before the student's code: the memory and file-size limits, and its
    prints (file descriptors 1 and 2) into `output`."""
    mapped = _vm_size()
    if mapped:
        limit = mapped + MEMORY_LIMIT
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_LIMIT, FILE_LIMIT))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # past the limit a write fails, no signal
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(output.fileno(), 1)
    os.dup2(output.fileno(), 2)
    sys.stdout = sys.stderr = open(1, "w", buffering=1, closefd=False, errors="replace")


def _printed(output) -> Printed:
    """The first lines of what a child printed, and how many lines in all."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    output.seek(0)
    head = output.read(4 * PRINTED_LINES * PRINTED_CHARS)
    total, last = head.count(b"\n"), head[-1:]
    while chunk := output.read(1 << 16):
        total, last = total + chunk.count(b"\n"), chunk[-1:]
    total += bool(last) and last != b"\n"  # a last line without its newline
    lines = head.decode("utf-8", "replace").splitlines()[:PRINTED_LINES]
    return Printed([line[:PRINTED_CHARS] for line in lines], total)


def _target(conn, fn, args, output):
    try:
        _contain(output)
        result = ("ok", fn(*args))
    except StudentError as error:
        result = ("failed", error.failure)
    except MemoryError:
        result = ("failed", Failure("memory", f"MemoryError：超过内存上限 {MEMORY_LIMIT >> 30} GB"))
    except Exception as error:  # noqa: BLE001 - the checker's own: reported, never raised here
        result = ("error", f"{type(error).__name__}: {error}\n{traceback.format_exc()}")
    except BaseException as error:  # noqa: BLE001 - SystemExit and the like: the student's
        result = ("failed", Failure("crash", f"{type(error).__name__}: {error}"))
    try:
        conn.send((*result, _printed(output)))
    finally:
        conn.close()
        os._exit(0)  # a thread the student's code left running must not hold the child


class Child:
    """fn(*args) started in a forked child; `result()` waits for it until its deadline."""

    def __init__(self, fn, *args, timeout: float):
        context = multiprocessing.get_context("fork")
        self.receive, send = context.Pipe(duplex=False)
        self.output = tempfile.TemporaryFile()
        self.process = context.Process(
            target=_target, args=(send, fn, args, self.output), daemon=True
        )
        self.process.start()
        send.close()
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout
        self.printed = Printed()

    def result(self):
        """("ok", result) or ("failed", Failure); past the deadline ("failed", hang).
        What the child printed is in `self.printed` afterwards."""
        if self.receive.poll(max(0.0, self.deadline - time.monotonic())):
            try:
                status, value, self.printed = self.receive.recv()
            except EOFError:  # the child died without a word (os._exit, a segfault)
                code = self.process.exitcode
                status, value = "failed", Failure("crash", f"进程退出 exit code {code}")
                self.printed = _printed(self.output)
        else:
            self.process.kill()
            status, value = (
                "failed",
                Failure("hang", f"{self.timeout:g} 秒内没有结束 did not finish"),
            )
            self.printed = _printed(self.output)
        self.process.join(5)
        self.receive.close()
        self.output.close()
        if status == "error":
            raise RuntimeError(f"检查器自身出错 the checker failed: {value}")
        return status, value


def run(fn, *args, timeout: float, printed: list | None = None):
    """fn(*args) in a forked child: ("ok", result) or ("failed", Failure) or, past `timeout`
    seconds, ("failed", Failure("hang")); an error of the checker itself is raised. What the
    child printed is appended to `printed` when a list is given."""
    one = Child(fn, *args, timeout=timeout)
    outcome = one.result()
    if printed is not None:
        printed.append(one.printed)
    return outcome


def run_many(calls, timeout: float, jobs: int, printed: list | None = None) -> list:
    """[run(fn, *args)] for each (fn, args) of `calls`, at most `jobs` children at a time,
    each with its own `timeout` from its start; results (and, into `printed`, what each
    printed) in the order of `calls`."""
    results, running, pending = [None] * len(calls), {}, list(enumerate(calls))
    shown = [Printed()] * len(calls)
    while pending or running:
        while pending and len(running) < max(1, jobs):
            i, (fn, args) = pending.pop(0)
            running[i] = Child(fn, *args, timeout=timeout)
        done = [i for i, c in running.items() if c.receive.poll(0) or not c.process.is_alive()]
        done += [i for i, c in running.items() if time.monotonic() > c.deadline and i not in done]
        for i in done:
            one = running.pop(i)
            results[i] = one.result()
            shown[i] = one.printed
        if not done:
            time.sleep(0.01)
    if printed is not None:
        printed.extend(shown)
    return results
