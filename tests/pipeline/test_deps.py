"""Each rule lists, as inputs, the src/ files its code imports: check that list against what a
job really imports (run in a fresh interpreter, as Snakemake runs it)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT

from lecture17.experiments import DEMOS
from lecture17.pipeline.deps import code_inputs

TEST_CONFIG = yaml.safe_load((ROOT / ".test/config/config.yaml").read_text())

# Run every demo of one module in one interpreter, then list the lecture17 source files loaded.
PROBE = """
import itertools, json, sys
from lecture17.pipeline.job import run_demo
for demo, spec in json.loads(sys.argv[1]).items():
    grid = spec.get("grid", {})
    point = {k: v[0] for k, v in grid.items()}
    settings = dict(spec["settings"], **({"device": "cpu"} if grid else {}))
    run_demo(demo, settings, spec["seeds"][0], point)
print(json.dumps(sorted(m.__file__ for name, m in sys.modules.items()
                        if name.split(".")[0] == "lecture17" and getattr(m, "__file__", None))))
"""


def modules_in_config() -> dict[str, dict]:
    by_module = {}
    for demo, spec in TEST_CONFIG["demos"].items():
        by_module.setdefault(DEMOS[demo].module, {})[demo] = spec
    return by_module


@pytest.mark.slow
@pytest.mark.parametrize("module", sorted(modules_in_config()))
def test_a_rules_code_inputs_cover_every_file_its_jobs_import(module):
    demos = modules_in_config()[module]
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(demos)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = {
        str(Path(f).resolve().relative_to(ROOT)) for f in json.loads(done.stdout.splitlines()[-1])
    }
    listed = set(
        code_inputs("lecture17.pipeline.job", f"lecture17.experiments.{module}", root=ROOT)
    )
    assert loaded <= listed, f"imported but not listed as rule inputs: {sorted(loaded - listed)}"
    # and nothing listed that no job of this rule could import (the list is the import closure)
    assert f"src/lecture17/experiments/{module}.py" in loaded


def test_numpy_only_demos_do_not_import_torch():
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, lecture17.experiments.positional_encoding, "
            "lecture17.experiments.self_attention, lecture17.pipeline.job; "
            "print('torch' in sys.modules)",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == "False"


def test_the_closure_follows_imports_inside_functions(tmp_path):
    pkg = tmp_path / "src" / "lecture17"
    (pkg / "experiments").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "experiments" / "__init__.py").write_text("")
    (pkg / "helper.py").write_text("")
    (pkg / "experiments" / "demo.py").write_text(
        "def f():\n    from lecture17 import helper\n    return helper\n"
    )
    assert code_inputs("lecture17.experiments.demo", root=tmp_path) == [
        "src/lecture17/__init__.py",
        "src/lecture17/experiments/__init__.py",
        "src/lecture17/experiments/demo.py",
        "src/lecture17/helper.py",
    ]
