"""Which source files a rule's code depends on, read from the imports.

Snakemake reruns a job when its rule or script changes, but it cannot see the package code the
rule calls. So every rule lists, as inputs, the `src/lecture17/*.py` files its entry module
imports, directly or through other lecture17 modules (imports inside functions included: the
lazy `import torch` and `from lecture17 import tiny_transformer` count too). Two kinds of
module count at a finer grain, by the lines a job runs (below): the experiments modules, at
the grain of a function, and attention_numpy.py, at the grain of a block — editing
`softmax` reruns the jobs that can reach `softmax`, not every job that imports the file.
"""

import ast
import functools
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


@functools.lru_cache(maxsize=1024)
def _parse(text: str, filename: str) -> ast.Module:
    """ast.parse, once per text: a build asks about the same files for each of its demos.
    Keyed by the text itself, so an edited file is parsed again. Read-only: never mutate."""
    return ast.parse(text, filename=filename)


def imported_modules(path: Path, src: Path = SRC, text: str | None = None) -> set[str]:
    """The lecture17 modules one file imports (absolute imports; `from lecture17 import x` too);
    `text`: only these lines of it (function_source)."""
    text = path.read_text() if text is None else text
    return set(_imports(text, str(path), _package_of(path, src), src))


@functools.lru_cache(maxsize=4096)
def _imports(text: str, filename: str, package: str, src: Path) -> frozenset[str]:
    """imported_modules, once per text: Snakemake asks for every job of a demo, and walking the
    tree each time cost a build's DAG ~10 s (`snakemake -n` 6 s of which 5 here). Keyed by the
    text, so an edited file is read again."""
    found = set()
    for node in ast.walk(_parse(text, filename)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == PACKAGE}
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(node, package)
            if not module or module.split(".")[0] != PACKAGE:
                continue
            found.add(module)
            for alias in node.names:  # `from lecture17 import attention_numpy` names a module
                candidate = f"{module}.{alias.name}"
                if _is_module(candidate, src):
                    found.add(candidate)
    return frozenset(found)


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


# The experiments at the grain of a function. Code inputs are whole files, so a new demo added
# to positional_encoding.py would rerun every demo of that module, and every demo of a module
# that imports a helper from it. A job depends instead on the lines of an experiments module
# that it runs: for its demo's function, the function itself, the module-level definitions it
# reaches by name (helpers, constants, classes, transitively) and every module-level statement
# that defines no name (imports, side effects); for a name it imports from another experiments
# module (`from lecture17.experiments.layers import PLACEMENTS`), the same for that name. The
# text of those lines (not an AST dump, whose format changes between Python versions) is
# hashed; an edit of another function, or a comment between functions, leaves it unchanged.
# Every other module (the lecture's layer, the pipeline) counts as a whole file.

EXPERIMENTS = f"{PACKAGE}.experiments"


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


def function_source(path: Path, names: str | set[str]) -> str:
    """The source lines of `path` that its module-level `names` (a function's, or several
    functions', classes' and constants') run or hold (see above)."""
    names = frozenset({names} if isinstance(names, str) else names)
    return _function_source(path.read_text(), str(path), names)


@functools.lru_cache(maxsize=4096)
def _function_source(text: str, path: str, names: frozenset[str]) -> str:
    """function_source of a file's text (cached: a build asks once per job of a demo)."""
    tree = _parse(text, path)
    body = tree.body[1:] if ast.get_docstring(tree) is not None else tree.body
    defining: dict[str, list[ast.stmt]] = {}
    always = []
    for node in body:
        defined = _defines(node)
        if defined is None:
            always.append(node)
        for name in defined or ():
            defining.setdefault(name, []).append(node)
    if missing := sorted(names - set(defining)):
        raise ValueError(f"{path} defines no module-level {', '.join(map(repr, missing))}")
    kept, todo = set(map(id, always)), [*names, *set().union(*map(_names, always))]
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


