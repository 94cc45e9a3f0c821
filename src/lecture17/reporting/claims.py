"""The report's verdicts in words: one sentence per claim, badges, counts and reading notes.

Every sentence is built from a ledger entry (its claim and the lecture's value, as printed) and
its evaluated Outcome (our value, the status, and each check step's Finding, whose text carries
the numbers). Nothing here types a number. A hand-written `note` is shown beside the sentence
only where it speaks about the lecture's text (the entry has a reading-aid `flag` or
`expect: differs`); any other note may describe the build it was written on (a trained
sample), so the page folds it into the claim's <details> and says so.

Statuses are the ledger's (ledger.STATUS), plus one the page tells apart: `lecture_error`, a
claim that differs where the ledger expects it to, because the lecture itself is wrong.

Long on purpose: every sentence, badge and count the page shows about a claim, so the wording
lives in one place.
"""

import html
import re

import pandas as pd

from lecture17.experiments import DEMOS
from lecture17.reporting import ledger as ledger_mod
from lecture17.reporting.page import exercise_words
from lecture17.reporting.views import markdown_table
from lecture17.reporting.words import CJK, chinese_part, study_text  # noqa: F401 - used here too

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
CLASSES = {  # what a number is (the ledger's classes), for the claim's details
    "exact": "从讲义给出的输入算出 computed from the lecture's inputs",
    "reconstructed": "从讲义的数字反推的输入算出 computed from a reconstructed input",
    "echo": "回显 shown back",
    "precision": "等价性：最差的种子小于界限 an equivalence, the worst seed below the bound",
    "seeded": "随机初始化或训练的一个样本 a sample of a random init or training",
    "timing": "计时，因机器而异 a timing, machine-dependent",
    "cited": "论文里的数字 a paper's number",
    "beyond": "讲义没说、我们另外检查的 a check beyond the lecture（不计入 not counted）",
}
# the statuses a claim does not agree in; its sentence then says why
NOT_AGREEING = ("differs", LECTURE_ERROR, "unresolved", "timing_fails", "missing", "gpu")
STAT = {
    "min": "种子中最小 lowest seed",
    "max": "种子中最大 highest seed",
    "std": "种子间标准差 std",
}


def verdict(o) -> str:
    """The status the page shows: the ledger's, with the lecture's own errors apart."""
    if o.status == "differs" and o.entry.get("expect") == "differs":
        return LECTURE_ERROR
    return o.status


def badge(o, html_mode: bool) -> str:
    v = verdict(o)
    text = f"{SYMBOL[v]} {LABELS[v]}"
    return f'<span class="badge b-{v}">{html.escape(text)}</span>' if html_mode else text


HAND_WRITTEN = (  # a note that is not about the lecture's text may describe another build
    "手写的说明，写于某一次构建，可能和这一次不符 "
    "a hand-written note, written about one build, may not match this one"
)


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


# -----------------------------------------------------------------------------
# Markdown: one table per group of claims (the file a diff reads)


def one_line(text) -> str:
    """A table cell's text on one line (a newline would end the Markdown table's row)."""
    return str(text).replace("\n", " ")


def claims_table(outcomes) -> str:
    header = ["编号 id", "§", "讲义的说法 claim", "讲义 lecture", "我们 ours", "结论 status"]
    header.append("为什么 why · 说明 note")
    lines = []
    for o in outcomes:
        e = o.entry
        note = visible_note(e) or (f"手写 hand-written：{e['note']}" if e.get("note") else "")
        row = [e["id"], e["section"], e["claim"], e["lecture"], o.ours or "—", badge(o, False)]
        row.append("；".join(t for t in (why(o), note) if t))
        lines.append([one_line(c) for c in row])
    return markdown_table(header, lines)


# -----------------------------------------------------------------------------
# HTML: one card per claim, the check folded away


