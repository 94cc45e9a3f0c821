"""The report as a web page: one self-contained HTML file that works offline, without JavaScript.

The Markdown the report renders (lecture17.md.j2, in its HTML flavour) becomes HTML here, then:
formulas (`$…$`, and the lecture's symbols written in ASCII such as d_k) become MathML
(latex2mathml, at build time); every heading gets a stable id (§4.4 -> `#s4-4`) and a line in
the table of contents; references to sections and claims, which the renderer leaves as
`@@SEC:…@@` / `@@CLAIM:…@@` because the headings are not known yet, become links where their
target exists and plain text where it does not; tables get a horizontal scroll container;
figures are embedded as data URIs. The page's layout and CSS are in lecture17.html.j2.

The text's rewrites (MathML, the demos' names, English once) are in reporting.page_text; this
module is the path from the rendered Markdown to the page, step by step, each step a short
function.
"""

import base64
import html
import re
from pathlib import Path

import markdown
from jinja2 import Environment, FileSystemLoader, StrictUndefined

from lecture17.reporting.page_text import (
    GLOSS,
    _is_gloss,
    demo_names,
    english_once,
    restore_math,
    stash_math,
    symbols,
)

# -----------------------------------------------------------------------------
# headings, the table of contents, and links to sections and claims

SECTION_NUMBERS = re.compile(r"§(\d+)(?:\.(\d+))?")
HEADING = re.compile(r"<h([23])>(.*?)</h\1>", re.S)


def plain(fragment: str) -> str:
    """Text of an HTML fragment (MathML keeps its characters)."""
    return html.unescape(re.sub(r"<[^>]+>", "", fragment)).strip()


def slug(text: str) -> str:
    """A heading's id: §4.4 -> s4-4, §13 -> s13; otherwise its English words (summary)."""
    match = SECTION_NUMBERS.match(text)
    if match:
        return "s" + "-".join(n for n in match.groups() if n)
    words = re.findall(r"[A-Za-z][A-Za-z0-9]*", text)
    return "-".join(w.lower() for w in words) or "section"


def covered(text: str) -> list[tuple[int, int | None]]:
    """The lecture sections a heading covers: "§3.3–§3.4 …" -> [(3, 3), (3, 4)]."""
    head = text.split(" ", 1)[0]
    numbers = [(int(a), int(b) if b else None) for a, b in SECTION_NUMBERS.findall(head)]
    if "–" in head and len(numbers) == 2 and numbers[0][0] == numbers[1][0] and numbers[0][1]:
        major, lo, hi = numbers[0][0], numbers[0][1], numbers[1][1]
        return [(major, minor) for minor in range(lo, hi + 1)]
    return numbers


def anchor_headings(html_text: str) -> tuple[str, list[dict]]:
    """Give every h2 / h3 a unique id; return the HTML and the headings in order."""
    headings, used = [], set()

    def replace(match):
        level, inner = int(match.group(1)), match.group(2)
        text = plain(inner)
        base = anchor = slug(text)
        n = 2
        while anchor in used:
            anchor, n = f"{base}-{n}", n + 1
        used.add(anchor)
        before = html_text[: match.start()]  # inside an audit block: listed in the audit only
        audit = before.count(AUDIT_BEGIN) > before.count(AUDIT_END)
        headings.append(
            dict(level=level, id=anchor, html=inner, sections=covered(text), audit=audit)
        )
        back = ' <a class="top" href="#toc" title="目录 contents">↑</a>' if level == 2 else ""
        return f'<h{level} id="{anchor}">{inner}{back}</h{level}>'

    return HEADING.sub(replace, html_text), headings


DEMO_LABEL = re.compile(r"（((?:代码|演示|记录的运行)[^）]*)）")


