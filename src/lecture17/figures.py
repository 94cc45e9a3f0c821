"""The report's figures, one function per figure, each drawn from one seed-averaged table.

    python -m lecture17.figures 03.1_pe_heatmap results/tables/03.1.csv \
        --out report/figures/03.1_pe_heatmap.png

Titles are built from the same table as the data. Labels inside the figures are English (no CJK
font is assumed on the machine); the report's captions carry the Chinese. PNGs are written
without timestamps or
software metadata, so two builds give the same bytes.
"""

import argparse
import sys
from pathlib import Path

from lecture17.aggregate import read_tables


def _pivot(table, quantity, index, columns):
    rows = table[table["quantity"] == quantity]
    grid = rows.pivot(index=index, columns=columns, values="mean")
    grid.index = grid.index.astype(float)
    grid.columns = grid.columns.astype(float)
    return grid.sort_index().sort_index(axis=1)


def pe_heatmap(table, ax):
    """03.1 (§6.2): rows = positions, columns = dimensions; fast columns left, slow ones right."""
    grid = _pivot(table, "pe", "pos", "dim")
    image = ax.imshow(
        grid.to_numpy(), aspect="auto", cmap="RdBu_r", vmin=-1, vmax=1, interpolation="nearest"
    )
    ax.set_xlabel("dimension")
    ax.set_ylabel("position")
    ax.set_title(f"Sinusoidal PE (d_model = {grid.shape[1]}, {grid.shape[0]} positions)")
    ax.figure.colorbar(image, ax=ax)


def _series(table, quantity, x, by, where=None):
    """{label of `by`: (x values, mean, min, max)} for one quantity, x sorted numerically."""
    rows = table[table["quantity"] == quantity]
    for label, wanted in (where or {}).items():
        rows = rows[rows[label] == str(wanted)]
    out = {}
    for key, group in rows.groupby(by, sort=False):
        group = group.assign(_x=group[x].astype(float)).sort_values("_x")
        out[key] = (group["_x"], group["mean"], group["min"], group["max"])
    return out


def sensitivity_by_distance(table, ax):
    """01.4 (§1.2): ‖∂y_last/∂x_j‖ against distance, log scale; RNN decays, attention does not."""
    for model, (x, mean, lo, hi) in _series(table, "sensitivity", "distance", "model").items():
        ax.semilogy(x, mean, label=model)
        ax.fill_between(x, lo, hi, alpha=0.2)
    ax.set_xlabel("distance from the last position")
    ax.set_ylabel("Jacobian norm (mean over seeds, min-max band)")
    ax.set_title("Path length: sensitivity of the last output to input j")
    ax.legend()


def saturation_by_dk(table, ax):
    """02.2 (§4.3): share of saturated softmax rows and the Jacobian norm against d_k."""
    twin = ax.twinx()
    for scaled, (x, mean, _, _) in _series(table, "fraction_saturated", "d_k", "scaled").items():
        ax.semilogx(x, mean, "o-", base=2, label=f"max weight > 0.99 ({scaled})")
    for scaled, (x, mean, _, _) in _series(table, "jacobian_norm", "d_k", "scaled").items():
        twin.semilogx(x, mean, "s--", base=2, label=f"softmax Jacobian norm ({scaled})")
    ax.set_xlabel("d_k")
    ax.set_ylabel("share of saturated rows")
    twin.set_ylabel("mean Frobenius norm of J")
    ax.set_title("Softmax saturation without the 1/sqrt(d_k) scale")
    lines = ax.get_legend_handles_labels()
    twin_lines = twin.get_legend_handles_labels()
    ax.legend(lines[0] + twin_lines[0], lines[1] + twin_lines[1], fontsize=8, loc="center left")


def _job_value(table, quantity, **labels) -> float:
    """The seed mean of one job-level quantity (the first row that has these labels)."""
    rows = table[table["quantity"] == quantity]
    for label, wanted in labels.items():
        rows = rows[rows[label] == str(wanted)]
    return float(rows["mean"].iloc[0])


