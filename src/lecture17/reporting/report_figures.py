"""The report's figures: numbered by the lecture section they belong to, shown at their drawn
size (with the phone drawing on a narrow screen), and the fonts that drew them.

Each function here is one piece of what Report.figure and Report.figure_ref write; the drawing
itself is lecture17.reporting.figures'.
"""

import struct
from pathlib import Path

from lecture17.reporting.figures import CJK_FAMILY, DPI, FIGURES, FONT_KEY, png_text
from lecture17.reporting.figures import caption as figure_caption


def figure_numbers(names) -> dict:
    """{name: "4.3"}; two figures of one section are 9.5a and 9.5b."""
    by_section = {}
    for name in names:
        by_section.setdefault(FIGURES[name].section if name in FIGURES else "0", []).append(name)
    numbers = {}
    for section, group in by_section.items():
        for i, name in enumerate(group):
            numbers[name] = section + ("abcdefgh"[i] if len(group) > 1 else "")
    return numbers


# the phone drawing (report/figures/phone/) below this width: there a wide drawing (at most
# 9 in = 864 CSS px, no text under 9 pt = 12 CSS px) would be scaled under 3/4, its text under
# 9 CSS px, in a column of the screen's width less 2 rem (42.5 em = 680 px: 648 px); the page's
# CSS hides the "full size" link under the same width
PHONE_MEDIA = "(max-width: 42.5em)"


def figure_fonts(paths) -> str:
    """The fonts that drew the figures, as their PNGs record them (provenance)."""
    fonts = sorted({png_text(p).get(FONT_KEY, "未记录 not recorded") for p in paths})
    said = "；".join(fonts) or "没有图 no figures"
    if any("English labels" in font for font in fonts):
        said += f"。这台机器没有 {CJK_FAMILY}（Debian 的 fonts-noto-cjk），图里的标注是英文"
    return said


def css_width(path: Path) -> int:
    """The figure's width in CSS px at its drawn size: PNG pixels × 96 / DPI."""
    with open(path, "rb") as f:
        header = f.read(24)
    (pixels,) = struct.unpack(">I", header[16:20])
    return round(pixels * 96 / DPI)


def figure_ref(number: str, html: bool, short: bool = False) -> str:
    """ "图 4.4 Figure 4.4" (a link in the page); short: "图 4.4" (a table's pointer)."""
    text = f"图 {number}" if short or html else f"图 {number} Figure {number}"
    if html:
        return f'<a href="#fig-{number.replace(".", "-")}">{text}</a>'
    return text


def figure_block(name: str, number: str, path: Path, html: bool) -> str:
    """The figure and its caption: a Markdown image, or in the page a <figure> at its drawn
    size that a phone shows in its phone drawing."""
    label = f"图 {number}" if html else f"图 {number} Figure {number}"  # English once
    if not html:
        return f"![{label}](figures/{path.name})\n\n*{label} · {figure_caption(name)}*"
    anchor = f"fig-{number.replace('.', '-')}"
    image = f'<img src="figures/{path.name}" width="{css_width(path)}" alt="{label}">'
    phone = path.parent / "phone" / path.name
    if phone.is_file():  # a phone shows the phone drawing at its drawn size
        image = (
            f'<picture><source media="{PHONE_MEDIA}" srcset="figures/phone/{path.name}" '
            f'width="{css_width(phone)}">{image}</picture>'
        )
    return (  # a narrow screen scales it; the link (#anchor) shows it at its drawn size
        f'<figure id="{anchor}"><div class="figure">{image}</div>'
        f"<figcaption><b>{label}</b> {figure_caption(name)} "
        f'<a class="zoom" href="#{anchor}">看原大 full size</a></figcaption></figure>'
    )
