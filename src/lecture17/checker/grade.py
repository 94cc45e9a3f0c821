"""`python -m lecture17 check --grade DIR --out OUT`: a teacher grades a class.

Every .py and .ipynb file under DIR (subfolders included: a folder per student) is checked as
`check FILE` checks it, each in a sandbox of its own (checker/sandbox.py), two at a time. OUT
gets:
- grades.csv: one row per file: its path under DIR, the exit code, per block pass/fail and
  points, the total and the maximum;
- grades.json: the same with each file's whole report (docs/CHECK.md: the schema, versioned);
- one HTML page per file, named after its path under DIR (alice/my_blocks.py →
  alice__my_blocks.py.html), so two files of the same name never overwrite each other;
- index.html: the class page: which blocks fail most, which lecture claims change, which known
  mistakes were shown, with counts, and a link to each file's page.
Points per block come from a small YAML ({block: points}; default 1 each, every block of the
lecture). A block earns its points when the student wrote it, its properties hold and the
lecture's claims that pass through it keep their verdicts (render.block_rows' `passed`).
"""

import csv
import html
import json
import os
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from lecture17.checker import blocks as blocks_mod
from lecture17.checker import sandbox
from lecture17.checker.run import EXIT_WORDS
from lecture17.pipeline import yamlio

SCHEMA = 1  # grades.json's version (docs/CHECK.md)
PARALLEL = 2  # files checked at once (each check's own children share the cores)


def points_table(path: Path | None) -> dict[str, float]:
    """{block: points}: every block 1 unless the YAML says otherwise (an unknown block is an
    error before any file runs)."""
    points = {name: 1.0 for name in blocks_mod.BLOCKS}
    if path is None:
        return points
    with open(path, encoding="utf-8") as f:
        given = yamlio.load(f) or {}
    if not isinstance(given, dict):
        raise ValueError(f"{path}：要一个 {{积木: 分数}} 的表 a mapping block: points")
    unknown = sorted(set(given) - set(points))
    if unknown:
        raise ValueError(f"{path}：没有这些积木 no such blocks: {' '.join(unknown)}")
    return points | {k: float(v) for k, v in given.items()}


def files_of(folder: Path) -> list[Path]:
    """Every .py and .ipynb under `folder`, none in a hidden folder below it (.git, .ipynb_
    checkpoints); `folder` itself may be anywhere (../subs)."""
    found = []
    for p in Path(folder).rglob("*"):
        hidden = any(part.startswith(".") for part in p.relative_to(folder).parts)
        if p.is_file() and p.suffix in sandbox.SUFFIXES and not hidden:
            found.append(p)
    return sorted(found)


def page_name(relative: Path, taken: set) -> str:
    name = "__".join(relative.parts) + ".html"
    stem, k = name, 2
    while name in taken:
        name = stem.replace(".html", f"-{k}.html")
        k += 1
    taken.add(name)
    return name


def row_of(relative: Path, outcome: sandbox.Outcome, points: dict) -> dict:
    blocks = (outcome.data or {}).get("blocks") or {}
    written = [n for n in points if (blocks.get(n) or {}).get("implemented")]
    row = {"file": relative.as_posix(), "exit": outcome.status, "written": len(written)}
    total = 0.0
    for name, worth in points.items():
        block = blocks.get(name) or {}
        ok = bool(block.get("implemented") and block.get("passed"))
        row[f"{name}_pass"] = "" if not block.get("implemented") else int(ok)
        row[f"{name}_points"] = worth if ok else 0.0
        total += worth if ok else 0.0
    row["total"], row["max"] = total, sum(points.values())
    return row


