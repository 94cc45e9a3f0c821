"""The catalogue's mistakes in the student-facing blocks, each checked as a student's file.

    PYTHONPATH=src python -m mutants.fingerprints        # writes mutants/fingerprints.csv

Each mutant of `catalogue.py` whose function is one of the lecture's numpy blocks (or a
private helper that only they call: `_frequencies`, `_residual`) is checked as two students'
files would be (`python -m lecture17 check`): a copy of `attention_numpy.py` with the mistake
(a student who wrote every block), and the mistaken blocks alone, the rest imported from the
reference (a student who wrote those). The claims each changes and the properties and
conventions it breaks are its two fingerprints: writing more blocks changes which claims a
mistake reaches (a student's own multi-head attention calls their own attention, a TensorFlow
mask convention and all). `check` names a mistake only for a flagged file whose blocks compute
the mistake's numbers on the probe inputs (lecture17/checker/explain.py); the fingerprints say
what each mistake breaks, and never flag a file. The campaign (`make mutants`) and the checker
share this path for these mutants. A converter (`mha_params_from_torch`) and what goes beyond
the lecture (`_attend_query_block` of tiled attention) stay the reference's: not student-facing.
"""

import ast
import csv
import sys
import tempfile
from pathlib import Path

from lecture17 import attention_numpy
from lecture17.checker import blocks
from lecture17.checker.patch import mutate_source
from lecture17.checker.run import check
from lecture17.pipeline import callmap
from mutants.catalogue import CATALOGUE, NUMPY

OUT = Path("mutants/fingerprints.csv")


def student_facing() -> list:
    """The catalogue's mutants in a block a student writes (or a helper only they call)."""
    graph = callmap.numpy_call_graph()
    callers = {name: {c for c, called in graph.items() if name in called} for name in graph}
    found = []
    for mutant in CATALOGUE:
        if mutant.file != NUMPY:
            continue
        users = (
            {mutant.function}
            if mutant.function in blocks.BLOCKS
            else callers.get(mutant.function, set())
        )
        if users and users <= set(blocks.BLOCKS):
            found.append(mutant)
    return found


def block_of(mutant) -> str:
    if mutant.function in blocks.BLOCKS:
        return mutant.function
    graph = callmap.numpy_call_graph()
    return " ".join(sorted(c for c, called in graph.items() if mutant.function in called))


def _mutated(mutant) -> str:
    source = Path(attention_numpy.__file__).read_text(encoding="utf-8")
    return mutate_source(source, mutant.function, mutant.old, mutant.new, mutant.name)


def student_file(mutant, folder: Path) -> Path:
    """A student who wrote every block, one with the mistake."""
    path = folder / f"{mutant.name}.py"
    path.write_text(_mutated(mutant), encoding="utf-8")
    return path


def block_file(mutant, folder: Path) -> Path:
    """A student who wrote only the blocks the mistake is in (and the helper it edits): every
    other name comes from the reference, as a student's `from lecture17.attention_numpy
    import …` would bring it."""
    source = _mutated(mutant)
    tree = ast.parse(source)
    own = {*block_of(mutant).split(), mutant.function}
    lines = source.splitlines()
    kept = [
        "\n".join(lines[node.lineno - 1 : node.end_lineno])
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name in own
    ]
    # every other name the reference's module holds, its imported input checks included
    others = [n for n in vars(attention_numpy) if not n.startswith("__") and n not in own]
    others = [n for n in others if n != "np"]
    header = "import numpy as np\n\nfrom lecture17.attention_numpy import (\n"
    header += "".join(f"    {n},\n" for n in others) + ")\n"
    path = folder / f"{mutant.name}_block.py"
    path.write_text(header + "\n\n" + "\n\n\n".join(kept) + "\n", encoding="utf-8")
    return path


def main() -> int:
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for mutant in student_facing():
            report = check(student_file(mutant, Path(folder)), fingerprints=[])
            alone = check(block_file(mutant, Path(folder)), fingerprints=[])
            for variant in (report, alone):  # of the mistake, never of a file that cannot run
                failed = [r.failure for r in variant.demos.values() if r.failure]
                if any(f.text.startswith(("NameError", "ImportError")) for f in failed):
                    raise SystemExit(f"{mutant.name}: {failed[0].text} in {variant.path}")
            rows.append(
                {
                    "mutant": mutant.name,
                    "block": block_of(mutant),
                    "status": report.status,
                    "status_block": alone.status,
                    "marks": " ".join(sorted(report.marks)),
                    "marks_block": " ".join(sorted(alone.marks)),
                    "hint": mutant.hint,
                    "function": mutant.function,
                    "old": mutant.old,
                    "new": mutant.new,
                }
            )
            print(
                f"{mutant.name}: exit {report.status} ({len(report.marks)} marks), "
                f"its block alone exit {alone.status} ({len(alone.marks)} marks)",
                flush=True,
            )
    with open(OUT, "w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"{len(rows)} 个错误 mistakes → {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
