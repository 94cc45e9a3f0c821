"""The changelog of verdicts (python -m lecture17 changelog): read from a small git history."""

import subprocess

from lecture17.reporting import changelog

HEADER = (
    "| 编号 id | § | 讲义的说法 claim | 讲义 lecture | 我们 ours | 结论 status | 为什么 why |\n"
)
HEADER += "|---|---|---|---|---|---|---|\n"


def table(rows: dict) -> str:
    lines = [f"| {i} | §1 | c | 1 | 1 | {s} | |" for i, s in rows.items()]
    return "# r\n\n" + HEADER + "\n".join(lines) + "\n\ntext | not a table\n"


def commit(repo, text: str, message: str):
    path = repo / changelog.REFERENCE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    for args in (["add", "-A"], ["commit", "-qm", message]):
        subprocess.run(["git", *args], cwd=repo, check=True)


def test_statuses_are_read_from_the_claims_tables_only():
    text = table({"C001": "✓ 成立 holds", "L17-R9.2a": "✗ 不同 differs"}) + "| C999 | x |\n"
    assert changelog.statuses(text) == {"C001": "✓ 成立 holds", "L17-R9.2a": "✗ 不同 differs"}


def test_each_commit_lists_the_claims_whose_status_changed_newest_first(tmp_path):
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    for key, value in (("user.email", "t@example.org"), ("user.name", "t")):
        subprocess.run(["git", "config", key, value], cwd=tmp_path, check=True)
    commit(tmp_path, table({"C001": "✓ 成立 holds", "C002": "✓ 成立 holds"}), "first build")
    commit(tmp_path, table({"C001": "✗ 不同 differs", "C002": "✓ 成立 holds"}), "C001 by R4")
    (tmp_path / "other.txt").write_text("x")
    commit(tmp_path, table({"C001": "✗ 不同 differs", "C003": "✓ 成立 holds"}), "C003 added")
    log = changelog.changes(changelog.history(tmp_path))
    assert [c.subject for c in log] == ["C001 by R4", "C003 added"]
    assert log[0].claims == [("C001", "✓ 成立 holds", "✗ 不同 differs")]
    assert log[1].claims == [("C002", "✓ 成立 holds", ""), ("C003", "", "✓ 成立 holds")]
    text = changelog.markdown(log)
    assert text.index("C003 added") < text.index("C001 by R4")  # newest first
    assert "（去掉 removed）" in text and "（新增 new）" in text
    second = changelog.history(tmp_path)[1][0]
    since = changelog.changes(changelog.history(tmp_path, since=second))
    assert [c.subject for c in since] == ["C003 added"]
