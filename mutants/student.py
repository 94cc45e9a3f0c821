"""`python -m lecture17 check FILE.py --trained`: a student's torch classes through the
campaign's path (the build side; lecture17/checker/trained.py asks and renders).

    python -m mutants.student FILE.py --json OUT.json [--cores 2] [--estimate-only]

The student's MultiHeadAttention, EncoderLayer and DecoderLayer go where a mutant goes: into a
copy of the cached control build of `make mutants` (the reduced protocol: the trained demos
at 200 steps), the same copy, the same rebuild of the jobs reached, the same judge. Only the
edit differs: instead of a patch, the copy's tiny_transformer.py ends with a call of
lecture17.checker.adapters.install, which puts the student's classes (copied beside it as
_student_trained.py) in the reference's place.

Which jobs rerun, from the control's traces: a job that called the forward of a class the
student wrote, unless it also called what the reference alone provides (`load_from_torch`:
the job compares the lecture's block with PyTorch's after copying its weights); those keep the
control's numbers and are listed. Judged as a mutant is: a counted verdict that changes, or a
cell beyond seed variation, that the second control (another CPU's rounding) does not also
show. Claims the control cannot decide (blind: a rate over the one or two seeds the reduced
protocol records) or decides otherwise than the full build (short: at 200 steps the finding is
not there yet) are excluded, and said so.

The estimate printed before the build is the reached jobs' CPU seconds in the control over
the cores; a control that is missing is built first (about half an hour on 2 cores, said
before it starts).
"""

import argparse
import json
import os
import shutil
import sys
import threading
import time
from pathlib import Path

from mutants import coverage, protocol
from mutants import run as campaign

ROOT = campaign.ROOT
STUDENT = "src/lecture17/_student_trained.py"
TARGET = "src/lecture17/tiny_transformer.py"
ADAPTERS = "src/lecture17/checker/adapters.py"  # this checkout's (the control may predate it)
# its package, a regular one: the build's dependency scan resolves lecture17.checker to it
CHECKER_INIT = "src/lecture17/checker/__init__.py"
INSTALL = (
    "\n\n# check --trained: the student's classes in the reference's place (a scratch copy)\n"
    "from lecture17.checker.adapters import install as _install  # noqa: E402\n\n"
    '_install(globals(), "lecture17._student_trained", {classes!r})\n'
)
CLASSES = ("MultiHeadAttention", "EncoderLayer", "DecoderLayer")
# what reads the reference's internals: the job keeps the control's numbers
# (load_from_torch: the reference's weight layout; heads_zeroed, 09.1's head ablation: its
# out_proj and d_k)
REFERENCE_ONLY = ("load_from_torch", "heads_zeroed")


def needs_reference(call: str) -> bool:
    """Whether a traced call ("src/…py::Class.method" or "…::function") is one of REFERENCE_ONLY."""
    return call.split("::")[-1].split(".")[-1] in REFERENCE_ONLY


OVERHEAD_S = 60.0  # the copy, the parse, the report and the judge (measured: 45–70 s)


def forwards(classes) -> set[str]:
    return {f"{TARGET}::{name}.forward" for name in classes}


def select(control_dir: Path, classes) -> dict:
    """{"rerun": [...], "reference": [...]} run CSVs of the control (lecture and recorded):
    the jobs that reach a student class, and those of them that keep the control's numbers."""
    calls = campaign.traces(control_dir)
    demos = campaign.demos_of(campaign.Build(control_dir, 1))
    runs = campaign.run_csvs(demos, False) + campaign.run_csvs(demos, True)
    wanted, rerun, reference = forwards(classes), [], []
    for run in runs:
        called = set(calls.get(run, ()))
        if not called & wanted:
            continue
        if any(needs_reference(c) for c in called):
            reference.append(run)
        else:
            rerun.append(run)
    return {"rerun": rerun, "reference": reference}


def estimate_s(control_dir: Path, runs: list[str], cores: int) -> float:
    cpu = sum(campaign.job_cpu(control_dir, r) for r in runs)
    return OVERHEAD_S + cpu / max(1, cores)


def put_in(student: Path, classes: list[str], folder: Path) -> None:
    """The student's file, this checkout's adapters (and their package), and the install call
    at the end of the copy's tiny_transformer."""
    shutil.copy2(student, folder / STUDENT)
    for path in (CHECKER_INIT, ADAPTERS):
        shutil.copy2(ROOT / path, folder / path)
    with open(folder / TARGET, "a", encoding="utf-8") as f:
        f.write(INSTALL.format(classes=tuple(classes)))