def lookup_curves(table, ax):
    """02.3 (§4.4): accuracy after 600 steps against the learning rate — the usable lr range;
    one panel per optimizer, one colour per d_k, scaled solid, unscaled dashed."""
    fig = ax.figure
    ax.remove()  # one panel per optimizer instead of the single axes draw() made
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
                panel.semilogx(lr, mean, style, color=f"C{colour}", label=f"d_k={d_k} {name}")
        panel.axhline(0.9, color="black", linewidth=0.8, linestyle=":")
        panel.axhline(chance, color="grey", linewidth=0.8, linestyle=":")
        panel.set_title(optimizer)
        panel.set_xlabel("learning rate")
    panels[0].legend(fontsize=7, loc="lower left")  # Adam's panel has room at the bottom
    panels[0].set_ylabel(f"test accuracy (0.9 target, chance {chance:.4f})")
    steps = int(table[table["quantity"] == "accuracy"]["step"].astype(int).max())
    fig.suptitle(f"Look-up task: accuracy after {steps} steps vs learning rate")


def previous_token_weight(table, ax):
    """03.4 (§6.4): mean weight on the previous position grows with beta in W^Q = beta M_-1."""
    rows = table[table["quantity"] == "mean_weight_previous"]
    beta = rows["beta"].astype(float)
    ax.semilogx(beta, rows["mean"], "o-", base=2)
    ax.set_xlabel("beta")
    ax.set_ylabel("mean weight on position i-1")
    ax.set_ylim(0, 1)
    ax.set_title(f"A previous-token head from PE alone ({len(rows)} values of beta)")


def ln_curves(table, ax):
    """04.3 (§7.5): per-position accuracy against step; one colour per setup, one line style
    per lr (step 0 = the initialisation)."""
    chance = _job_value(table, "chance")
    setups = list(dict.fromkeys(table["setup"]))
    for style, lr in zip(("-", "--", ":", "-."), dict.fromkeys(table["lr"]), strict=False):
        curves = _series(table, "accuracy", "step", "setup", {"lr": lr})
        for colour, setup in enumerate(setups):
            step, mean, _, _ = curves[setup]
            ax.plot(step, mean, style, color=f"C{colour}", label=f"{setup}, lr={lr}")
    ax.axhline(chance, color="grey", linewidth=0.8, linestyle=":", label=f"chance {chance:g}")
    ax.set_xlabel("training step")
    ax.set_ylabel("per-position test accuracy")
    ax.set_title(f"In-place reversal: {', '.join(setups)} (Adam)")
    ax.legend(fontsize=7)


# §9 (05.x): one colour and name per model, the same in every figure
MODEL_STYLE = {
    "gru": ("GRU (no attention)", "tab:blue"),
    "gru_attention": ("GRU + attention", "tab:orange"),
    "transformer": ("Transformer", "tab:green"),
}
CHANCE_05 = 0.1  # §9.1: 10 symbols, a guess is right 1 time in 10


def _model_style(model):
    return MODEL_STYLE.get(model, (model, None))


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
    ax.set_xlabel("sequence length L")
    ax.set_ylabel("accuracy (greedy decoding)")
    seeds = table["n_seeds"].max()
    ax.set_title(f"Reversal: accuracy vs L (mean of {seeds} seeds, bars = min-max)")
    ax.legend(fontsize=7, loc="lower left")


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
    ax.set_xlabel(f"output position t (1-based; copies input position {L} + 1 - t)")
    ax.set_ylabel("accuracy")
    seeds = table["n_seeds"].max()
    ax.set_title(f"Where the errors are: L = {L} (mean of {seeds} seeds, band = min-max)")
    ax.legend(fontsize=8)


