"""What a check says: a terminal summary, an HTML page in the report's style, and JSON.

All three read one Report (run.py). The student reads, per replaced block, how many of the
lecture's numbers it reproduces and which properties hold; then each claim that changed (its
§, the lecture's sentence and number, the reference's and theirs, and the blocks it reaches,
those with a failing property first); then, for a flagged file, the closest known mistake as
a question in the lecture's terms, or that none matches.
"""

import html
import json
from pathlib import Path

from lecture17.checker import blocks as blocks_mod
from lecture17.checker import properties as props
from lecture17.checker.run import BROKE, NOTHING, OK, UNUSABLE, Report, _unaccepted
from lecture17.reporting import ledger as ledger_mod

VERDICT = {
    OK: "通过 passed：每条讲义数字的结论都和参考实现相同，每条性质都成立",
    BROKE: "有问题 something broke（见下）",
    UNUSABLE: "文件用不了 the file cannot be used",
    NOTHING: "没有替换任何积木 no block replaced（模板里的函数都还是 NotImplementedError？）",
}


def status_text(status: str) -> str:
    return ledger_mod.STATUS.get(status, status)


def block_rows(report: Report) -> list[dict]:
    """Per replaced block: its properties, and the judged claims of the demos it ran in."""
    rows = []
    for name, block in report.blocks.items():
        if not block.implemented:
            continue
        ran_in = [d for d, r in report.demos.items() if r.calls.get(name)]
        claims = [
            c for c in report.changes + report.kept if set(report.blocks_of_claim(c.entry)) & {name}
            and _reads(c.entry, ran_in)
        ]
        kept = [c for c in claims if c not in report.changes]
        rows.append(
            {
                "block": name,
                "section": blocks_mod.BLOCKS[name][0],
                "properties_held": len(block.held),
                "properties": len(block.held) + len(block.failed),
                "claims_kept": len(kept),
                "claims": len(claims),
                "demos": ran_in,
            }
        )
    return rows


def _reads(entry, demos) -> bool:
    from lecture17.checker.judge import entry_demos

    return bool(entry_demos(entry) & set(demos))


def suspects(report: Report, entry: dict) -> list[str]:
    """The replaced blocks a changed claim reaches, those with a failing property first."""
    reached = report.blocks_of_claim(entry)
    bad = [b for b in reached if report.blocks[b].failed or _unaccepted(report.blocks[b])]
    return bad + [b for b in reached if b not in bad]


def failure_text(failure) -> str:
    where = f"（你的文件第 {failure.line} 行 line {failure.line}: {failure.source.strip()}）" if failure.line else ""
    kind = {"load": "载入失败 does not load", "crash": "崩溃 crash", "hang": "卡住 hang",
            "shape": "形状不对 wrong shape"}[failure.kind]
    return f"{kind}: {failure.text}{where}"


