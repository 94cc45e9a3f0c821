"""The catalogue's mistakes in the student-facing blocks, each checked as a student's file.

    PYTHONPATH=src python -m mutants.fingerprints        # writes mutants/fingerprints.csv

Each mutant of `catalogue.py` whose function is one of the lecture's numpy blocks (or a
private helper that only they call: `_frequencies`, `_residual`) is applied to a copy of
`attention_numpy.py`, and that copy is checked as a student would check their file
(`python -m lecture17 check`): the claims it changes and the properties and conventions it
breaks are its fingerprint. `check` names the closest fingerprint to explain a flagged file;
it never uses them to flag one. The campaign (`make mutants`) and the checker share this path
for these mutants. A converter (`mha_params_from_torch`) and what goes beyond the lecture
(`_attend_query_block` of tiled attention) stay the reference's: not student-facing.
"""

import csv
import sys
import tempfile
from pathlib import Path

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


def student_file(mutant, folder: Path) -> Path:
    source = Path("src/lecture17/attention_numpy.py").read_text(encoding="utf-8")
    path = folder / f"{mutant.name}.py"
    path.write_text(mutate_source(source, mutant.function, mutant.old, mutant.new, mutant.name))
    return path


def main() -> int:
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for mutant in student_facing():
            report = check(student_file(mutant, Path(folder)), fingerprints=[])
            rows.append(
                {
                    "mutant": mutant.name,
                    "block": block_of(mutant),
                    "status": report.status,
                    "marks": " ".join(sorted(report.marks)),
                    "hint": mutant.hint,
                    "function": mutant.function,
                    "old": mutant.old,
                    "new": mutant.new,
                }
            )
            print(f"{mutant.name}: exit {report.status}, {len(report.marks)} marks", flush=True)
    with open(OUT, "w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"{len(rows)} 个错误 mistakes → {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
