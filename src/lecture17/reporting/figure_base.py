"""What every figure shares: its size and fonts, the registry, and the drawing helpers.

The constants say how big a figure is drawn (on a wide screen and on a phone) and in what
font; cjk_font finds Noto Sans CJK SC, and _t picks the Chinese label or, on a machine without
that font, the English one. The @figure decorator registers a drawing function under its name
and demo (FIGURES). The underscored helpers (a phone-aware size and title, a legend under the
axes, a table's series, the models' colours) are for the figure modules only:
figures_attention, figures_encoder, figures_reversal and figures_timing, which
lecture17.reporting.figures imports to register every figure.
"""

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lecture17.experiments import DEMOS
from lecture17.pipeline.aggregate import select

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


# --- what the figure modules share: size, titles and legends on a phone, a table's series ---


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


def _series(table, quantity, x, by, where=None):
    """{label of `by`: (x values, mean, min, max)} for one quantity, x sorted numerically."""
    rows = select(table, quantity, **(where or {}))
    out = {}
    for key, group in rows.groupby(by, sort=False):
        group = group.assign(_x=group[x].astype(float)).sort_values("_x")
        out[key] = (group["_x"], group["mean"], group["min"], group["max"])
    return out


def _job_value(table, quantity, **labels) -> float:
    """The seed mean of one job-level quantity (the first row that has these labels)."""
    return float(select(table, quantity, **labels)["mean"].iloc[0])


# §9 (05.x): one colour and name per model, the same in every figure
MODEL_STYLE = {
    "gru": (("GRU（无注意力）", "GRU (no attention)"), "tab:blue"),
    "gru_attention": (("GRU + 注意力", "GRU + attention"), "tab:orange"),
    "transformer": (("Transformer", "Transformer"), "tab:green"),
}


def _model_style(model):
    names, colour = MODEL_STYLE.get(model, ((model, model), None))
    return _t(*names), colour
