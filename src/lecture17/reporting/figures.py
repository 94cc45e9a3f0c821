"""The report's figures, one function per figure, each drawn from one seed-averaged table.

    python -m lecture17.reporting.figures 03.1_pe_heatmap results/tables/03.1.csv \
        --out report/figures/03.1_pe_heatmap.png

Titles are built from the same table as the data. Labels inside the figures are plain English
words and matplotlib's mathtext ($d_k$, $\\beta$): the pinned set-up (requirements.txt) has no
CJK font, and a system font would make the PNG's bytes depend on the machine; the report's
numbered captions (图 4.3 Figure 4.3) carry the Chinese. Each figure is drawn at the size the
HTML report shows it (1 inch = 96 CSS pixels, at most 9 inches wide), with no text under 9 pt,
legends outside the axes, and saved as a 150 dpi PNG without timestamps or software metadata,
so two builds give the same bytes.

Long on purpose: a catalogue, one independent drawing function per figure, registered by its
decorator.
"""

import argparse
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lecture17.experiments import DEMOS
from lecture17.pipeline.aggregate import read_tables, select

DPI = 150  # the PNG's resolution; the report shows each figure at 96 CSS px per inch
FONT_PT = 10  # every label, tick and legend; no text under MIN_FONT_PT at display size
MIN_FONT_PT = 9
SIZE = (6.4, 4.0)  # inches, the default figure; wider ones set their own
MAX_WIDTH = 9.0  # inches: the report's text column is 60 rem = 960 CSS px = 10 in

STYLE = {
    "font.size": FONT_PT,
    "axes.titlesize": FONT_PT + 1,
    "axes.labelsize": FONT_PT,
    "xtick.labelsize": MIN_FONT_PT,
    "ytick.labelsize": MIN_FONT_PT,
    "legend.fontsize": MIN_FONT_PT,
    "figure.titlesize": FONT_PT + 1,
    "svg.hashsalt": "lecture17",  # fixed ids, should a figure ever be saved as SVG
}


# --- the registry: each figure registered once, by the decorator on its drawing function -----


@dataclass(frozen=True)
class Figure:
    name: str  # report/figures/<name>.png
    demo: str  # the demo it belongs to (experiments.DEMOS): shown with it, numbered by its §
    caption: str  # what the report prints under it (the figure itself is labelled in English)
    draw: Callable

    @property
    def table(self) -> str:
        """The seed-averaged table it is drawn from: its demo's, or the one its demo reads."""
        return DEMOS[self.demo].reads or self.demo

    @property
    def section(self) -> str:
        """Its demo's lecture section: the report numbers it by it (图 4.3 Figure 4.3)."""
        return DEMOS[self.demo].section.lstrip("§")


FIGURES: dict[str, Figure] = {}


def figure(name: str, *, demo: str, caption: str):
    """Register the decorated function as the figure `name` of the registered demo `demo`."""

    def register(draw):
        if name in FIGURES:
            raise ValueError(f"figure {name!r} is registered twice")
        if demo not in DEMOS:
            raise ValueError(f"figure {name!r}: demo {demo!r} is not registered")
        FIGURES[name] = Figure(name, demo, caption, draw)
        return draw

    return register


def caption(name: str) -> str:
    return FIGURES[name].caption


def _legend_below(fig, ax=None, ncols=2, handles=None, labels=None):
    """A legend under the axes (constrained layout makes room), so it covers no data."""
    if handles is None:
        handles, labels = (ax or fig.axes[0]).get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=ncols, frameon=False)


def _legend_right(fig, handles, labels):
    fig.legend(handles, labels, loc="outside right upper", frameon=False)


def _pivot(table, quantity, index, columns):
    rows = select(table, quantity)
    grid = rows.pivot(index=index, columns=columns, values="mean")
    grid.index = grid.index.astype(float)
    grid.columns = grid.columns.astype(float)
    return grid.sort_index().sort_index(axis=1)


