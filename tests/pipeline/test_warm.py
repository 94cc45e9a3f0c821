"""Warm start (lecture17/pipeline/warm.py): a job forked from a server that has imported torch
computes what a new process computes, stops when its job is stopped, and a build runs its jobs
through it and leaves no server behind."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from builds import OUTPUTS, RUNS, build, checkout

from lecture17.pipeline import warm

ROOT = Path(__file__).resolve().parents[2]
ONE_THREAD = dict.fromkeys(
    ["OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "GOTO_NUM_THREADS"], "1"
)
JOB_ENV = {
    **ONE_THREAD,
    "PYTHONPATH": str(ROOT / "src"),
    "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
}
# 05.1's Transformer for a few steps: the training path (torch.optim, autograd) in a child
SETTINGS = {
    "device": "cpu",
    "sizes": {
        "gru": {"emb_dim": 8, "hidden": 16},
        "gru_attention": {"emb_dim": 8, "hidden": 16, "input_feeding": False, "score": "general"},
        "transformer": {
            "d_ff": 32, "d_model": 16, "n_dec_layers": 1, "n_enc_layers": 1, "n_heads": 2
        },
    },
    "train": {"batch_size": 16, "lr": 0.001, "n_test": 50, "steps": 20, "warmup": 5},
}  # fmt: skip
LONG = {**SETTINGS, "train": {**SETTINGS["train"], "steps": 100_000}}  # stopped by the test


def job(out: Path, settings: dict = SETTINGS) -> list[str]:
    return [
        "lecture17.pipeline.job", "05.1", "--seed", "0", "--settings", json.dumps(settings),
        "--grid", json.dumps({"model": "transformer", "seq_len": 8}), "--out", str(out),
    ]  # fmt: skip


def client(argv: list[str], log: Path, socket_path: str | None, **env) -> subprocess.Popen:
    """`python -m lecture17.pipeline.warm …` as a job's shell starts it, stderr to `log`."""
    env = {**os.environ, **JOB_ENV, **env}
    env.pop(warm.SOCKET_VARIABLE, None)
    if socket_path:
        env[warm.SOCKET_VARIABLE] = socket_path
    with log.open("w") as err:
        return subprocess.Popen(
            [sys.executable, "-m", "lecture17.pipeline.warm", *argv],
            cwd=ROOT, env=env, stderr=err, stdout=subprocess.DEVNULL,
        )  # fmt: skip


@pytest.fixture
def server(tmp_path):
    started = warm.start_server(JOB_ENV, tmp_path / "server.log")
    path = os.environ[warm.SOCKET_VARIABLE]
    yield started, path
    warm.stop_server(started)
    assert not os.path.exists(path)


def children(server: subprocess.Popen) -> list[int]:
    listed = subprocess.run(
        ["ps", "--ppid", str(server.pid), "-o", "pid="], capture_output=True, text=True
    )
    return [int(pid) for pid in listed.stdout.split()]


