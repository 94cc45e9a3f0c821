"""The study reading's teaching aids, worded from the claims' outcomes: the box that opens a
section (its lesson), an exercise's "predict, then run" and the choice our runs support, the
badges' legend and the reading aid's flags.

Report (reporting.template_api) calls each of them for the template; nothing here is typed by
hand but the lessons' topics and points (report/lessons.yaml) and the predictions' wording
(the ledger's `predict`).
"""

import html
import re

from lecture17.reporting import claims as claims_mod
from lecture17.reporting import ledger as ledger_mod

FLAG = re.compile(r"\bF(?:0[1-9]|10)\b")  # a flag of the reading aid, named in a table's text


def lesson(item: dict | None, section: str, outcomes, html_mode: bool) -> str:
    """The box that opens a section: "what this section teaches" — the lecture's point
    (quoted), then the deciding claim's verdict and sentence (claims.takeaway: the lecture's
    number and ours, and the likely cause where it does not hold). Generated from the
    claim's outcome, never typed; the section's badge counts are the audit reading's."""
    if not item:
        return ""
    by_id = {o.entry["id"]: o for o in outcomes}
    if item["claim"] not in by_id:
        raise ValueError(f"lessons {section}: no claim {item['claim']!r} in the ledger")
    o = by_id[item["claim"]]
    if o.entry.get("evidence"):  # one assertion, one verdict: the twin that decides
        raise ValueError(f"lessons {section}: {item['claim']} is evidence; name {o.entry['pair']}")
    said = claims_mod.takeaway(o, by_id)
    ref = claims_mod.claim_ref(o, html_mode)
    head = f"这一节学到什么：{item['topic']}"
    if html_mode:
        badge = claims_mod.study_badge(o)
        return (
            f'<div class="lesson" id="lesson-{section.lstrip("§").replace(".", "-")}">'
            f"<p><b>{html.escape(head)}</b></p>"
            f"<p>讲义：「{html.escape(item['point'])}」</p>"
            f"<p>我们的运行 our run：{badge} {html.escape(said)}"
            f'<span class="audit">（{ref}）</span></p></div>'
        )
    badge = claims_mod.badge(o, html_mode=False)
    lines = [
        f"**{head}**",
        f"讲义：「{item['point']}」",
        f"我们的运行：{badge}。{said}（{ref}）",
    ]
    return "\n>\n".join(f"> {line}" for line in lines)


def predicted(outcomes, section: str) -> list:
    """The claims of an exercise that ask for a prediction (their `predict`)."""
    return [o for o in outcomes if o.entry["section"] == section and "predict" in o.entry]


def predictions(outcomes, section: str) -> str:
    """An exercise's "predict, then run" (§13): per claim with `predict`, the question and
    its two choices, the lecture's expected trend and its opposite, in a fixed order (A the
    lecture's, B its opposite: the lecture itself states its expectation)."""
    lines = []
    for o in predicted(outcomes, section):
        p = o.entry["predict"]
        lines.append(f"- **{p['who']}**：(A) {p['lecture']}　(B) {p['opposite']}")
    return "\n".join(lines)


def prediction_answers(outcomes, section: str, html_mode: bool) -> str:
    """Per prediction, the choice our recorded runs support, from the claim's verdict; its
    numbers when a few decide it; an undecided one says so in words (the statistics behind
    it: the audit reading's)."""
    lines = []
    for o in predicted(outcomes, section):
        v = claims_mod.study_verdict(o)
        choice = {"holds": "(A)", "same": "(A)", "differs": "(B)"}.get(v)
        if choice:
            said = f"支持 {choice}"
        elif v == claims_mod.PARTLY:
            said = "一半支持 (A)：只有一部分成立"
        else:
            said = "还定不了：记录的种子太少，(A)、(B) 都不能排除"
        label = claims_mod.STUDY_LABEL.get(v) or claims_mod.LABELS.get(v, v)
        few = o.ours and o.ours.count(",") < 4  # a handful of numbers, not every seed's
        ours = f"；我们：{o.ours}" if few else ""
        why = ""
        if not choice and o.reason:
            why = f"（{o.reason}）"
            if html_mode:
                why = f'<span class="audit">{html.escape(why)}</span>'
        ref = claims_mod.claim_ref(o, html_mode)  # an id: the audit reading's
        ref = f'<span class="audit">{ref}，</span>' if html_mode else f"{ref}，"
        who = o.entry["predict"]["who"]
        lines.append(f"- **{who}**：我们的运行{said}（{ref}{label}{ours}）{why}")
    return "\n".join(lines)


def legend() -> str:
    """The badges a student meets, in one line: the four verdicts, and what is not counted."""
    signs = claims_mod.SYMBOL
    kinds = [
        f"{signs['holds']} 成立（含数字相同、机器精度内）",
        f"{signs[claims_mod.PARTLY]} 部分成立",
        f"{signs['differs']} 不同（不成立）",
        f"{signs['unresolved']} 还定不了",
        f"{signs['echo']} 回显、讲义自己的算术和 {signs['cited']} 引自论文不计入",
        f"{signs[claims_mod.EVIDENCE]} 佐证：同一句话以另一张卡片为准，不计入",
        "“本机”：计时，换一台机器可能不同",
    ]
    return "**标记 Badges**：" + " · ".join(kinds) + "。"


def flags(outcomes, views: dict) -> str:
    """The reading aid's flags this page uses (its claims' and those its tables' titles and
    notes name), each explained in a sentence."""
    used = {o.entry["flag"] for o in outcomes if o.entry.get("flag")}
    for view in (v for demo_views in views.values() for v in demo_views):
        used |= set(FLAG.findall(f"{view.get('title', '')} {view.get('note', '')}"))
    used = sorted(used)
    missing = [f for f in used if f not in ledger_mod.FLAG_TEXT]
    if missing:
        raise ValueError(f"flags {missing} are used by claims but not in report/ledger/flags.yaml")
    return "\n".join(f"- **{f}**：{ledger_mod.FLAG_TEXT[f]}" for f in used)
