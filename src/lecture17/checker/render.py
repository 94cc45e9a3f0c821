"""What a check says: a terminal summary, an HTML page in the report's style, and JSON.

All three read one Report (run.py). The student reads, per replaced block, how many of its
properties hold and how many of the lecture's numbers keep the reference's verdict; then each
property that fails, with the smallest input that shows it; then each claim that changed (its
§, the lecture's words and number, the reference's and theirs, and the blocks it passes
through, those with a failing property first); last, for a flagged file, the known mistakes
its blocks compute number for number (checker/explain.py), or that none was shown. What the
student's code printed, one line per distinct crash with its count, and the demos skipped
because a block they need hung or crashed. In Chinese, each English term once (its first use).

Long on purpose: three renderings (terminal, JSON, HTML) of one report, which share what a
block's row, a changed claim and a cause say.
"""

import html
import json

import numpy as np

from lecture17.checker import blocks as blocks_mod
from lecture17.checker import properties as props
from lecture17.checker.judge import PRECISION, entry_demos
from lecture17.checker.run import BROKE, NOTHING, OK, UNUSABLE, Report, unaccepted
from lecture17.reporting import ledger as ledger_mod
from lecture17.reporting.claims import chinese_part

VERDICT = {
    OK: "通过 passed：每个讲义数字的结论都和参考实现 reference 相同，每条性质 property 都成立",
    BROKE: "有问题 something broke",
    UNUSABLE: "文件用不了 the file cannot be used",
    NOTHING: "一个积木 block 都没有替换 no block replaced",
}
FAILURE = {
    "load": "载入失败 does not load",
    "crash": "崩溃 crash",
    "hang": "卡住 hang",
    "shape": "形状不对 wrong shape",
    "memory": "内存超限 out of memory",
}
CRASHED = "崩溃 crashed"  # how a property's `seen` starts when the block raised (session.py)
SCHEMA = 2  # the JSON's version (docs/CHECK.md): bumped when a field changes meaning


def status_text(status: str) -> str:
    """The ledger's status in Chinese only ("数字相同 same digits" -> "数字相同")."""
    return ledger_mod.STATUS.get(status, status).split(" ")[0]


def block_rows(report: Report) -> list[dict]:
    """Per replaced block: its properties, and the judged claims of the demos it ran in."""
    rows = []
    for name, block in report.blocks.items():
        if not block.implemented:
            continue
        ran_in = {d for d, r in report.demos.items() if r.calls.get(name)}
        claims = [
            c
            for c in report.changes + report.kept
            if name in report.blocks_of_claim(c.entry) and entry_demos(c.entry) & ran_in
        ]
        changed = [c for c in claims if c in report.changes and name in blamed(report, c.entry)]
        skipped = sorted(d for d, needs in report.skipped_for.items() if name in needs)
        crashed = sorted(d for d, r in report.demos.items() if name in failed_in(report, d))
        rows.append(
            {
                "block": name,
                "section": blocks_mod.BLOCKS[name][0],
                "held": len(block.held),
                "properties": len(block.held) + len(block.failed),
                "kept": len(claims) - len(changed),
                "claims": len(claims),
                "demos": sorted(ran_in),
                "passed": not (
                    block.failed or block.failure or unaccepted(block) or changed or crashed
                ),
                "skipped_demos": skipped,
            }
        )
    return rows


def failed_in(report: Report, demo: str) -> list[str]:
    """The student's blocks a demo's crash is put down to: the block that returned a wrong
    shape, or the deepest block of theirs on the traceback (a helper it calls may have
    raised inside it); when the traceback names none, every block the demo reaches."""
    failure = report.demos[demo].failure
    if failure is None:
        return []
    if failure.function in report.blocks and failure.kind == "shape":
        return [failure.function]
    for name in reversed(failure.functions):
        if name in report.blocks:
            return [name]
    return report.blocks_of_demo(demo)


def blamed(report: Report, entry: dict) -> list[str]:
    """The blocks a changed claim is put down to: those it passes through that break a
    property or a convention, or, when none does, every one it passes through."""
    reached = report.blocks_of_claim(entry)
    bad = [b for b in reached if report.blocks[b].failed or unaccepted(report.blocks[b])]
    return bad or reached


def failure_text(failure) -> str:
    where = ""
    if failure.line:
        spot = failure.place or f"第 {failure.line} 行"
        where = f"（你的文件{spot}：{failure.source.strip()}）"
    return f"{FAILURE[failure.kind]}: {failure.text}{where}"