def toc_entry(h: dict) -> str:
    """A heading in the contents: its § number, its title, and the demos it shows ("代码 01
    演示 4": the lecture's names, so a student finds a demo in the contents) apart from the
    title (narrow screens show the number and the demos)."""
    demos = "；".join(DEMO_LABEL.findall(h["html"]))
    title = DEMO_LABEL.sub("", h["html"]).strip()
    label = f' <span class="d">{demos}</span>' if demos else ""
    match = re.match(r"(§[\d.]+(?:[–、]§[\d.]+)?)\s*(.*)", title, re.S)
    if not match:
        return f'<a href="#{h["id"]}">{title}{label}</a>'
    number, rest = match.groups()
    if rest.startswith("超出讲义："):  # told apart from §8.4 itself, and from each other, on a
        # phone (which shows the number only): "§8.4 超出讲义：KV cache"
        short = rest.removeprefix("超出讲义：").partition(" Beyond")[0]
        number, rest = f"{number} 超出讲义：{short.strip()}", ""
    rest = GLOSS.sub(lambda m: "" if _is_gloss(m[1].rstrip()) else m[0], rest).strip()
    title = f' <span class="t">{rest}</span>' if rest else ""  # the Chinese title
    return f'<a href="#{h["id"]}"><span class="n">{number}</span>{title}{label}</a>'


def toc(headings: list[dict]) -> str:
    """Nested lists: the § sections, each with its subsections."""
    lines, open_sub = ['<ol class="toc-1">'], False
    for h in headings:
        link = toc_entry(h)
        li = '<li class="audit">' if h.get("audit") else "<li>"  # the study reading hides it
        if h["level"] == 2:
            if open_sub:
                lines.append("</ol></li>")
            elif len(lines) > 1:
                lines.append("</li>")
            lines.append(f"{li}{link}")
            open_sub = False
        else:
            if not open_sub:
                lines.append('<ol class="toc-2">')
                open_sub = True
            lines.append(f"{li}{link}</li>")
    lines.append("</ol></li></ol>" if open_sub else "</li></ol>")
    return "\n".join(lines)


def section_targets(headings: list[dict]) -> dict:
    """(major, minor) -> id of the first heading that covers it; (major, None) for the §."""
    targets = {}
    for h in headings:
        for number in h["sections"]:
            targets.setdefault(number, h["id"])
    return targets


def section_link(part: str, targets: dict) -> str:
    """One reference ("§4.4", "§13 Ex1", "Ex4(c)") as a link to its heading, if there is one."""
    match = SECTION_NUMBERS.search(part)
    if match:
        major, minor = int(match.group(1)), match.group(2)
        key = (major, int(minor)) if minor else (major, None)
        target = targets.get(key) or targets.get((major, None))
    else:
        target = targets.get((13, None)) if part.startswith("Ex") else None
    shown = exercise_words(part)
    return f'<a href="#{target}">{shown}</a>' if target else shown


EXERCISE = re.compile(r"\bEx(\d+)")


def exercise_words(section: str) -> str:
    """The ledger's "Ex4(c)" as the lecture says it: "练习 4(c)"."""
    return EXERCISE.sub(r"练习 \1", section)


def resolve_links(html_text: str, targets: dict, ids: set) -> str:
    """@@SEC:§4.4 / §11@@ and @@CLAIM:C039@@ -> links where the target is on the page."""

    def sections(match):
        return " / ".join(section_link(p.strip(), targets) for p in match.group(1).split(" / "))

    def claim(match):
        cid = match.group(1)
        return f'<a href="#{cid}">{cid}</a>' if cid in ids else cid

    html_text = re.sub(r"@@SEC:(.*?)@@", sections, html_text)
    return re.sub(r"@@CLAIM:(.*?)@@", claim, html_text)


def element_ids(html_text: str) -> set:
    return set(re.findall(r'\sid="([^"]+)"', html_text))


# -----------------------------------------------------------------------------
# tables, machine-dependent blocks, figures


def wrap_tables(html_text: str) -> str:
    """Every table in a horizontal scroll container: the page itself never scrolls sideways."""
    html_text = html_text.replace("<table>", '<div class="scroll"><table>')
    return html_text.replace("</table>", "</table></div>")


SPREAD = re.compile(r" \(([^()<>–]+)–([^()<>]+)\)")  # a table cell's " (min–max)"


