"""The report's figures, one function per figure, each drawn from one seed-averaged table.

    python -m lecture17.reporting.figures 03.1_pe_heatmap results/tables/03.1.csv \
        --out report/figures/03.1_pe_heatmap.png \
        --phone-out report/figures/phone/03.1_pe_heatmap.png

Titles are built from the same table as the data. Labels are Chinese, with the English term
once per figure, drawn in Noto Sans CJK SC (Debian's `fonts-noto-cjk`, found by its family name;
the same font then draws the Latin letters and digits, mathtext keeps its own fonts for $d_k$);
which font file and version drew a figure is written into the PNG and printed in the report's
provenance. A machine without that font draws the same figures with English labels (a system
font would otherwise leave boxes for the Chinese), and the report says so. Each figure is drawn
twice by one function: at the size a wide screen shows it (1 inch = 96 CSS pixels, at most 9
inches) and at a phone's width (PHONE_WIDTH, multi-panel figures stacked), with no text under
9 pt, legends outside the axes and clear of the titles, and saved as 150 dpi PNGs without
timestamps or software metadata, so two builds on one machine give the same bytes.

Long on purpose: a catalogue, one independent drawing function per figure, registered by its
decorator.
"""

import argparse
import functools
import math
import struct
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
# the phone drawing: 3.6 in = 346 CSS px fits a 390 px phone's column (390 − 2 × 16 px), so it
# is shown at its drawn size and 9 pt text stays 12 CSS px
PHONE_WIDTH = 3.6
PHONE_SIZE = (PHONE_WIDTH, 3.4)

CJK_FAMILY = "Noto Sans CJK SC"  # Debian's fonts-noto-cjk (CI installs it)
CJK_FILE = "NotoSansCJK"  # its files' names (NotoSansCJK-Regular.ttc), for a stale font cache
FALLBACK_FAMILY = "DejaVu Sans"  # matplotlib's own: what a machine without the CJK font draws
# PNG text chunks: what drew the figure, and its smallest text (read by the report and tests)
FONT_KEY = "lecture17 font"
SMALLEST_KEY = "lecture17 smallest text px"

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


# --- the font: Chinese labels where the CJK font is, English ones where it is not ------------


@dataclass(frozen=True)
class Font:
    family: str
    file: str  # the font file's name (a .ttc holds several faces)
    version: str  # from the font's name table (name ID 5), e.g. "2.004"

    def __str__(self) -> str:
        return f"{self.family} {self.version} ({self.file})"


@functools.cache
def cjk_font() -> Font | None:
    """The CJK font the labels are drawn in, or None where this machine has none."""
    from matplotlib import font_manager

    def find():
        try:
            return font_manager.findfont(
                font_manager.FontProperties(family=CJK_FAMILY), fallback_to_default=False
            )
        except ValueError:
            return None

    path = find()
    if path is None:
        # matplotlib lists the system's fonts once, in a cache it never refreshes: a font
        # installed after matplotlib's first import is missing from it, so add its files
        faces = [p for p in font_manager.findSystemFonts() if Path(p).name.startswith(CJK_FILE)]
        for face in faces:
            font_manager.fontManager.addfont(face)
        path = find() if faces else None
    if path is None:
        return None
    face = font_manager.get_font(path)
    if face.family_name != CJK_FAMILY:
        return None
    names = face.get_sfnt()
    raw = next((v for k, v in sorted(names.items()) if k[0] == 3 and k[3] == 5), b"")
    version = raw.decode("utf-16-be").removeprefix("Version ").split(";")[0] or "unknown"
    return Font(CJK_FAMILY, Path(str(path)).name, version)


def font_note() -> str:
    """What drew the labels, as the PNG and the report's provenance say it."""
    font = cjk_font()
    return str(font) if font else f"{FALLBACK_FAMILY}: no {CJK_FAMILY}, English labels"


def _t(chinese: str, english: str) -> str:
    """A label: the Chinese one (with its English term, where the figure first uses it), or the
    English one on a machine without the CJK font."""
    return chinese if cjk_font() else english


def _style() -> dict:
    if cjk_font() is None:
        return STYLE
    # the CJK font first: it has Latin letters and digits too, and mathtext's plain text
    # ("头 1，$L$ = 16") is drawn in the first family only
    return {**STYLE, "font.family": [CJK_FAMILY, FALLBACK_FAMILY]}


# --- the registry: each figure registered once, by the decorator on its drawing function -----


@dataclass(frozen=True)
class Figure:
    name: str  # report/figures/<name>.png (and report/figures/phone/<name>.png)
    demo: str  # the demo it belongs to (experiments.DEMOS): shown with it, numbered by its §
    caption: str  # what the report prints under it
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


def _phone(fig) -> bool:
    """Whether `fig` is the phone drawing: render(phone=True) starts it PHONE_WIDTH wide (ask
    before resizing it)."""
    return fig.get_figwidth() <= PHONE_WIDTH


def _size(fig, wide: tuple, phone_height: float) -> bool:
    """Resize `fig` to `wide`, or to PHONE_WIDTH × phone_height for the phone; True on a phone."""
    phone = _phone(fig)
    fig.set_size_inches(*((PHONE_WIDTH, phone_height) if phone else wide))
    return phone


