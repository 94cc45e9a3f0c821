"""The figures of §6–§7: positions (the sinusoidal encoding, 03.1; a previous-token head
from it alone, 03.4; four schemes beyond the trained lengths, 07.9) and where the layer norm
goes (04.3). Each drawing function is registered by its @figure decorator (figure_base)."""

from lecture17.pipeline.aggregate import select
from lecture17.reporting.figure_base import (
    MAX_WIDTH,
    PHONE_WIDTH,
    _job_value,
    _legend_below,
    _lines,
    _phone,
    _series,
    _size,
    _t,
    cjk_font,
    figure,
)


def _pivot(table, quantity, index, columns):
    rows = select(table, quantity)
    grid = rows.pivot(index=index, columns=columns, values="mean")
    grid.index = grid.index.astype(float)
    grid.columns = grid.columns.astype(float)
    return grid.sort_index().sort_index(axis=1)


@figure(
    "03.1_pe_heatmap",
    demo="03.1",
    caption="正弦位置编码的热图。左边高频的维度变化很快，右边低频的维度几乎不变。",
)
def pe_heatmap(table, ax):
    """03.1 (§6.2): rows = positions, columns = dimensions; fast columns left, slow ones right."""
    grid = _pivot(table, "pe", "pos", "dim")
    fig = ax.figure
    if _phone(fig):
        fig.set_size_inches(PHONE_WIDTH, 3.6)
    image = ax.imshow(
        grid.to_numpy(), aspect="auto", cmap="RdBu_r", vmin=-1, vmax=1, interpolation="nearest"
    )
    ax.set_xlabel(_t("维度 dimension", "dimension"))
    ax.set_ylabel(_t("位置 position", "position"))
    head = _t("正弦位置编码 positional encoding", "Sinusoidal PE")
    positions = _t(f"{grid.shape[0]} 个位置", f"{grid.shape[0]} positions")
    sep = "，" if cjk_font() else ", "
    ax.set_title(_lines(fig, head, f"$d_{{model}}$ = {grid.shape[1]}{sep}{positions}"))
    fig.colorbar(image, ax=ax, label=_t("编码值", "PE value"))


@figure(
    "03.4_previous_token",
    demo="03.4",
    caption="只用位置编码、W^Q = β M₋₁ 时，放在前一个位置上的平均权重随 β 变“硬”。",
)
def previous_token_weight(table, ax):
    """03.4 (§6.4): mean weight on the previous position grows with beta in W^Q = beta M_-1."""
    rows = select(table, "mean_weight_previous")
    beta = rows["beta"].astype(float)
    ax.semilogx(beta, rows["mean"], "o-", base=2)
    ax.set_xlabel(r"$\beta$")
    ax.set_ylabel(_t("位置 $i-1$ 上的平均权重 weight", "mean weight on position $i-1$"))
    ax.set_ylim(0, 1)
    ax.set_title(
        _lines(
            ax.figure,
            _t("前一词头 previous-token head", "A previous-token head from PE alone"),
            _t(
                rf"只用位置编码，$W^Q = \beta M_{{-1}}$，{len(rows)} 个 $\beta$",
                rf"$W^Q = \beta M_{{-1}}$, {len(rows)} values",
            ),
        )
    )


# scores dashed
PE_STYLE = {
    "sinusoidal": (("正弦 sinusoidal", "sinusoidal"), "tab:blue", "-"),
    "learned": (("可学习 learned", "learned"), "tab:orange", "-"),
    "rope": (("RoPE", "RoPE"), "tab:green", "--"),
    "alibi": (("ALiBi", "ALiBi"), "tab:red", "--"),
}
TASK_NAMES = {"copy": ("复制 copy", "copy"), "reversal": ("反转 reversal", "reversal")}