def lines(report: Report) -> list[str]:
    out = [f"检查 check: {report.path} — {VERDICT[report.status]}（{report.seconds:.1f} 秒）"]
    if report.load_failure:
        out.append("  " + failure_text(report.load_failure))
        return out
    for name, problem in report.problems.items():
        out.append(f"  签名不对 wrong signature: {problem}")
    if report.problems:
        return out
    missing = [n for n, b in report.blocks.items() if not b.implemented]
    if missing:
        out.append("  还没写的（NotImplementedError，用参考实现）not written yet: " + "、".join(missing))
    if report.status == NOTHING:
        return out
    out.append("")
    out.append("积木 block（讲义 §）                  性质 properties   讲义的数字 claims（结论和参考实现相同）")
    for row in block_rows(report):
        out.append(
            f"  {row['block']:<30} {row['section']:<6} {row['properties_held']}/{row['properties']} 成立"
            f"      {row['claims_kept']}/{row['claims']}"
        )
    for name, block in report.blocks.items():
        for convention in block.conventions:
            mark = "·" if convention.accepted else "✗"
            out.append(f"  {mark} 约定 convention · {name}: {convention.text}")
        for pid, (size, seen) in block.failed.items():
            prop = next(p for p in props.PROPERTIES if p.id == pid)
            out.append(f"  ✗ 性质不成立 property fails · {name}: {prop.text} — 最小的反例 smallest input {_size(size)}: {seen}")
        if block.failure:
            out.append(f"  ✗ {name}: {failure_text(block.failure)}")
    for demo, result in report.demos.items():
        if result.failure:
            out.append(f"  ✗ 演示 demo {demo}: {failure_text(result.failure)}")
    if report.changes:
        out.append("")
        out.append(f"结论变了的讲义数字 claims that changed（{len(report.changes)}）:")
        for change in report.changes:
            e = change.entry
            out.append(
                f"  ✗ {e['id']} {e['section']} {e['claim']}: 讲义 lecture {e.get('lecture', '—')} · "
                f"参考 reference {change.reference.ours or '—'}（{status_text(change.reference.status)}）· "
                f"你的 yours {change.student.ours or '—'}（{status_text(change.student.status)}）"
                f"  ← {'、'.join(suspects(report, e)) or '—'}"
            )
    if report.status == BROKE:
        out.append("")
        if report.mistake:
            out.append(
                f"最接近的已知错误 closest known mistake（相似度 Jaccard {report.score:.2f}）: "
                f"{report.mistake.hint}"
            )
        else:
            out.append(
                f"没有已知错误和它相符 no known mistake matches（最高相似度 best Jaccard {report.score:.2f}）"
            )
    ran = [d for d, r in report.demos.items() if r.ran]
    out.append("")
    out.append(f"用你的代码运行的演示 demos run on your code: {' '.join(ran) or '—'}")
    fallbacks = sorted({(b, why) for r in report.demos.values() for b, f in r.fallbacks.items() for why in f})
    if fallbacks:
        out.append(
            "  这些调用用了参考实现 ran the reference: "
            + "；".join(f"{b}（{why}）" for b, why in fallbacks)
        )
    if report.skipped:
        out.append(f"  计时演示 timing demos {' '.join(report.skipped)} 不用你的代码运行，它们的结论不判")
    return out


def _size(size) -> str:
    return str(size) if not isinstance(size, tuple) else "(" + ", ".join(map(str, size)) + ")"


def as_json(report: Report) -> dict:
    return {
        "file": str(report.path),
        "exit": report.status,
        "seconds": round(report.seconds, 2),
        "load_failure": _failure(report.load_failure),
        "signature_problems": report.problems,
        "blocks": {
            name: {
                "implemented": b.implemented,
                "properties_held": b.held,
                "properties_failed": {k: {"size": v[0], "seen": v[1]} for k, v in b.failed.items()},
                "conventions": [{"id": c.id, "accepted": c.accepted, "text": c.text} for c in b.conventions],
                "failure": _failure(b.failure),
            }
            for name, b in report.blocks.items()
        },
        "demos": {
            d: {"ran": r.ran, "failure": _failure(r.failure), "calls": r.calls, "fallbacks": r.fallbacks}
            for d, r in report.demos.items()
        },
        "timing_demos_not_run": report.skipped,
        "claims_changed": [_claim(c, report) for c in report.changes],
        "claims_kept": [c.entry["id"] for c in report.kept],
        "closest_mistake": (
            {"mutant": report.mistake.name, "hint": report.mistake.hint, "jaccard": round(report.score, 3)}
            if report.mistake
            else None
        ),
        "best_jaccard": round(report.score, 3),
    }


def _failure(failure):
    if failure is None:
        return None
    return {"kind": failure.kind, "text": failure.text, "line": failure.line, "source": failure.source}


def _claim(change, report) -> dict:
    e = change.entry
    return {
        "id": e["id"],
        "section": e["section"],
        "claim": e["claim"],
        "lecture": e.get("lecture"),
        "reference": change.reference.ours,
        "reference_status": change.reference.status,
        "yours": change.student.ours,
        "your_status": change.student.status,
        "blocks": suspects(report, e),
    }