def _value_lines(o) -> list[str]:
    """Each named value of the check: what it selects, and its number."""
    e = o.entry
    if not o.numbers:
        return []
    selectors = ledger_mod._selectors(e)
    fmt = e.get("fmt", ".3g")
    lines = []
    for name, value in o.numbers.items():
        sel = selectors[name]
        where = sel.get("where", {})
        where = where if isinstance(where, list) else [where]
        labels = "；".join(", ".join(f"{k} {v}" for k, v in w.items()) for w in where if w)
        quantity = (
            sel["quantity"] if isinstance(sel["quantity"], str) else "、".join(sel["quantity"])
        )
        what = ", ".join(
            t
            for t in (
                f"演示 demo {sel['demo']}" if "demo" in sel else "",
                quantity,
                labels,
                STAT.get(sel.get("stat", "mean"), ""),
                f"{sel['reduce']} over the rows" if "reduce" in sel else "",
            )
            if t
        )
        lines.append(f"{name}（{what}）= {ledger_mod.fmt_values(value, fmt)}")
    return lines


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
RATE = re.compile(r"(\d+)/(\d+)（95%")


PARTLY = "partly"  # the study reading's badge for a compound claim whose lesson partly holds
SYMBOL[PARTLY], STUDY_LABEL[PARTLY], SUPPORTS[PARTLY] = "◐", "部分成立", "部分支持讲义"
LABELS[PARTLY] = "部分成立 partly"


def study_verdict(o) -> str:
    """The study reading's verdict: the page's, except that a compound claim (`parts`) with a
    part that holds and one that fails is "partly" (the audit reading keeps "differs", or a
    timing's "does not hold here")."""
    partly = verdict(o) in ("differs", "timing_fails") and parts_word(o)
    return PARTLY if partly else verdict(o)


def study_badge(o) -> str:
    v = study_verdict(o)
    return f'<span class="badge b-{v}">{html.escape(f"{SYMBOL[v]} {STUDY_LABEL[v]}")}</span>'


def seed_words(seeds: list) -> str:
    """[0, 1, 2] -> "种子 0–2"; [0, 1] -> "种子 0、1"; [0, 1, 2, 100, …, 109] -> "种子 0–2、
    100–109": runs of three or more as a range."""
    runs: list[list[int]] = []
    for s in seeds:
        if runs and s == runs[-1][-1] + 1:
            runs[-1].append(s)
        else:
            runs.append([s])
    words = [f"{r[0]}–{r[-1]}" if len(r) > 2 else "、".join(map(str, r)) for r in runs]
    return "种子 " + "、".join(words) if seeds else ""


STUDY_STAT = {"min": " 中最小", "max": " 中最大", "std": " 的标准差", "n_seeds": " 的个数"}


def scope(o, stat_words: bool = True) -> str:
    """Which seeds the shown value is of, and which statistic: "种子 0–2 平均", "种子 0",
    "记录的种子 100–109 中最大" — so a takeaway and a table that print different numbers for
    one quantity say why."""
    if not o.seeds or getattr(DEMOS.get(_demo(o.entry)), "seed_free", False):
        return ""
    first = (ledger_mod._show_names(o.entry) or [*ledger_mod._selectors(o.entry)][:1])[0]
    stat = ledger_mod._selectors(o.entry)[first].get("stat", "mean")
    words = ("记录的" if o.protocol is not None else "") + seed_words(o.seeds)
    if stat == "mean":
        return words + (" 平均" if len(o.seeds) > 1 else "")
    return words + (STUDY_STAT.get(stat, "") if stat_words else "")


def study_ours(o) -> str:
    """Ours, as the study reading says it: a rate over the recorded seeds as "k of N seeds",
    a value with the seeds and the statistic it is of, a short value as printed, a long list
    never as an unlabelled tuple (only which seeds: its values are in the section's table and
    the audit reading's check)."""
    words = ledger_mod.ours_words(o.entry, o.numbers)  # the claim's own words around them
    for f in o.findings:
        if RECORDED_RATE in f.text and (m := RATE.search(f.text)):
            rate = f"记录的 {m.group(2)} 个种子里有 {m.group(1)} 个成立"
            return f"{rate}（种子平均：{words}）" if words else rate
    if not o.ours:
        return ""
    if words:
        return f"我们（{where}）：{words}" if (where := scope(o, False)) else f"我们：{words}"
    for f in o.findings:  # a rate a predicate counted: "落后的种子：0/10" says what was found
        if m := COUNTED_RATE.search(f.text.removeprefix("未满足 not met：")):
            what = study_text(ENGLISH_AFTER.sub("", m["what"]).strip())
            return f"我们：{what} {m['k']}/{m['n']}"
    n = len(o.ours.strip("()").split(", ")) if o.ours.startswith("(") else 1
    named = _named_values(o) if n <= 3 else ""
    where = scope(o, stat_words=not named)  # a named value says its statistic itself
    who = f"我们（{where}）" if where else "我们 "
    if n == 1 or named:
        return f"{who}{named or o.ours}"
    return f"我们按{where}" if where else ""  # a long list: the table shows it, the audit lists it


