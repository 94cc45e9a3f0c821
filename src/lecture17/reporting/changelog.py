"""The changelog of verdicts: which claim changed status, in which commit, and why (its message).

    python -m lecture17 changelog              # every change of the reference, newest first
    python -m lecture17 changelog --since REV  # only the commits after REV

Read from git: each commit that changed report/reference/lecture17.md, the claims tables of that
version (the status column), against the version before. A claim that appears or goes is
listed too. The lecture's author reads it to know what changed in the report, and why: the
commit's subject line is the why (this repository's commits say what changed and why).
"""

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

REFERENCE = "report/reference/lecture17.md"
CLAIM_ID = re.compile(r"^(C\d{3}|L17-[\w.\-]+)$")
STATUS_HEADER = "结论 status"


@dataclass
class Change:
    commit: str
    date: str
    subject: str
    claims: list = field(default_factory=list)  # (id, old status or "", new status or "")


def statuses(markdown: str) -> dict[str, str]:
    """claim id -> its status as the claims tables print it ("✓ 成立 holds")."""
    found, column = {}, None
    for line in markdown.splitlines():
        if not line.startswith("|"):
            column = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if STATUS_HEADER in cells:
            column = cells.index(STATUS_HEADER)
        elif column is not None and len(cells) > column and CLAIM_ID.match(cells[0]):
            found.setdefault(cells[0], cells[column])
    return found


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout


def history(repo: Path, path: str = REFERENCE, since: str | None = None) -> list[tuple]:
    """(commit, date, subject, text) of every commit that changed `path`, oldest first (with
    the version before `since` first, so that the first change after it has a baseline)."""
    log = _git(repo, "log", "--reverse", "--format=%h%x09%ad%x09%s", "--date=short", "--", path)
    commits = [line.split("\t", 2) for line in log.splitlines() if line]
    if since:
        after = set(_git(repo, "rev-list", f"{since}..HEAD").split())
        full = {c: _git(repo, "rev-parse", c).strip() for c, _, _ in commits}
        first = next((i for i, (c, _, _) in enumerate(commits) if full[c] in after), len(commits))
        commits = commits[max(first - 1, 0) :]
    return [(c, d, s, _git(repo, "show", f"{c}:{path}")) for c, d, s in commits]


def changes(versions: list[tuple]) -> list[Change]:
    """The status changes between consecutive versions (the first one is the baseline)."""
    out, before = [], None
    for commit, date, subject, text in versions:
        now = statuses(text)
        if before is not None:
            ids = [*before, *(i for i in now if i not in before)]
            moved = [(i, before.get(i, ""), now.get(i, "")) for i in ids]
            moved = [m for m in moved if m[1] != m[2]]
            if moved:
                out.append(Change(commit, date, subject, moved))
        before = now
    return out


def markdown(log: list[Change]) -> str:
    if not log:
        return "没有结论改变过 no verdict changed.\n"
    lines = ["# 结论的变化 Changes of verdicts", ""]
    for change in reversed(log):  # newest first
        lines.append(f"## {change.date} `{change.commit}` {change.subject}")
        lines.append("")
        for claim, old, new in change.claims:
            lines.append(f"- {claim}：{old or '（新增 new）'} → {new or '（去掉 removed）'}")
        lines.append("")
    return "\n".join(lines)


def main(repo: Path = Path("."), since: str | None = None) -> int:
    print(markdown(changes(history(repo, since=since))), end="")
    return 0