def seed_spreads(html_text: str) -> str:
    """A table cell's seed spread, " (min–max)" after its mean (views.fmt_cell), in a
    <span class="spread">: the audit reading shows it, the study reading keeps the mean."""

    def cell(match):
        return match.group(1) + SPREAD.sub(r'<span class="spread">\g<0></span>', match.group(2))

    html_text = re.sub(r"(<td[^>]*>)(.*?)(?=</td>)", cell, html_text)
    # a caption's promise of the spread ("种子 0–2 的平均（最小–最大）") goes with the spreads
    html_text = re.sub(  # "平均（最小–最大）mean …": a space stays between the two
        r"（最小–最大）(?=[A-Za-z])", '<span class="spread">（最小–最大）</span> ', html_text
    )
    html_text = html_text.replace("（最小–最大）", '<span class="spread">（最小–最大）</span>')
    return html_text.replace(" (min–max)", '<span class="spread"> (min–max)</span>')


AUDIT_PARAGRAPH = re.compile(r'<p class="[^"]*\baudit\b[^"]*">.*?</p>', re.S)


def mark_machine_dependent(html_text: str, begin: str, end: str) -> str:
    """Each machine-dependent block in a dashed box; a box whose paragraphs are all the audit
    reading's is the audit reading's too (the study reading shows no empty box)."""

    def box(match: re.Match) -> str:
        inner = match[1]
        audit_only = not AUDIT_PARAGRAPH.sub("", inner).strip()
        cls = "machine audit" if audit_only else "machine"
        return f'{begin}\n<div class="{cls}">{inner}</div>\n{end}'

    return re.sub(f"{re.escape(begin)}(.*?){re.escape(end)}", box, html_text, flags=re.S)


def embed_figures(html_text: str, figure_dir: Path) -> str:
    """figures/NAME.png and figures/phone/NAME.png -> data URIs, so the one HTML file is the
    whole page."""

    def embed(match):
        data = base64.b64encode((figure_dir / match.group(2)).read_bytes()).decode("ascii")
        return f'{match.group(1)}="data:image/png;base64,{data}"'

    return re.sub(r'\b(src|srcset)="figures/((?:phone/)?[^"/]+\.png)"', embed, html_text)


# -----------------------------------------------------------------------------
# the page


AUDIT_BEGIN, AUDIT_END = "@@AUDIT@@", "@@/AUDIT@@"  # Report.audit() / end_audit(), HTML only
FOLD_BEGIN, FOLD_END = "@@FOLD:%s@@", "@@/FOLD@@"  # Report.fold(summary) / end_fold()
FOLD = re.compile(r"(?:<p>)?@@FOLD:(.+?)@@(?:</p>)?")


def fold_blocks(html_text: str) -> str:
    """The template's folded answers (Report.fold()) as closed <details>: a student works the
    exercise out, then opens it; no script, and every table inside shows when opened."""
    html_text = FOLD.sub(
        lambda m: f'<details class="answer"><summary>{m.group(1)}</summary>', html_text
    )
    return html_text.replace(f"<p>{FOLD_END}</p>", "</details>").replace(FOLD_END, "</details>")


def audit_blocks(html_text: str) -> str:
    """The template's audit-reading blocks (between Report.audit() and end_audit()) as
    <div class="audit">: shown with the audit switch on, hidden in the study reading."""
    for marker, tag in ((AUDIT_BEGIN, '<div class="audit">'), (AUDIT_END, "</div>")):
        html_text = html_text.replace(f"<p>{marker}</p>", tag).replace(marker, tag)
    return html_text


def to_html(md_text: str, figure_dir: Path, page: Path, machine_markers: tuple) -> str:
    """The report's HTML flavour of Markdown -> the self-contained page."""
    md_text, formulas = stash_math(md_text)
    body = markdown.markdown(md_text, extensions=["tables", "fenced_code"], output_format="html")
    body = demo_names(symbols(restore_math(body, formulas)))
    body, headings = anchor_headings(body)
    body = resolve_links(body, section_targets(headings), element_ids(body))
    body = wrap_tables(seed_spreads(fold_blocks(audit_blocks(body))))
    body = mark_machine_dependent(body, *machine_markers)
    body = english_once(body)
    env = Environment(loader=FileSystemLoader(page.parent), undefined=StrictUndefined)
    text = env.get_template(page.name).render(body=body, toc=toc(headings))
    return embed_figures(text, figure_dir)