def grade(folder: Path, out: Path, timeout: float, points_path: Path | None = None) -> int:
    """Grade every file of `folder` into `out`: 0 once every file was checked (each file's own
    exit code is in the grades), 2 on bad input (no file, a bad points table)."""
    try:
        points = points_table(points_path)
    except (OSError, ValueError) as error:
        print(f"检查 check --grade: {error}", file=sys.stderr)
        return 2
    files = files_of(folder)
    if not files:
        print(f"检查 check --grade: {folder} 里没有 .py 或 .ipynb 文件", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    if why := sandbox.available():
        print(f"警告 warning：没有沙箱 no sandbox（{why}）", file=sys.stderr)

    def one(path):  # the class's folder hidden; helpers only from a student's own folder
        own = path.parent.resolve() != Path(folder).resolve()
        return sandbox.check_file(
            path, timeout, require=sandbox.REQUIRED, helpers=own, hide=[folder]
        )

    with ThreadPoolExecutor(max_workers=min(PARALLEL, os.cpu_count() or 1)) as pool:
        outcomes = list(pool.map(one, files))
    taken, rows, reports = set(), [], []
    for path, outcome in zip(files, outcomes, strict=True):
        relative = path.relative_to(folder)
        name = page_name(relative, taken)
        (out / name).write_text(outcome.page or _empty_page(relative, outcome), encoding="utf-8")
        rows.append(row_of(relative, outcome, points))
        reports.append({"file": relative.as_posix(), "page": name, "report": outcome.data})
        words = EXIT_WORDS.get(outcome.status, "")
        print(
            f"{relative}：{rows[-1]['total']:g}/{rows[-1]['max']:g} 分 · 写了 "
            f"{rows[-1]['written']}/{len(points)} 个积木 · 退出码 {outcome.status}（{words}）"
        )
    with open(out / "grades.csv", "w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    data = {"schema": SCHEMA, "points": points, "files": reports, "grades": rows}
    (out / "grades.json").write_text(json.dumps(data, ensure_ascii=False, indent=1), "utf-8")
    (out / "index.html").write_text(class_page(rows, reports), encoding="utf-8")
    print(f"\n{len(files)} 个文件 files → {out / 'grades.csv'} · {out / 'index.html'}")
    return 0


def _empty_page(relative: Path, outcome) -> str:
    text = html.escape(outcome.summary or outcome.why or "")
    return (
        f"<!DOCTYPE html><meta charset=utf-8><h1>{html.escape(str(relative))}</h1><pre>{text}</pre>"
    )


def failed_blocks(row: dict) -> list[str]:
    return [k[: -len("_pass")] for k, v in row.items() if k.endswith("_pass") and v == 0]


def class_summary(rows: list[dict], reports: list[dict]) -> dict[str, Counter]:
    """Counts over the class (files, not occurrences): failing blocks, changed claims (with
    their words), known mistakes shown (with their words)."""
    blocks, claims, mistakes = Counter(), Counter(), Counter()
    for row in rows:
        blocks.update(failed_blocks(row))
    for item in reports:
        report = item["report"] or {}
        claims.update(
            {
                f"{c['id']} {c.get('section', '')} {c.get('claim', '')}"
                for c in report.get("claims_changed", [])
            }
        )
        mistakes.update({c.get("words", c["mistake"]) for c in report.get("causes", [])})
    return {"blocks": blocks, "claims": claims, "mistakes": mistakes}


def class_page(rows: list[dict], reports: list[dict]) -> str:
    from lecture17.checker.render import STYLE

    e = html.escape
    counts = class_summary(rows, reports)
    parts = [
        '<!DOCTYPE html><html lang="zh-CN"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>全班 class · {len(rows)} 个文件</title><style>{STYLE}</style></head><body>",
        f"<h1>全班的检查 class check · {len(rows)} 个文件 files</h1>",
    ]
    headings = {
        "blocks": ("最常不通过的积木 blocks that fail most", "积木 block"),
        "claims": ("最常变的讲义结论 lecture claims that change most", "讲义的结论 claim"),
        "mistakes": ("逐数对上的已知错误 known mistakes shown", "已知的错误 mistake"),
    }
    for key, (title, what) in headings.items():
        parts.append(f"<h2>{title}</h2>")
        if not counts[key]:
            parts.append("<p class=muted>没有 none</p>")
            continue
        parts.append(f"<div class=wide><table><tr><th>{what}</th><th>文件数 files</th></tr>")
        parts += [
            f"<tr><td>{e(name)}</td><td>{n}</td></tr>" for name, n in counts[key].most_common()
        ]
        parts.append("</table></div>")
    parts.append("<h2>每个文件 each file</h2><div class=wide><table>")
    parts.append(
        "<tr><th>文件 file</th><th>分数 points</th><th>写了的积木 written</th>"
        "<th>没通过的积木 failed</th><th>退出码 exit</th></tr>"
    )
    for row, item in zip(rows, reports, strict=True):
        words = EXIT_WORDS.get(row["exit"], "")
        parts.append(
            f'<tr><td><a href="{e(item["page"])}">{e(row["file"])}</a></td>'
            f"<td>{row['total']:g}/{row['max']:g}</td><td>{row['written']}/{len(blocks_mod.BLOCKS)}</td>"
            f"<td>{e('、'.join(failed_blocks(row)) or '—')}</td>"
            f"<td>{row['exit']}（{e(words)}）</td></tr>"
        )
    parts.append("</table></div></body></html>")
    return "\n".join(parts)