def _named_values(o) -> str:
    """Shown values, each by its name in the views' words (Chinese only): "整句（宽度 4，模型
    GRU + 注意力，L 32）0.743、…"; "" where a shown value is a list."""
    names = ledger_mod._show_names(o.entry)
    if not names or any(not isinstance(o.numbers.get(n), float) for n in names):
        return ""
    labels = ledger_mod.value_labels(o.entry, study=True)
    fmt = o.entry.get("fmt", ".3g")
    return "、".join(f"{labels[n]} {ledger_mod.fmt_values(o.numbers[n], fmt)}" for n in names)


RECORDED_RATE = "记录的种子里讲义的话成立的"  # ledger.decided_on_recorded's finding
ENGLISH_AFTER = re.compile(r"(?<=[\u3400-\u9fff）]) [A-Za-z][A-Za-z0-9 '’\-/.<>=]*?(?=（|$)")
# a predicate's count over seeds, "落后的种子（…）：0/10（95% 区间 …）" or "…：100/100 = 1.00"
COUNTED_RATE = re.compile(r"(?P<what>[^：；:]+?)[：:] ?(?P<k>\d+)/(?P<n>\d+)(?=（95%| =)")


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


TOLERANCE_WORDS = re.compile(r"（半个末位[^）]*）")  # how a tolerance is made: the audit's


def protocol_note(o) -> str:
    """Where the default build's protocol seeds and the recorded seeds disagree: which one to
    believe, and why."""
    p = o.protocol
    if p is None or verdict(p) == verdict(o) or verdict(p) in ("missing", "gpu"):
        return ""
    said = {"differs": "不成立", "unresolved": "定不了"}.get(verdict(p), "成立")
    failed = [f.text for f in p.findings if f.ok is False and f.text]
    if failed and verdict(p) == "differs":  # why, where the table alone seems to say it holds
        why = TOLERANCE_WORDS.sub("", study_text(failed[0]))
        why = why.replace("未满足：", "要求：", 1)  # the rule that failed, never read as a fact
        if "离讲义" in why:  # a number off the lecture's: by how much (the value is in the table)
            why = "离讲义" + why.split("离讲义", 1)[1].removesuffix("：超出容差")
            why = why.replace("，容差 ", "，只允许差 ")  # the rule in the reader's words
        said += f"（{why}）"
    return f"本页表格里的{seed_words(p.seeds)} 上{said}；以记录的 {len(o.seeds)} 个种子为准。"


def pair_note(o, others: dict) -> str:
    """A lecture sentence judged by two claims (`pair`) that disagree: which part each judges,
    and which one decides."""
    other = others.get(o.entry.get("pair"))
    if other is None or agreement(other) == agreement(o):
        return ""
    section = exercise_words(other.entry["section"].split("/")[0].strip())
    first = f"{section} 演示 {_demo(other.entry)}"
    rated = [c for c in (o, other) if c.protocol is not None and c.detail]
    decides = ""
    if len(rated) == 1:  # the one judged seed by seed on the recorded seeds decides
        decides = f"；以{'本条' if rated[0] is o else '那一条'}为准（它按记录的种子逐个判定）"
    parts = "两条判的是这句话的不同部分"
    if "judges" in o.entry and "judges" in other.entry:
        parts = f"本条判的是{o.entry['judges']}，那一条判的是{other.entry['judges']}"
    return (
        f"讲义这句话另有一条在 {first}（{SYMBOL[verdict(other)]} {STUDY_LABEL[verdict(other)]}），"
        f"{parts}{decides}。"
    )


