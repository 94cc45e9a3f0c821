"""The benchmarks run and print their ratios (never timed here: bench/ is not a test)."""

import os
import subprocess
import sys

import pytest
from conftest import ROOT, without_cuda


def bench(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    return subprocess.run(
        [sys.executable, str(ROOT / "bench" / "step_time.py"), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )


@pytest.mark.slow
def test_step_time_prints_every_model_and_the_three_ratios():
    tiny = ["--lengths", "4", "--batch-size", "4", "--warmup", "0", "--repeats", "1"]
    done = bench(*tiny, "--block", "1", "--precision", "bf16", "--d-model", "16", "--n-heads", "2")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "bf16" in lines[0] and "d_model 16, 2 heads" in lines[1]
    assert "nn.Transformer" in lines[2] and lines[3].split()[0] == "4"
    ratios = lines[-1].split()
    assert ratios[0] == "4" and len(ratios) == 4 and all(float(r) > 0 for r in ratios[1:])


@without_cuda
def test_step_time_on_cuda_without_a_gpu_says_so():
    done = bench("--device", "cuda")
    assert done.returncode == 2 and "torch sees no GPU" in done.stderr


def test_step_time_refuses_heads_that_do_not_divide_d_model():
    done = bench("--d-model", "64", "--n-heads", "3")
    assert done.returncode == 2 and "divisible by --n-heads 3" in done.stderr


def profile(*args: str) -> subprocess.CompletedProcess:
    script = ROOT / "bench" / "build_profile.py"
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True)


def _benchmark(path, wall: float, cpu: str, rss: float = 100.0):
    path.parent.mkdir(parents=True, exist_ok=True)
    head = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    path.write_text(head + f"{wall}\t0:00:00\t{rss}\t0\t0\t0\t0\t0\t0\t{cpu}\n", encoding="utf-8")


def test_the_build_profile_sums_each_rule_and_flags_the_undersampled_cpu(tmp_path):
    _benchmark(tmp_path / "benchmarks/lookup_task/02.3/d_k=16/seed0.tsv", 32.0, "8.5", 300)
    _benchmark(tmp_path / "benchmarks/lookup_task/02.3/d_k=64/seed0.tsv", 10.0, "9.5", 310)
    _benchmark(tmp_path / "benchmarks/aggregate/02.3.tsv", 0.3, "NA")
    done = profile("--build", str(tmp_path))
    assert done.returncode == 0, done.stderr
    rows = {line.split("|")[1].strip(): line for line in done.stdout.splitlines()[2:]}
    cells = [c.strip() for c in rows["`lookup_task`"].split("|")[1:-1]]
    assert cells == ["`lookup_task`", "2", "42.0", "32.0", "18.0", "1", "310"]
    assert [c.strip() for c in rows["合计 all"].split("|")[2:4]] == ["3", "42.3"]
    empty = profile("--build", str(tmp_path / "nothing"))
    assert empty.returncode == 1 and "build first" in empty.stderr


def test_the_build_profile_sums_the_warm_jobs_own_cpu_from_their_logs(tmp_path):
    _benchmark(tmp_path / "benchmarks/lookup_task/02.3/d_k=16/seed0.tsv", 30.0, "0.1", 12)
    log = tmp_path / "logs/02.3/d_k=16/seed0.log"
    log.parent.mkdir(parents=True)
    log.write_text("演示 02.3 · seed 0\nwarm start: CPU 27.25 s, peak memory 390 MB\n")
    (tmp_path / "logs/02.3/d_k=16/seed1.log").write_text("warm start refused, running cold: …\n")
    (tmp_path / "logs/aggregate").mkdir()
    (tmp_path / "logs/aggregate/02.3.log").write_text(
        "warm start: CPU 0.75 s, peak memory 120 MB\n"
    )
    done = profile("--build", str(tmp_path))
    assert "2 个作业" in done.stdout and "合计 28.0 秒" in done.stdout
    assert "峰值内存最大 390 MB" in done.stdout
    log.write_text("演示 02.3 · seed 0\n")
    (tmp_path / "logs/aggregate/02.3.log").write_text("")
    assert "warm start" not in profile("--build", str(tmp_path)).stdout


def test_the_build_profile_by_demo_counts_tables_and_figures_and_what_06_adds(tmp_path):
    _benchmark(tmp_path / "benchmarks/lookup_task/02.3/d_k=16/seed0.tsv", 30.0, "8.5")
    _benchmark(tmp_path / "benchmarks/aggregate/02.3.tsv", 1.0, "0.5")
    _benchmark(tmp_path / "benchmarks/figure/02.3_accuracy.tsv", 1.0, "0.5")
    _benchmark(tmp_path / "benchmarks/beyond/06.4/seed0.tsv", 6.0, "5.0")
    _benchmark(tmp_path / "benchmarks/report/report.tsv", 8.0, "4.0")
    done = profile("--build", str(tmp_path), "--by-demo")
    assert done.returncode == 0, done.stderr
    rows = {
        line.split("|")[1].strip(): line for line in done.stdout.splitlines()[2:] if "|" in line
    }
    assert [c.strip() for c in rows["`02.3`"].split("|")[2:4]] == ["3", "32.0"]
    assert [c.strip() for c in rows["`report`"].split("|")[2:4]] == ["1", "8.0"]
    assert "(06.x)：6.0 秒 s，其余 the rest 40.0 秒 s，多出 adds 15.0 %" in done.stdout


def load_bench(name: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
@pytest.mark.parametrize("model", ["transformer", "gru"])
def test_seeds_trained_together_are_the_seeds_trained_one_by_one(model, monkeypatch):
    """bench/seeds_parallel.py's vmapped training is each seed's own training: the same
    initialisation, batches and Adam updates, so its losses match train()'s to rounding (a
    shared generator, a seed's init drawn twice or Adam mixing seeds would not)."""
    monkeypatch.chdir(ROOT)
    seeds_parallel = load_bench("seeds_parallel")
    one = seeds_parallel.sequential(model, 4, [100, 101], 5)["seeds"]
    many = seeds_parallel.vmapped(model, 4, [100, 101], 5)["seeds"]
    assert one[100]["loss"] != one[101]["loss"]  # two seeds, two trainings
    for seed in (100, 101):
        assert many[seed]["loss"] == pytest.approx(one[seed]["loss"], rel=1e-4)
        assert many[seed]["token_accuracy"] == pytest.approx(one[seed]["token_accuracy"], abs=0.01)
