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

The figures are drawn by the modules of their lecture sections (figures_attention,
figures_encoder, figures_reversal, figures_timing), each function registered by its @figure
decorator; their size, fonts and registry are in figure_base. This module draws one by name and
saves it.
"""

import argparse
import struct
import sys
from pathlib import Path

from lecture17.pipeline.aggregate import read_tables

# the figure modules, by lecture section: each registers its figures when imported
from lecture17.reporting import (  # noqa: F401
    figures_attention,
    figures_encoder,
    figures_reversal,
    figures_timing,
)

# the shared pieces, also imported from here (the report, the workflow, the tests)
from lecture17.reporting.figure_base import (  # noqa: F401
    CJK_FAMILY,
    CJK_FILE,
    DPI,
    FIGURES,
    FONT_KEY,
    MAX_WIDTH,
    MIN_FONT_PT,
    PHONE_SIZE,
    PHONE_WIDTH,
    SIZE,
    SMALLEST_KEY,
    Figure,
    Font,
    _style,
    caption,
    cjk_font,
    figure,
    font_note,
)

# the report's and the figure rule's order: by name, so by demo (in place: figure_base's
# FIGURES is this same dict)
_by_name = sorted(FIGURES.items())
FIGURES.clear()
FIGURES.update(_by_name)


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