BEYOND_WORDS = {  # a claim beyond the lecture: ours to test, not the lecture's to lose
    "holds": "在我们这里成立（讲义没有测）",
    "differs": "在我们这里不成立（讲义只是提到，没有测）",
}
MORE_SEEDS = re.compile(r"再要约 (\d+) 个种子")


def seeds_that_would_decide(o) -> int | None:
    """An unresolved rate's "about k more seeds would decide" (reporting.rates), if it says one."""
    for finding in [*o.findings, *(o.detail or [])]:
        if found := MORE_SEEDS.search(finding.text or ""):
            return int(found.group(1))
    return None


def order_factor(entry: dict) -> float | None:
    """The factor of a claim's order-of-magnitude check (rulebook: untrained random-init
    values), if it has one: its takeaway says that only the order of magnitude is judged."""
    for step in entry.get("check", []):
        if isinstance(step, dict) and "order_of" in step:
            return float((step["order_of"] or {}).get("factor", 10.0))
    return None


def takeaway(o, others: dict | None = None) -> str:
    """One sentence a student reads: what the lecture says, its number and ours (which seeds,
    which statistic), whether our run supports it — which part, for a compound claim — and,
    where it does not, the likely reason (a `why` shown only while its check holds). Generated
    from the verdict and the numbers, never typed."""
    e, v = o.entry, verdict(o)
    beyond = e.get("class") == "beyond"  # the lecture states or names it, never measures it
    word = parts_word(o) or (BEYOND_WORDS.get(v) if beyond else None) or SUPPORTS[v]
    oks = [f.ok for f in o.findings]
    if not parts_word(o) and v == "differs" and True in oks and False in oks:
        said = "在我们这里不成立" if beyond else "不支持讲义"
        word = f"{said}（检查的 {len(oks)} 项里 {oks.count(True)} 项成立）"
    if v == "holds" and word == SUPPORTS[v] and (factor := order_factor(e)):
        word += f"（只比数量级：在讲义的 {factor:g} 倍以内）"  # a 73 % gap then reads as meant
    ours = study_ours(o)
    failed = [f.text for f in o.findings if f.ok is False]
    if v == "timing_fails" and failed and (not ours or ours.startswith("我们按")):  # our number
        ours = "我们：" + study_text(failed[0]).removeprefix("未满足：")
    lecture = chinese_part(str(e["lecture"])).removesuffix("。")  # "…exposure bias。，我们"
    numbers = f"讲义 {lecture}" + (f"，{ours}" if ours else "")
    claim = chinese_part(e["claim"])
    if e.get("flag") and e["flag"] not in claim:  # the reading it rests on, explained at the top
        claim += f"（{e['flag']}）"
    text = f"{claim}——{numbers}" + (f"：{word}" if word else "") + "。"
    if o.why and not agreement(o):
        text += f"可能的原因：{o.why}。"
    if v == "unresolved" and (more := seeds_that_would_decide(o)):
        text += f"再要约 {more} 个种子才能判断。"
    return text + protocol_note(o) + pair_note(o, others or {})


def claim_card(o, others: dict | None = None) -> str:
    e = o.entry
    esc = html.escape
    parts = [
        f'<div class="claim v-{study_verdict(o)}" id="{esc(e["id"])}">',
        f'<p class="take study">{study_badge(o)} {esc(takeaway(o, others))}</p>',
        f'<p class="head audit"><a class="cid" href="#{esc(e["id"])}">{esc(e["id"])}</a> · '
        f"@@SEC:{esc(e['section'])}@@ · {badge(o, True)}</p>",
        f'<p class="what audit">{esc(e["claim"])}</p>',
        f'<p class="says audit">{esc(sentence(o))}</p>',
    ]
    if visible_note(e):
        parts.append(f'<p class="note audit">注 note：{esc(visible_note(e))}</p>')
    details = [
        f"<li>{'✓' if f.ok else '✗' if f.ok is False else '?'} {esc(f.text)}</li>"
        for f in o.findings
    ]
    values = [f"<li>{esc(line)}</li>" for line in _value_lines(o)]
    extra = [f"类别 class：{e['class']}，{CLASSES[e['class']]}"]
    if e.get("note") and not visible_note(e):
        extra.append(f"{HAND_WRITTEN}：{e['note']}")
    parts.append('<details class="audit"><summary>检查 the check</summary>')
    if details:
        parts.append(f"<p>每一步 each step：</p><ul>{''.join(details)}</ul>")
    if values:
        parts.append(f"<p>用到的值 the values：</p><ul>{''.join(values)}</ul>")
    parts += [f"<p>{esc(t)}</p>" for t in extra]
    parts += ["</details>", "</div>"]
    return "\n".join(parts)


