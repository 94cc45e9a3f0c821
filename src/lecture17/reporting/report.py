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

This module is the command line that builds the two: the template's interface (Report, every
call the template makes) is reporting.template_api; views are in reporting.views, figures in
reporting.report_figures, sentences worded from data in report/templates/macros.md.j2.
"""

import argparse
import hashlib
import json
import shutil
import sys
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from lecture17.experiments import DEMOS
from lecture17.pipeline import yamlio
from lecture17.pipeline.aggregate import read_tables
from lecture17.pipeline.csvio import timing_path
from lecture17.reporting import ledger as ledger_mod
from lecture17.reporting import notice as notice_mod
from lecture17.reporting.figures import FIGURES
from lecture17.reporting.page import to_html
from lecture17.reporting.provenance import machine_info, reproducible_info

# also imported from here (by the tests): the template's interface and its figures
from lecture17.reporting.report_figures import (  # noqa: F401
    PHONE_MEDIA,
    figure_fonts,
    figure_numbers,
)
from lecture17.reporting.template_api import (  # noqa: F401
    MACHINE_BEGIN,
    MACHINE_END,
    Report,
    machine_dependent,
)
from lecture17.reporting.views import load_views


def load_lessons(path: Path) -> dict:
    """report/lessons.yaml: {section: {topic, point, claim}}; {} when the file is absent."""
    if not Path(path).is_file():
        return {}
    lessons = yamlio.load(Path(path).read_text(encoding="utf-8")) or {}
    for section, item in lessons.items():
        if not isinstance(item, dict) or set(item) != {"topic", "point", "claim"}:
            raise ValueError(f"{path}: {section} must be {{topic, point, claim}}")
    return lessons


def load_notices(path: Path) -> dict:
    """report/notices.yaml: {figure: notice} (reporting.notice), each validated; {} when absent.
    A view's notice sits in its view (report/views); a figure's here."""
    if not Path(path).is_file():
        return {}
    notices = yamlio.load(Path(path).read_text(encoding="utf-8")) or {}
    for name, spec in notices.items():
        if name not in FIGURES:
            raise ValueError(f"{path}: {name} is not a figure of the registry")
        spec = {k: v for k, v in spec.items() if k not in ("table", "machine_dependent")}
        notice_mod.validate(spec, f"{path}: {name}")
    return notices


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
    notices = load_notices(args.notices or args.ledger.parent / "notices.yaml")
    texts = []
    for html_mode in (False, True):
        report = Report(tables, views, outcomes, figures, args.recorded, demos, html_mode)
        report.lessons, report.notices = lessons, notices
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
    p.add_argument(
        "--notices",
        type=Path,
        help="what to notice under each figure (default: notices.yaml beside the ledger's folder)",
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
