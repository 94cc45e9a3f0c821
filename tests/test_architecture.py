"""The package's two halves: the lecture's code at the top of lecture17 (what students read),
the machinery in lecture17.pipeline and lecture17.reporting. Imports run one way only: the
lecture's code imports nothing from the machinery, so it reads (and runs) on its own."""

import shutil
from pathlib import Path

import pytest
from conftest import ROOT

from lecture17.pipeline.deps import imported_modules

LECTURE = ("attention_numpy", "tiny_transformer", "training", "torch_models", "experiments")
MACHINERY = ("lecture17.pipeline", "lecture17.reporting", "lecture17.__main__")


def lecture_files(src: Path) -> list[Path]:
    package = src / "lecture17"
    files = []
    for name in LECTURE:
        path = package / name
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path.with_suffix(".py")]
    return files


def machinery_imports(src: Path) -> dict[str, list[str]]:
    """{lecture file: the machinery modules it imports} (empty when imports run one way)."""
    found = {}
    for path in lecture_files(src):
        bad = sorted(m for m in imported_modules(path, src) if m.startswith(MACHINERY))
        if bad:
            found[str(path.relative_to(src))] = bad
    return found


def test_the_lecture_code_imports_nothing_from_the_machinery():
    assert lecture_files(ROOT / "src")
    assert machinery_imports(ROOT / "src") == {}


@pytest.mark.parametrize(
    "line",
    [
        "from lecture17.pipeline.csvio import write_csv",
        "from lecture17.reporting import ledger",
        "import lecture17.reporting.figures",
        "    from lecture17.pipeline import aggregate  # inside a function",
        "from lecture17 import reporting",
        "from ..pipeline import csvio",
        "from .. import reporting",
    ],
)
def test_a_machinery_import_in_the_lecture_code_is_caught(line, tmp_path):
    src = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "lecture17", src / "lecture17")
    target = src / "lecture17" / "experiments" / "layers.py"
    body = f"def _probe():\n{line}\n" if line.startswith(" ") else f"{line}\n"
    target.write_text(target.read_text() + "\n" + body)
    assert list(machinery_imports(src)) == ["lecture17/experiments/layers.py"]


def test_the_lecture_code_imports_no_module_by_name():
    """importlib would hide an import from the check above (and from the rules' code inputs)."""
    for path in lecture_files(ROOT / "src"):
        assert "importlib" not in path.read_text(), path


def test_every_module_is_in_one_half():
    package = ROOT / "src" / "lecture17"
    top = {p.stem for p in package.glob("*.py")} | {
        p.name for p in package.iterdir() if p.is_dir() and (p / "__init__.py").exists()
    }
    assert top == {*LECTURE, "__init__", "__main__", "pipeline", "reporting"}
