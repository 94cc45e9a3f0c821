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


# name -> (demo whose table it draws, function)
FIGURES = {
    "03.1_pe_heatmap": ("03.1", pe_heatmap),
}


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