def claim_cards(outcomes, others: dict | None = None) -> str:
    cards = "\n".join(claim_card(o, others) for o in outcomes)
    return '<div class="claims">\n' + cards + "\n</div>"


def claim_ref(o, html_mode: bool) -> str:
    """A claim's id, as a link to its card in the page (@@CLAIM:…@@ resolved later)."""
    return f"@@CLAIM:{o.entry['id']}@@" if html_mode else o.entry["id"]


def section_ref(section: str, html_mode: bool) -> str:
    return f"@@SEC:{section}@@" if html_mode else section


# -----------------------------------------------------------------------------
# counts and lists


def summary_table(outcomes) -> str:
    """Claims per class (rows) and the page's status (columns), as the ledger's summary."""
    rows = list(ledger_mod.CLASSES)
    columns = []
    for status in ledger_mod.STATUS:  # the ledger's order, the lecture's errors after differs
        columns += [status, LECTURE_ERROR] if status == "differs" else [status]
    counts = pd.DataFrame(0, index=rows, columns=columns)
    for o in outcomes:
        counts.loc[o.entry["class"], verdict(o)] += 1
    counts = counts.loc[counts.sum(axis=1) > 0, counts.sum(axis=0) > 0]
    header = ["类别 class", *(f"{SYMBOL[s]} {LABELS[s]}" for s in counts.columns)]
    rows = [[cls, *(str(v) for v in row)] for cls, row in counts.iterrows()]
    return markdown_table(header, rows)


def problem_lists(outcomes, html_mode: bool) -> str:
    """Every claim that does not agree, grouped by why: not reproduced, the lecture's error …"""
    parts = []
    for status in NOT_AGREEING:
        chosen = [o for o in outcomes if verdict(o) == status]
        if not chosen:
            continue
        parts.append(f"**{SYMBOL[status]} {LABELS[status]}（{len(chosen)}）**")
        parts.append(
            "\n".join(
                f"- {claim_ref(o, html_mode)}（{section_ref(o.entry['section'], html_mode)}）"
                f"{o.entry['claim']}：{sentence(o)}"
                for o in chosen
            )
        )
    return "\n\n".join(parts)


def short_claim(claim: str) -> str:
    """A claim's Chinese part without its parentheses (how it is read, what we show): the
    overview's one clause per claim; the card keeps them."""
    text, previous = chinese_part(claim), None
    while text != previous:  # innermost first: "（判定：…（…）…）"
        previous, text = text, re.sub(r"（[^（）]*）", "", text)
    return text.strip()


EXERCISE_PREFIX = re.compile(r"^ 练习 \d+：")  # "练习 8：" after the link "练习 8" says it twice


def problems_short(outcomes) -> str:
    """The study reading's overview (HTML): per status that does not agree, how many and which
    — each by its section and what the lecture says, linked to its section."""
    parts = []
    beyond = [o for o in outcomes if o.entry["class"] == "beyond" and not agreement(o)]
    outcomes = [o for o in outcomes if o.entry["class"] != "beyond"]
    for status in (NOT_AGREEING[0], PARTLY, *NOT_AGREEING[1:]):
        chosen = [o for o in outcomes if study_verdict(o) == status]
        if chosen:
            items = "；".join(
                f"{section_ref(o.entry['section'], True)}"
                + EXERCISE_PREFIX.sub("：", " " + short_claim(o.entry["claim"]), count=1)
                for o in chosen
            )
            parts.append(f"- **{SUPPORTS[status]}（{len(chosen)} 条）**：{items}")
    if beyond:  # ours to test, not the lecture's to lose
        refs = "、".join(
            sorted({section_ref(o.entry["section"].split("/")[0].strip(), True) for o in beyond})
        )
        parts.append(
            f"- 讲义只提到、没有测的 {len(beyond)} 条（{refs}）"
            "在我们这里不成立或定不了，不算讲义的错"
        )
    return "\n".join(parts)