@figure(
    "03.1_pe_heatmap",
    demo="03.1",
    caption=(
        "正弦位置编码的热图。左边高频的维度变化很快，右边低频的维度几乎不变。"
        "Sinusoidal PE: fast dimensions on the left, slow ones on the right."
    ),
)
def pe_heatmap(table, ax):
    """03.1 (§6.2): rows = positions, columns = dimensions; fast columns left, slow ones right."""
    grid = _pivot(table, "pe", "pos", "dim")
    image = ax.imshow(
        grid.to_numpy(), aspect="auto", cmap="RdBu_r", vmin=-1, vmax=1, interpolation="nearest"
    )
    ax.set_xlabel("dimension")
    ax.set_ylabel("position")
    ax.set_title(f"Sinusoidal PE ($d_{{model}}$ = {grid.shape[1]}, {grid.shape[0]} positions)")
    ax.figure.colorbar(image, ax=ax, label="PE value")


def _series(table, quantity, x, by, where=None):
    """{label of `by`: (x values, mean, min, max)} for one quantity, x sorted numerically."""
    rows = select(table, quantity, **(where or {}))
    out = {}
    for key, group in rows.groupby(by, sort=False):
        group = group.assign(_x=group[x].astype(float)).sort_values("_x")
        out[key] = (group["_x"], group["mean"], group["min"], group["max"])
    return out


SENSITIVITY_NAMES = {"rnn": "RNN", "attention": "self-attention"}


@figure(
    "01.4_sensitivity",
    demo="01.4",
    caption=(
        "最后一个输出对第 j 个输入的敏感度（对数坐标）。"
        "RNN 随距离按指数衰减，自注意力和距离无关。"
        "The last output's sensitivity to input j: the RNN's decays exponentially with the "
        "distance, self-attention's does not."
    ),
)
def sensitivity_by_distance(table, ax):
    """01.4 (§1.2): ‖∂y_last/∂x_j‖ against distance, log scale; RNN decays, attention does not."""
    series = _series(table, "sensitivity", "distance", "model")
    for model, (x, mean, lo, hi) in series.items():
        ax.semilogy(x, mean, label=SENSITIVITY_NAMES.get(model, model))
        ax.fill_between(x, lo, hi, alpha=0.2)
    last = int(max(x.max() for x, *_ in series.values()))
    ax.set_xlabel(f"distance from the last position ({last} = the first word)")
    ax.set_ylabel(rf"$\Vert\partial y_{{{last}}}/\partial x_j\Vert_F$")
    ax.set_title("Path length: how much the last output depends on input $j$")
    _legend_below(ax.figure, ax, ncols=2)


@figure(
    "02.2_saturation",
    demo="02.2",
    caption=(
        "不缩放时，d_k 越大，softmax 饱和（最大权重 > 0.99）的比例越高、"
        "雅可比范数越小；缩放后两者都不随 d_k 变。"
        "Unscaled, more rows saturate and the Jacobian shrinks as d_k grows; scaled, neither "
        "changes."
    ),
)
def saturation_by_dk(table, ax):
    """02.2 (§4.3): share of saturated softmax rows and the Jacobian norm against d_k."""
    twin = ax.twinx()
    fractions = _series(table, "fraction_saturated", "d_k", "scaled")
    for scaled, (x, mean, _, _) in fractions.items():
        ax.semilogx(x, mean, "o-", base=2, label=f"share of rows with max weight > 0.99, {scaled}")
    for scaled, (x, mean, _, _) in _series(table, "jacobian_norm", "d_k", "scaled").items():
        twin.semilogx(x, mean, "s--", base=2, label=rf"$\Vert J\Vert_F$ of the softmax, {scaled}")
    ax.set_xticks(sorted({int(d_k) for x, *_ in fractions.values() for d_k in x}))
    ax.get_xaxis().set_major_formatter("{x:.0f}")
    ax.get_xaxis().set_minor_formatter("")
    ax.set_xlabel("$d_k$")
    ax.set_ylabel("share of saturated rows (circles)")
    twin.set_ylabel(r"mean $\Vert J\Vert_F$ (squares)")
    ax.set_title(r"Softmax saturation without the $1/\sqrt{d_k}$ scale")
    lines, labels = ax.get_legend_handles_labels()
    twin_lines, twin_labels = twin.get_legend_handles_labels()
    _legend_below(ax.figure, handles=lines + twin_lines, labels=labels + twin_labels)


