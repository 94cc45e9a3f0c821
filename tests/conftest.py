"""Shared test set-up: paths, tolerances, markers and the one-value picker declared once, and
the same hypothesis examples on every run, so a CI failure can be rerun here."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import settings

from lecture17.pipeline.aggregate import select

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "config" / "config.yaml"
TEST_CONFIG = ROOT / ".test" / "config" / "config.yaml"  # the small config the workflow tests use

# float64 against float64 (numpy vs PyTorch, the same sums in another order): the values
# compared are O(1), so 1e-12 is a few thousand ulps and far below the lecture's ~1e-15 quotes'
# next digit; an ill-conditioned case derives its own bound from its condition number
# (test_attention_numpy.py). float32 (a model's training dtype) gets its own.
ATOL = 1e-12
RTOL = 0.0
ATOL_FLOAT32 = 1e-5
# A demo's own float64 equivalences in its table (loop = matrix = PyTorch, PE(p + k) = PE(p) M_k,
# our layers = PyTorch's, at config/config.yaml's sizes): the lecture quotes 2e-16 … 1.3e-15
# (~1e-14 for the PE shifts), so these are held to 1e-13, tighter than ATOL.
EQUIV = 1e-13

# Property tests draw random inputs; derandomize makes the draws a function of the test alone
# (no database, no clock), like every seeded number in the lecture's code (§0.5).
settings.register_profile("lecture17", derandomize=True, database=None, print_blob=True)
settings.load_profile("lecture17")


def _cuda() -> bool:
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is pinned
        return False
    return torch.cuda.is_available()


# the CUDA skips, declared once: `@requires_cuda` on a test that needs a GPU (CI has none),
# `@without_cuda` on one that checks what a machine without a GPU says
requires_cuda = pytest.mark.skipif(not _cuda(), reason="no GPU on this machine")
without_cuda = pytest.mark.skipif(_cuda(), reason="this machine has a GPU")


def value(table, quantity: str, **labels) -> float:
    """The one value of `quantity` with these labels in a demo's table (pipeline.aggregate's
    select, the report's and the ledger's way: labels compare as text)."""
    rows = select(table, quantity, **labels)
    assert len(rows) == 1, f"{quantity} {labels}: {len(rows)} rows"
    return float(rows["value"].iloc[0])


def python_m(work: Path, *args: str, timeout: float | None = None) -> subprocess.CompletedProcess:
    """`python -m …` in the checkout `work` (its src/ first on PYTHONPATH), as a rule runs it."""
    env = dict(
        os.environ,
        PYTHONPATH=str(Path(work) / "src"),
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    )
    command = [sys.executable, "-m", *args]
    return subprocess.run(
        command, cwd=work, env=env, capture_output=True, text=True, timeout=timeout
    )
