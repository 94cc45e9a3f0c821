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

from lecture17.aggregate import read_table


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


def previous_token_weight(table, ax):
    """03.4 (§6.4): mean weight on the previous position grows with beta in W^Q = beta M_-1."""
    rows = table[table["quantity"] == "mean_weight_previous"]
    beta = rows["beta"].astype(float)
    ax.semilogx(beta, rows["mean"], "o-", base=2)
    ax.set_xlabel("beta")
    ax.set_ylabel("mean weight on position i-1")
    ax.set_ylim(0, 1)
    ax.set_title(f"A previous-token head from PE alone ({len(rows)} values of beta)")


# name -> (demo whose table it draws, function)
FIGURES = {
    "01.4_sensitivity": ("01.4", sensitivity_by_distance),
    "02.2_saturation": ("02.2", saturation_by_dk),
    "03.1_pe_heatmap": ("03.1", pe_heatmap),
    "03.4_previous_token": ("03.4", previous_token_weight),
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
    "03.1_pe_heatmap": "图：正弦位置编码的热图。左边高频的维度变化很快，右边低频的维度几乎不变。",
    "03.4_previous_token": (
        "图：只用位置编码、W^Q = β M₋₁ 时，放在前一个位置上的平均权重随 β 变“硬”。"
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
    FIGURES[name][1](read_table(table_path), ax)
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
