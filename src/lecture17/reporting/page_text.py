"""The page's running text, rewritten for a student: formulas and the lecture's symbols as
MathML, demo ids under the lecture's names, English glosses shown once.

Formulas (`$…$`) are stashed before Markdown runs and come back as MathML after it
(latex2mathml, at build time). The other steps change the text between the HTML's tags only
(code, formulas and attributes untouched): the lecture's symbols written in ASCII (d_k, √d_k)
become MathML, "05.1" becomes "代码 05 演示 1", and an English gloss after Chinese text is shown
the first time the study reading shows it and wrapped in <span class="en"> after that.
reporting.page runs them in its order.
"""

import re

from latex2mathml.converter import convert as latex_to_mathml

# -----------------------------------------------------------------------------
# formulas: $…$ in the Markdown, and a few of the lecture's symbols written in ASCII

MATH = re.compile(r"(`[^`\n]*`)|\$([^$\n]+?)\$")  # a code span is skipped, not a formula
MATH_TOKEN = "@@MATH{}@@"

# ASCII spellings of the lecture's symbols in labels and ledger claims -> LaTeX (longest first)
SYMBOLS = {
    "‖∂y₆₃/∂x_j‖_F": r"{\lVert \partial y_{63}/\partial x_j\rVert}_F",
    "‖∂out_t/∂in_s‖": r"\lVert \partial \mathrm{out}_t/\partial \mathrm{in}_s\rVert",
    "h_t^T W_a h_s": r"h_t^\top W_a h_s",
    "h_t^T h_s": r"h_t^\top h_s",
    "O(log_k n)": r"O(\log_k n)",
    "e^30": "e^{30}",
    "e^−1e9": r"e^{-10^9}",
    "10^13": "10^{13}",
    "W_i^Q": "W_i^Q",
    "M_10": "M_{10}",
    "M_3": "M_3",
    "M_7": "M_7",
    "R_L": "R_L",
    "1/√d_k": r"1/\sqrt{d_k}",
    "√d_model": r"\sqrt{d_{\text{model}}}",
    "√d_k": r"\sqrt{d_k}",
    "‖J‖_F": r"{\lVert J\rVert}_F",  # the bars as a group: fences, no operator spacing
    "d_model": r"d_{\text{model}}",
    "d_ff": r"d_{\text{ff}}",
    "d_k": "d_k",
    "d_v": "d_v",
    "W^Q": "W^Q",
    "W^K": "W^K",
    "W^V": "W^V",
    "W^O": "W^O",
    "M_k": "M_k",
}
SYMBOL = re.compile(
    r"(?<![\w.])(" + "|".join(re.escape(s) for s in SYMBOLS) + r")(?![\w(])", re.ASCII
)
RAW_TEXT = ("code", "pre", "math", "script", "style", "title")  # left as they are


def mathml(latex: str) -> str:
    return latex_to_mathml(latex)


def stash_math(md_text: str) -> tuple[str, list[str]]:
    """Replace each `$…$` by a token Markdown leaves alone; return the text and the MathML."""
    formulas = []

    def replace(match):
        if match.group(1):
            return match.group(1)
        formulas.append(mathml(match.group(2)))
        return MATH_TOKEN.format(len(formulas) - 1)

    return MATH.sub(replace, md_text), formulas


def restore_math(html_text: str, formulas: list[str]) -> str:
    return re.sub(r"@@MATH(\d+)@@", lambda m: formulas[int(m.group(1))], html_text)


def _text_segments(html_text: str, fn) -> str:
    """Apply fn to the text between tags, except inside RAW_TEXT elements and attributes."""
    out, raw = [], 0
    for part in re.split(r"(<[^>]+>)", html_text):
        if part.startswith("<"):
            name = re.match(r"</?\s*([a-zA-Z0-9]+)", part)
            if name and name.group(1).lower() in RAW_TEXT and not part.endswith("/>"):
                raw += -1 if part.startswith("</") else 1
            out.append(part)
        else:
            out.append(part if raw > 0 else fn(part))
    return "".join(out)


def symbols(html_text: str) -> str:
    """d_k, √d_k, ‖J‖_F … in running text as MathML (code, formulas and attributes untouched)."""
    rendered = {s: mathml(latex) for s, latex in SYMBOLS.items()}
    return _text_segments(html_text, lambda text: SYMBOL.sub(lambda m: rendered[m[1]], text))


# -----------------------------------------------------------------------------
# one name per demo for a student: the lecture's "代码 05 演示 1" (its scripts 01-05), and the
# same form for the demos this code adds (06 beyond the lecture, 07-09 recorded seeds, 13 the
# exercises' inputs); the registry's "05.1" stays in code, paths and the Markdown a diff reads