def claim_line(report: Report, change) -> str:
    e, ref, mine = change.entry, change.reference, change.student
    return (
        f"  {e['id']} {e['section']} {chinese_part(e['claim'])}：讲义 {e.get('lecture', '—')} · "
        f"参考 {ref.ours or '—'}（{status_text(ref.status)}）· "
        f"你的 {mine.ours or '—'}（{status_text(mine.status)}）"
        f" ← {'、'.join(blamed(report, e)) or '—'}{_rounding_note(change)}"
    )


def _rounding_note(change) -> str:
    """When both values print alike, how far apart they are (the check reads more digits)."""
    if change.reference.ours != change.student.ours:
        return ""
    gaps = [
        abs(float(a) - float(b)) / max(abs(float(b)), 1e-300)
        for name in change.reference.numbers
        for a, b in zip(
            np.ravel(change.student.numbers.get(name, [])),
            np.ravel(change.reference.numbers[name]),
            strict=False,
        )
        if np.isfinite(float(a)) and np.isfinite(float(b)) and a != b
    ]
    if not gaps:
        return ""
    return f"（印出来一样；检查读的数相对差 {max(gaps):.1g}）"


def mistake_lines(report: Report) -> list[str]:
    """The causes shown by behaviour, or that none was: then only what was observed counts;
    and the float dtype the student's blocks return when it is not the lecture's float64."""
    narrow = [n for n, b in report.blocks.items() if set(b.dtypes) - {"float64"}]
    out = []
    if narrow:
        kinds = "、".join(
            sorted({d for n in narrow for d in report.blocks[n].dtypes} - {"float64"})
        )
        out.append(
            f"你的 {'、'.join(narrow)} 在 float64 的探针输入上返回 {kinds}（讲义的积木算 float64）"
        )
    if report.causes:
        return out + [f"已知的错误 known mistake：{c.words}" for c in report.causes]
    return out + [
        "没有已知的错误和它逐数相同，所以这里不说原因：看每个积木的反例"
        "（最小的输入、你的数、讲义的数）"
    ]


def calls_below(report: Report, name: str) -> list[str]:
    """The student's blocks with a failing property that the lecture's `name` calls: look at
    them first (the lecture's call graph; whether the student's own block calls them too is
    not known, so this orders, it does not blame)."""
    from lecture17.pipeline import callmap

    below = callmap.closure({name}) - {name}
    return [b for b, r in report.blocks.items() if b in below and (r.failed or r.failure)]


def _problems(report: Report) -> list[str]:
    out = []
    for name, block in report.blocks.items():
        for convention in block.conventions:
            mark = "·" if convention.accepted else "✗"
            out.append(f"{mark} {name} · 约定 convention：{convention.text}")
        crashed: dict = {}
        for pid, (size, seen) in block.failed.items():
            prop = next(p for p in props.PROPERTIES if p.id == pid)
            if seen.startswith(CRASHED):
                crashed.setdefault(seen, []).append(prop)
                continue
            out.append(f"✗ {name} · 性质不成立：{prop.text}")
            out.append(f"    最小的反例 smallest input：{prop.size_text(size)} — {seen}")
        if (block.failed or block.failure) and (lower := calls_below(report, name)):
            out.append(
                f"    讲义的 {name} 要调用 {'、'.join(lower)}；你的这些积木有不成立的性质：先看它们"
            )
        for seen, found in crashed.items():
            out.append(f"✗ {name} · {len(found)} 条性质 properties 在这里崩溃 crash：{seen}")
        if block.failure:
            out.append(
                f"✗ {name} · 检查性质时 while checking its properties · "
                f"{failure_text(block.failure)}"
            )
    crashes: dict = {}
    for demo, result in report.demos.items():
        if result.failure:
            crashes.setdefault(failure_text(result.failure), []).append(demo)
    for text, demos in crashes.items():
        which = (
            f"演示 demo {demos[0]}"
            if len(demos) == 1
            else f"{len(demos)} 个演示 demos（{' '.join(demos)}）"
        )
        out.append(f"✗ {which} · {text}")
    skipped: dict = {}
    for demo, needs in report.skipped_for.items():
        skipped.setdefault("、".join(needs), []).append(demo)
    for blocks, demos in skipped.items():
        out.append(
            f"· {len(demos)} 个演示 demos 没有运行 not run（{' '.join(demos)}）："
            f"它们要用的 {blocks} 已经卡住或崩溃"
        )
    return out


