"""Style gates the project keeps: ruff, snakefmt and `snakemake --lint` all clean."""

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

BIN = Path(sys.executable).parent


def run(*cmd: str) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)


PYTHON = ("src", "tests", "bench", "workflow/scripts", "report/ledger", "mutants")


def test_ruff_check_is_clean():
    done = run(str(BIN / "ruff"), "check", *PYTHON)
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_format_is_clean():
    done = run(str(BIN / "ruff"), "format", "--check", *PYTHON)
    assert done.returncode == 0, done.stdout + done.stderr


def test_snakefmt_is_clean():
    done = run(str(BIN / "snakefmt"), "--check", "Snakefile", "workflow")
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
def test_snakemake_lint_is_clean():
    done = run(sys.executable, "-m", "snakemake", "--lint")
    assert done.returncode == 0, done.stdout + done.stderr
