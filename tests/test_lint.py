"""Style gates the project keeps: ruff, snakefmt and `snakemake --lint` all clean."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

BIN = Path(sys.executable).parent


def run(*cmd: str) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)


PYTHON = ("src", "tests", "bench", "scripts", "workflow/scripts", "report/ledger", "mutants")


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


LONG = 300  # lines: a module longer than this says why at its top (docs/STYLE.md)


def long_modules_without_a_reason(root: Path) -> list[str]:
    found = []
    for path in sorted((root / "src").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        docstring = ast.get_docstring(ast.parse(text)) or ""
        if len(text.splitlines()) > LONG and "Long on purpose:" not in docstring:
            found.append(str(path.relative_to(root)))
    return found


def test_a_long_module_says_why_at_its_top(tmp_path):
    assert long_modules_without_a_reason(ROOT) == []
    (tmp_path / "src").mkdir()
    (tmp_path / "src/long.py").write_text('"""A module."""\n' + "x = 1\n" * LONG)
    (tmp_path / "src/short.py").write_text('"""A module."""\nx = 1\n')
    assert long_modules_without_a_reason(tmp_path) == ["src/long.py"]