def printed_lines(report: Report) -> list[str]:
    """What the student's code printed, per phase and block: the first lines, then a count."""
    same: dict = {}  # a print at import shows in every child: once, with where
    for where, shown in report.printed.items():
        if shown.total:
            same.setdefault((tuple(shown.lines), shown.total), []).append(where)
    out = []
    for (lines, total), places in same.items():
        where = places[0] if len(places) == 1 else f"{len(places)} 处 places（{'、'.join(places)}）"
        out.append(f"  {where}各打印了 printed {total} 行 lines：")
        out += [f"    | {line}" for line in lines]
        if total > len(lines):
            out.append(f"    | ……（还有 {total - len(lines)} 行 more）")
    return ["", "你的代码打印的 your code printed：", *out] if out else []


def lines(report: Report) -> list[str]:
    out = [f"检查 check {report.path}：{VERDICT[report.status]}（{report.seconds:.1f} 秒）"]
    out += [f"  注意 note：{note}" for note in report.notes]
    if report.load_failure:
        loading = "  载入时 while loading · " + failure_text(report.load_failure)
        return [*out, loading, *printed_lines(report)]
    if report.problems:
        return out + [f"  签名不对 signature：{p}" for p in report.problems.values()]
    out += _written_lines(report)
    if report.status == NOTHING:
        return out
    out += ["", f"  {'积木':<28} {'§':<6} 性质成立   讲义数字 claims：结论没变的   通过"]
    for row in block_rows(report):
        counts = f"{row['kept']}/{row['claims']}" if row["claims"] else "—"
        out.append(
            f"  {row['block']:<30} {row['section']:<6} {row['held']}/{row['properties']}"
            f"        {counts:<24} {'✓' if row['passed'] else '✗'}"
        )
    if problems := _problems(report):
        out += ["", *problems]
    if report.changes:
        out += ["", f"✗ 结论变了的讲义数字（{len(report.changes)}）："]
        out += [claim_line(report, c) for c in report.changes]
    if report.status == BROKE:
        out += ["", *mistake_lines(report)]
    rounding = [c.entry["id"] for c in report.kept if c.rounding]
    if rounding:
        out.append(
            f"  {' '.join(rounding)}：你的数和参考的只差舍入 rounding（相对差 ≤ {PRECISION:g}），"
            "按同一个数判，结论不变"
        )
    return out + printed_lines(report) + _demo_lines(report)


def _written_lines(report: Report) -> list[str]:
    """Which blocks the file wrote, left as the template's, or lacks."""
    out = []
    missing = [n for n, b in report.blocks.items() if not b.implemented]
    if missing:
        out.append("  还没写的（还是 NotImplementedError，用参考实现）：" + "、".join(missing))
    absent = [n for n in blocks_mod.BLOCKS if n not in report.blocks]
    if report.blocks and absent and report.status != NOTHING:
        out.append(f"  你的文件里没有的积木（用参考实现，不判）：{'、'.join(absent)}")
    if report.status == NOTHING and not report.blocks:
        names = "、".join(list(blocks_mod.BLOCKS)[:3])
        out.append(f"  文件里没有讲义的积木：函数名要和 attention_numpy 的一样（{names}……）")
    return out


def _demo_lines(report: Report) -> list[str]:
    """The demos that ran the student's code, the calls that ran the reference instead."""
    ran = [d for d, r in report.demos.items() if r.ran]
    out = ["", f"用你的代码运行的演示 demo：{' '.join(ran) or '—'}"]
    fallbacks = sorted(
        {(b, why) for r in report.demos.values() for b, f in r.fallbacks.items() for why in f}
    )
    if fallbacks:
        used = "；".join(f"{b}（{why}）" for b, why in fallbacks)
        out.append(f"  这些调用用了参考实现（你的函数不接受这个参数）：{used}")
    if report.skipped:
        out.append(f"  计时演示 {' '.join(report.skipped)} 不用你的代码运行，它们的结论不判")
    return out


# -----------------------------------------------------------------------------
# JSON, for a teacher's autograder


