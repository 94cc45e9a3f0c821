"""Each job lists, as inputs, the src/ files its code imports, and as its `code` param the lines
of its own module that its function runs: check both against what a job really imports and
runs (in a fresh interpreter, as Snakemake runs it, with the module cut down to those lines)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT

from lecture17.experiments import DEMOS
from lecture17.pipeline import record
from lecture17.pipeline.deps import code_inputs, function_source

TEST_CONFIG = yaml.safe_load((ROOT / ".test/config/config.yaml").read_text())

# Run every demo of one module in one interpreter, each with its module replaced by only the
# lines its function runs (deps.function_source): a name those lines miss fails the run. Then
# list the lecture17 source files loaded.
PROBE = """
import json, sys, types
from pathlib import Path
from lecture17.pipeline.deps import function_source
from lecture17.pipeline.job import run_demo
from lecture17.experiments import DEMOS
for demo, spec in json.loads(sys.argv[1]).items():
    name = f"lecture17.experiments.{DEMOS[demo].module}"
    path = Path("src", *name.split(".")).with_suffix(".py").resolve()
    cut = types.ModuleType(name)
    cut.__file__ = str(path)
    sys.modules[name] = cut
    exec(compile(function_source(path, DEMOS[demo].function.split(".")[-1]), str(path), "exec"),
         cut.__dict__)
    grid = spec.get("grid", {})
    point = {k: v[0] for k, v in grid.items()}
    settings = dict(spec["settings"], **({"device": "cpu"} if grid else {}))
    run_demo(demo, settings, spec["seeds"][0], point)
    del sys.modules[name]
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
def test_a_jobs_code_inputs_and_function_lines_cover_what_it_imports_and_runs(module):
    demos = modules_in_config()[module]
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(demos)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]  # a NameError: the cut lines miss a name
    loaded = {
        str(Path(f).resolve().relative_to(ROOT)) for f in json.loads(done.stdout.splitlines()[-1])
    }
    own = f"src/lecture17/experiments/{module}.py"
    listed = {own}.union(*(record.job_code(demo, ROOT) for demo in demos))
    listed |= {record.REGISTRY_FILE, "src/lecture17/pipeline/deps.py"}  # the job's params; PROBE
    assert loaded <= listed, f"imported but not listed as job inputs: {sorted(loaded - listed)}"


MODULE = """\"\"\"A module.\"\"\"
import math

SCALE = 2.0  # a constant f reads
OTHER = 3.0


def _helper(x):
    return SCALE * x


def f(x):
    \"\"\"The demo.\"\"\"
    return _helper(x) + math.pi


# a comment between functions
def g(x):
    return OTHER * x
"""


def test_a_functions_lines_are_its_own_its_helpers_and_the_modules_statements(tmp_path):
    path = tmp_path / "m.py"

    def lines(text, name="f"):
        path.write_text(text)
        return function_source(path, name)

    base = lines(MODULE)
    assert "def g" not in base and "OTHER" not in base and "A module" not in base
    assert {"import math", "def _helper(x):", "def f(x):"} <= set(base.split("\n"))
    assert "SCALE = 2.0  # a constant f reads" in base
    # another function, a constant f never reads, a comment between functions: f is unchanged
    assert lines(MODULE.replace("OTHER * x", "OTHER * x + 1")) == base
    assert lines(MODULE.replace("OTHER = 3.0", "OTHER = 4.0")) == base
    assert lines(MODULE.replace("between functions", "elsewhere")) == base
    assert lines(MODULE + "\n\ndef h():\n    return 0\n") == base
    # what f runs: its body, a helper it calls, a constant the helper reads, a module statement
    assert lines(MODULE.replace("+ math.pi", "- math.pi")) != base
    assert lines(MODULE.replace("SCALE * x", "SCALE * x * x")) != base
    assert lines(MODULE.replace("SCALE = 2.0", "SCALE = 2.5")) != base
    assert lines(MODULE.replace("import math", "import math\nmath.pi = 3")) != base
    assert lines(MODULE.replace("def f(x):", "@staticmethod\ndef f(x):")) != base
    with pytest.raises(ValueError, match="no module-level function 'nope'"):
        lines(MODULE, "nope")


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
