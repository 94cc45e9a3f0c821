"""Which of the lecture's numpy blocks each demo can reach, read from the code (static).

A demo's function reaches a block of `attention_numpy` when the lines it runs (its function,
the helpers and constants of its module that it names, `pipeline.deps.function_source`) name
the block as imported from `attention_numpy`, or name a helper it imports from another
experiments module that does; inside `attention_numpy`, a block reaches every module-level
function its body names. The map over-approximates, never under: a name it cannot resolve
(the module imported whole, `import lecture17.attention_numpy as an`) counts as reaching every
block. `tests/test_checker.py` holds it against the calls a run of each demo makes.

    python -c "from lecture17.pipeline.callmap import demo_blocks; print(demo_blocks('02.2'))"
"""

import ast
import functools
from pathlib import Path

from lecture17.pipeline.deps import SRC, function_source, module_path

NUMPY_MODULE = "lecture17.attention_numpy"
EXPERIMENTS = "lecture17.experiments"


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


@functools.lru_cache(maxsize=4)
def numpy_call_graph(src: Path = SRC) -> dict[str, frozenset[str]]:
    """{function of attention_numpy: the module-level functions of it that its body names}."""
    tree = _tree(module_path(NUMPY_MODULE, src))
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    return {
        name: frozenset(
            n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in functions
        )
        - {name}
        for name, node in functions.items()
    }


def closure(names, src: Path = SRC) -> frozenset[str]:
    """`names` and every attention_numpy function they reach, transitively."""
    graph = numpy_call_graph(src)
    todo, seen = list(names), set()
    while todo:
        name = todo.pop()
        if name in seen or name not in graph:
            continue
        seen.add(name)
        todo += graph[name]
    return frozenset(seen)


def _imports(tree: ast.AST) -> tuple[dict[str, str], dict[str, tuple[str, str]], set[str]]:
    """From the import statements of `tree`: {local name: block} imported from attention_numpy,
    {local name: (experiments module, name)}, and the local names bound to attention_numpy
    itself (a module import: every block counts as reached through it)."""
    blocks, helpers, whole = {}, {}, set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                local = alias.asname or alias.name
                if node.module == NUMPY_MODULE:
                    blocks[local] = alias.name
                elif node.module == "lecture17" and alias.name == "attention_numpy":
                    whole.add(local)
                elif node.module.startswith(f"{EXPERIMENTS}."):
                    helpers[local] = (node.module, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == NUMPY_MODULE:
                    whole.add(alias.asname or "lecture17")
    return blocks, helpers, whole


def reached(module: str, names: frozenset[str], src: Path = SRC) -> frozenset[str]:
    """The attention_numpy functions that `names` of experiments `module` can reach."""
    path = module_path(module, src)
    text = function_source(path, set(names))
    blocks, helpers, whole = _imports(_tree(path))
    inner_blocks, inner_helpers, inner_whole = _imports(ast.parse(text))
    blocks, helpers, whole = blocks | inner_blocks, helpers | inner_helpers, whole | inner_whole
    used = {n.id for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Name)}
    if used & whole:
        return frozenset(numpy_call_graph(src))
    found = {blocks[n] for n in used if n in blocks}
    for local in sorted(used & set(helpers)):
        other, name = helpers[local]
        if not (module_path(other, src).parent / f"{name}.py").exists():  # a name, not a module
            found |= reached(other, frozenset({name}), src)
    return closure(found, src)


@functools.lru_cache(maxsize=256)
def demo_blocks(demo: str, src: Path = SRC) -> frozenset[str]:
    """The attention_numpy functions (public and private) that demo's jobs can reach."""
    from lecture17.experiments import DEMOS

    function = DEMOS[demo].function
    if not function:  # a view: no runs of its own
        return frozenset()
    module, name = function.rsplit(".", 1)
    return reached(f"{EXPERIMENTS}.{module}", frozenset({name}), src)


def demos_reaching(blocks, demos=None, src: Path = SRC) -> list[str]:
    """The demos (of `demos`, default every registered one) that reach any of `blocks`."""
    from lecture17.experiments import DEMOS

    wanted = set(blocks)
    return [d for d in (demos or DEMOS) if demo_blocks(d, src) & wanted]
