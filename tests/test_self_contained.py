"""The clone stands on its own: no tracked file points at a path outside the repository."""

import re
import subprocess

from conftest import ROOT

# a parent directory, an absolute path of the machines this was built on, the files beside
# the clone that its makers read (built from pieces, so that this file does not match itself)
OUTSIDE = re.compile(
    "|".join(
        [
            r"\.\./" + "shared",
            r"(?<![\w.])/" + "work/",
            r"(?<![\w/])shared/" + "lecture17",
            "DEVELOPERS" + r"\.md",
            r"shared/" + "STYLE",
        ]
    )
)
TEXT = (".py", ".md", ".yaml", ".yml", ".j2", ".toml", ".cfg", ".sh", ".txt", ".smk", ".cff")


def tracked_text_files() -> list:
    names = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    keep = [n for n in names if n.endswith(TEXT) or n in ("Makefile", "Snakefile")]
    return [ROOT / n for n in keep if not n.startswith("report/reference/")]


def test_ci_looks_outside_only_for_the_lectures_text_and_only_when_it_is_there():
    """.ci/run is the one file that may read beside the clone: the lecture's text, guarded."""
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    outside = [line.strip() for line in lines if OUTSIDE.search(line)]
    assert outside and all("/lecture17" in line for line in outside), outside
    assert any(line.startswith("if [ -f ") for line in outside), outside


def test_no_tracked_file_refers_to_a_path_outside_the_repository():
    found = []
    for path in tracked_text_files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if OUTSIDE.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:80]}")
    assert not found, "\n".join(found)


def test_the_pattern_sees_each_kind_of_outside_path():
    for text in ("see ../" + "shared/x", "/" + "work/main/a", "shared/" + "lecture17/l.txt"):
        assert OUTSIDE.search(text), text
    assert not OUTSIDE.search("results/05.1/seed0.csv and docs/STYLE.md")