# a timing's verdict changes from run to run: outside the machine-dependent blocks it is named,
# not given (its card, inside such a block, gives it)
TIMING_BADGE = "⏱ 计时 timing（结论见它的节 verdict in its section）"


def section_list(outcomes, number: str, html_mode: bool) -> str:
    """§11 / §12: the claims whose section names it, each with its status and a link."""
    chosen = [
        o
        for o in outcomes
        if number in [p.strip().split(" ")[0] for p in o.entry["section"].split("/")]
    ]
    lines = []
    for o in chosen:
        status = TIMING_BADGE if o.entry["class"] == "timing" else badge(o, html_mode)
        if html_mode and o.entry["class"] != "timing":  # the study reading: the Chinese badge
            status = (
                f'<span class="study">{study_badge(o)}</span><span class="audit">{status}</span>'
            )

        claim = o.entry["claim"]
        if html_mode:  # the study reading: the Chinese part; the audit reading: all of it
            claim = (
                f'<span class="study">{html.escape(chinese_part(claim))}</span>'
                f'<span class="audit">{html.escape(claim)}</span>'
            )
        where = f"{claim_ref(o, html_mode)}（{section_ref(o.entry['section'], html_mode)}）"
        if html_mode:  # the study reading: the section it is judged in, no id
            first = o.entry["section"].split("/")[0].strip()
            where = f'<span class="audit">{where}</span>{section_ref(first, True)} '
        lines.append(f"- {where}{status} {claim}")
    return "\n".join(lines) or "*（没有数字 no claims）*"


POINT_WORDS = {  # how a point's counted numbers fare here, by the study verdict
    PARTLY: "部分成立",
    "differs": "不支持",
    LECTURE_ERROR: "是讲义自己的错",
    "unresolved": "还定不了",
    "missing": "没有构建",
    "gpu": "要 GPU 构建",
}


def in_sections(o, sections: list[str]) -> bool:
    """Whether a claim is stated in one of `sections` ("§6.6" or a whole "§9")."""
    parts = [p.strip().split(" ")[0] for p in o.entry["section"].split("/")]
    return any(p == s or p.startswith(s + ".") for p in parts for s in sections)


def point_sentence(outcomes, topic: str, sections: str, html_mode: bool) -> str:
    """One point of §11 (the summary) or §12 (a pitfall) as a sentence: its topic, the
    sections that check it, and how the counted numbers stated there fare in this build (by
    the study reading's verdict; the ones that do not hold named by their section). Timings
    are only pointed to: their verdicts change from run to run, and this text does not."""
    wanted = sections.split()
    chosen = [o for o in outcomes if in_sections(o, wanted)]
    counted = [o for o in chosen if o.entry["class"] in ledger_mod.COUNTED]
    timings = [o for o in chosen if o.entry["class"] == "timing"]
    where = "、".join(section_ref(s, html_mode) for s in wanted)
    head = f"{topic}（{where}）："
    said = []
    if not counted:
        said.append("讲义在这里没有给出可以重算的数字")
    else:
        verdicts = [study_verdict(o) for o in counted]
        agree = sum(v not in POINT_WORDS for v in verdicts)
        if agree == len(counted):
            said.append(f"这里算出的 {len(counted)} 个数字都支持讲义")
        else:
            said.append(f"这里算出的 {len(counted)} 个数字里 {agree} 个支持讲义")
            for v, word in POINT_WORDS.items():
                off = [o for o, w in zip(counted, verdicts, strict=True) if w == v]
                if off:
                    first = sorted({o.entry["section"].split("/")[0].strip() for o in off})
                    refs = "、".join(section_ref(s, html_mode) for s in first)
                    said.append(f"{len(off)} 个{word}（{refs}）")
    if timings:
        said.append(f"另有 {len(timings)} 个计时，结论因机器而异，见它们的节")
    return head + "，".join(said) + "。"


