"""Warm start: a build's jobs skip the 2–3.5 s that Python spends importing torch and pandas.

Every job of a build is a new Python process, and before it computes anything it imports
torch (1.1–1.5 s), pandas (0.4 s) and, on its optimizer's first use, torch._dynamo (another
1.1 s: torch.optim's `add_param_group` is wrapped in `torch._disable_dynamo`, which imports
it). Over the ~200 jobs of the default build that is about a third of the job seconds (bench/).

So a local build starts one server (`serve`, from the Snakefile's `onstart`) that imports those
third-party modules once — and nothing of lecture17, so an edit of src/ reaches the next job as
it would in a new process — and waits. A job's command

    python -m lecture17.pipeline.warm lecture17.pipeline.job 05.1 --seed 0 …

is a client that imports only the standard library. It hands the server its arguments, its
working directory, its environment and its stdin/stdout/stderr (the job's log); the server
forks, and the child runs the module as `python -m` would, in the client's directory, with its
environment and its log. The client waits for the child's exit status and exits with it.

What a job computes does not change (tests/pipeline/test_warm.py compares the CSVs byte for
byte): the child is a copy of a process that has imported the same modules under the same
environment and computed nothing. The environment variables read when a library is loaded
(threads, the CPU capability, MKL's reproducibility mode, the Python path: `IMPORT_TIME_ENV`) must
be the server's; where one differs, or the Python is another, the server refuses and the client
runs the module itself, as it also does when no server runs (`LECTURE17_WARM_SOCKET` unset, a
SLURM job, `--use-conda`). Stopping a job stops its child: SIGTERM, SIGINT and SIGHUP are passed
on, and a child whose client has died (SIGKILL) stops itself (SIGTERM, so that `csvio` removes
its temporary files), so a killed job never writes a CSV later.

What changes: Snakemake's `benchmark:` measures the job's own processes, i.e. the client. A warm
job's `max_rss` and `cpu_time` are the client's (~10 MB, ~0 s); the child's own CPU seconds
and peak memory are the last line of the job's log (`warm start: …`), which bench/build_profile.py
reads. A warm child also starts no interpreter of its own: a `sitecustomize` on the jobs' path
runs once, in the server, and the child leaves by `os._exit`, running no `atexit` handler (the
jobs register none); a `sitecustomize` that acts per job defines `start_job` (`job_hook`: the
mutants' call tracer does). Turn it off with `LECTURE17_WARM=0` (e.g. to measure a job's
memory in its benchmark).

Long on purpose: the client and the server speak one small protocol (a request with three file
descriptors; "refused …" or "child <pid>", then "status <code>"), easier to check in one file.
"""

import importlib
import importlib.util
import json
import os
import resource
import runpy
import selectors
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

SOCKET_VARIABLE = "LECTURE17_WARM_SOCKET"  # where the clients find the server
SWITCH_VARIABLE = "LECTURE17_WARM"  # "0": a build starts no server
PRELOAD = ("numpy", "pandas", "torch", "torch._dynamo", "torch.optim")
# read when a library is loaded or the interpreter starts: a job whose value differs from the
# server's would compute differently in a forked child than in a new process
IMPORT_TIME_ENV = (
    "OMP_", "GOMP_", "KMP_", "MKL_", "OPENBLAS_", "GOTO_", "VECLIB_", "NUMEXPR_", "ATEN_",
    "TORCH", "PYTORCH", "CUDA", "LD_", "PYTHON", "MALLOC_",
)  # fmt: skip
CHILD_GRACE_S = 10.0  # a child whose client died: SIGTERM, then SIGKILL after this long
_HEADER = struct.Struct("!Q")  # the request's length, sent with the client's three fds


def import_time_env(env: dict) -> dict:
    return {k: v for k, v in env.items() if k.startswith(IMPORT_TIME_ENV)}


def refusal(request: dict, env: dict) -> str | None:
    """Why a server started in `env` must not run `request` (None: it may)."""
    if os.path.realpath(request["executable"]) != os.path.realpath(sys.executable):
        return f"another Python ({request['executable']}, server {sys.executable})"
    ours, theirs = import_time_env(env), import_time_env(request["env"])
    differ = sorted(k for k in ours.keys() | theirs.keys() if ours.get(k) != theirs.get(k))
    if differ:
        return f"environment differs from the server's: {', '.join(differ)}"
    return None


# ---------------------------------------------------------------------------------------------
# client


def _receive_line(conn: socket.socket) -> str | None:
    """One line from the server (or our child); None when the other end closed."""
    data = b""
    while not data.endswith(b"\n"):
        try:
            chunk = conn.recv(1)  # a byte at a time: the next line may come from another sender
        except OSError:
            return None
        if not chunk:
            return None
        data += chunk
    return data.decode().strip()


