"""Which source files a rule's code depends on, read from the imports.

Snakemake reruns a job when its rule or script changes, but it cannot see the package code the
rule calls. So every rule lists, as inputs, the `src/lecture17/*.py` files its entry module
imports, directly or through other lecture17 modules (imports inside functions included: the
lazy `import torch` and `from lecture17 import tiny_transformer` count too). Editing
`attention_numpy.py` then reruns exactly the jobs whose code imports it.
"""

import ast
from pathlib import Path

PACKAGE = "lecture17"
SRC = Path(__file__).resolve().parents[2]  # the folder that holds lecture17/


def module_path(name: str, src: Path = SRC) -> Path:
    """lecture17.experiments.layers -> src/lecture17/experiments/layers.py (or its __init__.py)."""
    base = src.joinpath(*name.split("."))
    path = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
    if not path.exists():
        raise ValueError(f"module {name!r} not found under {src}")
    return path


def imported_modules(path: Path, src: Path = SRC) -> set[str]:
    """The lecture17 modules one file imports (absolute imports; `from lecture17 import x` too)."""
    found = set()
    package = _package_of(path, src)
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == PACKAGE}
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(node, package)
            if not module or module.split(".")[0] != PACKAGE:
                continue
            found.add(module)
            for alias in node.names:  # `from lecture17 import attention_numpy` names a module
                candidate = f"{module}.{alias.name}"
                base = src.joinpath(*candidate.split("."))
                if base.with_suffix(".py").exists() or (base / "__init__.py").exists():
                    found.add(candidate)
    return found


def _package_of(path: Path, src: Path) -> str:
    """src/lecture17/experiments/layers.py -> "lecture17.experiments" (for relative imports)."""
    parts = path.resolve().relative_to(src.resolve()).with_suffix("").parts
    return ".".join(parts[:-1])


def _absolute(node: ast.ImportFrom, package: str) -> str | None:
    """The module an ImportFrom names, relative ones (`from ..pipeline import x`) resolved."""
    if not node.level:
        return node.module
    parts = package.split(".")
    base = parts[: len(parts) - node.level + 1] if node.level <= len(parts) else []
    return ".".join([*base, *([node.module] if node.module else [])]) or None


def parents(name: str) -> list[str]:
    """Importing a.b.c runs a/__init__ and a/b/__init__ first."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def code_closure(*entry_modules: str, src: Path = SRC) -> set[Path]:
    """Every source file the entry modules import, transitively (package __init__ files too)."""
    todo, seen = list(entry_modules), set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo += parents(name)
        todo += sorted(imported_modules(module_path(name, src), src))
    return {module_path(name, src) for name in seen}


def code_inputs(*entry_modules: str, root: Path) -> list[str]:
    """The closure as sorted paths relative to the workflow root, the way a rule lists inputs."""
    root = Path(root).resolve()
    return sorted(str(p.relative_to(root)) for p in code_closure(*entry_modules, src=root / "src"))


# A demo's own module at the grain of its function. Code inputs are whole files, so a new demo
# added to self_attention.py would rerun every demo of that module. For the module that holds
# a demo's function, a job depends instead on the lines that function runs: its own, those of
# the module-level definitions it reaches by name (helpers, constants, classes, transitively)
# and every module-level statement that defines no name (imports, side effects). The text of
# those lines (not an AST dump, whose format changes between Python versions) is the job's
# `code` param; another function's edit, or a comment between functions, leaves it unchanged.


def _defines(node: ast.stmt) -> set[str] | None:
    """The names a module-level statement defines, or None for one that must always count."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    if isinstance(node, ast.Assign | ast.AnnAssign) and all(
        isinstance(t, ast.Name) for t in targets
    ):
        return {t.id for t in targets}
    return None


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def function_source(path: Path, name: str) -> str:
    """The source lines of `path` that its module-level function `name` runs (see above)."""
    text = path.read_text()
    tree = ast.parse(text, filename=str(path))
    body = tree.body[1:] if ast.get_docstring(tree) is not None else tree.body
    defining: dict[str, list[ast.stmt]] = {}
    always = []
    for node in body:
        names = _defines(node)
        if names is None:
            always.append(node)
        for defined in names or ():
            defining.setdefault(defined, []).append(node)
    if not any(isinstance(n, ast.FunctionDef) for n in defining.get(name, [])):
        raise ValueError(f"{path} defines no module-level function {name!r}")
    kept, todo = set(map(id, always)), [name, *set().union(*map(_names, always))]
    seen = set()
    while todo:
        used = todo.pop()
        if used in seen:
            continue
        seen.add(used)
        for node in defining.get(used, []):
            kept.add(id(node))
            todo += _names(node)
    lines = text.splitlines()
    spans = []
    for node in body:
        if id(node) in kept:
            first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
            spans.append("\n".join(lines[first - 1 : node.end_lineno]))
    return "\n".join(spans) + "\n"
