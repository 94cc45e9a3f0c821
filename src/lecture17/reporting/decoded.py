"""§9's reversal one sequence at a time (demo 05.5): the decoded example that opens §9's
results, and the per-example cross-attention the explorer shows.

    tokens(table, "transformer", 32, 0)          # {"source": [...], "target": [...], ...}
    example_block(table, 32, 0, html_mode=True)   # the source, the target, each model's output
    attention(table, 16, [0, 1, 2])               # the explorer's data, one entry per example

Token names come from the table's own `token_id` rows (the symbols "0".."9", PAD, BOS, EOS). The
example is chosen by a fixed rule (the config's first test sequence), never by what it shows.
Greedy tokens are argmaxes: at a near-tie another CPU may pick the other token, so the block
sits where a diff of two reports does not look (template_api.machine_dependent).
"""

import html

import numpy as np

from lecture17.pipeline.aggregate import select
from lecture17.reporting import explorer as explorer_mod

MODELS = {  # the order the block shows them: the lecture's winner first
    "transformer": "Transformer",
    "gru_attention": "GRU + 注意力",
    "gru": "GRU（无注意力）",
}
GROUP = 8  # tokens per group: a phone wraps a row between groups, never inside one


def names(table) -> dict[int, str]:
    """token id -> its name, from the table's vocabulary rows."""
    vocab = select(table, "token_id")
    if vocab.empty:
        raise ValueError("05.5's table has no token_id rows (its vocabulary)")
    return {int(r["mean"]): str(r["token"]) for _, r in vocab.iterrows()}


def tokens(table, model: str, seq_len: int, example: int) -> dict[str, list[str]]:
    """The source, target and output of one example, as token names."""
    vocab = names(table)
    found = {}
    for quantity in ("source", "target", "output"):
        rows = select(table, quantity, model=model, seq_len=seq_len, example=example)
        if rows.empty:
            raise ValueError(f"05.5: no {quantity} of {model} at L = {seq_len}, example {example}")
        ordered = rows.assign(p=rows["position"].astype(int)).sort_values("p")
        found[quantity] = [vocab.get(round(v), f"#{round(v)}") for v in ordered["mean"]]
    return found


def errors(output: list[str], target: list[str]) -> list[int]:
    """0-based positions where the output is not the target."""
    return [p for p, (o, t) in enumerate(zip(output, target, strict=True)) if o != t]


def _row(seq: list[str], wrong: set, target: list[str], html_mode: bool) -> str:
    """One row of tokens in groups of GROUP: the one-digit symbols side by side ("4891"), a
    longer name (EOS) set apart by a space; wrong tokens bold (HTML: each with its target;
    Markdown: one ** … ** per run of them, which every Markdown reads alike)."""
    groups = []
    for start in range(0, len(seq), GROUP):
        parts = []  # (text, wrong) per token
        for p in range(start, min(start + GROUP, len(seq))):
            shown = html.escape(seq[p]) if html_mode else seq[p]
            apart = parts and (len(seq[p]) > 1 or len(seq[p - 1]) > 1)
            if p in wrong and html_mode:
                expected = html.escape(target[p])
                shown = f'<b class="wrong" title="应为 {expected}">{shown}</b>'
            parts.append((" " + shown if apart else shown, p in wrong))
        groups.append(_marked(parts, html_mode))
    if html_mode:
        return "".join(f'<span class="group">{g}</span>' for g in groups)
    return " · ".join(groups)


def _marked(parts: list, html_mode: bool) -> str:
    """A group's text: in Markdown, each run of wrong tokens inside one pair of ** (a space
    that sets a token apart stays outside it)."""
    if html_mode:
        return "".join(text for text, _ in parts)
    out, run = "", ""
    for text, wrong in [*parts, ("", False)]:
        if wrong:
            run += text
            continue
        if run:
            lead = " " if run.startswith(" ") else ""
            out += f"{lead}**{run.strip()}**"
            run = ""
        out += text
    return out


def _first_right(k: int) -> str:
    """What the first error says: the outputs before it copy the last source tokens read."""
    if k == 0:
        return "从第 1 个就错"
    return f"只有开头 {k} 个连着对（源序列最后读进去的 {k} 个词）"


def shown_models(table, seq_len: int) -> list[str]:
    """The models whose outputs the table has at this L, in MODELS' order."""
    models = [m for m in MODELS if not select(table, "output", model=m, seq_len=seq_len).empty]
    if not models:
        raise ValueError(f"05.5 has no model's output at L = {seq_len}")
    return models


