"""Run a piece of the check in a forked child: a student's file may crash, hang or print.

The parent has imported numpy, pandas, the demos (and torch when a demo needs it) once; each
child is a fork of it, so it starts in milliseconds, loads the student's file itself, and
sends back its result or what went wrong. A child that runs past its time limit is killed:
a hang costs the student one message, never the whole check.
"""

import importlib.util
import multiprocessing
import os
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Failure:
    """What went wrong in a child, in words a student can act on."""

    kind: str  # "load", "crash", "hang", "shape"
    text: str  # the exception (or the hang) in one line
    line: int | None = None  # the line of the student's file where it happened
    source: str = ""  # that line's text


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
            Failure("load", f"语法错误 SyntaxError: {error.msg}", error.lineno, error.text or "")
        ) from None
    except (Exception, SystemExit) as error:  # noqa: BLE001 - anything the file does on import
        raise StudentError(where(error, path, "load")) from None
    return module


def where(error: BaseException, path: Path, kind: str) -> Failure:
    """The exception and the deepest line of the student's file in its traceback."""
    path = str(Path(path).resolve())
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == path]
    last = frames[-1] if frames else None
    text = f"{type(error).__name__}: {error}"
    return Failure(kind, text, last.lineno if last else None, (last.line or "") if last else "")


def _target(conn, fn, args):
    try:
        sys.stdout = sys.stderr = open(os.devnull, "w")  # a student's prints stay out of the way
        conn.send(("ok", fn(*args)))
    except StudentError as error:
        conn.send(("failed", error.failure))
    except BaseException as error:  # noqa: BLE001 - reported, never raised in the parent
        conn.send(("error", f"{type(error).__name__}: {error}\n{traceback.format_exc()}"))
    finally:
        conn.close()


class Child:
    """fn(*args) started in a forked child; `result()` waits for it until its deadline."""

    def __init__(self, fn, *args, timeout: float):
        context = multiprocessing.get_context("fork")
        self.receive, send = context.Pipe(duplex=False)
        self.process = context.Process(target=_target, args=(send, fn, args), daemon=True)
        self.process.start()
        send.close()
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout

    def result(self):
        """("ok", result) or ("failed", Failure); past the deadline ("failed", hang)."""
        if self.receive.poll(max(0.0, self.deadline - time.monotonic())):
            try:
                status, value = self.receive.recv()
            except EOFError:  # the child died without a word (os._exit, a segfault)
                code = self.process.exitcode
                status, value = "failed", Failure("crash", f"进程退出 exit code {code}")
        else:
            self.process.kill()
            status, value = (
                "failed",
                Failure("hang", f"{self.timeout:g} 秒内没有结束 did not finish"),
            )
        self.process.join(5)
        self.receive.close()
        if status == "error":
            raise RuntimeError(f"检查器自身出错 the checker failed: {value}")
        return status, value


def run(fn, *args, timeout: float):
    """fn(*args) in a forked child: ("ok", result) or ("failed", Failure) or, past `timeout`
    seconds, ("failed", Failure("hang")); an error of the checker itself is raised."""
    return Child(fn, *args, timeout=timeout).result()


def run_many(calls, timeout: float, jobs: int) -> list:
    """[run(fn, *args)] for each (fn, args) of `calls`, at most `jobs` children at a time,
    each with its own `timeout` from its start; results in the order of `calls`."""
    results, running, pending = [None] * len(calls), {}, list(enumerate(calls))
    while pending or running:
        while pending and len(running) < max(1, jobs):
            i, (fn, args) = pending.pop(0)
            running[i] = Child(fn, *args, timeout=timeout)
        done = [i for i, c in running.items() if c.receive.poll(0) or not c.process.is_alive()]
        done += [i for i, c in running.items() if time.monotonic() > c.deadline and i not in done]
        for i in done:
            results[i] = running.pop(i).result()
        if not done:
            time.sleep(0.01)
    return results