def _job_value(table, quantity, **labels) -> float:
    """The seed mean of one job-level quantity (the first row that has these labels)."""
    return float(select(table, quantity, **labels)["mean"].iloc[0])


OPTIMIZER_NAMES = {"adam": "Adam", "sgd": "SGD"}


@figure(
    "02.3_lookup_curves",
    demo="02.3",
    caption=(
        "查字典任务训练后的测试准确率随学习率的变化（能用的学习率范围）。"
        "左 Adam、右 SGD；实线缩放、虚线不缩放，颜色是 d_k；点线是 90% 和瞎猜。"
        "Accuracy at the end of training against the learning rate: the usable range."
    ),
)
def lookup_curves(table, ax):
    """02.3 (§4.4): accuracy after 600 steps against the learning rate — the usable lr range;
    one panel per optimizer, one colour per d_k, scaled solid, unscaled dashed."""
    fig = ax.figure
    ax.remove()  # one panel per optimizer instead of the single axes draw() made
    fig.set_size_inches(8.6, 4.2)
    optimizers = list(dict.fromkeys(table["optimizer"]))
    panels = fig.subplots(1, len(optimizers), sharey=True, squeeze=False)[0]
    chance = _job_value(table, "chance")
    for panel, optimizer in zip(panels, optimizers, strict=True):
        for colour, d_k in enumerate(dict.fromkeys(table["d_k"])):
            for scaled, style, name in (("True", "o-", "scaled"), ("False", "s--", "unscaled")):
                cell = dict(optimizer=optimizer, d_k=d_k, scaled=scaled)
                lr, mean, _, _ = _series(table, "final_accuracy", "lr", "optimizer", cell)[
                    optimizer
                ]
                panel.semilogx(lr, mean, style, color=f"C{colour}", label=f"$d_k$ = {d_k}, {name}")
        panel.axhline(0.9, color="black", linewidth=0.8, linestyle=":", label="90 % target")
        panel.axhline(
            chance, color="grey", linewidth=0.8, linestyle="-.", label=f"chance {chance:.4g}"
        )
        panel.set_title(OPTIMIZER_NAMES.get(optimizer, optimizer))
        panel.set_xlabel("learning rate")
    panels[0].set_ylabel("test accuracy")
    steps = int(select(table, "accuracy")["step"].astype(int).max())
    fig.suptitle(f"Look-up task: accuracy after {steps} steps vs learning rate")
    _legend_right(fig, *panels[0].get_legend_handles_labels())


@figure(
    "03.4_previous_token",
    demo="03.4",
    caption=(
        "只用位置编码、W^Q = β M₋₁ 时，放在前一个位置上的平均权重随 β 变“硬”。"
        "The weight on the previous position hardens as β grows."
    ),
)
def previous_token_weight(table, ax):
    """03.4 (§6.4): mean weight on the previous position grows with beta in W^Q = beta M_-1."""
    rows = select(table, "mean_weight_previous")
    beta = rows["beta"].astype(float)
    ax.semilogx(beta, rows["mean"], "o-", base=2)
    ax.set_xlabel(r"$\beta$")
    ax.set_ylabel("mean weight on position $i-1$")
    ax.set_ylim(0, 1)
    ax.set_title(
        rf"A previous-token head from PE alone: $W^Q = \beta M_{{-1}}$ ({len(rows)} values)"
    )


SETUP_NAMES = {"post_ln": "Post-LN", "pre_ln": "Pre-LN", "post_ln_warmup": "Post-LN + warmup"}