def as_json(report: Report) -> dict:
    """The report for a program (docs/CHECK.md documents every field; `schema` its version)."""
    rows = {row["block"]: row for row in block_rows(report)}
    return {
        "schema": SCHEMA,
        "file": str(report.path),
        "exit": report.status,
        "passed": report.status == OK,
        "seconds": round(report.seconds, 2),
        "load_failure": _failure(report.load_failure),
        "signature_problems": report.problems,
        "blocks": {name: _block(b, rows.get(name)) for name, b in report.blocks.items()},
        "demos": {
            d: {
                "ran": r.ran,
                "failure": _failure(r.failure),
                "calls": r.calls,
                "fallbacks": r.fallbacks,
            }
            for d, r in report.demos.items()
        },
        "demos_skipped": report.skipped_for,
        "timing_demos_not_run": report.skipped,
        "claims_changed": [_claim(c, report) for c in report.changes],
        "claims_kept": [c.entry["id"] for c in report.kept],
        "claims_kept_within_rounding": [c.entry["id"] for c in report.kept if c.rounding],
        "causes": [
            {"mistake": c.mistake.name, "blocks": list(c.blocks), "words": c.words}
            for c in report.causes
        ],
        "printed": {
            where: {"lines": shown.lines, "total": shown.total}
            for where, shown in report.printed.items()
            if shown.total
        },
    }


def _block(b, row: dict | None) -> dict:
    return {
        "implemented": b.implemented,
        "passed": bool(row and row["passed"]),
        "properties_held": b.held,
        "properties_failed": {k: {"size": v[0], "seen": v[1]} for k, v in b.failed.items()},
        "conventions": [
            {"id": c.id, "accepted": c.accepted, "text": c.text} for c in b.conventions
        ],
        "failure": _failure(b.failure),
        "claims": row["claims"] if row else 0,
        "claims_kept": row["kept"] if row else 0,
    }


def _failure(failure):
    if failure is None:
        return None
    return {
        "kind": failure.kind,
        "text": failure.text,
        "line": failure.line,
        "place": failure.place,
        "source": failure.source,
    }


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
        "blocks": blamed(report, e),
    }


def json_text(report: Report) -> str:
    return json.dumps(as_json(report), ensure_ascii=False, indent=1)


# -----------------------------------------------------------------------------
# the HTML page: lecture | reference | yours, per claim

STYLE = """
body { font-family: "Noto Sans CJK SC", "PingFang SC", "Microsoft YaHei", system-ui,
  sans-serif; color: #1f2328; max-width: 60rem; margin: 0 auto; padding: 0 1rem 3rem;
  line-height: 1.6; overflow-wrap: anywhere; }
table { border-collapse: collapse; width: 100%; font-size: .92rem; }
th, td { border-bottom: 1px solid #d0d7de; padding: .3rem .5rem; text-align: left;
  vertical-align: top; }
.ok { color: #1a7f37; } .bad { color: #cf222e; } .muted { color: #57606a; }
.box { border-left: 4px solid #d0d7de; padding: .2rem .8rem; background: #f6f8fa; }
.box.bad { border-left-color: #cf222e; color: inherit; }
.box.ok { border-left-color: #1a7f37; color: inherit; }
.card { border: 1px solid #d0d7de; border-left: 4px solid #cf222e; border-radius: 4px;
  padding: .3rem .7rem; margin: .5rem 0; }
.card.note { border-left-color: #d0d7de; }
.card p { margin: .2rem 0; }
pre { white-space: pre-wrap; font-size: .85rem; }
@media (max-width: 40em) {
  table.stack, table.stack tbody, table.stack tr, table.stack td { display: block; }
  table.stack tr:first-child { display: none; }
  table.stack tr { border-bottom: 1px solid #d0d7de; padding: .3rem 0; }
  table.stack td { border: 0; padding: .05rem .3rem; }
  table.stack td[data-label]::before { content: attr(data-label) "："; color: #57606a; }
}
"""


def _cell(text, css="", label="") -> str:
    attrs = (f" class={css}" if css else "") + (f' data-label="{label}"' if label else "")
    return f"<td{attrs}>{html.escape(str(text))}</td>"


