"""Render the report: the lecture's tables regenerated, each beside the lecture's own numbers.

    python -m lecture17.reporting.report --tables results/tables/*.csv \
        --figures report/figures/*.png \
        --ledger report/ledger --views report/views \
        --template report/templates/lecture17.md.j2 --page report/templates/lecture17.html.j2 \
        --config config/config.yaml --out-md report/lecture17.md --out-html report/lecture17.html

Everything in the report is computed from the aggregated tables; the lecture's values come from
the ledger. Nothing depends on the date, the path or the host, except the block marked
machine-dependent (timings, CPU), which a diff of two reports skips.

The template is rendered twice from the same tables and verdicts: as Markdown (the file diffs
read; formulas stay `$…$`) and in an HTML flavour that reporting.page turns into the web page
(claims as cards with their check folded away, MathML, anchors, a table of contents).

Long on purpose: the template's interface (Report: every call the template makes) and the
command line that builds the page; views are in reporting.views, sentences worded from data in
report/templates/macros.md.j2.
"""

import argparse
import hashlib
import html
import json
import re
import shutil
import struct
import sys
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from lecture17.experiments import DEMOS
from lecture17.pipeline import fingerprint, record, yamlio
from lecture17.pipeline.aggregate import read_tables, table_seeds
from lecture17.pipeline.csvio import timing_path
from lecture17.reporting import claims as claims_mod
from lecture17.reporting import ledger as ledger_mod
from lecture17.reporting import page as page_mod
from lecture17.reporting import robustness
from lecture17.reporting.figures import CJK_FAMILY, DPI, FIGURES, FONT_KEY, png_text
from lecture17.reporting.figures import caption as figure_caption
from lecture17.reporting.page import to_html
from lecture17.reporting.provenance import machine_info, reproducible_info
from lecture17.reporting.views import (
    crossovers,
    fold,
    grid_table,
    lecture_cells,
    load_views,
    view_grid,
)
from lecture17.reporting.worked_examples import INPUTS

FLAG = re.compile(r"\bF(?:0[1-9]|10)\b")  # a flag of the reading aid, named in a table's text

MACHINE_BEGIN = "<!-- machine-dependent:begin -->"
MACHINE_END = "<!-- machine-dependent:end -->"


# -----------------------------------------------------------------------------
# figures: numbered by the lecture section they belong to, shown at their drawn size


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


# -----------------------------------------------------------------------------
# the document


def load_lessons(path: Path) -> dict:
    """report/lessons.yaml: {section: {topic, point, claim}}; {} when the file is absent."""
    if not Path(path).is_file():
        return {}
    lessons = yamlio.load(Path(path).read_text(encoding="utf-8")) or {}
    for section, item in lessons.items():
        if not isinstance(item, dict) or set(item) != {"topic", "point", "claim"}:
            raise ValueError(f"{path}: {section} must be {{topic, point, claim}}")
    return lessons


def machine_dependent(text: str) -> str:
    return f"{MACHINE_BEGIN}\n\n{text}\n\n{MACHINE_END}"