DEMO_ID = re.compile(
    r"(?:演示 (?:demo )?|demo )?(?<![\w.§/-])(0[1-9])\.(\d)(?![\w.])"
    r"|(?:演示 (?:demo )?|demo |config )(13)\.(\d)(?![\w.])",
    re.ASCII,
)


def demo_name(demo_id: str) -> str:
    """ "05.1" -> "代码 05 演示 1"."""
    script, k = demo_id.split(".")
    return f"代码 {script} 演示 {k}"


def demo_names(html_text: str) -> str:
    """Every demo id in running text ("演示 06.2", "05.1 的读法", "config 13.1") as the
    lecture names its demos: "代码 06 演示 2" (code, formulas and attributes untouched)."""

    def name(m: re.Match) -> str:
        script, k = (m[1], m[2]) if m[1] else (m[3], m[4])
        return demo_name(f"{script}.{k}")

    return _text_segments(html_text, lambda text: DEMO_ID.sub(name, text))


# -----------------------------------------------------------------------------
# English once: the views, labels and headings say most things twice ("最快步数 fastest", "§4.4
# “查字典”实验 The look-up task"); the study reading shows an English gloss where it first
# appears and hides it after (<span class="en">; the audit reading and the Markdown keep all)

GLOSS = re.compile(
    r"(?<=[\u3400-\u9fff）”]) ([A-Za-z][A-Za-z '’\-/,.:()&?!…]*?)(?=\s*(?:[（），；：。、]|$))"
)
# English that is the term itself, not a translation of the Chinese before it: kept wherever
# it appears (a model, an optimizer, a proper name, a word the lecture leaves in English)
TERMS = frozenset(
    "GRU KV Transformer RNN Adam SGD LayerNorm BatchNorm RoPE ALiBi EOS BOS PyTorch numpy "
    "Post-LN Pre-LN FFN softmax beam Luong FlashAttention Jane Marie visite l'Afrique l’Afrique "
    "septembre en Press Vaswani Xiong warmup argmax seq2seq masked_fill SDPA MKL CPU GPU float32 "
    "float64 exp ln ReLU tanh logit cuDNN BERT GPT ViT dtype nan exposure input teacher "
    "padding look-ahead query key value hook".split()
)
HIDING = ("audit", "spread", "en")  # classes whose text the study reading does not show
# A gloss of this many words is a translation of the Chinese before it ("Query and output of
# l'Afrique"), not a term: the study reading hides it from its first showing
TRANSLATION_WORDS = 4


def _is_gloss(run: str) -> bool:
    words = re.findall(r"[A-Za-z][\w'’\-.]*", run)
    return not (
        any(w.strip(".") in TERMS or "." in w.strip(".") or len(w) == 1 for w in words)
        or len(words) < 2  # one word may be the term itself ("不同 batch"): never hidden
        or run.count("(") != run.count(")")
    )


def english_once(html_text: str) -> str:
    """Every English gloss after Chinese text is shown once in the study reading (the first
    time it is visible there) and wrapped in <span class="en"> after that; a translation of
    TRANSLATION_WORDS words or more is wrapped from the first (the audit reading shows it)."""
    seen, out, stack = set(), [], []  # stack: (tag, hides) of the open elements

    def gloss(match: re.Match) -> str:
        run = match[1].rstrip()
        if not _is_gloss(run):
            return match[0]
        if any(hides for _, hides in stack):  # the audit reading's: never the first showing
            return match[0]
        long = len(re.findall(r"[A-Za-z][\w'’\-.]*", run)) >= TRANSLATION_WORDS
        if run.lower() not in seen and not long:
            seen.add(run.lower())
            return match[0]
        return f'<span class="en"> {run}</span>' + match[0][len(run) + 1 :]  # its space too

    for part in re.split(r"(<[^>]+>)", html_text):
        tag = re.match(r"<\s*(/?)\s*([a-zA-Z0-9]+)([^>]*)>", part) if part.startswith("<") else None
        if tag:
            closing, name, attrs = tag[1], tag[2].lower(), tag[3]
            if closing:
                while stack and stack.pop()[0] != name:
                    pass
            elif not attrs.rstrip().endswith("/") and name not in VOID:
                classes = re.search(r'class="([^"]*)"', attrs)
                hides = name in ("details", "nav") or bool(
                    classes and set(classes[1].split()) & set(HIDING)
                )
                stack.append((name, hides))
            out.append(part)
        elif any(name in RAW_TEXT for name, _ in stack):
            out.append(part)
        else:
            out.append(GLOSS.sub(gloss, part))
    return "".join(out)


VOID = ("br", "img", "hr", "input", "meta", "link", "source", "col", "wbr")
