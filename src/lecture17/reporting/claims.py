"""The report's verdicts in words: one sentence per claim, badges, counts and reading notes.

Every sentence is built from a ledger entry (its claim and the lecture's value, as printed) and
its evaluated Outcome (our value, the status, and each check step's Finding, whose text carries
the numbers). Nothing here types a number. A hand-written `note` is shown beside the sentence
only where it speaks about the lecture's text (the entry has a reading-aid `flag` or
`expect: differs`); any other note may describe the build it was written on (a trained
sample), so the page folds it into the claim's <details> and says so.

Statuses are the ledger's (ledger.STATUS), plus one the page tells apart: `lecture_error`, a
claim that differs where the ledger expects it to, because the lecture itself is wrong.

The wording of one claim lives beside: its verdict, badges and sentence in
reporting.claim_verdict, its takeaway and card in reporting.claim_words; this module holds the
counts and lists over many claims. Every name stays importable from here.
"""

import html
import re

import pandas as pd

from lecture17.reporting import ledger as ledger_mod
from lecture17.reporting.claim_verdict import (  # noqa: F401 - the page's names, kept here
    ARITHMETIC,
    EVIDENCE,
    LABELS,
    LECTURE_ERROR,
    NOT_AGREEING,
    PARTLY,
    STUDY_LABEL,
    SUPPORTS,
    SYMBOL,
    VERDICT,
    _demo,
    agreement,
    badge,
    claim_ref,
    is_rate,
    parts_word,
    section_ref,
    sentence,
    study_badge,
    study_verdict,
    verdict,
    visible_note,
    why,
)
from lecture17.reporting.claim_words import (  # noqa: F401 - the page's names, kept here
    BEYOND_WORDS,
    CLASSES,
    COUNTED_RATE,
    ENGLISH_AFTER,
    HAND_WRITTEN,
    MORE_SEEDS,
    RATE,
    RECORDED_RATE,
    STAT,
    STUDY_STAT,
    TOLERANCE_WORDS,
    claim_card,
    claim_cards,
    order_factor,
    pair_note,
    protocol_note,
    scope,
    seed_words,
    seeds_that_would_decide,
    study_ours,
    takeaway,
    without_parentheses,
)
from lecture17.reporting.views import markdown_table
from lecture17.reporting.words import CJK, chinese_part, study_text  # noqa: F401 - used here too

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
    return without_parentheses(chinese_part(claim))


EXERCISE_PREFIX = re.compile(r"^ 练习 \d+：")  # "练习 8：" after the link "练习 8" says it twice


def overview_sentences(outcomes) -> str:
    """The overview's three plain sentences, over the lecture's own results (ledger.counts: one
    verdict per assertion, the lecture's arithmetic and the evidence twins left out): how many
    hold; where those that do not come from (training or not); what an undecided one means."""
    from lecture17.experiments import DEMOS

    own = [o for o in outcomes if ledger_mod.counts(o.entry)]
    by = {v: [o for o in own if study_verdict(o) == v] for v in ("differs", PARTLY, "unresolved")}
    held = sum(o.status in ledger_mod.REPRODUCED for o in own)
    unbuilt = sum(study_verdict(o) in ("missing", "gpu") for o in own)

    def read(entry) -> set:  # the demos a claim reads: its own, its values', its recorded
        named = ledger_mod.selectors(entry) if ledger_mod._has_values(entry) else {}
        return {_demo(entry), *(str(s["demo"]) for s in named.values() if "demo" in s)} | set(
            entry.get("decide", {}).get("recorded", [])
        )

    kinds = ("training", "recorded")
    trained = [
        o
        for o in by["differs"]
        if any(getattr(DEMOS.get(d), "kind", "") in kinds for d in read(o.entry))
    ]
    first = (
        f"只数讲义自己的结果、一句话一个结论：{len(own)} 条里我们的运行支持 {held} 条，"
        f"部分支持 {len(by[PARTLY])} 条，不支持 {len(by['differs'])} 条，"
        f"还定不了 {len(by['unresolved'])} 条"
        + (f"，{unbuilt} 条本次没有构建。" if unbuilt else "。")
    )
    second = (
        f"不支持的 {len(by['differs'])} 条里 {len(trained)} 条是训练出来的数字"
        f"（另 {len(by['differs']) - len(trained)} 条不训练）；原因写在各自的卡片上。"
        if by["differs"]
        else "没有不支持讲义的结论。"
    )
    third = "“还定不了”是我们的数据给不出明确的结论，不是讲义错了；卡片上写着缺什么。"
    return first + second + (third if by["unresolved"] else "")


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
    counted = [o for o in chosen if ledger_mod.counts(o.entry)]
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
