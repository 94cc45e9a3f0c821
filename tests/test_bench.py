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