def _lines(fig, head: str, tail: str) -> str:
    """A title in two parts: "head（tail）" on one line, or on two lines on a phone."""
    if _phone(fig):
        return f"{head}\n{tail}"
    return f"{head}（{tail}）" if cjk_font() else f"{head} ({tail})"


def _legend_below(fig, ax=None, ncols=2, handles=None, labels=None):
    """A legend under the axes (constrained layout makes room), so it covers no data."""
    if handles is None:
        handles, labels = (ax or fig.axes[0]).get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=ncols, frameon=False)


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


def _series(table, quantity, x, by, where=None):
    """{label of `by`: (x values, mean, min, max)} for one quantity, x sorted numerically."""
    rows = select(table, quantity, **(where or {}))
    out = {}
    for key, group in rows.groupby(by, sort=False):
        group = group.assign(_x=group[x].astype(float)).sort_values("_x")
        out[key] = (group["_x"], group["mean"], group["min"], group["max"])
    return out


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
    sep = "，" if cjk_font() else ", "
    names = {"True": _t("缩放 scaled", "scaled"), "False": _t("不缩放 unscaled", "unscaled")}
    for panel, optimizer in zip(panels, optimizers, strict=True):
        for colour, d_k in enumerate(dict.fromkeys(table["d_k"])):
            for scaled, style in (("True", "o-"), ("False", "s--")):
                cell = dict(optimizer=optimizer, d_k=d_k, scaled=scaled)
                lr, mean, _, _ = _series(table, "final_accuracy", "lr", "optimizer", cell)[
                    optimizer
                ]
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


# §9 (05.x): one colour and name per model, the same in every figure
MODEL_STYLE = {
    "gru": (("GRU（无注意力）", "GRU (no attention)"), "tab:blue"),
    "gru_attention": (("GRU + 注意力", "GRU + attention"), "tab:orange"),
    "transformer": (("Transformer", "Transformer"), "tab:green"),
}
CHANCE_05 = 0.1  # §9.1: 10 symbols, a guess is right 1 time in 10


def _model_style(model):
    names, colour = MODEL_STYLE.get(model, ((model, model), None))
    return _t(*names), colour


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
    subfigs = fig.subfigures(len(rows), 1, height_ratios=ratios)
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


# §6.5's four positional schemes (07.9): the two added to the input solid, the two in the
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


# PyTorch's own models (06.3) in their counterpart's colour, dashed
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


# the report's and the figure rule's order: by name, so by demo
FIGURES = dict(sorted(FIGURES.items()))


def render(name: str, table, phone: bool = False):
    """The matplotlib Figure `name` drawn from its seed-averaged table (not saved): at the size
    a wide screen shows it, or (`phone`) PHONE_WIDTH wide."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if name not in FIGURES:
        raise ValueError(f"unknown figure {name!r}; expected one of {sorted(FIGURES)}")
    with plt.rc_context(_style()):
        size = PHONE_SIZE if phone else SIZE
        fig, ax = plt.subplots(figsize=size, dpi=DPI, layout="constrained")
        FIGURES[name].draw(table, ax)
    return fig


def smallest_text_pt(fig) -> float:
    """The smallest font size (pt) of any text the figure shows."""
    from matplotlib.text import Text

    sizes = [
        t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()
    ]
    return min(sizes)


def _save(fig, out: Path) -> None:
    import matplotlib.pyplot as plt

    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp.png")
    with plt.rc_context(_style()):
        fig.canvas.draw()  # lays out the ticks, so that every label is counted
        metadata = {
            "Software": None,  # no version, no timestamp
            FONT_KEY: font_note(),
            SMALLEST_KEY: f"{smallest_text_pt(fig) * DPI / 72:.2f}",  # at the PNG's pixels
        }
        fig.savefig(tmp, dpi=DPI, metadata=metadata)
    plt.close(fig)
    tmp.replace(out)


def draw(name: str, table_path: Path, out: Path, phone_out: Path | None = None) -> None:
    """Figure `name` from its table to `out`, and its phone drawing to `phone_out`."""
    table = read_tables([table_path])[table_path.stem]  # timings merged in
    _save(render(name, table), out)
    if phone_out is not None:
        _save(render(name, table, phone=True), phone_out)


def png_text(path: Path) -> dict[str, str]:
    """The PNG's tEXt chunks (FONT_KEY, SMALLEST_KEY, …): what drew it."""
    data, found, at = Path(path).read_bytes(), {}, 8
    while at + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[at : at + 8])
        if kind == b"tEXt":
            key, _, value = data[at + 8 : at + 8 + length].partition(b"\0")
            found[key.decode("latin-1")] = value.decode("latin-1")
        if kind == b"IEND":
            break
        at += 12 + length
    return found


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m lecture17.reporting.figures", description=__doc__.splitlines()[0]
    )
    p.add_argument("name")
    p.add_argument("table", type=Path)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--phone-out", type=Path, help="the phone drawing (PHONE_WIDTH wide)")
    args = p.parse_args(argv)
    draw(args.name, args.table, args.out, args.phone_out)
    print(f"图 figure {args.name} → {args.out} ({font_note()})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