def _attention_panels(table):
    """Rows of (title, x label, y label, map) for 05.3: cross-attention heads and the GRU's
    attention, then the decoder's and the encoder's self-attention heads."""
    maps = table[table["quantity"] == "map"]
    rows = {"cross": [], "decoder": [], "encoder": []}
    for (model, block, head), group in maps.groupby(["model", "block", "head"], sort=False):
        group = group.assign(query=group["query"].astype(int), key=group["key"].astype(int))
        grid = group.pivot(index="query", columns="key", values="mean").sort_index()
        grid = grid.sort_index(axis=1).to_numpy()  # (n_queries, n_keys)
        name = _model_style(model)[0]
        if block.endswith("cross_attn"):
            label = f"{name}: cross-attn" + (f" head {head}" if model == "transformer" else "")
            rows["cross"].append((label, "source position j", "output step t", grid))
        elif block.startswith("decoder"):
            rows["decoder"].append(
                (f"decoder self-attn head {head}", "prefix position (0 = BOS)", "query t", grid)
            )
        else:
            rows["encoder"].append(
                (f"encoder self-attn head {head}", "key position", "query position", grid)
            )
    cross = sorted(rows["cross"], key=lambda p: not p[0].startswith("Transformer"))
    return [r for r in (cross, rows["decoder"], rows["encoder"]) if r]


def attention_maps(table, ax):
    """05.3 (§9.4): mean attention weights; the mirror position is the anti-diagonal."""
    from matplotlib.ticker import MaxNLocator

    rows = _attention_panels(table)
    n_cols = max(len(r) for r in rows)
    n_cols += all(len(r) == n_cols for r in rows)  # a free slot for the colour bar
    fig = ax.figure
    ax.remove()
    fig.set_size_inches(2.3 * n_cols, 2.4 * len(rows) + 0.4)
    axes = fig.subplots(len(rows), n_cols, squeeze=False)
    for panel_row, row in zip(axes, rows, strict=True):
        for panel, (title, x_label, y_label, grid) in zip(panel_row, row, strict=False):
            image = panel.imshow(grid, vmin=0, vmax=1, cmap="viridis", interpolation="nearest")
            panel.set_title(title, fontsize=7)
            panel.set_xlabel(x_label, fontsize=6)
            panel.set_ylabel(y_label, fontsize=6)
            panel.tick_params(labelsize=5)
            panel.xaxis.set_major_locator(MaxNLocator(integer=True))
            panel.yaxis.set_major_locator(MaxNLocator(integer=True))
        for panel in panel_row[len(row) :]:
            panel.axis("off")
    # the bar lives inside the last (empty) panel, so draw()'s tight_layout can place it
    bar = axes[-1][-1].inset_axes([0.1, 0.0, 0.08, 1.0])
    fig.colorbar(image, cax=bar, label="mean weight")
    L = rows[0][0][3].shape[1]
    fig.suptitle(f"Mean attention weights, reversal of L = {L} (anti-diagonal = mirror position)")


def _step_time_axes(ax, lengths):
    """Log-log axes for ms per step against L, ticks at the measured lengths."""
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(sorted(lengths.astype(int).unique()))
    ax.get_xaxis().set_major_formatter("{x:.0f}")
    ax.get_yaxis().set_major_formatter("{x:g}")
    low, high = ax.get_ylim()
    if high / low < 10:  # under a decade there is no major tick to read: label the minor ones
        ax.get_yaxis().set_minor_formatter("{x:g}")
    ax.set_xlabel("sequence length L")
    ax.set_ylabel("ms per training step (log scale)")


def step_time_by_length(table, ax):
    """05.4 (§9.5): ms per training step against L, log-log (machine-dependent)."""
    for model, (x, mean, _, _) in _series(table, "ms_per_step", "seq_len", "model").items():
        name, colour = _model_style(model)
        ax.plot(x, mean, "o-", color=colour, label=name)
    _step_time_axes(ax, table["seq_len"])
    ax.set_title("Training step time on this machine (CPU, 1 thread; machine-dependent)")
    ax.legend()


# PyTorch's own models (06.3) in their counterpart's colour, dashed
TORCH_STYLE = {"nn.Transformer": "tab:green", "nn.GRU": "tab:blue"}


def gpu_step_time_by_length(table, ax):
    """06.3 (§9.5): ms per training step against L on a GPU, one panel per model size."""
    fig = ax.figure
    ax.remove()
    sizes = list(dict.fromkeys(table["d_model"].astype(int)))  # the config's order
    fig.set_size_inches(5.2 * len(sizes), 4.4)
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
        panel.set_title(f"d_model = {d_model}, 1 + 1 layers, {precision}")
    for panel in axes[1:]:
        panel.set_ylabel("")
    axes[0].legend(fontsize="small")
    fig.suptitle(f"Training step time on {table['device_name'].iloc[0]} (machine-dependent)")


