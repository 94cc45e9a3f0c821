"""Words of the page: a ledger text's Chinese part, and a check's sentence without its
English glosses. Below the ledger and the claims, which both word what they show with them."""

import re

CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")


def chinese_part(claim: str) -> str:
    """A ledger claim is "中文 English": the Chinese part, without the English tail (a tail
    after the last CJK character that holds at least two English words). Kept whole when the
    cut would leave a phrase hanging on a particle ("l'Afrique 的", "k = 0 时") or inside a
    formula or a bracket ("√(d/2)", "< 120 s")."""
    last = max((m.end() for m in CJK.finditer(claim)), default=0)
    if not last:  # no Chinese at all: nothing to keep apart
        return claim
    tail = claim[last:]
    if len(re.findall(r"[A-Za-z]{2,}", tail)) < 2:
        return claim
    start = re.search(r"(?<![\w⟨(√])[A-Za-z]", tail)  # "√d_model" is a formula, not English
    if start is None:
        return claim
    cut = tail[: start.start()]
    if cut.count("(") != cut.count(")") or cut.count("（") != cut.count("）"):
        return claim
    head = (claim[:last] + cut).rstrip(" ，,")
    return claim if head.endswith(DANGLING) else head


DANGLING = ("的", "时", "在", "和", "与", "对", "是", "：", "；")  # "；": a list cut short


GLOSS = re.compile(
    r"(?<=[\u3400-\u9fff）]) (?:not met|[a-z][a-z\-]*(?: [a-z][a-z\-]*)*)(?=[\s（(）)：:，,；]|$)"
)


def study_text(text: str) -> str:
    """A check's sentence in the study reading: the English gloss after each Chinese word left
    out ("不都在 not every value in [1, 30] 之间" -> "不都在 [1, 30] 之间"); a gloss before a
    closing bracket goes whole ("（无注意力 no attention）" -> "（无注意力）")."""
    text = re.sub(r" (?:not every value in|not every|beyond|within) ", " ", text)
    return GLOSS.sub("", text)
