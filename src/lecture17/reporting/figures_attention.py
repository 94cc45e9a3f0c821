"""The figures of §1–§4: why attention (a path length of one, 01.4) and its scale (a
softmax that saturates without 1/√d_k, 02.2; the look-up task's usable learning rates, 02.3).
Each drawing function is registered by its @figure decorator (figure_base)."""

from lecture17.pipeline.aggregate import select
from lecture17.reporting.figure_base import (
    PHONE_WIDTH,
    SIZE,
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


def _sensitivity_names():
    return {"rnn": "RNN", "attention": _t("自注意力 self-attention", "self-attention")}


@figure(
    "01.4_sensitivity",
    demo="01.4",
    caption=(
        "最后一个输出对第 j 个输入的敏感度（对数坐标）。RNN 随距离按指数衰减，自注意力和距离无关。"
    ),
)
def sensitivity_by_distance(table, ax):
    """01.4 (§1.2): ‖∂y_last/∂x_j‖ against distance, log scale; RNN decays, attention does not."""
    series = _series(table, "sensitivity", "distance", "model")
    names = _sensitivity_names()
    for model, (x, mean, lo, hi) in series.items():
        ax.semilogy(x, mean, label=names.get(model, model))
        ax.fill_between(x, lo, hi, alpha=0.2)
    last = int(max(x.max() for x, *_ in series.values()))
    fig = ax.figure
    ax.set_xlabel(
        _lines(
            fig,
            _t("到最后一个位置的距离 distance", "distance from the last position"),
            _t(f"{last} = 第一个词", f"{last} = the first word"),
        )
    )
    ax.set_ylabel(rf"$\Vert\partial y_{{{last}}}/\partial x_j\Vert_F$")
    if _phone(fig):
        fig.set_size_inches(PHONE_WIDTH, 3.6)
    ax.set_title(
        _lines(
            fig,
            _t("路径长度 path length", "Path length"),
            _t("最后一个输出对输入 $j$ 的依赖", "last output's dependence on input $j$"),
        )
    )
    _legend_below(fig, ax, ncols=2)


SCALED_NAMES = {"scaled": ("缩放", "scaled"), "unscaled": ("不缩放", "unscaled")}


@figure(
    "02.2_saturation",
    demo="02.2",
    caption=(
        "不缩放时，d_k 越大，softmax 饱和（最大权重 > 0.99）的比例越高、"
        "雅可比范数越小；缩放后两者都不随 d_k 变。"
    ),
)
def saturation_by_dk(table, ax):
    """02.2 (§4.3): share of saturated softmax rows and the Jacobian norm against d_k."""
    fig = ax.figure
    phone = _size(fig, SIZE, 4.6)
    twin = ax.twinx()
    fractions = _series(table, "fraction_saturated", "d_k", "scaled")
    sep = "，" if cjk_font() else ", "
    for scaled, (x, mean, _, _) in fractions.items():
        zh, en = SCALED_NAMES.get(scaled, (scaled, scaled))
        label = _t(f"饱和行占比{sep}{zh} {en}", f"share of rows with max weight > 0.99, {en}")
        ax.semilogx(x, mean, "o-", base=2, label=label)
    for scaled, (x, mean, _, _) in _series(table, "jacobian_norm", "d_k", "scaled").items():
        zh, en = SCALED_NAMES.get(scaled, (scaled, scaled))
        label = _t(rf"$\Vert J\Vert_F${sep}{zh}", rf"$\Vert J\Vert_F$ of the softmax, {en}")
        twin.semilogx(x, mean, "s--", base=2, label=label)
    ax.set_xticks(sorted({int(d_k) for x, *_ in fractions.values() for d_k in x}))
    ax.get_xaxis().set_major_formatter("{x:.0f}")
    ax.get_xaxis().set_minor_formatter("")
    ax.set_xlabel("$d_k$")
    ax.set_ylabel(_t("最大权重 > 0.99 的行占比（圆点）", "share of saturated rows (circles)"))
    twin.set_ylabel(
        _t(r"雅可比 Jacobian $\Vert J\Vert_F$（方块）", r"mean $\Vert J\Vert_F$ (squares)")
    )
    ax.set_title(
        _t(
            r"不乘 $1/\sqrt{d_k}$ 时 softmax 饱和 saturation",
            r"Softmax saturation without "
            r"the $1/\sqrt{d_k}$ scale",
        )
    )
    lines, labels = ax.get_legend_handles_labels()
    twin_lines, twin_labels = twin.get_legend_handles_labels()
    _legend_below(
        fig, handles=lines + twin_lines, labels=labels + twin_labels, ncols=1 if phone else 2
    )


OPTIMIZER_NAMES = {"adam": "Adam", "sgd": "SGD"}


def _lookup_panel(panel, table, optimizer: str, chance: float) -> None:
    """One optimizer's panel of 02.3: a curve per d_k and scaling, the 90 % target, chance."""
    sep = "，" if cjk_font() else ", "
    names = {"True": _t("缩放 scaled", "scaled"), "False": _t("不缩放 unscaled", "unscaled")}
    for colour, d_k in enumerate(dict.fromkeys(table["d_k"])):
        for scaled, style in (("True", "o-"), ("False", "s--")):
            cell = dict(optimizer=optimizer, d_k=d_k, scaled=scaled)
            lr, mean, _, _ = _series(table, "final_accuracy", "lr", "optimizer", cell)[optimizer]
            label = f"$d_k$ = {d_k}{sep}{names[scaled]}"
            panel.semilogx(lr, mean, style, color=f"C{colour}", label=label)
    panel.axhline(
        0.9, color="black", linewidth=0.8, linestyle=":", label=_t("90 % 目标", "90 % target")
    )
    panel.axhline(
        chance,
        color="grey",
        linewidth=0.8,
        linestyle="-.",
        label=_t(f"瞎猜 chance {chance:.4g}", f"chance {chance:.4g}"),
    )
    panel.set_title(OPTIMIZER_NAMES.get(optimizer, optimizer))


@figure(
    "02.3_lookup_curves",
    demo="02.3",
    caption=(
        "查字典任务训练后的测试准确率随学习率的变化（能用的学习率范围）。"
        "左 Adam、右 SGD；实线缩放、虚线不缩放，颜色是 d_k；点线是 90% 和瞎猜。"
    ),
)
def lookup_curves(table, ax):
    """02.3 (§4.4): accuracy after 600 steps against the learning rate — the usable lr range;
    one panel per optimizer (stacked on a phone), one colour per d_k, scaled solid, unscaled
    dashed."""
    fig = ax.figure
    ax.remove()  # one panel per optimizer instead of the single axes draw() made
    optimizers = list(dict.fromkeys(table["optimizer"]))
    phone = _size(fig, (8.6, 4.2), 3.0 * len(optimizers) + 2.2)
    shape = (len(optimizers), 1) if phone else (1, len(optimizers))
    panels = fig.subplots(*shape, sharey=True, sharex=phone, squeeze=False).ravel()
    chance = _job_value(table, "chance")
    for panel, optimizer in zip(panels, optimizers, strict=True):
        _lookup_panel(panel, table, optimizer, chance)
        panel.set_ylabel(
            _t("测试准确率 test accuracy", "test accuracy") if panel is panels[0] or phone else ""
        )
    for panel in panels[-1:] if phone else panels:  # the English term on the first
        first = panel is panels[0] or phone
        panel.set_xlabel(_t("学习率 learning rate" if first else "学习率", "learning rate"))
    steps = int(select(table, "accuracy")["step"].astype(int).max())
    fig.suptitle(
        _lines(
            fig,
            _t("查字典任务 look-up", "Look-up task"),
            _t(
                f"训练 {steps} 步后的准确率与学习率",
                f"accuracy after {steps} steps vs learning rate",
            ),
        )
    )
    # below the panels: beside them, it would reach up to the title
    _legend_below(fig, panels[0], ncols=1 if phone else 4)
