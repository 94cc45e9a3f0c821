import subprocess
from pathlib import Path

import pytest
import yaml

from lecture17.pipeline import yamlio

ROOT = Path(__file__).resolve().parents[2]


def tracked_yaml() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "*.yaml", "*.yml"], cwd=ROOT, capture_output=True, text=True
    )
    return [ROOT / name for name in listed.stdout.split()] if listed.returncode == 0 else []


FILES = tracked_yaml()


def test_the_repository_has_yaml_to_compare():
    assert len(FILES) > 20 and any(p.match("report/ledger/*.yaml") for p in FILES)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_yaml_file_loads_to_the_same_data_as_safe_load(path):
    text = path.read_text(encoding="utf-8")
    assert yamlio.load(text) == yaml.safe_load(text)


def test_the_loader_is_safe():
    with pytest.raises(yaml.constructor.ConstructorError):
        yamlio.load("!!python/object/apply:os.system ['true']")