def run_cold(argv: list[str]) -> int:
    """The module run in this process, as `python -m <module> <args>` would."""
    sys.argv = list(argv)
    try:
        runpy.run_module(argv[0], run_name="__main__", alter_sys=True)
    except SystemExit as stop:
        code = stop.code
        if code is None or isinstance(code, int):
            return code or 0
        print(code, file=sys.stderr)
        return 1
    return 0


def connect(path: str) -> socket.socket | None:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
    except OSError:  # no server (yet, or any more): this job runs cold
        conn.close()
        return None
    return conn


def run_warm(conn: socket.socket, argv: list[str]) -> int | None:
    """Run `argv` in a child of the server. None: refused before anything ran (run cold)."""
    request = {"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ)}
    request["executable"] = sys.executable
    body = json.dumps(request).encode()
    try:
        socket.send_fds(conn, [_HEADER.pack(len(body))], [0, 1, 2])
        conn.sendall(body)
    except OSError:  # the server is stopping
        return None
    # the first line comes from the server (refused) or from our child, once it runs
    answer = _receive_line(conn)
    if answer is None:  # the server stopped before it started our child
        return None
    kind, _, rest = answer.partition(" ")
    if kind == "refused":
        print(f"warm start refused, running cold: {rest}", file=sys.stderr)
        return None
    child = int(rest)

    def pass_on(signum, frame):
        try:
            os.kill(child, signum)
        except ProcessLookupError:
            pass

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, pass_on)
    status = _receive_line(conn)
    if status is None:  # the server died (SIGKILL): our child must not go on unattended
        pass_on(signal.SIGTERM, None)
        print("warm start: the server went away while the job ran", file=sys.stderr)
        return 1
    return int(status.split()[1])


def main(argv: list[str]) -> int:
    if not argv or argv[0].startswith("-"):
        print(
            "usage: python -m lecture17.pipeline.warm MODULE [ARGS…] | serve PATH", file=sys.stderr
        )
        return 2
    if argv[0] == "serve":
        return serve(argv[1])
    path = os.environ.get(SOCKET_VARIABLE)
    conn = connect(path) if path else None
    if conn is not None:
        with conn:
            code = run_warm(conn, argv)
        if code is not None:
            return code
    return run_cold(argv)


# ---------------------------------------------------------------------------------------------
# server


def _receive_request(conn: socket.socket) -> tuple[dict, list[int]]:
    head, fds, _, _ = socket.recv_fds(conn, _HEADER.size, 3)
    if len(head) != _HEADER.size or len(fds) != 3:
        for fd in fds:
            os.close(fd)
        raise ConnectionError("a malformed request")
    (size,) = _HEADER.unpack(head)
    body = b""
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            raise ConnectionError("the client went away mid-request")
        body += chunk
    return json.loads(body), fds


def _watch_client(conn: socket.socket) -> None:
    """In the child: the client's end closing means the job was killed; stop the same way."""
    try:
        conn.recv(1)
    except OSError:
        pass
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(CHILD_GRACE_S)
    os._exit(128 + signal.SIGKILL)


def job_hook(argv: list[str]):
    """A `sitecustomize` runs once per interpreter: in a warm build, once, in the server. One
    that acts per job (the call tracer of `make mutants`, mutants/trace/) defines
    `start_job(argv)`, which a warm child calls before the job and which returns what to call
    after it (or None): the child leaves by `os._exit`, so no `atexit` handler runs."""
    start = getattr(sys.modules.get("sitecustomize"), "start_job", None)
    return start(list(argv)) if start is not None else None


def _child(conn: socket.socket, request: dict, fds: list[int], inherited: list[int]) -> None:
    """The forked child: become the job (its fds, directory, environment, argv), run, exit."""
    for fd in inherited:  # the server's listening socket, other jobs' connections and pidfds
        os.close(fd)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    sys.stdin, sys.stdout, sys.stderr = (
        open(0, closefd=False), open(1, "w", closefd=False), open(2, "w", closefd=False)
    )  # fmt: skip
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.path[0] = request["cwd"]  # as `python -m` sets it
    conn.sendall(f"child {os.getpid()}\n".encode())
    threading.Thread(target=_watch_client, args=(conn,), daemon=True).start()
    try:
        finish = job_hook(request["argv"])
        code = run_cold(request["argv"])
        if finish is not None:
            finish()
    except KeyboardInterrupt:
        code = 128 + signal.SIGINT
    except BaseException:  # what a new Python prints and exits with
        traceback.print_exc()
        code = 1
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(
        f"warm start: CPU {usage.ru_utime + usage.ru_stime:.2f} s, "
        f"peak memory {usage.ru_maxrss / 1024:.0f} MB",
        file=sys.stderr,
    )
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


