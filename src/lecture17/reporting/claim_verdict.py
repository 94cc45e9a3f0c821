"""A claim's verdict as the page shows it: the status (the ledger's, with the lecture's own
errors apart), its badge in the audit and the study reading, the audit reading's sentence and
why a claim does not agree, and the references that link a claim and a section.
"""

import html

from lecture17.reporting import ledger as ledger_mod

LECTURE_ERROR = "lecture_error"
LABELS = {**ledger_mod.STATUS, LECTURE_ERROR: "讲义有误 the lecture's own error"}
SYMBOL = {  # the badge's sign: the verdict can be read without its colour
    "same": "✓",
    "precision": "✓",
    "holds": "✓",
    "echo": "↺",
    "differs": "✗",
    LECTURE_ERROR: "!",
    "unresolved": "?",
    "timing": "✓",
    "timing_fails": "✗",
    "missing": "–",
    "gpu": "–",
    "cited": "※",
}
VERDICT = {  # what the status means, as the end of the claim's sentence
    "same": "数字相同 the same digits",
    "precision": "两者都在机器精度内 both within machine precision",
    "holds": "讲义说的成立 what the lecture says holds（趋势、界限或检查 trend, bound or check）",
    "echo": "这是一个设置或讲义自己的算术，显示出来，不算复现 shown back, not a reproduction",
    "differs": "没有复现 not reproduced",
    LECTURE_ERROR: "讲义自己错了 the lecture itself is wrong",
    "unresolved": "这些数据定不了 this data cannot decide it",
    "timing": "在本机成立 holds on this machine",
    "timing_fails": "在本机不成立 does not hold on this machine",
    "missing": "本次构建没有算 not built here",
    "gpu": "只有 GPU 构建能算 only a GPU build computes it",
    "cited": "论文里的数字，没有代码产生它 a paper's number, no code produces it",
}
# the statuses a claim does not agree in; its sentence then says why
NOT_AGREEING = ("differs", LECTURE_ERROR, "unresolved", "timing_fails", "missing", "gpu")


def verdict(o) -> str:
    """The status the page shows: the ledger's, with the lecture's own errors apart."""
    if o.status == "differs" and o.entry.get("expect") == "differs":
        return LECTURE_ERROR
    return o.status


def badge(o, html_mode: bool) -> str:
    v = verdict(o)
    text = f"{SYMBOL[v]} {LABELS[v]}"
    return f'<span class="badge b-{v}">{html.escape(text)}</span>' if html_mode else text


def visible_note(entry: dict) -> str:
    """The note shown beside the sentence: only one about the lecture's text (flag, expect)."""
    if entry.get("note") and (entry.get("flag") or entry.get("expect")):
        flag = f"[{entry['flag']}] " if entry.get("flag") else ""
        return flag + entry["note"]
    return ""


def why(o) -> str:
    """Why a claim does not agree: its failing or undecided check steps, in their words."""
    v = verdict(o)
    if v in ("missing", "gpu"):  # the finding names the selector; the page names the demo
        return f"演示 demo {_demo(o.entry)} 不在本次构建里 is not in this build"
    if v in NOT_AGREEING:
        return o.reason
    if is_rate(o.entry) or o.protocol is not None:  # a rate holds: k/N is the result itself
        return "；".join(f.text for f in o.findings)
    return ""


def is_rate(entry: dict) -> bool:
    """A claim judged on every seed's value (`stat: seeds`): its finding states the rate."""
    if "value" not in entry and "values" not in entry:  # cited, or the lecture's arithmetic
        return False
    return any(s.get("stat") == "seeds" for s in ledger_mod.selectors(entry).values())


def sentence(o) -> str:
    """讲义 … ；我们 … ：verdict——why."""
    e, v = o.entry, verdict(o)
    text = f"讲义 lecture {e['lecture']}"
    if o.ours:
        text += f"；我们 ours {o.ours}"
    text += f"：{VERDICT[v]}"
    if why(o):
        text += f"——{why(o)}"
    elif e["class"] == "reconstructed" and e.get("flag"):
        text += (
            f"（输入从讲义的数字反推 input reconstructed from the lecture's digits，{e['flag']}）"
        )
    if o.protocol is not None:  # decided on the recorded seeds: the protocol's, for comparison
        p = verdict(o.protocol)
        text += (
            f"（默认构建的协议种子只作对照 the default build's protocol seeds, for comparison："
            f"{o.protocol.ours or '—'}，{LABELS[p]}）"
        )
    return text + "。"