@figure(
    "04.3_ln_curves",
    demo="04.3",
    caption=(
        "6 层编码器做原地反转时，逐位置准确率随步数的变化。实线 lr 1e−2、虚线 lr 1e−3；"
        "灰色点线是瞎猜。Per-position accuracy against the training step."
    ),
)
def ln_curves(table, ax):
    """04.3 (§7.5): per-position accuracy against step; one colour per setup, one line style
    per lr (step 0 = the initialisation)."""
    chance = _job_value(table, "chance")
    setups = list(dict.fromkeys(table["setup"]))
    for style, lr in zip(("-", "--", ":", "-."), dict.fromkeys(table["lr"]), strict=False):
        curves = _series(table, "accuracy", "step", "setup", {"lr": lr})
        for colour, setup in enumerate(setups):
            step, mean, _, _ = curves[setup]
            name = SETUP_NAMES.get(setup, setup)
            ax.plot(step, mean, style, color=f"C{colour}", label=f"{name}, lr {float(lr):g}")
    ax.axhline(chance, color="grey", linewidth=0.8, linestyle=":", label=f"chance {chance:g}")
    ax.set_xlabel("training step")
    ax.set_ylabel("per-position test accuracy")
    names = ", ".join(SETUP_NAMES.get(s, s) for s in setups)
    ax.figure.suptitle(f"In-place reversal: {names} (Adam)")
    ax.figure.set_size_inches(7.6, 4.0)
    _legend_right(ax.figure, *ax.get_legend_handles_labels())


# §9 (05.x): one colour and name per model, the same in every figure
MODEL_STYLE = {
    "gru": ("GRU (no attention)", "tab:blue"),
    "gru_attention": ("GRU + attention", "tab:orange"),
    "transformer": ("Transformer", "tab:green"),
}
CHANCE_05 = 0.1  # §9.1: 10 symbols, a guess is right 1 time in 10


def _model_style(model):
    return MODEL_STYLE.get(model, (model, None))


@figure(
    "05.1_accuracy_by_length",
    demo="05.1",
    caption=(
        "整句（实线）和逐词（虚线，含 EOS）准确率随 L 的变化，误差棒是种子间的最小–最大。"
        "Whole-sequence and per-token accuracy against L."
    ),
)
def accuracy_by_length(table, ax):
    """05.1 (§9.2): whole-sequence (solid) and per-token (dashed) accuracy against L."""
    for quantity, style in (("sequence_accuracy", "o-"), ("token_accuracy", "s--")):
        for model, (x, mean, lo, hi) in _series(table, quantity, "seq_len", "model").items():
            name, colour = _model_style(model)
            kind = "whole sequence" if quantity == "sequence_accuracy" else "per token (with EOS)"
            ax.errorbar(
                x,
                mean,
                yerr=[mean - lo, hi - mean],
                fmt=style,
                color=colour,
                capsize=3,
                label=f"{name}, {kind}",
            )
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(table["seq_len"].astype(int).unique()))
    ax.get_xaxis().set_major_formatter("{x:.0f}")
    ax.set_ylim(-0.03, 1.03)
    ax.set_xlabel("sequence length $L$")
    ax.set_ylabel("accuracy (greedy decoding)")
    seeds = table["n_seeds"].max()
    ax.set_title(f"Reversal: accuracy vs $L$ (mean of {seeds} seeds, bars = min–max)")
    ax.figure.set_size_inches(6.4, 4.8)
    _legend_below(ax.figure, ax, ncols=2)