class Server:
    """Accepts jobs on a Unix socket, forks one child per job, reports each exit status."""

    def __init__(self, path: str):
        self.path = path
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)  # first: a job that starts meanwhile waits in the backlog
        self.listener.listen(64)
        self.selector = selectors.DefaultSelector()
        self.children = {}  # pidfd -> (pid, the client's connection)
        self.stopping = False
        self.parent = os.getppid()
        self.env = dict(os.environ)  # before the imports (torch._dynamo sets a variable)

    def preload(self) -> None:
        for name in PRELOAD:
            if importlib.util.find_spec(name.partition(".")[0]) is not None:  # torch-free venvs
                importlib.import_module(name)
        threads = os.listdir("/proc/self/task")
        if len(threads) > 1:  # a fork copies one thread: a pool's locks could hang the child
            raise RuntimeError(f"{len(threads)} threads after the imports; one thread forks safely")

    def stop(self, *_) -> None:
        """No new jobs; the running ones finish and get their status."""
        if not self.stopping:
            self.stopping = True
            if self.listener in self.selector.get_map():  # registered once the imports are done
                self.selector.unregister(self.listener)
            self.listener.close()
            if os.path.exists(self.path):
                os.unlink(self.path)

    def accept(self) -> None:
        conn, _ = self.listener.accept()
        try:
            request, fds = _receive_request(conn)
        except (ConnectionError, OSError, ValueError):
            conn.close()
            return
        reason = refusal(request, self.env)
        if reason:
            for fd in fds:
                os.close(fd)
            conn.sendall(f"refused {reason}\n".encode())
            conn.close()
            return
        inherited = [self.listener.fileno(), *self.children]  # pidfds
        inherited += [c.fileno() for _, c in self.children.values()]
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            try:
                self.selector.close()
                _child(conn, request, fds, inherited)
            finally:
                os._exit(1)  # never back into the server's loop
        for fd in fds:
            os.close(fd)
        pidfd = os.pidfd_open(pid)
        self.children[pidfd] = (pid, conn)
        self.selector.register(pidfd, selectors.EVENT_READ)

    def reap(self, pidfd: int) -> None:
        pid, conn = self.children.pop(pidfd)
        self.selector.unregister(pidfd)
        os.close(pidfd)
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        try:
            conn.sendall(f"status {code if code >= 0 else 128 - code}\n".encode())
        except OSError:  # its client is gone
            pass
        conn.close()

    def run(self) -> int:
        signal.signal(signal.SIGTERM, self.stop)
        signal.signal(signal.SIGINT, self.stop)
        self.preload()
        self.selector.register(self.listener, selectors.EVENT_READ)
        while not (self.stopping and not self.children):
            for key, _ in self.selector.select(timeout=1.0):
                if key.fileobj is self.listener and not self.stopping:
                    self.accept()
                elif key.fileobj in self.children:
                    self.reap(key.fileobj)
            if os.getppid() != self.parent:  # the build is gone (killed): serve no more
                self.stop()
        return 0


def start_server(job_env: dict, log: Path) -> subprocess.Popen | None:
    """Start a server for a build's jobs (the Snakefile's `onstart`) under the environment they
    get (the build's, with `job_env`: shell.prefix's settings), and tell them where it is. None
    when `LECTURE17_WARM=0`. Jobs that start before it listens run cold."""
    if os.environ.get(SWITCH_VARIABLE, "1") == "0":
        return None
    path = os.path.join(tempfile.gettempdir(), f"lecture17-warm-{os.getpid()}.sock")
    if os.path.exists(path):  # a dead build's of the same pid: nobody listens there
        os.unlink(path)
    env = {**os.environ, **job_env}
    python = shutil.which("python", path=env.get("PATH")) or sys.executable  # the jobs' Python
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as out:
        server = subprocess.Popen(
            [python, "-m", __name__, "serve", path],
            env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C reaches the jobs, and the server through them
        )  # fmt: skip
    deadline = time.monotonic() + 5.0
    while not os.path.exists(path) and server.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    os.environ[SOCKET_VARIABLE] = path
    return server


def stop_server(server: subprocess.Popen | None) -> None:
    """The build is over: the server stops taking jobs and exits when its children have."""
    os.environ.pop(SOCKET_VARIABLE, None)
    if server is not None and server.poll() is None:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()


def serve(path: str) -> int:
    server = Server(path)
    try:
        return server.run()
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
