"""Report pages for the page and browser tests, made without running the workflow.

small_build: the cheap deterministic demos (01.1, …, 13.1) run in-process with the full
config's settings, two figures drawn, and the real ledger, views and templates rendered: a
page in a few seconds, on any checkout. reference_render: the committed reference build
(report/reference/: tables, config and figures) rendered again by the current code, so a
change that breaks the page fails before the reference is regenerated.
"""

from pathlib import Path

import pandas as pd
import yaml

from lecture17.experiments import DEMOS
from lecture17.pipeline.aggregate import aggregate, read_runs
from lecture17.pipeline.csvio import write_csv, write_with_timing
from lecture17.pipeline.job import run_demo
from lecture17.reporting import figures, report

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "report" / "reference"
SMALL = ("01.1", "01.2", "02.5", "03.1", "03.3", "03.4", "04.6", "13.1")
SMALL_FIGURES = ("03.1_pe_heatmap", "03.4_previous_token")


def render(work: Path, tables: list, figure_paths: list, config: Path, template=None) -> Path:
    """python -m lecture17.reporting.report as the `report` rule runs it; returns the HTML path."""
    report.main(
        [
            "--tables",
            *map(str, tables),
            "--figures",
            *map(str, figure_paths),
            "--ledger",
            str(ROOT / "report" / "ledger"),
            "--views",
            str(ROOT / "report" / "views"),
            "--template",
            str(template or ROOT / "report" / "templates" / "lecture17.md.j2"),
            "--page",
            str(ROOT / "report" / "templates" / "lecture17.html.j2"),
            "--config",
            str(config),
            "--benchmarks",
            str(work / "benchmarks"),  # none: the machine block lists no job times
            "--out-md",
            str(work / "lecture17.md"),
            "--out-html",
            str(work / "lecture17.html"),
        ]
    )
    return work / "lecture17.html"


def small_build(work: Path) -> Path:
    config_path = ROOT / "config" / "config.yaml"
    demos = yaml.safe_load(config_path.read_text(encoding="utf-8"))["demos"]
    tables = work / "tables"
    for demo in SMALL:
        spec, runs = demos[demo], []
        for seed in spec["seeds"]:
            runs.append(work / "runs" / demo / f"seed{seed}.csv")
            runs[-1].parent.mkdir(parents=True, exist_ok=True)
            write_csv(run_demo(demo, spec["settings"], seed), runs[-1])
        tables.mkdir(exist_ok=True)
        write_with_timing(aggregate(read_runs(runs)), tables / f"{demo}.csv", DEMOS[demo].timings)
    drawn = []
    for name in SMALL_FIGURES:
        drawn.append(work / "figures" / f"{name}.png")
        phone = work / "figures" / "phone" / f"{name}.png"
        figures.draw(name, tables / f"{figures.FIGURES[name].table}.csv", drawn[-1], phone)
    return render(work, sorted(tables.glob("[0-9]*[0-9].csv")), drawn, config_path)


def reference_missing() -> str:
    """Why the reference build cannot be rendered again ("" when it can)."""
    for needed in ("tables", "figures", "config.yaml"):
        if not (REFERENCE / needed).exists():
            return f"report/reference/{needed} is missing: run `make reference`"
    return ""


def reference_render(work: Path) -> Path:
    tables = [p for p in sorted((REFERENCE / "tables").glob("*.csv")) if ".timing" not in p.name]
    return render(
        work, tables, sorted((REFERENCE / "figures").glob("*.png")), REFERENCE / "config.yaml"
    )


def tables_of(folder: Path) -> dict[str, pd.DataFrame]:
    from lecture17.pipeline.aggregate import read_tables

    return read_tables(sorted(folder.glob("*.csv")))