def code_parts(
    module: str, function: str, *entries: str, root: Path
) -> tuple[list[str], dict[str, str]]:
    """What a job that imports `entries` (whole) and runs `module.function` depends on: the
    whole files (sorted paths relative to root, as code_inputs) and, for each experiments
    module it runs only part of, {"<path>::<name,name,…>": those lines}."""
    root = Path(root).resolve()
    src = root / "src"
    whole_modules, wanted = set(entries), {module: {function}}
    while True:
        whole = code_closure(*whole_modules, src=src)
        cut = {m: n for m, n in wanted.items() if module_path(m, src) not in whole}
        texts = {m: function_source(module_path(m, src), n) for m, n in cut.items()}
        grown = False
        for m, text in texts.items():
            path = module_path(m, src)
            for target, names in _absolute_imports_from(text, str(path)):
                aliases = set(names)
                if target.startswith(f"{EXPERIMENTS}.") and not any(
                    _is_module(f"{target}.{a}", src) for a in aliases
                ):
                    if not aliases <= wanted.setdefault(target, set()):
                        wanted[target] |= aliases
                        grown = True
            others = {
                i
                for i in imported_modules(path, src, text)
                if not (i.startswith(f"{EXPERIMENTS}.") and i in wanted)
            }
            if not others <= whole_modules:
                whole_modules |= others
                grown = True
        if not grown:
            break
    parts = {
        f"{module_path(m, src).relative_to(root)}::{','.join(sorted(wanted[m]))}": text
        for m, text in sorted(texts.items())
    }
    whole, block_part = _numpy_at_block_grain(whole, texts, src)
    parts |= {f"{k.relative_to(root)}::{names}": text for k, (names, text) in block_part.items()}
    files = sorted(str(p.relative_to(root)) for p in whole)
    return files, parts


# The lecture's numpy blocks at the grain of a block. attention_numpy.py holds ~25 blocks and
# the demos each call a few: a job that reaches it only through the experiments lines it runs
# depends on the blocks those lines name (and what they call: function_source follows names),
# not on the whole file, so an edit of `softmax` reruns the demos that can reach `softmax`
# and no other (pipeline/callmap.py says which those are). A name it cannot resolve — the
# module imported whole (`from lecture17 import attention_numpy`), or imported by a module the
# job needs whole — keeps the whole file: over, never under.

NUMPY = f"{PACKAGE}.attention_numpy"


def _numpy_at_block_grain(whole: set[Path], texts: dict, src: Path) -> tuple[set[Path], dict]:
    """(whole files, {attention_numpy.py: (names, lines)}): attention_numpy.py taken out of
    the whole files when only the experiments lines `texts` reach it, by name."""
    if not _is_module(NUMPY, src):  # a package without the lecture's numpy blocks
        return whole, {}
    path = module_path(NUMPY, src)
    if path not in whole or any(NUMPY in imported_modules(p, src) for p in whole - {path}):
        return whole, {}
    names = set()
    for module, text in texts.items():
        found = numpy_names(text, str(module_path(module, src)))
        if found is None:
            return whole, {}
        names |= found
    if not names:
        return whole - {path}, {}
    return whole - {path}, {path: (",".join(sorted(names)), function_source(path, names))}


@functools.lru_cache(maxsize=4096)
def numpy_names(text: str, filename: str) -> frozenset[str] | None:
    """The attention_numpy names a text uses, imported by name (`from lecture17.attention_numpy
    import softmax`); None when it binds the module itself, whose uses a name cannot tell."""
    tree = _parse(text, filename)
    imported = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == NUMPY and not node.level:
            imported |= {a.asname or a.name: a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module == PACKAGE and not node.level:
            if any(a.name == "attention_numpy" for a in node.names):
                return None
        elif isinstance(node, ast.Import) and any(a.name == NUMPY for a in node.names):
            return None
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    return frozenset(imported[n] for n in used if n in imported)


@functools.lru_cache(maxsize=4096)
def _absolute_imports_from(text: str, filename: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(module, names) of every absolute `from module import names` in a text (cached)."""
    return tuple(
        (node.module, tuple(a.name for a in node.names))
        for node in ast.walk(_parse(text, filename))
        if isinstance(node, ast.ImportFrom) and not node.level and node.module
    )


def _is_module(name: str, src: Path) -> bool:
    base = src.joinpath(*name.split("."))
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()