def prepare(
    student: Path, classes: list[str], control_dir: Path, folder: Path, rerun: list[str]
) -> campaign.Build:
    """The control copied, the student's file and the install call in, every job not in
    `rerun` marked newer than the edit (so Snakemake keeps the control's).

    The copy's tiny_transformer imports two files more (the adapters and their package): for
    Snakemake the set of code inputs of every job that imports it has changed, which would
    rerun them all, those that call `load_from_torch` on the student's class too. So this
    build reruns by modification time only (`--rerun-triggers mtime`), and the three files
    put in carry the edit's time."""
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(control_dir, folder, symlinks=True)
    campaign.refresh_unkeyed(folder)
    put_in(student, classes, folder)
    partial = {"LECTURE17_PARTIAL_VIEWS": "1"}  # views of weights a student's layer hides
    build = campaign.Build(folder, 1, partial, trace=False, triggers=("mtime",))
    demos = campaign.demos_of(build)
    runs = campaign.run_csvs(demos, False) + campaign.run_csvs(demos, True)
    campaign.keep_only(folder, TARGET, runs, set(rerun))
    edited = (folder / TARGET).stat().st_mtime
    for path in (STUDENT, ADAPTERS, CHECKER_INIT):
        os.utime(folder / path, (edited, edited))
    return build


