"""The figures of §9.2–§9.4, the reversal task: accuracy against the length (05.1) and the
output position (05.2), and the mean attention maps (05.3). Each drawing function is
registered by its @figure decorator (figure_base)."""

import math

from lecture17.pipeline.aggregate import select
from lecture17.reporting.figure_base import (
    MAX_WIDTH,
    PHONE_WIDTH,
    SIZE,
    _legend_below,
    _lines,
    _model_style,
    _phone,
    _series,
    _size,
    _t,
    cjk_font,
    figure,
)

CHANCE_05 = 0.1  # §9.1: 10 symbols, a guess is right 1 time in 10


@figure(
    "05.1_accuracy_by_length",
    demo="05.1",
    caption="整句（实线）和逐词（虚线，含 EOS）准确率随 L 的变化，误差棒是种子间的最小–最大。",
)
def accuracy_by_length(table, ax):
    """05.1 (§9.2): whole-sequence (solid) and per-token (dashed) accuracy against L."""
    fig = ax.figure
    phone = _size(fig, (6.4, 4.8), 5.4)
    sep = "，" if cjk_font() else ", "
    kinds = {
        "sequence_accuracy": ("o-", _t("整句", "whole sequence")),
        "token_accuracy": ("s--", _t("逐词（含 EOS）", "per token (with EOS)")),
    }
    for quantity, (style, kind) in kinds.items():
        for model, (x, mean, lo, hi) in _series(table, quantity, "seq_len", "model").items():
            name, colour = _model_style(model)
            ax.errorbar(
                x,
                mean,
                yerr=[mean - lo, hi - mean],
                fmt=style,
                color=colour,
                capsize=3,
                label=f"{name}{sep}{kind}",
            )
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(table["seq_len"].astype(int).unique()))
    ax.get_xaxis().set_major_formatter("{x:.0f}")
    ax.set_ylim(-0.03, 1.03)
    ax.set_xlabel(_t("序列长度 sequence length $L$", "sequence length $L$"))
    ax.set_ylabel(_t("准确率 accuracy（贪心解码 greedy）", "accuracy (greedy decoding)"))
    seeds = table["n_seeds"].max()
    head = _t("反转 reversal：整句 sequence 与逐词 token 准确率", "Reversal: accuracy vs $L$")
    tail = _t(
        f"{seeds} 个种子 seeds 的均值，误差棒 = 最小–最大", f"mean of {seeds} seeds, bars = min–max"
    )
    fig.suptitle(f"{head}\n{tail}")  # two lines at any width: one is wider than the figure
    _legend_below(fig, ax, ncols=1 if phone else 2)


@figure(
    "05.2_accuracy_by_position",
    demo="05.2",
    caption=(
        "每个输出位置 t（从 1 数起，复制输入的第 L + 1 − t 个词）的准确率，"
        "阴影是种子间的最小–最大。"
    ),
)
def accuracy_by_position(table, ax):
    """05.2 (§9.3): accuracy at each 1-based output position t, at the largest L of 05.1."""
    fig = ax.figure
    _size(fig, SIZE, 4.2)
    L = table["seq_len"].astype(int).max()
    curves = _series(table, "position_accuracy", "position", "model", where={"seq_len": L})
    for model, (x, mean, lo, hi) in curves.items():
        name, colour = _model_style(model)
        ax.plot(x, mean, "o-", ms=3, color=colour, label=name)
        ax.fill_between(x, lo, hi, color=colour, alpha=0.2)
    ax.axhline(
        CHANCE_05, color="grey", ls=":", label=_t("瞎猜 chance（10 个符号）", "chance (10 symbols)")
    )
    ax.set_ylim(-0.03, 1.03)
    ax.set_xlabel(
        _lines(
            fig,
            _t("输出位置 output position $t$", "output position $t$"),
            _t(f"复制输入的第 {L} + 1 − $t$ 个", f"copies input position {L} + 1 − $t$"),
        )
    )
    ax.set_ylabel(_t("准确率 accuracy", "accuracy"))
    seeds = table["n_seeds"].max()
    ax.set_title(
        _lines(
            fig,
            _t(f"错在哪里：$L$ = {L}", f"Where the errors are: $L$ = {L}"),
            _t(
                f"{seeds} 个种子 seeds 的均值，阴影 = 最小–最大",
                f"mean of {seeds} seeds, band = min–max",
            ),
        )
    )
    _legend_below(fig, ax, ncols=2)


def _attention_rows():
    """Row of 05.3's figure: (heading, x label, y label)."""
    return {
        "cross": (
            _t("编码器-解码器（交叉）注意力 cross-attention", "Encoder–decoder (cross) attention"),
            _t("源位置 source $j$", "source position $j$"),
            _t("输出步 output step $t$", "output step $t$"),
        ),
        "decoder": (
            _t("解码器自注意力 decoder self-attention", "Decoder self-attention"),
            _t("前缀位置 prefix（0 = BOS）", "prefix position (0 = BOS)"),
            _t("查询 query $t$", "query $t$"),
        ),
        "encoder": (
            _t("编码器自注意力 encoder self-attention", "Encoder self-attention"),
            _t("键位置 key", "key position"),
            _t("查询位置", "query position"),
        ),
    }


