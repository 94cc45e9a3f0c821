"""The front door and the tree: the README is short and starts with the two commands, and
no history marker or dated result file is left in what is tracked (history lives in git and
CHANGELOG.md, campaigns in mutants/campaigns.csv)."""

import re
import subprocess

import pytest
from conftest import ROOT

README_LIMIT = 15_000  # characters: a newcomer reads it in five minutes
FIRST = 2_000  # within which the two commands and where the report lands are said
# "issue 18", "session 9", "stop 32": a history marker says when, not why
MARKER = re.compile(r"\b(?:issue|session|stop) ?#?\d+", re.IGNORECASE)
DATED = re.compile(r"\d{4}-\d{2}-\d{2}")  # a result file named by the day it was made
GENERATED = ("report/reference/",)  # built output, rewritten by `make reference`


def tracked() -> list[str]:
    done = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    return [p for p in done.stdout.splitlines() if not p.startswith(GENERATED)]


def test_readme_is_a_front_door():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text) <= README_LIMIT, f"README has {len(text)} characters"
    head = text[:FIRST]
    for words in ("make report", "make test", "report/lecture17.html"):
        assert words in head, f"{words!r} not in the README's first {FIRST} characters"


def markers(text: str) -> list[str]:
    return MARKER.findall(text)


@pytest.mark.parametrize(
    "text, found",
    [
        ("(issue 18 lists them)", ["issue 18"]),
        ("re-read in session 9", ["session 9"]),
        ("why stop 32 failed", ["stop 32"]),
        ("Issue #5: a GPU", ["Issue #5"]),
        ("the issue is silent; a session lasts; stop the build", []),
    ],
)
def test_the_marker_pattern(text, found):
    assert markers(text) == found


def test_no_history_marker_in_the_tree():
    found = []
    for path in tracked():
        if path.endswith((".csv", ".png", ".pt")) or path == "tests/test_docs.py":
            continue  # data, and this file's own examples
        try:
            text = (ROOT / path).read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError):
            continue
        found += [f"{path}: {m}" for m in markers(text)]
    assert not found, f"say the reason, not the history: {found[:10]}"


def test_no_dated_result_file():
    dated = [p for p in tracked() if DATED.search(p.rsplit("/", 1)[-1])]
    assert not dated, f"dated files (git has the date; campaigns.csv the log): {dated}"
    assert DATED.search("rerun-2026-12-05.csv")  # the pattern sees one
