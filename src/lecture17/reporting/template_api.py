"""The template's interface: Report, whose methods are every call lecture17.md.j2 makes.

`r.demo(id)` places a demo's tables, figures and claims under its § heading; the other calls
place the claims the template puts elsewhere (§11–§13, the summary), the robustness tables of
the recorded seeds, and the study reading's aids. One Report renders the Markdown flavour and
one the HTML flavour (reporting.report builds both, from the same tables and verdicts). Views
are in reporting.views, figures in reporting.report_figures, the teaching aids in
reporting.teaching, sentences worded from data in report/templates/macros.md.j2.
"""

import html
import os
from pathlib import Path

from lecture17.experiments import DEMOS
from lecture17.pipeline import fingerprint, record
from lecture17.pipeline.aggregate import table_seeds
from lecture17.reporting import claims as claims_mod
from lecture17.reporting import decoded, robustness, teaching
from lecture17.reporting import explorer as explorer_mod
from lecture17.reporting import notice as notice_mod
from lecture17.reporting import page as page_mod
from lecture17.reporting.figures import FIGURES
from lecture17.reporting.report_figures import figure_block, figure_numbers, figure_ref
from lecture17.reporting.views import crossovers, fold, grid_table, lecture_cells, view_grid
from lecture17.reporting.worked_examples import INPUTS

# check --trained's scratch build (mutants/student.py): a student's layers hide the attention
# weights inside them, so the views of those weights select no rows there; said, not raised
PARTIAL = os.environ.get("LECTURE17_PARTIAL_VIEWS") == "1"
MACHINE_BEGIN = "<!-- machine-dependent:begin -->"
MACHINE_END = "<!-- machine-dependent:end -->"


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
        self.notices = {}  # figure -> {table, values, say} (report/notices.yaml)

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
        """The box that opens a section: "what this section teaches" (teaching.lesson)."""
        return teaching.lesson(self.lessons.get(section), section, self.outcomes, self.html)

    def fold(self, summary: str) -> str:
        """Opens an answer to fold away (HTML: <details>, closed, no script; the Markdown, the
        text diffed against the lecture, keeps everything and says nothing)."""
        return f"\n{page_mod.FOLD_BEGIN % summary}\n" if self.html else ""

    def end_fold(self) -> str:
        return f"\n{page_mod.FOLD_END}\n" if self.html else ""

    def predictions(self, section: str) -> str:
        """An exercise's "predict, then run" (§13): each question and its two choices."""
        return teaching.predictions(self.outcomes, section)

    def prediction_answers(self, section: str) -> str:
        """Per prediction, the choice our recorded runs support, from the claim's verdict."""
        return teaching.prediction_answers(self.outcomes, section, self.html)

    def legend(self) -> str:
        """The badges a student meets, in one line."""
        return teaching.legend()

    def flags(self) -> str:
        """The reading aid's flags this page uses, each explained in a sentence."""
        return teaching.flags(self.outcomes, self.views)

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
        try:
            grid = view_grid(self.tables[source], view, self.lecture_of(source), self.html)
        except ValueError as error:  # a typo in a view, unless the build says it is partial
            if not (PARTIAL and "selects no rows" in str(error)):
                raise
            return [title, "*（本次构建没有这张表的行 no rows in this build）*"]
        grid, facts = fold(grid, view.get("fold", ()))
        lines = [title] + (["；".join(facts) + "。"] if facts and grid else [])
        if grid is None:
            lines[0] += "：" + "；".join(facts) + "。"
        body = grid_table(grid) if grid else ""
        said = "" if view.get("audit") else self.notice(view.get("notice"), source, view)
        if view.get("machine_dependent"):  # its notice reads timings: inside the block too
            parts = [*lines, body, said]
            lines, body, said = [machine_dependent("\n\n".join(p for p in parts if p))], "", ""
        if view.get("audit"):  # evidence behind the claims, not the lecture's own table
            return [self.audit(), *lines, body, self.end_audit()]
        return [*lines, body, said]

    def notice(self, spec: dict | None, source: str, view: dict | None = None) -> str:
        """The "what to notice" line under a table or figure of the study reading."""
        if not spec or source not in self.tables:
            return ""
        view = view or {}
        said = notice_mod.line(spec, self.tables[source], view.get("where"), view.get("fmt"))
        if not said:
            return ""
        if self.html:
            return f'<p class="notice"><b>注意看</b> {html.escape(said)}</p>'
        return f"*注意看*：{said}"

    def explorer(self, demo_id: str, title: str, **spec) -> str:
        """The attention explorer (HTML only: the Markdown, the text diffed against the
        lecture, has the tables): a query to choose, its weights per head (reporting/explorer).
        spec: query, key, quantity, head, where (the rows), heads ({label: name}); examples
        (a label column: one example to choose per value, named by example_label's format);
        mirror (a reversal: each query's mirror key framed)."""
        if not self.html or demo_id not in self.tables:
            return ""
        names, mirror = spec.pop("heads", None), spec.pop("mirror", False)
        column, label = spec.pop("examples", None), spec.pop("example_label", "{}")
        try:
            if column:
                data = explorer_mod.by_example(self.tables[demo_id], spec, column, label)
            else:
                data = explorer_mod.weights(self.tables[demo_id], **spec)
        except ValueError:
            if PARTIAL:  # the weights a student's layer hides (check --trained)
                return ""
            raise
        if mirror:  # a reversal: frame the key each query should read
            for e in data if isinstance(data, list) else [data]:
                e["marks"] = explorer_mod.mirror_marks(len(e["queries"]), len(e["keys"]))
        anchor = f"explore-{demo_id.replace('.', '-')}"
        return explorer_mod.explorer(data, title, anchor, names)

    def decoded_example(self, demo_id: str, example: int) -> str:
        """§9's decoded example (reporting/decoded.example_section), in a machine-dependent
        block: a near-tie may decode to another token on another CPU, so a diff of two reports
        does not compare it."""
        if demo_id not in self.tables:
            return ""
        seeds = self.seeds_of(demo_id)
        return machine_dependent(
            decoded.example_section(self.tables[demo_id], example, seeds, self.html)
        )

    def example_explorer(self, demo_id: str, title: str) -> str:
        """The explorer over the test sequences the table has (HTML only), at 05.3's L
        (reporting/decoded.explorer_block)."""
        if not self.html or demo_id not in self.tables:
            return ""
        wanted = self.settings.get("05.3", {}).get("settings", {}).get("seq_len")
        anchor = f"explore-{demo_id.replace('.', '-')}"
        try:
            return decoded.explorer_block(self.tables[demo_id], title, anchor, wanted)
        except ValueError:
            if PARTIAL:  # the weights a student's layer hides (check --trained)
                return ""
            raise

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
        return figure_ref(self.numbers[name], self.html, short)

    def figure(self, name: str) -> str:
        block = figure_block(name, self.numbers[name], self.figures[name], self.html)
        spec = self.notices.get(name)
        if not spec:
            return block
        said = self.notice(spec, str(spec.get("table", FIGURES[name].table)), spec)
        if said and spec.get("machine_dependent"):
            said = machine_dependent(said)
        return f"{block}\n\n{said}" if said else block

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
        listed = claims_mod.problems_short(stable) or "所有数字都和讲义一致。"
        return claims_mod.overview_sentences(stable) + "\n\n" + listed

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