STYLE = """
body { font-family: "Noto Sans CJK SC", "PingFang SC", "Microsoft YaHei", system-ui, sans-serif;
  color: #1f2328; max-width: 60rem; margin: 0 auto; padding: 0 1rem 3rem; line-height: 1.6; }
table { border-collapse: collapse; width: 100%; font-size: .92rem; }
th, td { border-bottom: 1px solid #d0d7de; padding: .3rem .5rem; text-align: left; vertical-align: top; }
.ok { color: #1a7f37; } .bad { color: #cf222e; } .muted { color: #57606a; }
.box { border-left: 4px solid #d0d7de; padding: .2rem .8rem; background: #f6f8fa; }
.box.bad { border-left-color: #cf222e; color: inherit; } .box.ok { border-left-color: #1a7f37; color: inherit; }
@media (max-width: 40em) { table { font-size: .85rem; } }
"""


def page(report: Report) -> str:
    e = html.escape
    tone = "ok" if report.status == OK else "bad"
    parts = [
        '<!DOCTYPE html><html lang="zh-CN"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>检查 check · {e(report.path.name)}</title><style>{STYLE}</style></head><body>",
        f"<h1>检查你的代码 · {e(report.path.name)}</h1>",
        f'<p class="box {tone}">{e(VERDICT[report.status])}</p>',
    ]
    if report.status == BROKE:
        hint = (
            f"最接近的已知错误（相似度 {report.score:.2f}）：<b>{e(report.mistake.hint)}</b>"
            if report.mistake
            else f"没有已知错误和它相符（最高相似度 {report.score:.2f}）"
        )
        parts.append(f"<p>{hint}</p>")
    if report.changes:
        parts.append("<h2>结论变了的讲义数字</h2><table><tr><th>§</th><th>讲义说</th><th>讲义</th>"
                     "<th>参考实现</th><th>你的</th><th>积木</th></tr>")
        for c in report.changes:
            en = c.entry
            parts.append(
                f"<tr><td>{e(en['section'])}</td><td>{e(en['claim'])} <span class=muted>{e(en['id'])}</span></td>"
                f"<td>{e(str(en.get('lecture', '—')))}</td>"
                f"<td class=ok>{e(c.reference.ours or '—')}<br><small>{e(status_text(c.reference.status))}</small></td>"
                f"<td class=bad>{e(c.student.ours or '—')}<br><small>{e(status_text(c.student.status))}</small></td>"
                f"<td>{e('、'.join(suspects(report, en)))}</td></tr>"
            )
        parts.append("</table>")
    parts.append("<h2>每个积木</h2><table><tr><th>积木</th><th>§</th><th>性质</th><th>讲义的数字</th></tr>")
    for row in block_rows(report):
        parts.append(
            f"<tr><td>{e(row['block'])}</td><td>{e(row['section'])}</td>"
            f"<td>{row['properties_held']}/{row['properties']}</td><td>{row['claims_kept']}/{row['claims']}</td></tr>"
        )
    parts.append("</table>")
    details = [line for line in lines(report)[1:] if line.strip()]
    parts.append("<h2>全部输出</h2><pre style='white-space:pre-wrap'>" + e("\n".join(details)) + "</pre>")
    if report.kept:
        parts.append("<details><summary>结论和参考实现相同的讲义数字（" + str(len(report.kept)) + "）</summary><table>")
        for c in report.kept:
            en = c.entry
            parts.append(
                f"<tr><td>{e(en['section'])}</td><td>{e(en['claim'])}</td><td>{e(str(en.get('lecture', '—')))}</td>"
                f"<td>{e(c.student.ours or '—')}</td><td>{e(status_text(c.student.status))}</td></tr>"
            )
        parts.append("</table></details>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_page(report: Report, path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page(report), encoding="utf-8")
    return path


def json_text(report: Report) -> str:
    return json.dumps(as_json(report), ensure_ascii=False, indent=1)
