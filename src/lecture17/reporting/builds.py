"""A build folder as `python -m lecture17 diff` and the reference read it: its tables (only
those its report's manifest.json lists with the same sha256) and its config's demos.
"""

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from lecture17.pipeline import yamlio
from lecture17.pipeline.aggregate import read_tables

MANIFEST = "manifest.json"  # written by the report (reporting.report.write_manifest)


@dataclass
class Build:
    """A build folder's tables, its config's demos, and which demos are trained."""

    path: Path
    tables: dict
    demos: dict  # config["demos"], or {} when the folder has no config

    @property
    def trained(self) -> set:
        return {d for d, spec in self.demos.items() if spec.get("grid")}


class IncompleteBuild(ValueError):
    """A build whose tables are not the ones its report read (reporting.report's manifest)."""


def complete_tables(folder: Path, build: Path, incomplete: bool = False) -> list[Path]:
    """The tables of `folder` that the build's report read: those its manifest.json (beside
    results/ or in a reference folder) lists with the same sha256. A table it does not list
    (left from an earlier build, e.g. of a recording that is now stale) is not built, as in the
    report. IncompleteBuild, naming what is wrong, when there is no manifest, a listed table is
    missing or was rewritten after it, or a run CSV is newer (a build that did not finish) —
    unless `incomplete`, which keeps the tables that still match."""
    build = Path(build)
    manifest = next(
        (p for p in (build / "results" / MANIFEST, build / MANIFEST) if p.is_file()), None
    )
    if manifest is None:
        raise IncompleteBuild(
            f"{build}: no {MANIFEST}: its report was never built; run snakemake to finish it"
        )
    listed = json.loads(manifest.read_text(encoding="utf-8"))["tables"]
    problems, tables = [], []
    for name, digest in sorted(listed.items()):
        path = Path(folder, name)
        if not path.is_file():
            problems.append(f"{name} is missing")
        elif digest and hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            problems.append(f"{name} was rewritten after the report")
        else:
            tables.append(path)  # a table or its timing table (read_tables merges them)
    runs = build / "results"
    newer = [
        p
        for p in runs.glob("*/**/seed*.csv")
        if not p.name.endswith(".timing.csv") and p.stat().st_mtime > manifest.stat().st_mtime
    ]
    if newer:
        problems.append(f"{len(newer)} run CSVs are newer than the report, e.g. {newer[0]}")
    if problems and not incomplete:
        raise IncompleteBuild(
            f"{build}: the build did not finish ({'; '.join(problems)}); run snakemake to finish "
            "it, or pass --incomplete to compare the tables that still match its report"
        )
    return tables


def load_tables(build: Path, incomplete: bool = False) -> dict:
    build = Path(build)
    for folder in (build / "results" / "tables", build / "tables"):
        if folder.is_dir():
            return read_tables(complete_tables(folder, build, incomplete))
    raise ValueError(f"{build}: no results/tables/ or tables/ folder; build it first (snakemake)")


def load_build(path: Path, incomplete: bool = False) -> Build:
    path = Path(path)
    # the config the build ran with (its report copies it), a reference build's, a checkout's
    candidates = (
        path / "results" / "config.yaml",
        path / "config.yaml",
        path / "config" / "config.yaml",
    )
    for config in candidates:
        if config.is_file():
            with open(config, encoding="utf-8") as f:
                demos = yamlio.load(f)["demos"]
            break
    else:
        raise ValueError(f"{path}: no config/config.yaml or config.yaml beside the tables")
    return Build(path, load_tables(path, incomplete), demos)