class Report:
    """What the template can call: demo(id) renders a demo's tables, figures and claims.

    `html`: the HTML flavour (claims as cards, links left as @@…@@ for reporting.page).
    """

    def __init__(self, tables, views, outcomes, figures, recorded=(), settings=None, html=False):
        self.tables, self.views, self.outcomes, self.figures = tables, views, outcomes, figures
        self.recorded = set(recorded)  # demos whose runs were recorded elsewhere (on a GPU)
        self.settings = settings or {}  # the config's `demos`
        self.html = html
        self.lecture = lecture_cells(outcomes, tables)
        self.numbers = figure_numbers(figures)
        self.shown = set()
        self.rendered = set()  # the demos the template placed (build() checks none is left out)
        self.lessons = {}  # section -> {topic, point, claim} (report/lessons.yaml)

    def demo(self, demo_id: str, exercises: bool = False, claims: bool = True, section=None) -> str:
        """A demo's views, figures and claims; claims about exercises wait for §13 unless asked;
        claims=False leaves its claims to the template (§13 puts each under its exercise);
        section: only the claims of that § here (the template places the others)."""
        if demo_id not in self.views and demo_id not in self.tables:
            return f"*（本次构建没有演示 {demo_id} demo {demo_id} is not in this build）*"
        self.rendered.add(demo_id)
        chosen = self._choose(demo=demo_id, section=section, exercises=exercises)
        sources = {str(v.get("table", demo_id)) for v in self.views.get(demo_id, [])} | {demo_id}
        trained = any(self.settings.get(d, {}).get("grid") for d in sources)
        quoted = any(self.lecture_of(d) for d in sources)
        reading, timing = claims_mod.reading_note(chosen, trained, quoted, self.html)
        parts = [reading, machine_dependent(timing) if timing else "", self.inputs(demo_id)]
        figures = [n for n in self.figures if n in FIGURES and FIGURES[n].demo == demo_id]
        for i, view in enumerate(self.views.get(demo_id, [])):
            parts += self.view(view, demo_id, figures if i == 0 else [])
        parts += [self.figure(name) for name in figures]
        if claims:
            parts.append(self.claims(demo=demo_id, section=section, exercises=exercises))
        return "\n\n".join(p for p in parts if p)

    def audit(self) -> str:
        """Opens a block of the audit reading (HTML: hidden in the study reading; the Markdown
        keeps everything)."""
        return f"\n{page_mod.AUDIT_BEGIN}\n" if self.html else ""

    def end_audit(self) -> str:
        return f"\n{page_mod.AUDIT_END}\n" if self.html else ""

    def lesson(self, section: str) -> str:
        """The box that opens a section: "what this section teaches" — the lecture's point
        (quoted), then the deciding claim's verdict and sentence (claims.takeaway: the lecture's
        number and ours, and the likely cause where it does not hold). Generated from the
        claim's outcome, never typed; the section's badge counts are the audit reading's."""
        item = self.lessons.get(section)
        if not item:
            return ""
        by_id = {o.entry["id"]: o for o in self.outcomes}
        if item["claim"] not in by_id:
            raise ValueError(f"lessons {section}: no claim {item['claim']!r} in the ledger")
        o = by_id[item["claim"]]
        said = claims_mod.takeaway(o, by_id)
        ref = claims_mod.claim_ref(o, self.html)
        head = f"这一节学到什么：{item['topic']}"
        if self.html:
            badge = claims_mod.study_badge(o)
            return (
                f'<div class="lesson" id="lesson-{section.lstrip("§").replace(".", "-")}">'
                f"<p><b>{html.escape(head)}</b></p>"
                f"<p>讲义：「{html.escape(item['point'])}」</p>"
                f"<p>我们的运行 our run：{badge} {html.escape(said)}"
                f'<span class="audit">（{ref}）</span></p></div>'
            )
        badge = claims_mod.badge(o, html_mode=False)
        lines = [
            f"**{head}**",
            f"讲义：「{item['point']}」",
            f"我们的运行：{badge}。{said}（{ref}）",
        ]
        return "\n>\n".join(f"> {line}" for line in lines)

    def fold(self, summary: str) -> str:
        """Opens an answer to fold away (HTML: <details>, closed, no script; the Markdown, the
        text diffed against the lecture, keeps everything and says nothing)."""
        return f"\n{page_mod.FOLD_BEGIN % summary}\n" if self.html else ""

    def end_fold(self) -> str:
        return f"\n{page_mod.FOLD_END}\n" if self.html else ""

    def predictions(self, section: str) -> str:
        """An exercise's "predict, then run" (§13): per claim with `predict`, the question and
        its two choices, the lecture's expected trend and its opposite, in a fixed order (A the
        lecture's, B its opposite: the lecture itself states its expectation)."""
        lines = []
        for o in self._predicted(section):
            p = o.entry["predict"]
            lines.append(f"- **{p['who']}**：(A) {p['lecture']}　(B) {p['opposite']}")
        return "\n".join(lines)

    def prediction_answers(self, section: str) -> str:
        """Per prediction, the choice our recorded runs support, from the claim's verdict; its
        numbers when a few decide it; an undecided one says so in words (the statistics behind
        it: the audit reading's)."""
        lines = []
        for o in self._predicted(section):
            v = claims_mod.study_verdict(o)
            choice = {"holds": "(A)", "same": "(A)", "differs": "(B)"}.get(v)
            if choice:
                said = f"支持 {choice}"
            elif v == claims_mod.PARTLY:
                said = "一半支持 (A)：只有一部分成立"
            else:
                said = "还定不了：记录的种子太少，(A)、(B) 都不能排除"
            label = claims_mod.STUDY_LABEL.get(v) or claims_mod.LABELS.get(v, v)
            few = o.ours and o.ours.count(",") < 4  # a handful of numbers, not every seed's
            ours = f"；我们：{o.ours}" if few else ""
            why = ""
            if not choice and o.reason:
                why = f"（{o.reason}）"
                if self.html:
                    why = f'<span class="audit">{html.escape(why)}</span>'
            ref = claims_mod.claim_ref(o, self.html)  # an id: the audit reading's
            ref = f'<span class="audit">{ref}，</span>' if self.html else f"{ref}，"
            who = o.entry["predict"]["who"]
            lines.append(f"- **{who}**：我们的运行{said}（{ref}{label}{ours}）{why}")
        return "\n".join(lines)

    def _predicted(self, section: str) -> list:
        return [o for o in self.outcomes if o.entry["section"] == section and "predict" in o.entry]

    def legend(self) -> str:
        """The badges a student meets, in one line: the four verdicts, and what is not counted."""
        signs = claims_mod.SYMBOL
        kinds = [
            f"{signs['holds']} 成立（含数字相同、机器精度内）",
            f"{signs[claims_mod.PARTLY]} 部分成立",
            f"{signs['differs']} 不同（不成立）",
            f"{signs['unresolved']} 还定不了",
            f"{signs['echo']} 回显和 {signs['cited']} 引自论文不计入",
        ]
        return "**标记 Badges**：" + " · ".join(kinds) + "。"

    def flags(self) -> str:
        """The reading aid's flags this page uses (its claims' and those its tables' titles and
        notes name), each explained in a sentence."""
        used = {o.entry["flag"] for o in self.outcomes if o.entry.get("flag")}
        for view in (v for views in self.views.values() for v in views):
            used |= set(FLAG.findall(f"{view.get('title', '')} {view.get('note', '')}"))
        used = sorted(used)
        missing = [f for f in used if f not in ledger_mod.FLAG_TEXT]
        if missing:
            raise ValueError(
                f"flags {missing} are used by claims but not in report/ledger/flags.yaml"
            )
        return "\n".join(f"- **{f}**：{ledger_mod.FLAG_TEXT[f]}" for f in used)

    def exercises_with_claims(self, numbers) -> list[int]:
        """The exercises (of `numbers`) that have a claim not yet placed: each gets a heading."""
        return [n for n in numbers if self._choose(section=f"Ex{n}")]

    def view(self, view, demo_id: str, figures) -> list[str]:
        source = str(view.get("table", demo_id))
        title = f"**{view['title']}**" + (f"（{view['note']}）" if view.get("note") else "")
        title += "".join(f"（见{self.figure_ref(n, short=True)}）" for n in figures)
        if source not in self.tables:
            return [title, f"*（本次构建没有演示 {source} 的结果 not built）*"]
        said = f"{view['title']}{view.get('note', '')}"
        if "种子" not in said and "seed" not in said and (seeds := self.seeds_of(source)):
            title += f"（{seeds}）"  # which seeds a table shows, said unless none matters
        grid = view_grid(self.tables[source], view, self.lecture_of(source), self.html)
        grid, facts = fold(grid, view.get("fold", ()))
        lines = [title] + (["；".join(facts) + "。"] if facts and grid else [])
        if grid is None:
            lines[0] += "：" + "；".join(facts) + "。"
        body = grid_table(grid) if grid else ""
        if view.get("machine_dependent"):
            lines, body = [machine_dependent("\n\n".join(p for p in [*lines, body] if p))], ""
        if view.get("audit"):  # evidence behind the claims, not the lecture's own table
            return [self.audit(), *lines, body, self.end_audit()]
        return [*lines, body]

    def seeds_of(self, demo: str) -> str:
        """ "种子 0–2 的平均" or "种子 0": the seeds a table's cells are of (its `seeds` column);
        "" for a demo whose numbers no seed changes (registry `seed_free`)."""
        if DEMOS[demo].seed_free:
            return ""
        table = self.tables[demo]
        if "seeds" not in table:
            return "一次运行"
        seeds = table_seeds(table)
        return claims_mod.seed_words(seeds) + (" 的平均" if len(seeds) > 1 else "")

    def lecture_of(self, demo: str) -> dict:
        return {key: v for (d, key), v in self.lecture.items() if d == demo}

    def figure_ref(self, name: str, short: bool = False) -> str:
        """ "图 4.4 Figure 4.4" (a link in the page); short: "图 4.4" (a table's pointer)."""
        number = self.numbers[name]
        text = f"图 {number}" if short or self.html else f"图 {number} Figure {number}"
        if self.html:
            return f'<a href="#fig-{number.replace(".", "-")}">{text}</a>'
        return text

    def figure(self, name: str) -> str:
        number, path = self.numbers[name], self.figures[name]
        label = f"图 {number}" if self.html else f"图 {number} Figure {number}"  # English once
        if not self.html:
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

    def inputs(self, demo_id: str) -> str:
        if demo_id not in INPUTS or demo_id not in self.settings:
            return ""
        return INPUTS[demo_id](self.settings[demo_id]["settings"])

    def _choose(self, demo=None, section=None, exercises=True) -> list:
        return [
            o
            for o in self.outcomes
            if o.entry["id"] not in self.shown
            and (demo is None or o.entry.get("demo") == demo)
            and (section is None or o.entry["section"].startswith(section))
            and (exercises or not o.entry["section"].startswith("Ex"))
        ]

    def claims(self, demo=None, section=None, exercises=True) -> str:
        chosen = self._choose(demo, section, exercises)
        self.shown |= {o.entry["id"] for o in chosen}
        others = {o.entry["id"]: o for o in self.outcomes}
        if self.html:

            def render(outs):
                return claims_mod.claim_cards(outs, others)
        else:
            render = claims_mod.claims_table
        stable = [o for o in chosen if o.entry["class"] != "timing"]
        timing = [o for o in chosen if o.entry["class"] == "timing"]
        parts = [render(stable)] if stable else []
        if timing:  # our timings change from run to run: keep them out of the diffable part
            parts.append(machine_dependent(render(timing)))
        return "\n\n".join(parts)

    def remaining_claims(self) -> str:
        return self.claims()

    def _split(self) -> tuple[list, list]:
        """(claims whose verdicts are the same in every build on a machine, timings)."""
        timing = [o for o in self.outcomes if o.entry["class"] == "timing"]
        return [o for o in self.outcomes if o.entry["class"] != "timing"], timing

    def summary_table(self) -> str:
        """Claims per class and status; the timings' row apart, in a machine-dependent block."""
        stable, timing = self._split()
        parts = [claims_mod.summary_table(stable)]
        if timing:
            parts.append(machine_dependent(claims_mod.summary_table(timing)))
        return "\n\n".join(parts)

    def problems_short(self) -> str:
        """The study reading's list of what does not agree (HTML only; the Markdown and the
        audit reading have problems())."""
        if not self.html:
            return ""
        stable, _ = self._split()
        return claims_mod.problems_short(stable) or "所有数字都和讲义一致。"

    def problems(self) -> str:
        """Every claim that does not agree, by why; timings in a machine-dependent block."""
        stable, timing = self._split()
        parts = [
            claims_mod.problem_lists(stable, self.html)
            or (
                "**除计时外，所有数字都和讲义一致 Every claim but the timings agrees.**"
                if timing
                else "**所有数字都和讲义一致 Every claim agrees.**"
            )
        ]
        if timing:  # written whether or not they hold, so the text outside it is the same
            parts.append(
                machine_dependent(
                    claims_mod.problem_lists(timing, self.html)
                    or "**计时在这台机器的这次运行里都成立 Every timing holds in this run.**"
                )
            )
        return "\n\n".join(parts)

    def points(self, points) -> str:
        """§11 / §12: each point of the lecture's summary or pitfalls as a sentence, with how
        the numbers its sections state fare here (points: (topic, "§a §b") pairs)."""
        return claims_mod.point_list(self.outcomes, points, self.html)

    def section_claims(self, number: str) -> str:
        """§11 / §12: every claim that section states, linked to where it is checked."""
        return claims_mod.section_list(self.outcomes, number, self.html)

    def has(self, demo_id: str) -> bool:
        """Whether this build has the demo's table (a GPU-only demo is absent from CPU builds)."""
        return demo_id in self.tables

    def is_recorded(self, demo_id: str) -> bool:
        """Whether the demo's table comes from runs recorded on a GPU, not rerun by this build."""
        return demo_id in self.recorded

    def recording(self, demo_id: str) -> str:
        """When and on what a recorded demo's runs were made (its record.json), one sentence."""
        found = record.read(Path(record.MEASURED, demo_id)) or {}
        if not found:
            return ""
        day = found.get("recorded", "")[:10]
        matching = (
            "和这次构建的配置一致；代码和记录时不同，但行为指纹 behavioural fingerprint（每个设置"
            f"前 {fingerprint.STEPS} 步的损失和表）在容差之内"
            if record.vouched_by(demo_id) == "behaviour"
            else "和这次构建的配置、代码一致 matching this build's config and code"
        )
        return (
            f"*记录的运行 recorded runs：{day} 在 on {found.get('machine', '?')}"
            f"（{found.get('device', 'cpu')}）上运行 `make robustness`，{matching}"
            f"（`{record.MEASURED}/{demo_id}/record.json`）；"
            "本次构建只汇总，不重跑 aggregated here, not rerun。*"
        )

    def by_seed(self, protocol: str, recorded: str | list, where: dict | None = None) -> str:
        """The protocol's claims judged on each robustness seed (reporting.robustness)."""
        recorded = [recorded] if isinstance(recorded, str) else list(recorded)
        if missing := [d for d in [protocol, *recorded] if d not in self.tables]:
            return f"*（本次构建没有 {'、'.join(missing)} 的记录 not recorded: `make robustness`）*"
        return robustness.by_seed(
            self.outcomes, self.tables, self.settings, protocol, recorded, self.html, where
        )

    def by_reading(self, protocol: str, readings_demo: str) -> str:
        """The pre-registered sensitivity table: claim × reading → verdict."""
        if readings_demo not in self.tables or protocol not in self.tables:
            return f"*（本次构建没有 {readings_demo} 的记录 not recorded: `make robustness`）*"
        return robustness.by_reading(
            self.outcomes, self.tables, self.settings, protocol, readings_demo, self.html
        )

    def across_readings(self, demo_id: str, by: list, names: dict) -> str:
        """The rate claims on a readings demo judged under each of its readings (07.5)."""
        if demo_id not in self.tables:
            return f"*（本次构建没有 {demo_id} 的记录 not recorded: `make robustness`）*"
        return robustness.across_readings(
            self.outcomes, self.tables, self.settings, demo_id, by, names, self.html
        )

    def rates(self, demo_id: str, quantity: str, below: float, by: list, labels: dict) -> str:
        """Per group, the seeds below a threshold: k/N with its 95% interval."""
        if demo_id not in self.tables:
            return f"*（本次构建没有 {demo_id} 的记录 not recorded: `make robustness`）*"
        return robustness.rates(self.tables[demo_id], quantity, below, by, labels)

    def crossovers(self, demo_id: str) -> list[dict]:
        """Per model width: from which L on the Transformer's step beats the GRU's (06.3, §9.5);
        the template's `crossover` macro words it."""
        return crossovers(self.tables[demo_id])