def wait_for(done, what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, f"waited {timeout} s for {what}"
        time.sleep(0.05)


def test_a_warm_job_writes_the_bytes_a_new_process_writes(server, tmp_path):
    warm_run = client(job(tmp_path / "warm/seed0.csv"), tmp_path / "warm.log", server[1])
    assert warm_run.wait(timeout=300) == 0, (tmp_path / "warm.log").read_text()
    cold_run = client(job(tmp_path / "cold/seed0.csv"), tmp_path / "cold.log", None)
    assert cold_run.wait(timeout=300) == 0, (tmp_path / "cold.log").read_text()
    assert "warm start: CPU" in (tmp_path / "warm.log").read_text()  # it did run in a child
    assert "warm start" not in (tmp_path / "cold.log").read_text()
    for name in ("seed0.csv", "seed0.timing.csv"):
        assert (tmp_path / "warm" / name).exists()
    assert (tmp_path / "warm/seed0.csv").read_bytes() == (tmp_path / "cold/seed0.csv").read_bytes()


def test_a_job_under_another_import_time_environment_runs_cold(server, tmp_path):
    other = client(job(tmp_path / "a/seed0.csv"), tmp_path / "a.log", server[1], MKL_CBWR="AVX2")
    assert other.wait(timeout=300) == 0
    log = (tmp_path / "a.log").read_text()
    assert "refused" in log and "MKL_CBWR" in log and "warm start: CPU" not in log
    assert (tmp_path / "a/seed0.csv").exists()


def test_without_a_server_the_client_runs_the_module_itself(tmp_path):
    missing = str(tmp_path / "nobody.sock")
    done = client(job(tmp_path / "c/seed0.csv"), tmp_path / "c.log", missing)
    assert done.wait(timeout=300) == 0 and (tmp_path / "c/seed0.csv").exists()


def test_a_failing_job_fails_with_its_message_and_status(server, tmp_path):
    bad = job(tmp_path / "bad/seed0.csv", {**SETTINGS, "device": "tpu"})
    done = client(bad, tmp_path / "bad.log", server[1])
    assert done.wait(timeout=300) != 0
    assert "tpu" in (tmp_path / "bad.log").read_text()
    assert not (tmp_path / "bad").exists() or not any((tmp_path / "bad").iterdir())


def test_modules_outside_the_preload_are_imported_afresh_by_every_job(server, tmp_path):
    """An edit of src/ between two jobs reaches the second, as in a new process: the server
    imports no module of ours (here a module in the job's directory, edited between jobs)."""
    assert not any(name.startswith("lecture17") for name in warm.PRELOAD)
    said = []
    for version in ("first", "the second"):  # lengths differ: no stale bytecode
        (tmp_path / "probe_module.py").write_text(
            f"import sys\nprint({version!r}, file=sys.stderr)\n"
        )
        log = tmp_path / "probe.log"
        env = {**os.environ, **JOB_ENV, warm.SOCKET_VARIABLE: server[1]}
        with log.open("w") as err:
            code = subprocess.run(
                [sys.executable, "-m", "lecture17.pipeline.warm", "probe_module"],
                cwd=tmp_path, env=env, stderr=err, timeout=60,
            ).returncode  # fmt: skip
        assert code == 0, log.read_text()
        said.append(log.read_text())
    assert said[0].startswith("first\nwarm start: CPU")
    assert said[1].startswith("the second\nwarm start: CPU")


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_stopping_a_job_stops_its_child_and_leaves_no_csv(server, tmp_path, stop):
    started, path = server
    out = tmp_path / "long/seed0.csv"
    run = client(job(out, LONG), tmp_path / "long.log", path)
    wait_for(lambda: children(started), "the job's child")
    (child,) = children(started)
    time.sleep(1.0)  # well into training
    run.send_signal(stop)
    # the client exits as the child did (a shell's 128 + n); SIGKILL kills the client itself
    assert run.wait(timeout=60) == (-stop if stop == signal.SIGKILL else 128 + stop)
    wait_for(lambda: not children(started), f"the child {child} to stop", timeout=30)
    assert not out.parent.exists() or not any(out.parent.iterdir())  # no CSV, no .tmp


def test_a_stopped_server_lets_its_running_job_finish_and_takes_no_more(tmp_path):
    started = warm.start_server(JOB_ENV, tmp_path / "server.log")
    path = os.environ[warm.SOCKET_VARIABLE]
    run = client(job(tmp_path / "r/seed0.csv"), tmp_path / "r.log", path)
    wait_for(lambda: children(started), "the job's child")
    warm.stop_server(started)
    assert started.returncode == 0 and not os.path.exists(path)
    assert warm.SOCKET_VARIABLE not in os.environ
    assert run.wait(timeout=300) == 0 and (tmp_path / "r/seed0.csv").exists()
    assert "warm start: CPU" in (tmp_path / "r.log").read_text()


def test_a_server_whose_build_died_stops(tmp_path):
    """The server serves the process that started it; when that is gone (a killed build), it
    stops taking jobs and exits."""
    code = (
        "import sys; from pathlib import Path; from lecture17.pipeline import warm; "
        f"s = warm.start_server({JOB_ENV!r}, Path({str(tmp_path / 'server.log')!r})); "
        "print(s.pid, warm.os.environ[warm.SOCKET_VARIABLE], flush=True)"
    )
    env = {**os.environ, "PYTHONPATH": JOB_ENV["PYTHONPATH"]}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    pid, path = out.stdout.split()
    wait_for(lambda: not os.path.exists(f"/proc/{pid}") or _zombie(pid), "the server to exit")
    assert not os.path.exists(path)


def _zombie(pid: str) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except FileNotFoundError:
        return True


@pytest.mark.slow
def test_a_build_runs_its_jobs_warm_writes_the_same_bytes_and_leaves_no_server(tmp_path):
    cold, hot = checkout(tmp_path / "cold"), checkout(tmp_path / "warm")
    os.environ[warm.SWITCH_VARIABLE] = "0"
    try:
        build(cold)
    finally:
        del os.environ[warm.SWITCH_VARIABLE]
    build(hot)
    for path in sorted(OUTPUTS):
        if not path.endswith(".timing.csv"):
            assert (hot / path).read_bytes() == (cold / path).read_bytes(), path
    for run in RUNS:
        job_log = hot / "logs" / Path(run).relative_to("results").with_suffix(".log")
        assert "warm start: CPU" in job_log.read_text()
        cold_log = cold / "logs" / Path(run).relative_to("results").with_suffix(".log")
        assert "warm start" not in cold_log.read_text()
    servers = subprocess.run(
        ["pgrep", "-f", "lecture17.pipeline.warm serve"], capture_output=True, text=True
    ).stdout.split()
    assert not [pid for pid in servers if Path(f"/proc/{pid}/cwd").resolve() == hot.resolve()]
    assert not (hot / "logs/warm-start.log").read_text()  # the server said nothing: no error


def test_the_preload_skips_what_is_not_installed_and_refuses_threads(tmp_path):
    """A torch-free environment (make test-python) still gets a server for pandas; a process
    that already runs a second thread is not forked (a pool's locks would hang the child)."""
    code = (
        "import sys, threading; from lecture17.pipeline import warm; "
        "warm.PRELOAD = ('json', 'no_such_module_anywhere'); server = warm.Server('s.sock'); "
        "server.preload(); print('preloaded', flush=True); "
        "threading.Thread(target=threading.Event().wait, daemon=True).start(); server.preload()"
    )
    env = {**os.environ, **JOB_ENV}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.stdout == "preloaded\n", done.stderr
    assert "RuntimeError: 2 threads after the imports" in done.stderr


@pytest.mark.slow
def test_a_gpu_build_starts_no_server(tmp_path):
    """CUDA cannot be used in a forked child of a process that initialised it: a `device:
    cuda` build runs its jobs cold (here its CPU-only jobs, on a machine without a GPU)."""
    import yaml

    work = checkout(tmp_path / "gpu")
    config = yaml.safe_load((work / "faults.yaml").read_text())
    (work / "faults.yaml").write_text(yaml.safe_dump({**config, "device": "cuda"}))
    build(work)
    for run in RUNS:
        job_log = work / "logs" / Path(run).relative_to("results").with_suffix(".log")
        assert job_log.read_text() and "warm start" not in job_log.read_text()
    assert not (work / "logs/warm-start.log").exists()
