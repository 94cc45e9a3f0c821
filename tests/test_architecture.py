"""The package's layers, and the one way imports run between them.

From the bottom: the lecture's own modules at the top of lecture17 (what students read:
attention_numpy, tiny_transformer, training, torch_models, and their torch-free helpers timing
and train_settings); experiments (one module per lecture script, the demo registry); then the
machinery: pipeline, reporting, the command line (lecture17.__main__) and the runner of the
lecture's scripts (lecture17.scripts). A module may import
from its own layer and from the layers below it, never from one above: the lecture's code reads
(and runs) on its own, and the experiments on the lecture's code alone. Every edge of the
import graph is checked (imports inside functions included), and no module, of src/ or of
mutants/, imports itself through others (a cycle, which an import inside a function hides
from Python but not from a reader).
"""

import ast
import shutil
from pathlib import Path

import pytest
from conftest import ROOT

from lecture17.pipeline.deps import imported_modules

LECTURE = (
    "attention_numpy",
    "_numpy_checks",
    "_torch_checks",
    "gru_seq2seq",
    "tiny_transformer",
    "decoding",
    "training",
    "tasks",
    "torch_models",
    "timing",
    "train_settings",
)
LAYERS = (
    "lecture",
    "experiments",
    "pipeline",
    "reporting",
    "checker",
    "__main__",
    "scripts",
)  # bottom up


def layer(module: str) -> str:
    """lecture17.experiments.layers -> "experiments"; lecture17.training -> "lecture"."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] in LECTURE:  # the package itself imports nothing
        return "lecture"
    if parts[1] not in LAYERS:
        raise ValueError(f"{module} is in no layer: add it to LECTURE or to LAYERS")
    return parts[1]


def modules(src: Path) -> dict[str, Path]:
    """{module name: its file} for every file of the package."""
    found = {}
    for path in sorted((src / "lecture17").rglob("*.py")):
        name = ".".join(path.relative_to(src).with_suffix("").parts)
        found[name.removesuffix(".__init__")] = path
    return found


def upward_imports(src: Path) -> list[str]:
    """Every edge of the import graph that points to a higher layer ("a -> b")."""
    bad = []
    for name, path in modules(src).items():
        rank = LAYERS.index(layer(name))
        for target in sorted(imported_modules(path, src)):
            if LAYERS.index(layer(target)) > rank:
                bad.append(f"{name} -> {target}")
    return bad


def test_imports_run_one_way():
    assert len(modules(ROOT / "src")) > 20
    assert upward_imports(ROOT / "src") == []


@pytest.mark.parametrize(
    ("target", "line"),
    [
        # the regression this test was written for: the loop importing the demos' helpers
        ("training.py", "from lecture17.experiments.tidy import row"),
        ("tiny_transformer.py", "from lecture17.pipeline.csvio import write_csv"),
        ("attention_numpy.py", "    from lecture17 import experiments  # in a function"),
        ("experiments/layers.py", "from lecture17.reporting import ledger"),
        ("experiments/layers.py", "import lecture17.pipeline.job"),
        ("experiments/layers.py", "from ..pipeline import csvio"),
        ("experiments/layers.py", "from .. import reporting"),
        ("pipeline/job.py", "from lecture17.reporting import diff"),
        ("reporting/diff.py", "from lecture17 import __main__"),
    ],
)
def test_an_upward_import_is_caught(target, line, tmp_path):
    src = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "lecture17", src / "lecture17")
    path = src / "lecture17" / target
    body = f"def _probe():\n{line}\n" if line.startswith(" ") else f"{line}\n"
    path.write_text(path.read_text() + "\n" + body)
    found = upward_imports(src)
    importer = "lecture17." + target.removesuffix(".py").replace("/", ".")
    assert found and all(f.split(" -> ")[0] == importer for f in found), found


def test_the_lecture_code_imports_no_module_by_name():
    """importlib would hide an import from the check above (and from the rules' code inputs)."""
    for name, path in modules(ROOT / "src").items():
        if layer(name) in ("lecture", "experiments"):
            assert "importlib" not in path.read_text(), path


def test_every_module_is_in_a_layer():
    for name in modules(ROOT / "src"):
        assert layer(name) in LAYERS
    with pytest.raises(ValueError, match="in no layer"):
        layer("lecture17.plotting.axes")


# -----------------------------------------------------------------------------
# no import cycle, in src/ or in mutants/ (an import inside a function counts: it hides a
# cycle from Python, not from a reader)


def import_graph(src: Path, root: Path) -> dict[str, set[str]]:
    """{module: the modules of lecture17 and mutants it imports} for src/lecture17 and mutants/."""
    files = dict(modules(src))
    for path in sorted((root / "mutants").glob("*.py")):
        files[f"mutants.{path.stem}".removesuffix(".__init__")] = path
    graph = {}
    for name, path in files.items():
        found = set(imported_modules(path, src)) if name.startswith("lecture17") else set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
        graph[name] = {m for m in found if m in files and m != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index, low, on, stack, found, counter = {}, {}, set(), [], [], [0]

    def visit(start):
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle_in_src_or_mutants():
    graph = import_graph(ROOT / "src", ROOT)
    assert any(m.startswith("mutants.") for m in graph) and len(graph) > 40
    assert cycles(graph) == []


@pytest.mark.parametrize(
    ("target", "line", "cycle"),
    [
        # the three cycles there were, each closed by an import inside a function
        (
            "src/lecture17/reporting/ledger.py",
            "    from lecture17.reporting import claims",
            {"lecture17.reporting.claims", "lecture17.reporting.ledger"},
        ),
        (
            "src/lecture17/pipeline/fingerprint.py",
            "    from lecture17.pipeline import record",
            {"lecture17.pipeline.fingerprint", "lecture17.pipeline.record"},
        ),
        (
            "mutants/coverage.py",
            "    from mutants.run import select",
            {"mutants.coverage", "mutants.run"},
        ),
    ],
)
def test_an_import_cycle_is_caught(target, line, cycle, tmp_path):
    shutil.copytree(ROOT / "src", tmp_path / "src")
    shutil.copytree(ROOT / "mutants", tmp_path / "mutants")
    path = tmp_path / target
    path.write_text(path.read_text() + f"\n\ndef _probe():\n{line}\n")
    found = cycles(import_graph(tmp_path / "src", tmp_path))
    assert any(cycle <= set(c) for c in found), found
