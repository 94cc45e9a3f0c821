"""The words on one claim: the study reading's takeaway (what the lecture says, our number with
its seeds and statistic, whether our run supports it and the likely reason where it does not)
and the claim's card in the page, its check folded away. Nothing here types a number.
"""

import html
import re

from lecture17.experiments import DEMOS
from lecture17.reporting import ledger as ledger_mod
from lecture17.reporting.claim_verdict import (
    ARITHMETIC,
    STUDY_LABEL,
    SUPPORTS,
    SYMBOL,
    _demo,
    agreement,
    badge,
    parts_word,
    sentence,
    study_badge,
    study_verdict,
    verdict,
    visible_note,
)
from lecture17.reporting.page import exercise_words
from lecture17.reporting.rates import fewest_to_hold
from lecture17.reporting.words import chinese_part, study_text

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
STAT = {  # the seed statistic a value of the card is, in its line
    "min": "种子中最小 lowest seed",
    "max": "种子中最大 highest seed",
    "std": "种子间标准差 std",
}
HAND_WRITTEN = (  # a note that is not about the lecture's text may describe another build
    "手写的说明，写于某一次构建，可能和这一次不符 "
    "a hand-written note, written about one build, may not match this one"
)


# -----------------------------------------------------------------------------
# the study reading's takeaway


RATE = re.compile(r"(\d+)/(\d+)（95%")


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
            need = fewest_to_hold(int(m.group(2)))  # the rule, in words: how many it takes
            rule = f"（要至少 {need} 个才算）" if need and not o.entry.get("evidence") else ""
            rate = f"记录的 {m.group(2)} 个种子里有 {m.group(1)} 个成立{rule}"
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


TOLERANCE_WORDS = re.compile(r"（半个末位[^）]*）")  # how a tolerance is made: the audit's


def protocol_note(o) -> str:
    """A claim decided on recorded seeds, under a table of the protocol seeds: the table's number
    where it differs from the card's; where the two disagree in verdict, which one to believe,
    and why."""
    p = o.protocol
    if p is None or verdict(p) in ("missing", "gpu"):
        return ""
    if verdict(p) == verdict(o):  # the table above shows the protocol seeds: their number too
        shown = p.ours and p.ours != o.ours and not p.ours.startswith("(")  # one number
        return f"本页表格是{seed_words(p.seeds)}：{p.ours}。" if shown else ""
    said = {"differs": "不成立", "unresolved": "定不了"}.get(verdict(p), "成立")
    failed = [f.text for f in p.findings if f.ok is False and f.text]
    if failed and verdict(p) == "differs":  # why, where the table alone seems to say it holds
        why = TOLERANCE_WORDS.sub("", study_text(failed[0]))
        why = why.replace("未满足：", "要求：", 1)  # the rule that failed, never read as a fact
        if "离讲义" in why:  # a number off the lecture's: by how much (the value is in the table)
            why = "离讲义" + why.split("离讲义", 1)[1].removesuffix("：超出容差")
            why = why.replace("，容差 ", "，只允许差 ")  # the rule in the reader's words
        said += f"（{why}）"
    shown = f"（{p.ours}）" if p.ours and not p.ours.startswith("(") else " "  # its number
    return f"本页表格里的{seed_words(p.seeds)}{shown}上{said}；以记录的 {len(o.seeds)} 个种子为准。"


def pair_note(o, others: dict) -> str:
    """A lecture sentence judged by two claims (`pair`): twins (one assertion) say, every time,
    which one decides and that the other is its evidence, not counted; two parts of a sentence
    that disagree say which part each judges, and which one decides."""
    other = others.get(o.entry.get("pair"))
    if other is None:
        return ""
    section = exercise_words(other.entry["section"].split("/")[0].strip())
    first = f"{section} 演示 {_demo(other.entry)}"
    if o.entry.get("evidence"):
        v = study_verdict(other)
        return (
            f"以 {first} 那一条为准（{SYMBOL[v]} {STUDY_LABEL[v]}"
            + ("，读法在跑实验前定下" if other.entry.get("preregistered") else "")
            + "）；本条只作佐证。"
        )
    if other.entry.get("evidence"):
        return f"{first} 另有一条换一种判法看同一句话，只作本条的佐证。"
    if agreement(other) == agreement(o):
        return ""
    parts = "两条判的是这句话的不同部分，各有各的结论"
    if "judges" in o.entry and "judges" in other.entry:
        parts = f"本条判的是{o.entry['judges']}，那一条判的是{other.entry['judges']}"
    return (
        f"讲义这句话另有一条在 {first}（{SYMBOL[verdict(other)]} {STUDY_LABEL[verdict(other)]}），"
        f"{parts}。"
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


# a claim's note on what our table shows ("（我们：t = 8、16、24、32）", "（我们显示…）"): the
# card's numbers say it in the study reading; the audit reading keeps the claim whole
SHOWN_NOTE = re.compile(r"（我们(?:：|显示)[^（）]*(?:（[^（）]*）[^（）]*)*）")


def study_claim(entry: dict) -> str:
    """The claim as the study reading says it: its Chinese part, less the note on what we show;
    an evidence twin's without its parentheses (its twin's card reads the sentence in full)."""
    text = SHOWN_NOTE.sub("", chinese_part(entry["claim"]))
    return without_parentheses(text) if entry.get("evidence") else text


def without_parentheses(text: str) -> str:
    """A text without its parenthesised parts, innermost first ("（判定：…（…）…）")."""
    previous = None
    while text != previous:
        previous, text = text, re.sub(r"（[^（）]*）", "", text)
    return text.strip()


def takeaway(o, others: dict | None = None) -> str:
    """One sentence a student reads: what the lecture says, its number and ours (which seeds,
    which statistic), whether our run supports it — which part, for a compound claim — and,
    where it does not, the likely reason (a `why` shown only while its check holds). Generated
    from the verdict and the numbers, never typed."""
    e, v = o.entry, verdict(o)
    beyond = e.get("class") == "beyond"  # the lecture states or names it, never measures it
    word = parts_word(o) or (BEYOND_WORDS.get(v) if beyond else None) or SUPPORTS[v]
    if study_verdict(o) == ARITHMETIC:  # the lecture computed it: it checks out, not counted
        word = SUPPORTS[ARITHMETIC]
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
    claim = study_claim(e)
    if e.get("flag") and e["flag"] not in claim:  # the reading it rests on, explained at the top
        claim += f"（{e['flag']}）"
    if e.get("evidence"):  # its twin's card carries the verdict: numbers and the pointer only
        return f"{claim}——{numbers}。" + pair_note(o, others or {})
    text = f"{claim}——{numbers}" + (f"：{word}" if word else "") + "。"
    if o.why and not agreement(o):
        text += f"可能的原因：{o.why}。"
    return text + protocol_note(o) + pair_note(o, others or {})


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
