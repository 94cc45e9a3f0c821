"""`python -m lecture17 check FILE.py`: the whole check, from a student's file to a Report.

Exit status: 0 every judged claim keeps the reference's verdict and every property holds;
1 something broke (a claim changed, a property failed, a convention not the lecture's, a
crash, a wrong shape or a hang in one of the blocks); 2 the file cannot be used (it does not
load, or a block's signature is not the lecture's); 3 no block was replaced (an empty
template must not pass an autograder).

Three phases, each in forked children (child.py): loading the file, each block's properties,
each demo that reaches a replaced block. A block whose properties' child hangs (or dies) is
not run in the demos: the demos that reach it are skipped and listed (`Report.skipped_for`);
a block that raises on some inputs runs in the demos, whose crashes say where.
What the student's code printed comes back per phase and block (`Report.printed`).
"""

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from lecture17.checker import child, judge, session
from lecture17.experiments import DEMOS
from lecture17.pipeline import callmap
from lecture17.pipeline.deps import SRC

ROOT = SRC.parent  # the checkout (an editable install): the check runs from any folder
REFERENCE = ROOT / "report" / "reference"
LEDGER = ROOT / "report" / "ledger"
OK, BROKE, UNUSABLE, NOTHING = 0, 1, 2, 3
EXIT_WORDS = {OK: "通过", BROKE: "有问题", UNUSABLE: "文件用不了", NOTHING: "没有替换任何积木"}


@dataclass
class Report:
    path: Path
    status: int = OK
    load_failure: child.Failure | None = None
    problems: dict = field(default_factory=dict)  # block -> signature problem
    blocks: dict = field(default_factory=dict)  # block -> session.BlockResult
    demos: dict = field(default_factory=dict)  # demo -> session.DemoResult
    skipped: list = field(default_factory=list)  # timing demos that reach a replaced block
    changes: list = field(default_factory=list)  # judge.Change
    kept: list = field(default_factory=list)  # judge.Change whose status is the reference's
    tables_changed: list = field(default_factory=list)  # tables not equal to the reference's
    causes: list = field(default_factory=list)  # explain.Cause, shown by behaviour
    marks: frozenset = frozenset()
    seconds: float = 0.0
    printed: dict = field(
        default_factory=dict
    )  # "载入 loading" / block / "演示 demo 01.1" -> Printed
    skipped_for: dict = field(default_factory=dict)  # demo -> the hung or crashed blocks it needs
    only: list | None = None  # the blocks asked for (--only), None: every one
    notes: list = field(default_factory=list)  # what loading the file left out (a magic)

    @property
    def replaced(self) -> list[str]:
        return [n for n, b in self.blocks.items() if b.implemented]

    def blocks_of_demo(self, demo: str) -> list[str]:
        return sorted(set(self.replaced) & callmap.demo_blocks(demo))

    def blocks_of_claim(self, entry: dict) -> list[str]:
        reached = set()
        for demo in judge.entry_demos(entry):
            if demo in DEMOS:
                reached |= callmap.demo_blocks(demo)
        return [b for b in self.replaced if b in reached]

    def broken(self) -> bool:
        return bool(
            self.changes
            or any(b.failed or b.failure or unaccepted(b) for b in self.blocks.values())
            or any(d.failure for d in self.demos.values())
        )


def unaccepted(block) -> list:
    return [c for c in block.conventions if not c.accepted]


LOADING = "载入 loading"
TIMEOUT = 20.0  # seconds one call of the student's code may take (--timeout)