def _attention_panels(table):
    """{row: [(panel title, map)]} for 05.3: the cross-attention heads and the GRU's attention,
    the decoder's and the encoder's self-attention heads (rows that have no map are left out)."""
    maps = select(table, "map")
    rows = {"cross": [], "decoder": [], "encoder": []}
    head_word = _t("头", "head")
    for (model, block, head), group in maps.groupby(["model", "block", "head"], sort=False):
        group = group.assign(query=group["query"].astype(int), key=group["key"].astype(int))
        grid = group.pivot(index="query", columns="key", values="mean").sort_index()
        grid = grid.sort_index(axis=1).to_numpy()  # (n_queries, n_keys)
        if block.endswith("cross_attn"):
            title = f"{head_word} {head}" if model == "transformer" else _model_style(model)[0]
            rows["cross"].append((title, grid))
        elif block.startswith("decoder"):
            rows["decoder"].append((f"{head_word} {head}", grid))
        else:
            rows["encoder"].append((f"{head_word} {head}", grid))
    rows["cross"].sort(key=lambda p: not p[0].startswith(head_word))  # the Transformer's first
    if rows["cross"]:  # the English term once: on the first head's panel
        rows["cross"][0] = (
            _t(f"头 head {rows['cross'][0][0][2:]}", rows["cross"][0][0]),
            rows["cross"][0][1],
        )
    return {name: panels for name, panels in rows.items() if panels}


def _anti_diagonal(panel, n_keys: int):
    """§9.4's expectation on a cross-attention map: output step t reads source position
    L − 1 − t (its mirror), a dashed line over the map's cell centres."""
    panel.plot(
        [n_keys - 1, 0],
        [0, n_keys - 1],
        linestyle=(0, (3, 3)),
        linewidth=1.2,
        color="red",
        label=_t(
            "讲义预期的反对角线 anti-diagonal（镜像 $L-1-t$）",
            "the lecture's expectation: anti-diagonal $L-1-t$",
        ),
    )


@figure(
    "05.3_attention_maps",
    demo="05.3",
    caption=(
        "平均注意力权重。第一行：Transformer 的编码器-解码器注意力各头和 GRU + 注意力"
        "（红色虚线是讲义预期的反对角线 = 镜像位置）；"
        "第二行：解码器自注意力；第三行：编码器自注意力。"
    ),
)
def attention_maps(table, ax):
    """05.3 (§9.4): mean attention weights; the mirror position (the anti-diagonal) that the
    lecture expects is drawn dashed on the cross-attention maps. On a phone: 2 maps a row, one
    colour bar (every map is on 0–1) under the last row."""
    from matplotlib.ticker import MaxNLocator

    rows = _attention_panels(table)
    fig = ax.figure
    ax.remove()
    phone = _phone(fig)
    n_cols = 2 if phone else max(len(panels) for panels in rows.values())
    grid_rows = {name: math.ceil(len(panels) / n_cols) for name, panels in rows.items()}
    height = (1.75 if phone else 2.55) * sum(grid_rows.values()) + 0.55 * len(rows) + 1.4
    fig.set_size_inches(PHONE_WIDTH if phone else min(MAX_WIDTH, 1.75 * n_cols + 0.9), height)
    labels = _attention_rows()
    ratios = [grid_rows[n] + (0.9 if phone and n == list(rows)[-1] else 0.4) for n in rows]
    subfigs = fig.subfigures(len(rows), 1, squeeze=False, height_ratios=ratios).ravel()  # 1 row too
    for subfig, (name, panels) in zip(subfigs, rows.items(), strict=True):
        heading, x_label, y_label = labels[name]
        axes = subfig.subplots(grid_rows[name], n_cols, squeeze=False).ravel()
        for i, (panel, (title, grid)) in enumerate(zip(axes, panels, strict=False)):
            image = panel.imshow(grid, vmin=0, vmax=1, cmap="viridis", interpolation="nearest")
            if name == "cross":
                _anti_diagonal(panel, grid.shape[1])
            panel.set_title(title)
            panel.set_xlabel(x_label if i == 0 else "")
            panel.set_ylabel(y_label if i == 0 else "")
            panel.xaxis.set_major_locator(MaxNLocator(nbins=3, integer=True))
            panel.yaxis.set_major_locator(MaxNLocator(nbins=3, integer=True))
        for panel in axes[len(panels) :]:
            panel.axis("off")
        subfig.suptitle(heading)
        first = name == next(iter(rows))
        weight = _t("权重 weight", "weight") if first or phone else _t("权重", "weight")
        if not phone:
            subfig.colorbar(image, ax=axes[: len(panels)].tolist(), label=weight, shrink=0.85)
        elif name == list(rows)[-1]:
            subfig.colorbar(image, ax=axes.tolist(), label=weight, location="bottom", shrink=0.8)
    L = next(iter(rows.values()))[0][1].shape[1]
    fig.suptitle(
        _lines(
            fig,
            _t("平均注意力权重 attention weights", "Mean attention weights"),
            _t(f"反转 reversal，$L$ = {L}", f"reversal of $L$ = {L}"),
        )
    )
    if "cross" in rows:
        handles, texts = fig.axes[0].get_legend_handles_labels()
        _legend_below(fig, handles=handles, labels=texts, ncols=1)