@figure(
    "05.2_accuracy_by_position",
    demo="05.2",
    caption=(
        "每个输出位置 t（从 1 数起，复制输入的第 L + 1 − t 个词）的准确率，"
        "阴影是种子间的最小–最大。Accuracy at each output position."
    ),
)
def accuracy_by_position(table, ax):
    """05.2 (§9.3): accuracy at each 1-based output position t, at the largest L of 05.1."""
    L = table["seq_len"].astype(int).max()
    curves = _series(table, "position_accuracy", "position", "model", where={"seq_len": L})
    for model, (x, mean, lo, hi) in curves.items():
        name, colour = _model_style(model)
        ax.plot(x, mean, "o-", ms=3, color=colour, label=name)
        ax.fill_between(x, lo, hi, color=colour, alpha=0.2)
    ax.axhline(CHANCE_05, color="grey", ls=":", label="chance (10 symbols)")
    ax.set_ylim(-0.03, 1.03)
    ax.set_xlabel(f"output position $t$ (copies input position {L} + 1 − $t$)")
    ax.set_ylabel("accuracy")
    seeds = table["n_seeds"].max()
    ax.set_title(f"Where the errors are: $L$ = {L} (mean of {seeds} seeds, band = min–max)")
    _legend_below(ax.figure, ax, ncols=2)


ATTENTION_ROWS = {  # row of 05.3's figure: (heading, x label, y label)
    "cross": ("Encoder–decoder (cross) attention", "source position $j$", "output step $t$"),
    "decoder": ("Decoder self-attention", "prefix position (0 = BOS)", "query $t$"),
    "encoder": ("Encoder self-attention", "key position", "query position"),
}


def _attention_panels(table):
    """{row: [(panel title, map)]} for 05.3: the cross-attention heads and the GRU's attention,
    the decoder's and the encoder's self-attention heads (rows that have no map are left out)."""
    maps = select(table, "map")
    rows = {"cross": [], "decoder": [], "encoder": []}
    for (model, block, head), group in maps.groupby(["model", "block", "head"], sort=False):
        group = group.assign(query=group["query"].astype(int), key=group["key"].astype(int))
        grid = group.pivot(index="query", columns="key", values="mean").sort_index()
        grid = grid.sort_index(axis=1).to_numpy()  # (n_queries, n_keys)
        if block.endswith("cross_attn"):
            title = f"head {head}" if model == "transformer" else _model_style(model)[0]
            rows["cross"].append((title, grid))
        elif block.startswith("decoder"):
            rows["decoder"].append((f"head {head}", grid))
        else:
            rows["encoder"].append((f"head {head}", grid))
    rows["cross"].sort(key=lambda p: not p[0].startswith("head"))  # the Transformer's first
    return {name: panels for name, panels in rows.items() if panels}


@figure(
    "05.3_attention_maps",
    demo="05.3",
    caption=(
        "平均注意力权重。第一行：Transformer 的编码器-解码器注意力各头和 GRU + 注意力"
        "（反对角线 = 镜像位置）；第二行：解码器自注意力；第三行：编码器自注意力。"
        "Mean attention weights: cross-attention, decoder and encoder self-attention."
    ),
)
def attention_maps(table, ax):
    """05.3 (§9.4): mean attention weights; the mirror position is the anti-diagonal."""
    from matplotlib.ticker import MaxNLocator

    rows = _attention_panels(table)
    n_cols = max(len(panels) for panels in rows.values())
    fig = ax.figure
    ax.remove()
    fig.set_size_inches(min(MAX_WIDTH, 1.75 * n_cols + 0.9), 2.55 * len(rows) + 0.5)
    for subfig, (name, panels) in zip(fig.subfigures(len(rows), 1), rows.items(), strict=True):
        heading, x_label, y_label = ATTENTION_ROWS[name]
        axes = subfig.subplots(1, n_cols, squeeze=False)[0]
        for i, (panel, (title, grid)) in enumerate(zip(axes, panels, strict=False)):
            image = panel.imshow(grid, vmin=0, vmax=1, cmap="viridis", interpolation="nearest")
            panel.set_title(title)
            panel.set_xlabel(x_label if i == 0 else "")
            panel.set_ylabel(y_label if i == 0 else "")
            panel.xaxis.set_major_locator(MaxNLocator(nbins=3, integer=True))
            panel.yaxis.set_major_locator(MaxNLocator(nbins=3, integer=True))
        for panel in axes[len(panels) :]:
            panel.axis("off")
        subfig.suptitle(heading)
        subfig.colorbar(image, ax=axes[: len(panels)].tolist(), label="weight", shrink=0.85)
    L = next(iter(rows.values()))[0][1].shape[1]
    fig.suptitle(f"Mean attention weights, reversal of $L$ = {L} (anti-diagonal = mirror)")