def check(path: Path, timeout: float = TIMEOUT, fingerprints=None, only=None) -> Report:
    """Check a student's file; `only`: the blocks to consider (default every one it has);
    `fingerprints`: the catalogue's mistakes that may explain it (default mutants/')."""
    start = time.perf_counter()
    report = Report(Path(path), only=list(only) if only else None)
    printed = []
    status, found = child.run(session.inspect_file, Path(path), timeout=timeout, printed=printed)
    report.printed[LOADING] = printed[0]
    if status == "failed":
        report.load_failure, report.status = found, UNUSABLE
        return _done(report, start)
    found = {n: p for n, p in found.items() if only is None or n in only}
    report.problems = {n: p for n, p in found.items() if p}
    if report.problems:
        report.status = UNUSABLE
        return _done(report, start)
    calls = [(session.block_properties, (Path(path), name)) for name in found]
    printed = []
    outcomes = child.run_many(calls, timeout, jobs=os.cpu_count() or 1, printed=printed)
    for name, (status, result), out in zip(found, outcomes, printed, strict=True):
        if status == "failed":
            result = session.BlockResult(name, failure=result)
        report.blocks[name] = result
        report.printed[name] = out
    if not report.replaced:
        report.status = NOTHING
        return _done(report, start)
    _run_demos(report, timeout)
    report.marks = frozenset(
        [c.entry["id"] for c in report.changes]
        + [p for b in report.blocks.values() for p in b.failed]
        + [f"{b.name}.{c.id}" for b in report.blocks.values() for c in unaccepted(b)]
        + [f"demo-{d}-{r.failure.kind}" for d, r in report.demos.items() if r.failure]
        + [f"{b.name}.{b.failure.kind}" for b in report.blocks.values() if b.failure]
    )
    if report.broken():
        report.status = BROKE
        from lecture17.checker import explain

        probes = {n: b.probe for n, b in report.blocks.items() if b.implemented}
        report.causes = explain.explain(flagged_blocks(report), probes, fingerprints)
    return _done(report, start)


def flagged_blocks(report: Report) -> list[str]:
    """The student's blocks something points at: a failed property, a convention not the
    lecture's, a crash or a hang, or a changed claim that passes through it."""
    found = {n for n, b in report.blocks.items() if b.failed or b.failure or unaccepted(b)}
    for change in report.changes:
        found |= set(report.blocks_of_claim(change.entry))
    for demo, result in report.demos.items():
        if result.failure:
            found |= set(report.blocks_of_demo(demo))
    return sorted(found)


def _done(report: Report, start: float) -> Report:
    report.seconds = time.perf_counter() - start
    return report


def _run_demos(report: Report, timeout: float) -> None:
    from lecture17.pipeline import yamlio
    from lecture17.pipeline.aggregate import read_tables
    from lecture17.reporting import diff
    from lecture17.reporting import ledger as ledger_mod

    with open(REFERENCE / "config.yaml", encoding="utf-8") as f:
        config = yamlio.load(f)["demos"]
    replaced = report.replaced
    demos = session.analytic_demos(replaced, config)
    report.skipped = [
        d
        for d in callmap.demos_reaching(replaced, [d for d in DEMOS if DEMOS[d].alone])
        if DEMOS[d].kind == "analytic"
    ]
    demos = _skip_stuck(report, demos)
    adapters = {name: _adapters(report.blocks[name]) for name in replaced}
    session.preload(demos)
    with session.Scratch() as scratch:
        calls = [
            (session.run_demo, (report.path, demo, config[demo], scratch, adapters))
            for demo in demos
        ]
        printed = []
        outcomes = child.run_many(calls, timeout, jobs=os.cpu_count() or 1, printed=printed)
        for demo, (status, value), out in zip(demos, outcomes, printed, strict=True):
            result = session.DemoResult(demo)
            report.printed[f"演示 demo {demo}"] = out
            if status == "failed":
                result.failure = value
            else:
                result.ran = True
                result.calls, result.fallbacks = value["calls"], value["fallbacks"]
                session.aggregate_demo(demo, scratch)
            report.demos[demo] = result
        ran = [d for d, r in report.demos.items() if r.ran]
        reference = diff.load_build(REFERENCE)
        tables = dict(reference.tables)
        if ran:
            tables.update(read_tables(sorted((scratch / "tables").glob("*.csv"))))
        report.tables_changed = sorted(
            name
            for name, table in tables.items()
            if name not in reference.tables or not table.equals(reference.tables[name])
        )
        entries = ledger_mod.load_ledger(LEDGER)
        report.changes, report.kept = judge.changed_claims(
            entries, reference.tables, tables, reference.demos, ran
        )


def _skip_stuck(report: Report, demos: list[str]) -> list[str]:
    """The demos to run: those that need a block already hung or crashed are left out, each
    with the blocks it needs (Report.skipped_for)."""
    stuck = {n for n in report.replaced if report.blocks[n].failure}
    for demo in demos:
        if needs := sorted(stuck & callmap.demo_blocks(demo)):
            report.skipped_for[demo] = needs
    return [d for d in demos if d not in report.skipped_for]


def _adapters(block) -> list:
    """The adapters of a block's conventions, found again in the demo's child."""
    from lecture17.checker.conventions import ADAPTERS

    return [ADAPTERS[c] for c in block.conventions if c in ADAPTERS]


__all__ = ["Report", "check", "flagged_blocks"]