@figure(
    "07.9_extrapolation_by_position",
    demo="07.9",
    caption=(
        "训练 L ≤ 16、测试 L = 48 时每个输出位置的准确率"
        "（10 个种子，阴影为最小–最大；竖线左边训练时见过）。"
    ),
)
def extrapolation_by_position(table, ax):
    """07.9 (§6.5): position accuracy at the longest test length, one panel per task (stacked
    on a phone)."""
    fig = ax.figure
    ax.remove()
    import pandas as pd

    length = pd.to_numeric(table["length"], errors="coerce")  # blank on the table's own rows
    lengths = length[table["quantity"] == "symbol_accuracy"]
    # the config's test lengths start at the longest training length (06.7: 16)
    seen, longest = int(lengths.min()), float(lengths.max())
    rows = table[length == longest]
    tasks = list(dict.fromkeys(rows["task"].dropna()))  # the config's order
    phone = _size(fig, (min(MAX_WIDTH, 4.3 * len(tasks)), 4.4), 2.9 * len(tasks) + 1.6)
    shape = (len(tasks), 1) if phone else (1, len(tasks))
    axes = fig.subplots(*shape, squeeze=False, sharey=True, sharex=phone).ravel()
    sep = "，" if cjk_font() else ", "
    for i, (panel, task) in enumerate(zip(axes, tasks, strict=True)):
        series = _series(rows[rows["task"] == task], "position_accuracy", "position", "pe")
        for pe, (x, mean, low, high) in series.items():
            names, colour, line = PE_STYLE.get(pe, ((pe, pe), None, "-"))
            panel.plot(x, mean, line, color=colour, label=_t(*names))
            panel.fill_between(x, low, high, color=colour, alpha=0.15, linewidth=0)
        panel.axvline(seen - 0.5, color="grey", linestyle=":", linewidth=1)
        if i == len(tasks) - 1 or not phone:
            first = i == 0 or phone
            label = "输出位置 output position $t$" if first else "输出位置 $t$"
            panel.set_xlabel(_t(label, "output position $t$"))
        panel.set_ylim(-0.02, 1.02)
        panel.set_title(f"{_t(*TASK_NAMES.get(task, (task, task)))}{sep}$L$ = {longest:.0f}")
        if i == 0 or phone:
            panel.set_ylabel(
                _t(
                    "位置 $t$ 的准确率 accuracy" if i == 0 else "位置 $t$ 的准确率",
                    "accuracy at $t$",
                )
            )
    fig.suptitle(
        _t(
            f"训练 $L \\leq$ {seen}，测试 $L$ = {longest:.0f}",
            f"Trained on $L \\leq$ {seen}, tested at $L$ = {longest:.0f}",
        )
    )
    _legend_below(fig, axes[0], ncols=4 if not phone else 2)


SETUP_NAMES = {"post_ln": "Post-LN", "pre_ln": "Pre-LN", "post_ln_warmup": "Post-LN + warmup"}


@figure(
    "04.3_ln_curves",
    demo="04.3",
    caption=(
        "6 层编码器做原地反转时，逐位置准确率随步数的变化。实线 lr 1e−2、虚线 lr 1e−3；"
        "灰色点线是瞎猜。"
    ),
)
def ln_curves(table, ax):
    """04.3 (§7.5): per-position accuracy against step; one colour per setup, one line style
    per lr (step 0 = the initialisation)."""
    fig = ax.figure
    phone = _size(fig, (7.2, 4.8), 5.2)
    chance = _job_value(table, "chance")
    setups = list(dict.fromkeys(table["setup"]))
    sep = "，" if cjk_font() else ", "
    for style, lr in zip(("-", "--", ":", "-."), dict.fromkeys(table["lr"]), strict=False):
        curves = _series(table, "accuracy", "step", "setup", {"lr": lr})
        for colour, setup in enumerate(setups):
            step, mean, _, _ = curves[setup]
            name = SETUP_NAMES.get(setup, setup)
            ax.plot(step, mean, style, color=f"C{colour}", label=f"{name}{sep}lr {float(lr):g}")
    ax.axhline(
        chance,
        color="grey",
        linewidth=0.8,
        linestyle=":",
        label=_t(f"瞎猜 chance {chance:g}", f"chance {chance:g}"),
    )
    ax.set_xlabel(_t("训练步数 training step", "training step"))
    ax.set_ylabel(_t("逐位置测试准确率 accuracy", "per-position test accuracy"))
    names = ("、" if cjk_font() else ", ").join(SETUP_NAMES.get(s, s) for s in setups)
    fig.suptitle(
        _lines(fig, _t("原地反转 in-place reversal", "In-place reversal"), f"{names}, Adam")
    )
    _legend_below(fig, ax, ncols=1 if phone else 3)  # beside, it would reach up to the title