def _minor(y: float, keep) -> str:
    """The label of a minor log tick at y: its value if its leading digit is one to keep."""
    leading = round(y / 10 ** math.floor(math.log10(y) + 1e-9))
    return f"{y:g}" if leading in keep else ""


def _step_time_axes(ax, lengths):
    """Log-log axes for ms per step against L, ticks at the measured lengths."""
    from matplotlib.ticker import FuncFormatter

    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(sorted(lengths.astype(int).unique()))
    ax.get_xaxis().set_major_formatter("{x:.0f}")
    ax.get_yaxis().set_major_formatter("{x:g}")
    low, high = ax.get_ylim()
    # under two decades the major ticks are too few to read: label some minor ones too (all of
    # them under one decade, else 2, 3 and 5), in plain numbers, not matplotlib's 6×10¹
    keep = range(1, 10) if high / low < 10 else (2, 3, 5) if high / low < 100 else ()
    ax.get_yaxis().set_minor_formatter(FuncFormatter(lambda y, _: _minor(y, keep)))
    ax.set_xlabel("sequence length $L$")
    ax.set_ylabel("ms per training step (log scale)")


@figure(
    "05.4_step_time",
    demo="05.4",
    caption=(
        "每步训练耗时随 L 的变化（对数坐标，CPU 单线程，因机器而异）。"
        "Training step time against L on this machine."
    ),
)
def step_time_by_length(table, ax):
    """05.4 (§9.5): ms per training step against L, log-log (machine-dependent)."""
    for model, (x, mean, _, _) in _series(table, "ms_per_step", "seq_len", "model").items():
        name, colour = _model_style(model)
        ax.plot(x, mean, "o-", color=colour, label=name)
    _step_time_axes(ax, table["seq_len"])
    ax.set_title("Training step time on this machine (CPU, 1 thread; machine-dependent)")
    _legend_below(ax.figure, ax, ncols=3)


# §6.5's four positional schemes (07.9): the two added to the input solid, the two in the
# scores dashed
PE_STYLE = {
    "sinusoidal": ("sinusoidal", "tab:blue", "-"),
    "learned": ("learned", "tab:orange", "-"),
    "rope": ("RoPE", "tab:green", "--"),
    "alibi": ("ALiBi", "tab:red", "--"),
}


@figure(
    "07.9_extrapolation_by_position",
    demo="07.9",
    caption=(
        "训练 L ≤ 16、测试 L = 48 时每个输出位置的准确率"
        "（10 个种子，阴影为最小–最大；竖线左边训练时见过）。"
        "Accuracy by output position at L = 48."
    ),
)
def extrapolation_by_position(table, ax):
    """07.9 (§6.5): position accuracy at the longest test length, one panel per task."""
    fig = ax.figure
    ax.remove()
    import pandas as pd

    length = pd.to_numeric(table["length"], errors="coerce")  # blank on the table's own rows
    lengths = length[table["quantity"] == "symbol_accuracy"]
    # the config's test lengths start at the longest training length (06.7: 16)
    seen, longest = int(lengths.min()), float(lengths.max())
    rows = table[length == longest]
    tasks = list(dict.fromkeys(rows["task"].dropna()))  # the config's order
    fig.set_size_inches(min(MAX_WIDTH, 4.3 * len(tasks)), 4.4)
    axes = fig.subplots(1, len(tasks), squeeze=False, sharey=True)[0]
    for panel, task in zip(axes, tasks, strict=True):
        series = _series(rows[rows["task"] == task], "position_accuracy", "position", "pe")
        for pe, (x, mean, low, high) in series.items():
            name, colour, line = PE_STYLE.get(pe, (pe, None, "-"))
            panel.plot(x, mean, line, color=colour, label=name)
            panel.fill_between(x, low, high, color=colour, alpha=0.15, linewidth=0)
        panel.axvline(seen - 0.5, color="grey", linestyle=":", linewidth=1)
        panel.set_xlabel("output position $t$")
        panel.set_ylim(-0.02, 1.02)
        panel.set_title(f"{task}, $L$ = {longest:.0f}")
    axes[0].set_ylabel("accuracy at $t$")
    fig.suptitle(f"Trained on $L \\leq$ {seen}, tested at $L$ = {longest:.0f}")
    _legend_below(fig, axes[0], ncols=4)


