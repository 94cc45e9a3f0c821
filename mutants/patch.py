"""Apply one mutant to a copy of the repository: find its function by name, edit it once.

The edit itself (find the function with `ast`, replace its snippet exactly once) lives in
lecture17.checker.patch, which the student checker shares; this module writes it to a file.
"""

from pathlib import Path

from lecture17.checker.patch import MutantError, find_function, function_span, mutate_source

__all__ = ["MutantError", "apply", "find_function", "function_span", "mutate_source"]


def apply(mutant, root: Path) -> Path:
    """Write `mutant` into the file it names under `root`; returns that file's path."""
    path = Path(root, mutant.file)
    if not path.is_file():
        raise MutantError(f"mutant {mutant.name}: file {mutant.file} not found under {root}")
    source = path.read_text(encoding="utf-8")
    mutated = mutate_source(source, mutant.function, mutant.old, mutant.new, mutant.name)
    path.write_text(mutated, encoding="utf-8")
    return path