def point_list(outcomes, points, html_mode: bool) -> str:
    """§11 / §12 in sentences: one per point (topic, sections), as a Markdown list."""
    return "\n".join(f"- {point_sentence(outcomes, t, s, html_mode)}" for t, s in points)


def reading_note(outcomes, trained: bool, quoted: bool, html_mode: bool) -> tuple[str, str]:
    """The paragraph at the top of a section where some of ours do not agree with the lecture:
    how many agree, which do not and why, what kind of numbers they are. Returned in two parts:
    the claims that are the same in every build on a machine, and the timings (whose verdicts
    change from run to run, so they go in a machine-dependent block)."""
    stable = [o for o in outcomes if o.status != "cited" and o.entry["class"] != "timing"]
    timing = [o for o in outcomes if o.entry["class"] == "timing"]
    # the timings' part is written whenever there are timings, agreeing or not, so that a
    # report's text outside its machine-dependent blocks does not depend on this run's timings
    parts = [_reading(stable, html_mode), _reading(timing, html_mode, always=bool(timing))]
    extra = ""  # the same words in many sections: the audit reading's (HTML), in the Markdown
    if parts[0] and trained and any(o.entry["class"] == "seeded" for o in stable):
        extra += (
            "这里的数字是训练出来的，是一个样本 trained numbers are a sample：讲义的数字是作者那次"
            "运行的样本，我们的是另一次，所以按讲义说的趋势或界限来比 compared by the trend or "
            "bound the lecture states，不比逐位数字 not digit by digit。"
        )
    if parts[0] and quoted:
        extra += (
            "表里讲义引用过的格子旁边印着讲义的值 the lecture's values are printed beside ours。"
        )
    timing_extra = ""
    if parts[1]:
        timing_extra = (
            "计时因机器而异 timings are machine-dependent：讲义的计时来自作者的机器，"
            "“不成立（本机）”说的是这台机器、这一次运行 “does not hold here” is about this run。"
        )
    head = "读这一节 Reading this section"
    if html_mode:
        more = [
            f'<span class="audit">{html.escape(t)}</span>' if t else ""
            for t in (extra, timing_extra)
        ]
        return tuple(
            f'<p class="reading audit"><b>{head}</b>{_audit_spans(html.escape(p))}{more[i]}</p>'
            if p
            else ""
            for i, p in enumerate(parts)
        )
    parts[0] += extra if parts[0] else ""
    parts[1] += timing_extra if parts[1] else ""
    return tuple(f"**{head}**{p}" if p else "" for p in parts)


AUDIT_SPAN = "\x01%s\x02"  # text of the audit reading inside an escaped sentence


def _audit_spans(escaped: str) -> str:
    return escaped.replace("\x01", '<span class="audit">').replace("\x02", "</span>")


def _reading(outcomes, html_mode: bool, always: bool = False) -> str:
    off = [o for o in outcomes if verdict(o) in NOT_AGREEING]
    if not off and not always:
        return ""
    kind = "计时 timings" if outcomes[0].entry["class"] == "timing" else "数字"
    groups = []  # the page (HTML) counts as its badges show: a partly holding claim apart
    shown, order = (study_verdict, (NOT_AGREEING[0], PARTLY, *NOT_AGREEING[1:]))
    if not html_mode:
        shown, order = verdict, NOT_AGREEING
    for status in order:
        ids = [claim_ref(o, html_mode) for o in off if shown(o) == status]
        if ids:  # the ids: the audit reading's (HTML, spans put in by reading_note)
            listed = f"（{'、'.join(ids)}）"
            groups.append(
                f"{len(ids)} 个{LABELS[status]}" + (AUDIT_SPAN % listed if html_mode else listed)
            )
    echoes = [o for o in outcomes if verdict(o) == "echo"]  # shown back: never an agreement
    agree = f"{len(outcomes) - len(off) - len(echoes)} 个和讲义一致 agree"
    echo = [f"{len(echoes)} 个回显讲义自己的数 shown back"] if echoes else []
    return f"：这一节的 {len(outcomes)} 个{kind}里，" + "，".join([agree, *groups, *echo]) + "。"