def _demo(entry: dict) -> str:
    """The demo whose table a claim reads (its own, or its first selector's)."""
    if entry.get("demo"):
        return str(entry["demo"])
    selectors = ledger_mod._selectors(entry) if ("value" in entry or "values" in entry) else {}
    return next((str(s["demo"]) for s in selectors.values() if "demo" in s), "—")


# the study reading's word on a claim: does our run support what the lecture says?
SUPPORTS = {
    "same": "和讲义一样",
    "precision": "和讲义一样（机器精度内）",
    "holds": "支持讲义",
    "echo": "",  # the badge says it: shown back, not a reproduction
    "differs": "不支持讲义",
    LECTURE_ERROR: "讲义在这里有误",
    "unresolved": "数据还定不了",
    "timing": "本机成立",
    "timing_fails": "本机不成立",
    "missing": "本次没有构建",
    "gpu": "要在 GPU 上才能判定",
    "cited": "",  # the badge says it: a paper's number, not recomputed
}
STUDY_LABEL = {  # the study reading's badge: the sign and the Chinese word (the audit's: both)
    "same": "数字相同",
    "precision": "机器精度内",
    "holds": "成立",
    "echo": "回显（不算复现）",
    "differs": "不同",
    LECTURE_ERROR: "讲义有误",
    "unresolved": "无法分辨",
    "timing": "本机成立",
    "timing_fails": "本机不成立",
    "missing": "未构建",
    "gpu": "需要 GPU",
    "cited": "引自论文",
}
PARTLY = "partly"  # the study reading's badge for a compound claim whose lesson partly holds
SYMBOL[PARTLY], STUDY_LABEL[PARTLY], SUPPORTS[PARTLY] = "◐", "部分成立", "部分支持讲义"
LABELS[PARTLY] = "部分成立 partly"
EVIDENCE = "evidence"  # the study reading's badge of a twin that its pre-registered twin decides
SYMBOL[EVIDENCE], STUDY_LABEL[EVIDENCE], SUPPORTS[EVIDENCE] = "→", "佐证（不计数）", ""
LABELS[EVIDENCE] = "佐证 evidence"
ARITHMETIC = "arithmetic"  # the study badge of the lecture's own arithmetic that checks out
SYMBOL[ARITHMETIC], STUDY_LABEL[ARITHMETIC] = "↺", "讲义的算术，对（不计数）"
SUPPORTS[ARITHMETIC], LABELS[ARITHMETIC] = "和讲义的算术一致", "讲义的算术 arithmetic"


def study_verdict(o) -> str:
    """The study reading's verdict: the page's, except that a compound claim (`parts`) with a
    part that holds and one that fails is "partly" (the audit reading keeps "differs", or a
    timing's "does not hold here"), and a twin shown as the other's evidence is "evidence"."""
    if o.entry.get("evidence"):  # one assertion, one verdict: its twin's card carries it
        return EVIDENCE
    if "derivation" in o.entry and verdict(o) in ("same", "precision", "holds"):
        return ARITHMETIC  # the lecture's arithmetic: checked, never counted
    partly = verdict(o) in ("differs", "timing_fails") and parts_word(o)
    return PARTLY if partly else verdict(o)


def study_badge(o) -> str:
    v = study_verdict(o)
    return f'<span class="badge b-{v}">{html.escape(f"{SYMBOL[v]} {STUDY_LABEL[v]}")}</span>'


def parts_word(o) -> str:
    """A compound claim (`parts` name its check steps) that does not all hold: which part
    holds and which fails ("部分成立（✓ 同一量级；✗ 1–30 ms）")."""
    oks = [f.ok for f in (o.detail or o.findings)]
    parts = o.entry.get("parts")
    if not parts or len(parts) != len(oks) or not (True in oks and False in oks):
        return ""
    held = list(dict.fromkeys(p for p, ok in zip(parts, oks, strict=True) if ok))
    failed = list(dict.fromkeys(p for p, ok in zip(parts, oks, strict=True) if ok is False))
    held = [p for p in held if p not in failed]
    return f"部分成立（✓ {'、'.join(held)}；✗ {'、'.join(failed)}）" if held else ""


def agreement(o) -> bool:
    return verdict(o) not in NOT_AGREEING


def claim_ref(o, html_mode: bool) -> str:
    """A claim's id, as a link to its card in the page (@@CLAIM:…@@ resolved later)."""
    return f"@@CLAIM:{o.entry['id']}@@" if html_mode else o.entry["id"]


def section_ref(section: str, html_mode: bool) -> str:
    return f"@@SEC:{section}@@" if html_mode else section
