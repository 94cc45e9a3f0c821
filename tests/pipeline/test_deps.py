"""Each job lists, as inputs, the src/ files its code imports, and as its `code` param the lines
of its own module that its function runs and the numpy blocks it reaches: check both against
what a job really imports and runs (in a fresh interpreter, as Snakemake runs it, with each
module cut down to those lines)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT

from lecture17.experiments import DEMOS
from lecture17.pipeline import record
from lecture17.pipeline.deps import code_inputs, code_parts, function_source

TEST_CONFIG = yaml.safe_load((ROOT / ".test/config/config.yaml").read_text())

# Run every demo of one module in one interpreter, each with every experiments module it runs
# only part of replaced by those lines alone (deps.code_parts): a name the lines miss fails the
# run. Then list the lecture17 source files loaded.
PROBE = """
import ast, json, sys, types
from pathlib import Path
from lecture17.experiments import DEMOS
from lecture17.pipeline.deps import code_parts
from lecture17.pipeline.job import run_demo

def absent(module):
    # attention_numpy is cut to the blocks a job can reach: a block its module imports by name
    # but this job never calls may be absent, and only a call of one fails
    def __getattr__(attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        def missing(*args, **kwargs):
            raise NameError(f"{module}.{attr} is called but not in the job's part")
        return missing
    return __getattr__

def install(parts):
    cut = {}
    for key, text in parts.items():
        path = Path(key.split("::")[0]).resolve()
        name = ".".join(Path(key.split("::")[0]).with_suffix("").parts[1:])
        cut[name] = types.ModuleType(name)
        cut[name].__file__ = str(path)
        if name == "lecture17.attention_numpy":
            cut[name].__getattr__ = absent(name)
        sys.modules.pop(name, None)
    done = set()
    while len(done) < len(cut):  # a cut module's own imports of another cut module first
        for name, text in ((n, parts[k]) for k in parts for n in cut if cut[n].__file__
                           == str(Path(k.split("::")[0]).resolve())):
            needs = {n.module for n in ast.parse(text).body if isinstance(n, ast.ImportFrom)}
            if name in done or (needs & set(cut)) - done:
                continue
            sys.modules[name] = cut[name]
            exec(compile(text, cut[name].__file__, "exec"), cut[name].__dict__)
            done.add(name)
    return cut

for demo, spec in json.loads(sys.argv[1]).items():
    module, function = DEMOS[demo].function.rsplit(".", 1)
    files, parts = code_parts(f"lecture17.experiments.{module}", function,
                              "lecture17.pipeline.job", root=Path("."))
    cut = install(parts)
    grid = spec.get("grid", {})
    point = {k: v[0] for k, v in grid.items()}
    settings = dict(spec["settings"], **({"device": "cpu"} if grid else {}))
    run_demo(demo, settings, spec["seeds"][0], point)
    for name in cut:
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
    listed = set().union(*(record.job_code(demo, ROOT) for demo in demos))
    listed |= {record.REGISTRY_FILE, "src/lecture17/pipeline/deps.py"}  # the job's params; PROBE
    # imported for its names by a module whose other demos use them; the blocks this job calls
    # are its part (a call of one that is not fails in PROBE)
    listed |= {"src/lecture17/attention_numpy.py"}
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
    with pytest.raises(ValueError, match="defines no module-level 'nope'"):
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
    # the imports are cached by the file's text: an edit in the same process is seen
    (pkg / "experiments" / "demo.py").write_text("def f():\n    return 1\n")
    assert "src/lecture17/helper.py" not in code_inputs("lecture17.experiments.demo", root=tmp_path)


def test_a_helper_imported_from_another_experiments_module_counts_at_its_grain(tmp_path):
    pkg = tmp_path / "src" / "lecture17"
    (pkg / "experiments").mkdir(parents=True)
    for name in ("__init__.py", "experiments/__init__.py", "whole.py"):
        (pkg / name).write_text("")
    (pkg / "experiments" / "a.py").write_text(
        "def demo():\n    from lecture17.experiments.b import helper\n    return helper()\n"
    )
    b = pkg / "experiments" / "b.py"
    b.write_text(
        "import lecture17.whole\n\n\ndef helper():\n    return 1\n\n\ndef other():\n    return 2\n"
    )

    def parts():
        return code_parts("lecture17.experiments.a", "demo", root=tmp_path)

    files, cut = parts()
    assert files == [
        "src/lecture17/__init__.py",
        "src/lecture17/whole.py",
    ]  # b's import of `whole` counts whole
    assert list(cut) == [
        "src/lecture17/experiments/a.py::demo",
        "src/lecture17/experiments/b.py::helper",
    ]
    b.write_text(b.read_text().replace("return 2", "return 3"))
    assert parts() == (files, cut)  # another function of b
    b.write_text(b.read_text().replace("return 1", "return 4"))
    assert (
        parts()[1]["src/lecture17/experiments/b.py::helper"]
        != cut["src/lecture17/experiments/b.py::helper"]
    )
