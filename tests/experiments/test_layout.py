"""The experiment modules read like the lecture (docs/STYLE.md): every function short enough to
see at once, the demos of a module in the lecture's id order, one way to build a row and one
clock. Measured on the source with `ast`, so a long function or a hand-built row fails here.
And every module imports without torch."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

from lecture17.experiments import runnable

EXPERIMENTS = ROOT / "src" / "lecture17" / "experiments"
MAX_LINES = 45  # "about 40": `def` to the last line, signature and docstring included


def tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def top_level_functions(path: Path) -> list[ast.FunctionDef]:
    return [node for node in tree(path).body if isinstance(node, ast.FunctionDef)]


def function_lengths() -> dict[str, int]:
    """'module.py:function' -> its lines, for every top-level function in experiments/."""
    return {
        f"{path.name}:{node.name}": node.end_lineno - node.lineno + 1
        for path in sorted(EXPERIMENTS.glob("*.py"))
        for node in top_level_functions(path)
    }


def test_no_experiment_function_is_longer_than_45_lines():
    lengths = function_lengths()
    assert "scaling_multihead.py:lookup_task" in lengths  # the measure sees the demos
    longest = max(lengths, key=lengths.get)
    too_long = {name: n for name, n in lengths.items() if n > MAX_LINES}
    assert not too_long, f"over {MAX_LINES} lines: {too_long} (longest {longest})"


def test_the_length_measure_counts_a_whole_function(tmp_path):
    source = tmp_path / "demo.py"
    source.write_text('def f(\n    x,\n):\n    """Doc."""\n\n    return x\n')
    (f,) = top_level_functions(source)
    assert f.end_lineno - f.lineno + 1 == 6


@pytest.mark.parametrize("module", sorted({demo.module for demo in runnable().values()}))
def test_demos_are_in_id_order_in_their_module(module):
    """Within a module the demos follow the lecture (02.1, 02.2, 02.3, …); each one's helpers
    sit just before it. A recorded demo (07.x, 08.x) sits with the lecture demo it extends
    (07.2's lookup_sensitivity after 02.3's lookup_task); one reusing a function adds none."""
    order = [node.name for node in top_level_functions(EXPERIMENTS / f"{module}.py")]
    by_lecture = sorted(runnable().values(), key=lambda d: (d.extends or d.id, d.id))
    demos = list(dict.fromkeys(d.function_name for d in by_lecture if d.module == module))
    assert sorted(demos, key=order.index) == demos


def test_rows_are_built_with_tidy_row_and_timed_with_timing():
    """No demo hand-builds a {"quantity": …, "value": …} dict or reads a clock of its own:
    tidy.row / tidy.rows make the rows, lecture17.timing holds the one clock."""
    found = []
    for path in sorted(EXPERIMENTS.glob("*.py")):
        for node in ast.walk(tree(path)):
            keys = [k.value for k in getattr(node, "keys", []) if isinstance(k, ast.Constant)]
            if isinstance(node, ast.Dict) and "quantity" in keys and path.name != "tidy.py":
                found.append(f"{path.name}:{node.lineno} dict with 'quantity'")
            if isinstance(node, ast.Attribute) and node.attr in ("perf_counter", "synchronize"):
                found.append(f"{path.name}:{node.lineno} {node.attr}")
    for path in sorted((ROOT / "bench").glob("*.py")):
        for node in ast.walk(tree(path)):
            if isinstance(node, ast.Attribute) and node.attr in ("perf_counter", "synchronize"):
                found.append(f"bench/{path.name}:{node.lineno} {node.attr}")
    assert not found, found


@pytest.mark.parametrize("module", sorted({demo.module for demo in runnable().values()}))
def test_importing_the_module_does_not_import_torch(module):
    """torch is imported inside the functions that need it (experiments/__init__.py), so the
    numpy-only demos run without paying for `import torch`."""
    code = f"import sys, lecture17.experiments.{module}; print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "False", done.stderr