# name -> (demo whose table it draws, function)
FIGURES = {
    "01.4_sensitivity": ("01.4", sensitivity_by_distance),
    "02.2_saturation": ("02.2", saturation_by_dk),
    "02.3_lookup_curves": ("02.3", lookup_curves),
    "03.1_pe_heatmap": ("03.1", pe_heatmap),
    "03.4_previous_token": ("03.4", previous_token_weight),
    "04.3_ln_curves": ("04.3", ln_curves),
    "05.1_accuracy_by_length": ("05.1", accuracy_by_length),
    "05.2_accuracy_by_position": ("05.1", accuracy_by_position),  # 05.2 reads the 05.1 runs
    "05.3_attention_maps": ("05.3", attention_maps),
    "05.4_step_time": ("05.4", step_time_by_length),
    "06.3_gpu_step_time": ("06.3", gpu_step_time_by_length),
}


# What the report prints under each figure (the figures themselves are labelled in English).
CAPTIONS = {
    "01.4_sensitivity": (
        "图：最后一个输出对第 j 个输入的敏感度（对数坐标）。"
        "RNN 随距离按指数衰减，自注意力和距离无关。"
    ),
    "02.2_saturation": (
        "图：不缩放时，d_k 越大，softmax 饱和（最大权重 > 0.99）的比例越高、"
        "雅可比范数越小；缩放后两者都不随 d_k 变。"
    ),
    "02.3_lookup_curves": (
        "图：查字典任务训练 600 步后的测试准确率随学习率的变化（能用的学习率范围）。"
        "左 Adam、右 SGD；实线缩放、虚线不缩放，颜色是 d_k；点线是 90% 和瞎猜。"
    ),
    "03.1_pe_heatmap": "图：正弦位置编码的热图。左边高频的维度变化很快，右边低频的维度几乎不变。",
    "03.4_previous_token": (
        "图：只用位置编码、W^Q = β M₋₁ 时，放在前一个位置上的平均权重随 β 变“硬”。"
    ),
    "04.3_ln_curves": (
        "图：6 层编码器做原地反转时，逐位置准确率随步数的变化。实线 lr 1e−2、虚线 lr 1e−3；"
        "灰色点线是瞎猜。"
    ),
    "05.1_accuracy_by_length": (
        "图：整句（实线）和逐词（虚线，含 EOS）准确率随 L 的变化，误差棒是种子间的最小–最大。"
    ),
    "05.2_accuracy_by_position": (
        "图：每个输出位置 t（从 1 数起，复制输入的第 L + 1 − t 个词）的准确率，"
        "阴影是种子间的最小–最大。"
    ),
    "05.3_attention_maps": (
        "图：平均注意力权重。第一行：Transformer 的编码器-解码器注意力各头和 GRU + 注意力"
        "（反对角线 = 镜像位置）；第二行：解码器自注意力；第三行：编码器自注意力。"
    ),
    "05.4_step_time": "图：每步训练耗时随 L 的变化（对数坐标，CPU 单线程，因机器而异）。",
    "06.3_gpu_step_time": (
        "图：GPU 上每步训练耗时随 L 的变化（对数坐标，因机器而异）。实线是我们的三个模型，"
        "虚线是 PyTorch 自带的同尺寸模型（nn.Transformer、nn.GRU）；左右两栏是两种模型宽度。"
    ),
}


def caption(name: str) -> str:
    """The report's caption: CAPTIONS, else the first line of the figure function's docstring."""
    if name in CAPTIONS:
        return CAPTIONS[name]
    return (FIGURES[name][1].__doc__ or name).strip().splitlines()[0]


def draw(name: str, table_path: Path, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if name not in FIGURES:
        raise ValueError(f"unknown figure {name!r}; expected one of {sorted(FIGURES)}")
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=110)
    FIGURES[name][1](read_tables([table_path])[table_path.stem], ax)  # timings merged in
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp.png")
    fig.savefig(tmp, metadata={"Software": None})  # no version string, no timestamp
    plt.close(fig)
    tmp.replace(out)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m lecture17.figures", description=__doc__.splitlines()[0]
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