# PyTorch's own models (06.3) in their counterpart's colour, dashed
TORCH_STYLE = {"nn.Transformer": "tab:green", "nn.GRU": "tab:blue"}


@figure(
    "06.3_gpu_step_time",
    demo="06.3",
    caption=(
        "GPU 上每步训练耗时随 L 的变化（对数坐标，因机器而异）。实线是我们的三个模型，"
        "虚线是 PyTorch 自带的同尺寸模型（nn.Transformer、nn.GRU）；左右两栏是两种模型宽度。"
        "Training step time on a GPU, two model widths."
    ),
)
def gpu_step_time_by_length(table, ax):
    """06.3 (§9.5): ms per training step against L on a GPU, one panel per model size."""
    fig = ax.figure
    ax.remove()
    sizes = list(dict.fromkeys(table["d_model"].astype(int)))  # the config's order
    fig.set_size_inches(min(MAX_WIDTH, 4.3 * len(sizes)), 4.6)
    axes = fig.subplots(1, len(sizes), squeeze=False, sharey=True)[0]
    for panel, d_model in zip(axes, sizes, strict=True):
        rows = table[table["d_model"].astype(int) == d_model]
        series = _series(rows, "ms_per_step", "seq_len", "model")
        for model, (x, mean, _, _) in series.items():
            if model in TORCH_STYLE:
                panel.plot(x, mean, "s--", ms=4, color=TORCH_STYLE[model], label=model)
            else:
                name, colour = _model_style(model)
                panel.plot(x, mean, "o-", color=colour, label=name)
        _step_time_axes(panel, rows["seq_len"])
        precision = rows["precision"].iloc[0]
        panel.set_title(f"$d_{{model}}$ = {d_model}, 1 + 1 layers, {precision}")
    for panel in axes[1:]:
        panel.set_ylabel("")
    fig.suptitle(f"Training step time on {table['device_name'].iloc[0]} (machine-dependent)")
    _legend_below(fig, axes[0], ncols=3)


# the report's and the figure rule's order: by name, so by demo
FIGURES = dict(sorted(FIGURES.items()))


def render(name: str, table):
    """The matplotlib Figure `name` drawn from its seed-averaged table (not saved)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if name not in FIGURES:
        raise ValueError(f"unknown figure {name!r}; expected one of {sorted(FIGURES)}")
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=SIZE, dpi=DPI, layout="constrained")
        FIGURES[name].draw(table, ax)
    return fig


def draw(name: str, table_path: Path, out: Path) -> None:
    import matplotlib.pyplot as plt

    fig = render(name, read_tables([table_path])[table_path.stem])  # timings merged in
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp.png")
    with plt.rc_context(STYLE):
        fig.savefig(tmp, dpi=DPI, metadata={"Software": None})  # no version, no timestamp
    plt.close(fig)
    tmp.replace(out)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m lecture17.reporting.figures", description=__doc__.splitlines()[0]
    )
    p.add_argument("name")
    p.add_argument("table", type=Path)
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    draw(args.name, args.table, args.out)
    print(f"图 figure {args.name} → {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