def example_block(table, seq_len: int, example: int, html_mode: bool) -> str:
    """The table of one example (source, target, each model's output, wrong tokens marked) and
    the line that says what to notice, computed from it."""
    rows, said = [], []
    models = shown_models(table, seq_len)
    first = tokens(table, models[0], seq_len, example)
    rows.append(("源序列 source", _row(first["source"], set(), first["source"], html_mode)))
    rows.append(("目标（倒序 + EOS）", _row(first["target"], set(), [], html_mode)))
    right = []
    for model in models:
        seen = tokens(table, model, seq_len, example)
        wrong = errors(seen["output"], seen["target"])
        rows.append((MODELS[model], _row(seen["output"], set(wrong), seen["target"], html_mode)))
        if wrong:
            said.append(f"{MODELS[model]}错 {len(wrong)} 个，{_first_right(wrong[0])}")
        else:
            right.append(MODELS[model])
    if right:
        said.insert(0, f"{'、'.join(right)} {len(first['target'])} 个输出全对")
    line = "；".join(said)
    if html_mode:
        body = "".join(f"<tr><th>{html.escape(h)}</th><td>{r}</td></tr>" for h, r in rows)
        return (
            f'<div class="decoded"><table>{body}</table></div>\n\n'
            f'<p class="notice"><b>注意看</b> {html.escape(line)}</p>'
        )
    body = "\n".join(f"| {h} | {r} |" for h, r in rows)
    return f"| | 第 {example + 1} 条测试序列 |\n|---|---|\n{body}\n\n*注意看*：{line}"


def attention(table, seq_len: int, examples: list[int], model: str = "transformer") -> list:
    """The explorer's data for the model's cross-attention while it decoded each example: per
    example, queries (output steps, "t：the token decoded"), keys (the source tokens, in
    order: position j is the j-th bar) and weights [head][query][key]."""
    out = []
    for i in examples:
        seen = tokens(table, model, seq_len, i)
        rows = select(table, "weight", model=model, seq_len=seq_len, example=i)
        if rows.empty:
            raise ValueError(f"05.5: no attention weights of {model} at L = {seq_len}, example {i}")
        heads = sorted({(str(b), int(h)) for b, h in zip(rows["block"], rows["head"], strict=True)})
        grid = np.full((len(heads), len(seen["output"]), seq_len), np.nan)
        for r in rows.itertuples(index=False):
            grid[heads.index((str(r.block), int(r.head))), int(r.query), int(r.key)] = r.mean
        if np.isnan(grid).any():
            raise ValueError(f"05.5: example {i}'s weights are not a full query × key grid")
        layers = sorted({b for b, _ in heads})
        out.append(
            {
                "label": f"第 {i + 1} 条",
                "queries": [f"{t}：{o}" for t, o in enumerate(seen["output"])],
                "keys": seen["source"],  # in source order, j = 0 first
                "marks": explorer_mod.mirror_marks(len(seen["output"]), seq_len),
                "heads": [
                    f"层 {layers.index(b) + 1} · {h}" if len(layers) > 1 else str(h)
                    for b, h in heads
                ],
                "weights": np.round(grid, explorer_mod.DIGITS).tolist(),
            }
        )
    return out


def example_section(table, example: int, seeds: str, html_mode: bool) -> str:
    """The caption and example_block at the longest L the table has (§9.2: where the models
    part)."""
    seq_len = max(int(v) for v in table["seq_len"].dropna())
    n = len(shown_models(table, seq_len))
    caption = (
        f"先看一个例子：测试集的第 {example + 1} 条序列（L = {seq_len}），交给下表里"
        f"{seeds} 的 {n} 个模型逐步生成，标出的是错的词（每 8 个一组只为好读）。"
        "两个词概率几乎一样时，换一台 CPU 可能生成另一个：这个例子只作示意，不参与核对。"
    )
    return f"{caption}\n\n{example_block(table, seq_len, example, html_mode)}"


def explorer_block(table, title: str, anchor: str, wanted: int | None) -> str:
    """The explorer over every test sequence the table has weights for: the Transformer's
    cross-attention while it decoded each, per head, at L = `wanted` (05.3's, §9.4's model)
    where the table has it, else the shortest L that has weights; "" where none has."""
    rows = select(table, "weight", model="transformer")
    lengths = {int(v) for v in rows["seq_len"]}
    if not lengths:  # attention_lengths outside the grid (exercise 8 runs L = 32 alone)
        return ""
    seq_len = wanted if wanted in lengths else min(lengths)
    examples = sorted({int(v) for v in rows["example"]})
    data = attention(table, seq_len, examples)
    return explorer_mod.explorer(data, f"L = {seq_len}：{title}", anchor)
