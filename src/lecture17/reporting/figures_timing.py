"""The figures of §9.5: the time of a training step against the length, on this machine's
CPU (05.4) and on a GPU beside PyTorch's own models (06.3). Each drawing function is registered
by its @figure decorator (figure_base)."""

import math

from lecture17.reporting.figure_base import (
    MAX_WIDTH,
    SIZE,
    _legend_below,
    _lines,
    _model_style,
    _series,
    _size,
    _t,
    figure,
)


def _minor(y: float, keep) -> str:
    """The label of a minor log tick at y: its value if its leading digit is one to keep."""
    leading = round(y / 10 ** math.floor(math.log10(y) + 1e-9))
    return f"{y:g}" if leading in keep else ""


def _step_time_axes(ax, lengths, first=True):
    """Log-log axes for ms per step against L, ticks at the measured lengths; `first`: the
    figure's first such axes (its labels carry the English terms)."""
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
    if first:
        ax.set_xlabel(_t("序列长度 sequence length $L$", "sequence length $L$"))
        ax.set_ylabel(_t("每训练步毫秒数 ms per step（对数）", "ms per training step (log scale)"))
    else:
        ax.set_xlabel(_t("序列长度 $L$", "sequence length $L$"))
        ax.set_ylabel(_t("每训练步毫秒数（对数）", "ms per training step (log scale)"))


@figure(
    "05.4_step_time",
    demo="05.4",
    caption="每步训练耗时随 L 的变化（对数坐标，CPU 单线程，因机器而异）。",
)
def step_time_by_length(table, ax):
    """05.4 (§9.5): ms per training step against L, log-log (machine-dependent)."""
    fig = ax.figure
    phone = _size(fig, SIZE, 3.8)
    for model, (x, mean, _, _) in _series(table, "ms_per_step", "seq_len", "model").items():
        name, colour = _model_style(model)
        ax.plot(x, mean, "o-", color=colour, label=name)
    _step_time_axes(ax, table["seq_len"])
    ax.set_title(
        _lines(
            fig,
            _t("本机训练一步的耗时 step time", "Training step time on this machine"),
            _t("CPU 单线程，因机器而异", "CPU, 1 thread; machine-dependent"),
        )
    )
    _legend_below(fig, ax, ncols=2 if phone else 3)


TORCH_STYLE = {"nn.Transformer": "tab:green", "nn.GRU": "tab:blue"}


@figure(
    "06.3_gpu_step_time",
    demo="06.3",
    caption=(
        "GPU 上每步训练耗时随 L 的变化（对数坐标，因机器而异）。实线是我们的三个模型，"
        "虚线是 PyTorch 自带的同尺寸模型（nn.Transformer、nn.GRU）；左右两栏是两种模型宽度。"
    ),
)
def gpu_step_time_by_length(table, ax):
    """06.3 (§9.5): ms per training step against L on a GPU, one panel per model size
    (stacked on a phone)."""
    fig = ax.figure
    ax.remove()
    sizes = list(dict.fromkeys(table["d_model"].astype(int)))  # the config's order
    phone = _size(fig, (min(MAX_WIDTH, 4.3 * len(sizes)), 4.6), 3.0 * len(sizes) + 1.8)
    shape = (len(sizes), 1) if phone else (1, len(sizes))
    axes = fig.subplots(*shape, squeeze=False, sharey=True, sharex=phone).ravel()
    layers = _t("1 + 1 层", "1 + 1 layers")
    for i, (panel, d_model) in enumerate(zip(axes, sizes, strict=True)):
        rows = table[table["d_model"].astype(int) == d_model]
        series = _series(rows, "ms_per_step", "seq_len", "model")
        for model, (x, mean, _, _) in series.items():
            if model in TORCH_STYLE:
                panel.plot(x, mean, "s--", ms=4, color=TORCH_STYLE[model], label=model)
            else:
                name, colour = _model_style(model)
                panel.plot(x, mean, "o-", color=colour, label=name)
        _step_time_axes(panel, rows["seq_len"], first=i == 0)
        precision = rows["precision"].iloc[0]
        panel.set_title(f"$d_{{model}}$ = {d_model}, {layers}, {precision}")
        if phone and i < len(sizes) - 1:
            panel.set_xlabel("")
        if not phone and i > 0:
            panel.set_ylabel("")
    if phone:  # stacked: the one x label, under the last panel, carries the English term
        axes[-1].set_xlabel(_t("序列长度 sequence length $L$", "sequence length $L$"))
    device = table["device_name"].iloc[0]
    fig.suptitle(
        _lines(
            fig,
            _t(f"{device} 上训练一步的耗时 step time", f"Training step time on {device}"),
            _t("因机器而异", "machine-dependent"),
        )
    )
    _legend_below(fig, axes[0], ncols=2 if phone else 3)
