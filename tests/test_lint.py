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


LONG = 400  # lines: a module longer than this says why at its top (docs/STYLE.md)
LONG_SHARE = 0.25  # and at most this share of src/'s lines sits in such modules
FUNCTION_CAP = 50  # lines, def to last line, over src/ and mutants/ (experiments/: 45, test_layout)
REASON = "Long on purpose:"


def modules(root: Path) -> dict[str, int]:
    """{path: lines} of every module of src/."""
    return {
        str(path.relative_to(root)): len(path.read_text(encoding="utf-8").splitlines())
        for path in sorted((root / "src").rglob("*.py"))
    }


def long_modules_without_a_reason(root: Path) -> list[str]:
    found = []
    for name, lines in modules(root).items():
        docstring = ast.get_docstring(ast.parse((root / name).read_text(encoding="utf-8"))) or ""
        if lines > LONG and REASON not in docstring:
            found.append(name)
    return found


def long_share(root: Path) -> float:
    """The share of src/'s lines in modules over LONG lines."""
    sizes = modules(root)
    return sum(n for n in sizes.values() if n > LONG) / sum(sizes.values())


def comment_above(lines: list[str], top: int) -> str:
    """The comment lines right above line `top` (1-based), joined."""
    found = []
    for line in reversed(lines[: top - 1]):
        if not line.strip().startswith("#"):
            break
        found.insert(0, line.strip().lstrip("# "))
    return " ".join(found)


def long_functions_without_a_reason(root: Path, folders=("src", "mutants")) -> list[str]:
    """Functions over FUNCTION_CAP lines whose docstring, or a comment on the line above the
    def (or its decorators), does not say why they are long."""
    found = []
    for folder in folders:
        for path in sorted((root / folder).rglob("*.py")):
            lines = path.read_text(encoding="utf-8").splitlines()
            for node in ast.walk(ast.parse("\n".join(lines))):
                if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                if node.end_lineno - node.lineno + 1 <= FUNCTION_CAP:
                    continue
                said = REASON in (ast.get_docstring(node) or "") or REASON in comment_above(
                    lines, min([node.lineno, *(d.lineno for d in node.decorator_list)])
                )
                if not said:
                    found.append(f"{path.relative_to(root)}::{node.name}")
    return found


def test_a_long_module_says_why_at_its_top(tmp_path):
    assert long_modules_without_a_reason(ROOT) == []
    (tmp_path / "src").mkdir()
    (tmp_path / "src/long.py").write_text('"""A module."""\n' + "x = 1\n" * LONG)
    (tmp_path / "src/short.py").write_text('"""A module."""\nx = 1\n')
    why = f'"""A module.\n\n{REASON} a reason."""\n'
    (tmp_path / "src/why.py").write_text(why + "x = 1\n" * LONG)
    assert long_modules_without_a_reason(tmp_path) == ["src/long.py"]


def test_at_most_a_quarter_of_src_sits_in_long_modules(tmp_path):
    share = long_share(ROOT)
    assert share <= LONG_SHARE, f"{share:.0%} of src/'s lines in modules over {LONG} lines"
    (tmp_path / "src").mkdir()
    (tmp_path / "src/long.py").write_text("x = 1\n" * (LONG + 1))
    (tmp_path / "src/short.py").write_text("x = 1\n" * LONG)
    assert long_share(tmp_path) > LONG_SHARE


def test_a_long_function_says_why(tmp_path):
    assert long_functions_without_a_reason(ROOT) == []
    body = "".join(f"    x{i} = {i}\n" for i in range(FUNCTION_CAP))
    (tmp_path / "src").mkdir()
    (tmp_path / "src/a.py").write_text(
        f"def long():\n{body}\n\n# {REASON} a reason\n# on two lines.\ndef said():\n{body}\n\n"
        f'def doc():\n    """{REASON} a reason."""\n{body}\n\ndef short():\n    x = 1\n'
    )
    assert long_functions_without_a_reason(tmp_path, ("src",)) == ["src/a.py::long"]