def template_environment(folder: Path) -> Environment:
    """The Jinja environment the report's templates are rendered in (report/templates/)."""
    return Environment(
        loader=FileSystemLoader(folder),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_markdown(template_path: Path, context: dict) -> str:
    env = template_environment(template_path.parent)
    return env.get_template(template_path.name).render(**context)


def build(args) -> tuple[str, str]:
    tables = read_tables(args.tables)  # each demo's timing table merged back in
    with open(args.config, encoding="utf-8") as f:
        demos = yamlio.load(f)["demos"]
    outcomes = ledger_mod.evaluate_all(ledger_mod.load_ledger(args.ledger), tables, demos)
    figures = {Path(p).stem: Path(p) for p in args.figures}
    views = load_views(args.views)
    context = {
        "outcomes": outcomes,
        "counts": ledger_mod.reproduced(outcomes),
        "reproducible": reproducible_info(args.config, args.code),
        "machine": machine_info(args.benchmarks),
        "figure_fonts": figure_fonts(figures.values()),
        "MACHINE_BEGIN": MACHINE_BEGIN,
        "MACHINE_END": MACHINE_END,
    }
    lessons = load_lessons(args.lessons or args.ledger.parent / "lessons.yaml")
    texts = []
    for html_mode in (False, True):
        report = Report(tables, views, outcomes, figures, args.recorded, demos, html_mode)
        report.lessons = lessons
        context_html = {**context, "r": report, "html": html_mode}
        texts.append(render_markdown(Path(args.template), context_html))
        built = {d for d, demo in DEMOS.items() if (demo.reads or d) in tables}
        if left_out := sorted(built - report.rendered):
            raise ValueError(
                f"{args.template} places no `{{{{ r.demo(...) }}}}` for {left_out}: every demo "
                "with a table needs its line under its § heading (docs/ARCHITECTURE.md)"
            )
    md_text, html_flavour = texts
    figure_dir = Path(args.figures[0]).parent if args.figures else Path(args.out_md).parent
    page = args.page or Path(args.template).with_name("lecture17.html.j2")
    return md_text, to_html(html_flavour, figure_dir, page, (MACHINE_BEGIN, MACHINE_END))


def write_manifest(tables: list, out: Path) -> None:
    """results/manifest.json: every table (and its timing table) this report read, with its
    sha256, so that `lecture17 diff` judges exactly these (reporting.diff.complete_tables)."""
    files = [Path(t) for t in tables]
    digests = {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in files}
    # timing tables: listed, not hashed (machine-dependent: the manifest stays byte-identical
    # between two builds on one machine, like every other reproducible output)
    digests |= {timing_path(f).name: "" for f in files if timing_path(f).is_file()}
    manifest = {"tables": digests}
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(out)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m lecture17.reporting.report", description=__doc__.splitlines()[0]
    )
    p.add_argument("--tables", nargs="*", default=[])
    p.add_argument("--figures", nargs="*", default=[])
    p.add_argument("--ledger", type=Path, required=True)
    p.add_argument("--views", type=Path, required=True)
    p.add_argument("--template", type=Path, required=True)
    p.add_argument(
        "--page", type=Path, help="the HTML page (default: lecture17.html.j2 beside --template)"
    )
    p.add_argument("--config", type=Path, required=True)
    p.add_argument(
        "--lessons",
        type=Path,
        help="each section's lesson (default: lessons.yaml beside the ledger's folder)",
    )
    p.add_argument("--benchmarks", type=Path, default=Path("benchmarks"))
    p.add_argument("--code", nargs="*", default=[], help="the source files the results came from")
    p.add_argument(
        "--recorded", nargs="*", default=[], help="demos whose runs were recorded on a GPU"
    )
    p.add_argument("--out-md", type=Path, required=True)
    p.add_argument("--out-html", type=Path, required=True)
    p.add_argument("--out-config", type=Path, help="a copy of the config, for `lecture17 diff`")
    p.add_argument(
        "--out-manifest",
        type=Path,
        help="the tables this report read, hashed, for `lecture17 diff`",
    )
    args = p.parse_args(argv)
    md_text, html_text = build(args)
    for path, text in ((args.out_md, md_text), (args.out_html, html_text)):
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    if args.out_config:
        shutil.copyfile(args.config, args.out_config)
    if args.out_manifest:  # written last: a build that stops before it leaves the old one
        write_manifest(args.tables, args.out_manifest)
    digest = hashlib.sha256(md_text.encode()).hexdigest()[:12]
    print(f"报告 report → {args.out_md}, {args.out_html} (sha256 {digest})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