def _claims_table(report: Report) -> list[str]:
    heads = ("§", "讲义说", "讲义", "参考实现", "你的", "积木")
    rows = ["<table class=stack><tr>" + "".join(f"<th>{h}</th>" for h in heads) + "</tr>"]
    for c in report.changes:
        e = c.entry
        rows.append(
            "<tr>"
            + _cell(e["section"], label="§")
            + _cell(f"{chinese_part(e['claim'])}（{e['id']}）", label="讲义说")
            + _cell(e.get("lecture", "—"), label="讲义")
            + _cell(f"{c.reference.ours or '—'}：{status_text(c.reference.status)}", "ok", "参考")
            + _cell(
                f"{c.student.ours or '—'}：{status_text(c.student.status)}{_rounding_note(c)}",
                "bad",
                "你的",
            )
            + _cell("、".join(blamed(report, e)), label="积木")
            + "</tr>"
        )
    return [*rows, "</table>"]


def _cards(text_lines: list[str], css="") -> list[str]:
    """Terminal lines as cards: a line that starts with ✗ or · opens one, indented ones join it."""
    cards: list[list[str]] = []
    for line in text_lines:
        if line.startswith(("✗", "·")) or not cards:
            cards.append([line.lstrip("✗· ").strip()])
        else:
            cards[-1].append(line.strip())
    cls = f"card {css}".strip()
    return [
        f'<div class="{cls}">' + "".join(f"<p>{html.escape(t)}</p>" for t in card) + "</div>"
        for card in cards
    ]


def _block_table(report: Report) -> list[str]:
    """Each block: its properties, its claims, whether it passed (the page)."""
    parts = ["<h2>每个积木</h2><table class=stack><tr><th>积木</th><th>§</th>"]
    parts.append("<th>性质</th><th>讲义数字</th><th>通过</th></tr>")
    for row in block_rows(report):
        parts.append(
            "<tr>"
            + _cell(row["block"])
            + _cell(row["section"], label="§")
            + _cell(f"{row['held']}/{row['properties']}", label="性质成立")
            + _cell(
                f"{row['kept']}/{row['claims']}" if row["claims"] else "—",
                label="经过它、结论没变的讲义数字",
            )
            + _cell("✓" if row["passed"] else "✗", "ok" if row["passed"] else "bad", "通过")
            + "</tr>"
        )
    parts.append("</table>")
    parts.append(
        "<p class=muted>性质：成立的/试过的；"
        "讲义数字：经过这个积木、结论和参考实现一样的/全部。</p>"
    )
    return parts


def _kept_table(report: Report) -> list[str]:
    """The claims that kept their verdict, folded (the page)."""
    parts = []
    if report.kept:
        parts.append(f"<details><summary>结论不变的讲义数字（{len(report.kept)}）</summary>")
        parts.append("<table class=stack><tr><th>§</th><th>讲义说</th><th>讲义</th>")
        parts.append("<th>你的</th><th>状态</th></tr>")
        for c in report.kept:
            en = c.entry
            parts.append(
                "<tr>"
                + _cell(en["section"], label="§")
                + _cell(chinese_part(en["claim"]), label="讲义说")
                + _cell(en.get("lecture", "—"), label="讲义")
                + _cell(c.student.ours or "—", label="你的")
                + _cell(status_text(c.student.status), label="状态")
                + "</tr>"
            )
        parts.append("</table></details>")
    return parts


def page(report: Report) -> str:
    e = html.escape
    tone = "ok" if report.status == OK else "bad"
    parts = [
        '<!DOCTYPE html><html lang="zh-CN"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>检查 · {e(report.path.name)}</title><style>{STYLE}</style></head><body>",
        f"<h1>检查你的代码 · {e(report.path.name)}</h1>",
        f'<p class="box {tone}">{e(VERDICT[report.status])}</p>',
    ]
    if report.status == BROKE:
        parts += [f"<p><b>{e(line)}</b></p>" for line in mistake_lines(report)]
    if problems := _problems(report):
        parts += ["<h2>不成立的性质、崩溃和卡住 problems</h2>", *_cards(problems)]
    if report.changes:
        parts += ["<h2>结论变了的讲义数字</h2>", *_claims_table(report)]
    parts += _block_table(report)
    notes = [
        line for line in lines(report) if line.startswith("  注意") or "文件里没有的积木" in line
    ]
    notes += printed_lines(report)[2:]
    if notes:
        parts += ["<h2>注意 notes</h2>", *_cards([n.strip() for n in notes if n.strip()], "note")]
    parts.append(
        f"<details><summary>全部输出 full output</summary><pre>"
        f"{e(chr(10).join(lines(report)[1:]).strip())}</pre></details>"
    )
    parts += _kept_table(report)
    return "\n".join([*parts, "</body></html>"])
