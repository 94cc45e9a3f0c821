"""One named edit of one function: find the function by name with `ast`, replace a snippet once.

The catalogue's mutants (mutants/catalogue.py) and the checker's known mistakes (judge.py:
a flagged file's blocks are compared with each mistake's blocks on the same inputs) are both
written this way. The function is found wherever it sits in the file, so moving it (or
editing around it) does not break the edit; its `old` snippet must occur exactly once in that
function's source: a renamed or missing function, or a snippet that is gone or ambiguous,
raises MutantError naming the mutant, never a silent no-op.
"""

import ast


class MutantError(ValueError):
    """A mutant that cannot be applied to this code (its target moved, or its snippet)."""


def find_function(tree: ast.Module, qualname: str) -> ast.AST | None:
    """The def of `qualname` ("f", "Class.method") among the module's top-level statements."""
    scope, found = tree.body, None
    for part in qualname.split("."):
        found = next(
            (
                node
                for node in scope
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                and node.name == part
            ),
            None,
        )
        if found is None:
            return None
        scope = found.body
    return found if isinstance(found, ast.FunctionDef | ast.AsyncFunctionDef) else None


def function_span(source: str, qualname: str, name: str = "") -> tuple[int, int]:
    """(start, end) character offsets of the function's source, decorators included."""
    node = find_function(ast.parse(source), qualname)
    if node is None:
        raise MutantError(f"mutant {name}: function {qualname} not found (renamed or moved?)")
    lines = source.splitlines(keepends=True)
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    start = sum(len(line) for line in lines[: first - 1])
    end = sum(len(line) for line in lines[: node.end_lineno])
    return start, end


def mutate_source(source: str, qualname: str, old: str, new: str, name: str = "") -> str:
    """`source` with `old` replaced by `new` inside `qualname`, where it must occur once."""
    start, end = function_span(source, qualname, name)
    body = source[start:end]
    count = body.count(old)
    if count != 1:
        raise MutantError(
            f"mutant {name}: its snippet occurs {count} times in {qualname} (expected once): "
            f"{old!r}"
        )
    mutated = source[:start] + body.replace(old, new) + source[end:]
    try:
        ast.parse(mutated)
    except SyntaxError as error:
        message = f"mutant {name}: the patched {qualname} does not parse: {error}"
        raise MutantError(message) from error
    return mutated