class Progress:
    """A bar on stderr: the rerun jobs whose CSV is newer than the start."""

    def __init__(self, folder: Path, runs: list[str], expected_s: float):
        self.folder, self.runs, self.expected = folder, runs, expected_s
        self.start, self.stop = time.time(), threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)

    def done(self) -> int:
        return sum(
            1
            for r in self.runs
            if (p := self.folder / r).is_file() and p.stat().st_mtime >= self.start
        )

    def line(self) -> str:
        n, total = self.done(), max(1, len(self.runs))
        elapsed = time.time() - self.start
        bar = "#" * int(24 * n / total)
        left = max(0.0, self.expected - elapsed)
        return f"\r[{bar:<24}] {n}/{total} 个作业 jobs · {elapsed:.0f} s · 预计还要 ~{left:.0f} s "

    def loop(self) -> None:
        while not self.stop.wait(2.0):
            print(self.line(), end="", file=sys.stderr, flush=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        print(self.line(), file=sys.stderr, flush=True)


def excluded_claims(control_dir: Path) -> dict[str, str]:
    """claim -> "blind" | "short": what this control cannot judge (module docstring)."""
    control = coverage.control_verdicts(control_dir)
    full = coverage.control_verdicts(control_dir, coverage.REFERENCE)
    out = {}
    for claim, status in control.items():
        if status == coverage.UNDECIDED:
            out[claim] = "blind"
        elif full.get(claim) and full[claim] != status:
            out[claim] = "short"
    return out


def claim_rows(control_dir: Path, folder: Path, ids: list[str]) -> list[dict]:
    """Per claim id: its §, sentence, the lecture's number, the control's and the student's
    values and statuses."""
    from lecture17.reporting import diff, ledger

    control = campaign.loaded_control(control_dir)
    mine = diff.load_build(folder)
    chosen = [e for e in control.entries if e["id"] in set(ids)]
    theirs = {o.entry["id"]: o for o in ledger.evaluate_all(chosen, mine.tables, mine.demos)}
    ours = {o.entry["id"]: o for o in control.outcomes}
    rows = []
    for entry in chosen:
        a, b = ours[entry["id"]], theirs[entry["id"]]
        rows.append(
            {
                "id": entry["id"],
                "section": str(entry.get("section", "")),
                "text": entry.get("text", ""),
                "lecture": str(entry.get("lecture", "")),
                "reference_value": str(getattr(a, "value", "")),
                "student_value": str(getattr(b, "value", "")),
                "reference_status": a.status,
                "student_status": b.status,
            }
        )
    return rows


def run(
    student: Path,
    classes: list[str],
    cores: int,
    work: Path,
    estimate_only: bool = False,
    control_dir: Path | None = None,
) -> dict:
    result = {"classes": classes}
    control_dir = control_dir or work / f"control-{campaign.control_key(protocol.OVERLAY)}"
    if not (control_dir / campaign.DONE).is_file():
        print("没有缓存的对照构建 no cached control: 先构建（2 核约 30 分钟）", file=sys.stderr)
        if estimate_only:
            return result | {"control": "", "estimate_s": None}
        control_dir = campaign.control(work, cores, protocol.OVERLAY)
    chosen = select(control_dir, classes)
    expected = estimate_s(control_dir, chosen["rerun"], cores)
    result |= chosen | {"control": str(control_dir), "estimate_s": round(expected)}
    print(
        f"重跑 rerun {len(chosen['rerun'])} 个作业 jobs，预计 ~{expected:.0f} s；"
        f"{len(chosen['reference'])} 个用参考 reference（{', '.join(REFERENCE_ONLY)}）",
        file=sys.stderr,
        flush=True,
    )
    if estimate_only or not chosen["rerun"]:
        return result
    folder = work / f"student-{Path(student).stem}"
    build = prepare(student, classes, control_dir, folder, chosen["rerun"])
    build.cores = cores
    start = time.monotonic()
    with Progress(folder, chosen["rerun"], expected):
        recorded = set(campaign.run_csvs(campaign.demos_of(build), True))
        ok = campaign.store_recordings(build, set()) and campaign.build_runs(build)
        ok = ok and campaign.build_report(build, campaign.demos_in(sorted(recorded)))
    result["seconds"] = round(time.monotonic() - start, 1)
    if not ok:
        log = (folder / "mutants-build.log").read_text(encoding="utf-8")[-3000:]
        return result | {"failed": True, "log": log, "folder": str(folder)}
    return result | judged(control_dir, folder)


def without_seed(table, seed: int):
    """An aggregated table as if `seed` had not run: each row's seed values, mean, min, max,
    std and n_seeds recomputed from the others (a row of that seed alone is dropped)."""
    import numpy as np

    from lecture17.pipeline.aggregate import per_seed

    if "seeds" not in table.columns:
        return table
    parsed = [per_seed(text) if text else {} for text in table["seeds"]]
    if not any(seed in p for p in parsed):
        return table
    kept = [{k: v for k, v in p.items() if k != seed} for p in parsed]
    keep = [bool(k) or not p for k, p in zip(kept, parsed, strict=True)]
    rows = table[keep].copy()
    kept = [k for k, ok in zip(kept, keep, strict=True) if ok]
    values = [np.array(list(k.values())) for k in kept]
    for i, (k, v) in enumerate(zip(kept, values, strict=True)):
        if not k:  # a row without per-seed values: as it was
            continue
        at = rows.index[i]
        rows.loc[at, ["mean", "min", "max", "n_seeds"]] = [v.mean(), v.min(), v.max(), len(v)]
        rows.loc[at, "std"] = v.std(ddof=1) if len(v) > 1 else 0.0
        rows.loc[at, "seeds"] = " ".join(f"{s}:{x!r}" for s, x in k.items())
    return rows


def read_demos(entry: dict) -> set[str]:
    """The tables a ledger entry reads: its demo's, its values' own, its recorded seeds'."""
    demos = {str(entry.get("demo", ""))}
    demos |= {str(v["demo"]) for v in entry.get("values", {}).values() if "demo" in v}
    demos |= {str(d) for d in (entry.get("decide") or {}).get("recorded", [])}
    return demos - {""}


def one_seed_decides(control_dir: Path, folder: Path, ids: list[str]) -> list[str]:
    """The flips that one seed of the student's build decides: with that seed left out, the
    claim gets the control's verdict again. A correct implementation trains another sample,
    and a sample has lagging seeds (the lecture's own §9.2 saw one); a flip one seed makes is
    said, not counted. A real mistake fails on every seed (peek, no_scale: bench/README.md)."""
    from lecture17.pipeline.aggregate import table_seeds
    from lecture17.reporting import diff, ledger

    control = campaign.loaded_control(control_dir)
    mine = diff.load_build(folder)
    ours = {o.entry["id"]: o.status for o in control.outcomes}
    seeds = sorted({s for t in mine.tables.values() if "seeds" in t for s in table_seeds(t)})
    fragile = []
    for entry in (e for e in control.entries if e["id"] in set(ids)):
        reads = read_demos(entry)
        for seed in seeds:
            tables = {d: without_seed(t, seed) if d in reads else t for d, t in mine.tables.items()}
            (outcome,) = ledger.evaluate_all([entry], tables, mine.demos)
            if outcome.status == ours[entry["id"]]:
                fragile.append(entry["id"])
                break
    return fragile


def judged(control_dir: Path, folder: Path) -> dict:
    """The student's build against the control, as the mutants' judge reads it: the counted
    flips beyond the noise, less the claims the control cannot decide (excluded), those the
    student's layers cannot show (their attention weights: "missing") and those one seed
    decides (one_seed_decides)."""
    verdict = campaign.judge(control_dir, folder, campaign.read_noise(control_dir))
    excluded = excluded_claims(control_dir)
    credible = [f for f in verdict.credible if not f.startswith("claim ")]
    flips = [f for f in verdict.flips if f in credible and f not in excluded]
    rows = claim_rows(control_dir, folder, flips)
    hidden = {r["id"] for r in rows if r["student_status"] == "missing"}
    lagging = set(one_seed_decides(control_dir, folder, [f for f in flips if f not in hidden]))
    excluded |= {f: "hidden" for f in hidden} | {f: "one_seed" for f in lagging}
    return {
        "flips": [r for r in rows if r["id"] not in hidden | lagging],
        "excluded_flips": {f: excluded[f] for f in verdict.flips if f in excluded},
        "noise_flips": [f for f in verdict.flips if f not in credible],
        "cells": [c for c in verdict.cells if c in credible],
        "changed_csvs": len(verdict.changed),
        "excluded": excluded,
        "folder": str(folder),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mutants.student", description=__doc__)
    parser.add_argument("file", type=Path)
    parser.add_argument("--json", type=Path, required=True)
    parser.add_argument("--cores", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--work", type=Path, default=campaign.WORK)
    parser.add_argument("--estimate-only", action="store_true")
    parser.add_argument(
        "--control",
        type=Path,
        help="a finished control build to use as it is (default: this code's, built if missing)",
    )
    parser.add_argument(
        "--classes", nargs="+", choices=CLASSES, default=list(CLASSES), help="the classes written"
    )
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    result = run(
        args.file.resolve(), args.classes, args.cores, args.work, args.estimate_only, args.control
    )
    args.json.write_text(json.dumps(result, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
