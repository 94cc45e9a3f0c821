"""`make mutants`: apply each mutant of the catalogue to a copy of the repository, rebuild what
it reruns on the reduced protocol, and decide whether a reader would catch it.

    python -m mutants.run                       # every mutant, then results.csv and the tables
    python -m mutants.run warmup_never_caps …   # some mutants (their rows replace the old ones)
    python -m mutants.run --skip-mutants --false-catch   # only the second control
    python -m mutants.run --control-only        # build (or find) the control and stop

The control: a copy of the repository (tracked files and new ones git does not ignore, as
tests/repository.py) with config/mutants.yaml (mutants/protocol.py: the analytic demos at full
size, the trained and recorded demos on the reduced protocol), built once and cached under
--work by the hash of what the build reads. Its jobs run with mutants/trace/ on PYTHONPATH:
each job notes the lecture's functions it called.

A mutant: a copy of the control build with the patch applied (mutants/patch.py). A job that
never called the mutated function computes exactly what it computed in the control, so it is
kept (its CSV is marked newer than the patch); Snakemake reruns the others. Then, as a reader,
in the order that costs least:
1. the protocol's build: every rerun job of the lecture's demos, the control's recordings kept
   (their record.json renewed with the mutant's code hashes), aggregates, figures, the report;
   `python -m lecture17 diff control mutant` and the counted verdicts of both builds: the
   ledger catches the mutant when a counted verdict changes or a cell differs beyond seed
   variation (deterministic cells: other printed digits) — one that the second control does
   not also show (below): a flip that a rebuild on another CPU gives too is resampling;
2. the tests of the mutated module (TESTS) on the mutated copy, stopping at the first failure
   (15-17 s a module here; the whole suite is ~12 minutes, 5 hours for the catalogue; --tests
   uncaught: only when 1 did not catch it);
3. if the protocol's demos did not catch it (whatever the tests found), the recorded demos
   (07.x, 08.x) it reaches are rerun on the reduced protocol in the mutant's copy, stored as
   its recordings, and judged as in 1: a mutant that merely stales a recording is judged on
   the recording rebuilt, never on "stale".
Decision (decide): caught-by-build (a job or the report fails), caught-by-ledger,
caught-by-tests, equivalent (every CSV byte-identical to the control's, the tests pass) or
survivor (a gap: numbers changed, nothing caught it). `stage` in results.csv says how far it
went: protocol (its demos caught it), tests (they did not; the tests ran and the recorded demos
were not needed: the tests caught it, or it reaches none), recorded (rebuilt and judged).

The second control (--false-catch): a fresh copy built from scratch like the control but under
a simulated other CPU (ATEN_CPU_CAPABILITY=avx2 MKL_CBWR=COMPATIBLE: other kernels, other
rounding, so every trained number is another sample of the same distribution), judged like a
mutant: a catch there is a false catch. It runs first; its flips and cells (the noise set,
mutants-noise.json) are then not counted as a mutant's catch (`beyond_noise` in results.csv
counts the rest), since a rebuild that changes nothing but the rounding shows them too.
"""

import argparse
import csv
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from mutants import coverage, protocol
from mutants.catalogue import (
    DECODING,
    EXERCISES,
    GRU,
    LAYERS,
    NUMPY,
    POSITIONS,
    SCALING,
    SELF_ATTENTION,
    TASKS,
    TORCH,
    TRAINING,
    Mutant,
    select,
)
from mutants.digests import code_fingerprint, digest, digest_of  # noqa: F401 - run's names too
from mutants.patch import apply

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "mutants" / "results.csv"
# in the checkout (ignored): a control build lasts as long as the checkout (not /tmp)
WORK = Path(os.environ.get("LECTURE17_MUTANTS_WORK", ROOT / ".mutants-work"))
TRACE = ".mutants-trace"  # in a build folder: one JSON per job, the functions it called
DONE = ".mutants-build.json"  # in a build folder: written when its build finished
# What a control's tables and verdicts are made from: a change here builds a new control. The
# workflow, the settings, the ledger and views its claims read, the protocol and the tracing,
# and the code its jobs run: the closure (pipeline.deps) of the job runner, the aggregation,
# the recordings and every experiments module, and the command line that dispatches them. The
# checker, the report's words and figures and the diff are not in it (they read the tables a
# control made, with the code of the process that reads them): editing them keeps the control.
KEYED = ("Snakefile", "config/", "report/ledger/", "report/views/", "workflow/")
KEYED += ("mutants/protocol.py", "mutants/protocol.yaml", "mutants/trace/")
TABLE_CODE = ("lecture17.pipeline.job", "lecture17.pipeline.warm", "lecture17.pipeline.aggregate")
TABLE_CODE += ("lecture17.pipeline.record", "lecture17.pipeline.recorded", "lecture17.scripts")
TABLE_CODE += ("lecture17.pipeline.stopping", "lecture17.pipeline.csvio")
# the tests of each mutated module (the fast, mirrored ones: tests/test_<module>.py,
# tests/experiments/test_<module>.py)
TESTS = {
    NUMPY: ["tests/test_attention_numpy.py"],
    TORCH: ["tests/test_tiny_transformer.py", "tests/test_torch_models.py"],
    DECODING: ["tests/test_tiny_transformer.py", "tests/test_beam_search.py"],
    GRU: ["tests/test_tiny_transformer.py"],
    TRAINING: ["tests/test_training.py"],
    TASKS: ["tests/test_training.py"],
    SELF_ATTENTION: ["tests/experiments/test_self_attention.py"],
    SCALING: ["tests/experiments/test_scaling_multihead.py"],
    LAYERS: ["tests/experiments/test_layers.py"],
    POSITIONS: ["tests/experiments/test_positional_encoding.py"],
    EXERCISES: ["tests/test_attention_numpy.py"],  # where the exercises' answers are tested
}
SIMULATED_CPU = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "COMPATIBLE"}
DECISIONS = ("caught-by-build", "caught-by-ledger", "caught-by-tests", "equivalent", "survivor")


# -----------------------------------------------------------------------------
# the repository, its fingerprint, a copy


def repository_files(root: Path = ROOT) -> list[str]:
    """Tracked files and new ones git does not ignore (tests/repository.py's selection)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    return sorted(name for name in listed if Path(root, name).is_file())


def keyed_files(root: Path = ROOT) -> list[str]:
    """The files a control's tables are made from (KEYED, TABLE_CODE), relative to `root`."""
    from lecture17.experiments import DEMOS
    from lecture17.pipeline.deps import code_inputs

    experiments = sorted({f"lecture17.experiments.{d.module}" for d in DEMOS.values()})
    code = set(code_inputs(*TABLE_CODE, *experiments, root=root))
    code.add("src/lecture17/__main__.py")
    return [n for n in repository_files(root) if n.startswith(KEYED) or n in code]


def refresh_unkeyed(folder: Path, root: Path = ROOT) -> None:
    """A copy of a control runs this checkout's code where the key does not cover it (the
    report, the figures, the checker): a control is reused across edits of those files, so
    its copy gets them from here (modification times kept: only what lists them reruns)."""
    keyed = set(keyed_files(root))
    for name in repository_files(root):
        if name not in keyed:
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / name, folder / name)


def build_key(root: Path = ROOT) -> str:
    """sha256 of everything a control's tables are made from: its cache key."""
    return digest(root, keyed_files(root))


def copy_repository(dest: Path, root: Path = ROOT) -> Path:
    for name in repository_files(root):
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, dest / name)
    return dest


# -----------------------------------------------------------------------------
# builds


@dataclass
class Build:
    folder: Path
    cores: int
    env: dict = field(default_factory=dict)  # extra environment (the simulated CPU)
    trace: bool = True
    triggers: tuple[str, ...] = ()  # Snakemake's --rerun-triggers (default: all of them)

    def environment(self) -> dict:
        venv = Path(sys.executable).parent
        env = dict(os.environ, PATH=f"{venv}{os.pathsep}{os.environ['PATH']}", **self.env)
        env["PYTHONPATH"] = str(self.folder / "src")
        if self.trace:  # the jobs' shell prefix puts src/ first; this comes after it
            env["PYTHONPATH"] += f"{os.pathsep}{self.folder / 'mutants' / 'trace'}"
            env["LECTURE17_TRACE_SRC"] = str(self.folder / "src" / "lecture17")
            env["LECTURE17_TRACE_DIR"] = str(self.folder / TRACE)
            # warm-started jobs too: the hook's start_job runs in each forked child
            # (lecture17/pipeline/warm.py job_hook); cold, the control cost ~6 more minutes
        for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env[name] = "1"
        return env

    def run(self, command: list[str], log: str) -> bool:
        start = time.monotonic()
        with open(self.folder / log, "a", encoding="utf-8") as out:
            print(f"$ {' '.join(command)[:300]}", file=out, flush=True)
            done = subprocess.run(
                command, cwd=self.folder, env=self.environment(), stdout=out, stderr=out
            )
            print(f"# {time.monotonic() - start:.1f} s, exit {done.returncode}", file=out)
        return done.returncode == 0

    def snakemake(self, *targets: str) -> bool:
        command = [sys.executable, "-m", "snakemake", "--cores", str(self.cores)]
        command += ["--configfile", protocol.CONFIG, "--replace-workflow-config", *targets]
        command += ["--rerun-triggers", *self.triggers] if self.triggers else []
        return self.run(command, "mutants-build.log")

    def python(self, code: str) -> bool:
        return self.run([sys.executable, "-c", code], "mutants-build.log")


def demos_of(build: Build) -> dict:
    return yaml.safe_load((build.folder / protocol.CONFIG).read_text(encoding="utf-8"))["demos"]


def run_csvs(demos: dict, recorded: bool) -> list[str]:
    """The run CSVs of the lecture's demos (recorded=False) or of the recorded ones (07.x, 08.x)
    in a CPU build; GPU-only demos, studies (their seeds are recorded demos') and views have
    none."""
    from lecture17.experiments import DEMOS
    from lecture17.pipeline.job import jobs

    paths = []
    for demo, spec in demos.items():
        kind = DEMOS[demo].kind
        if kind == "view" or DEMOS[demo].study or "cpu" not in spec.get("devices", ["cpu"]):
            continue
        if (kind == "recorded") == recorded:
            paths += [path for path, _, _ in jobs(demo, spec)]
    return paths


STORE = """
import yaml
from pathlib import Path
from lecture17.pipeline import record
from lecture17.experiments import DEMOS
demos = yaml.safe_load(open({config!r}, encoding="utf-8"))["demos"]
machine = "make mutants (reduced protocol)"
for demo, spec in demos.items():
    if DEMOS[demo].kind != "recorded":
        continue
    if {rerun!r} is None or demo in {rerun!r}:
        record.store(demo, spec, "cpu", machine)
    else:  # its runs are the control's: only the code hashes change
        settings = {{**spec["settings"], **({{"device": "cpu"}} if spec.get("grid") else {{}})}}
        record.write(Path(record.MEASURED, demo), demo, settings, "cpu", machine)
"""


def store_recordings(build: Build, rerun: set[str] | None = None) -> bool:
    """Every recorded demo's runs in results/ → report/measured/<demo>/ with this copy's code
    hashes (pipeline/record.py store; no fingerprint: the hashes vouch). With `rerun` (a
    mutant's copy), only those demos' runs are copied; the others keep the control's runs,
    which their jobs would compute again, and get a record.json with this code's hashes."""
    chosen = None if rerun is None else sorted(rerun)
    return build.python(STORE.format(config=protocol.CONFIG, rerun=chosen))


def build_runs(build: Build, lecture: bool = True, recorded: bool = True) -> bool:
    """The run CSVs of the lecture's demos and/or of the recorded ones, in one Snakemake call."""
    demos = demos_of(build)
    targets = run_csvs(demos, False) if lecture else []
    return build.snakemake(*targets, *(run_csvs(demos, True) if recorded else []))


def build_report(build: Build, rerun: set[str] | None = None) -> bool:
    """The recordings stored, then the default build (the report is always rewritten, so its
    manifest is newer than every run CSV, also when the rerun runs changed no table)."""
    return store_recordings(build, rerun) and build.snakemake("--forcerun", "report")


def full_build(build: Build) -> dict:
    """A control (or second control) from scratch: every run, the recordings, the report."""
    start = time.monotonic()
    ok = build_runs(build) and build_report(build)
    if not ok:
        raise RuntimeError(f"the build in {build.folder} failed: see mutants-build.log there")
    info = {"seconds": round(time.monotonic() - start, 1), "cores": build.cores, "env": build.env}
    (build.folder / DONE).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return info


def fresh_copy(folder: Path, overlay: Path) -> Path:
    """A new copy of the repository with config/mutants.yaml from `overlay`."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    copy_repository(folder)
    protocol.write(folder, overlay)
    return folder


def control_key(overlay: Path) -> str:
    return hashlib.sha256((build_key() + Path(overlay).read_text()).encode()).hexdigest()[:12]


def control(work: Path, cores: int, overlay: Path = protocol.OVERLAY) -> Path:
    """The cached control build of this code and protocol (built when missing)."""
    folder = work / f"control-{control_key(overlay)}"
    if not (folder / DONE).is_file():
        full_build(Build(fresh_copy(folder, overlay), cores))
    return folder


# -----------------------------------------------------------------------------
# which jobs a mutant reaches


def traces(folder: Path) -> dict[str, list[str]]:
    """Run CSV (relative path) -> the functions its job called ("src/…py::Class.method")."""
    base = folder / TRACE
    return {
        str(path.relative_to(base).with_suffix(".csv")): json.loads(path.read_text())
        for path in base.rglob("*.json")
    }


def reaches(mutant: Mutant, calls: list[str]) -> bool:
    """Whether a job that called `calls` ran the mutated function (or a function inside it)."""
    target = f"{mutant.file}::{mutant.function}"
    return any(call == target or call.startswith(f"{target}.<locals>.") for call in calls)


def keep_unreached(folder: Path, mutant: Mutant, runs: list[str]) -> list[str]:
    """Mark the control's CSVs of the jobs the mutant does not reach newer than the patch (so
    Snakemake keeps them); returns the run CSVs it will rerun."""
    calls = traces(folder)
    if missing := [run for run in runs if run not in calls]:
        raise RuntimeError(f"the control has no trace of {len(missing)} jobs, e.g. {missing[0]}")
    rerun = [run for run in runs if reaches(mutant, calls[run])]
    keep_only(folder, mutant.file, runs, set(rerun))
    return rerun


def keep_only(folder: Path, edited: str, runs: list[str], rerun: set[str]) -> None:
    """Mark `edited` newer than every file of the build, and the files of the jobs in `runs`
    but not in `rerun` newer still: Snakemake reruns only `rerun` (and what reads them). The
    mutants' path, and check --trained's (mutants/student.py)."""
    newest = max(p.stat().st_mtime for p in (folder / "results").rglob("*") if p.is_file())
    os.utime(folder / edited, (newest + 10, newest + 10))
    for run in set(runs) - set(rerun):
        for path in built_job_files(run, folder):
            os.utime(folder / path, (newest + 20, newest + 20))


def job_files(run: str) -> list[str]:
    """What Snakemake checks of a job's output: its CSV, timing CSV, benchmark file and log
    (results/<demo>/…/seed<k>.csv, benchmarks/<rule>/<demo>/…/seed<k>.tsv, logs/<demo>/….log),
    and the kept models of a demo that keeps them (05.1: seed<k>.models.pt)."""
    from lecture17.experiments import DEMOS

    job = Path(run).relative_to("results").with_suffix("")  # <demo>/…/seed<k>
    demo = DEMOS[job.parts[0]]
    files = [
        run,
        run.replace(".csv", ".timing.csv"),
        f"benchmarks/{demo.rule}/{job}.tsv",
        f"logs/{job}.log",
    ]
    return files + ([run.replace(".csv", ".models.pt")] if demo.keeps_models else [])


def built_job_files(run: str, folder: Path) -> list[str]:
    """job_files as the build in `folder` wrote them: a control built before a demo moved to a
    rule of its own (05.1 did) has its benchmark under the old rule's name, and no kept models."""
    job = Path(run).relative_to("results").with_suffix("")
    files = [f for f in job_files(run) if not f.startswith("benchmarks/")]
    files += [str(p.relative_to(folder)) for p in folder.glob(f"benchmarks/*/{job}.tsv")]
    return [f for f in files if (folder / f).exists()]


# -----------------------------------------------------------------------------
# judging a build against the control


def table_csvs(folder: Path) -> dict[str, bytes]:
    """Every CSV a build produced (runs, recordings, tables), timings apart."""
    found = {}
    for base in ("results", "report/measured"):
        for path in sorted((folder / base).rglob("*.csv")):
            if not path.name.endswith(".timing.csv"):
                found[str(path.relative_to(folder))] = path.read_bytes()
    return found


def changed_csvs(control_dir: Path, other: Path) -> list[str]:
    a, b = table_csvs(control_dir), table_csvs(other)
    return sorted(name for name in set(a) | set(b) if a.get(name) != b.get(name))


@dataclass
class Judgement:
    diff_exit: int  # `python -m lecture17 diff control other`: 0 same, 1 different, 2 incomplete
    flips: list[str]  # counted claims whose verdict changed
    cells: list[str]  # cells beyond seed variation, or with other printed digits
    changed: list[str]  # CSVs not byte-identical to the control's
    noise: dict = field(default_factory=dict)  # the second control's {"flips", "cells"}

    @property
    def differs(self) -> bool:
        """What `diff` says: a verdict flipped or a cell differs."""
        return bool(self.flips or self.cells)

    @property
    def credible(self) -> list[str]:
        """The flips and cells that a rebuild on another CPU (the second control) does not
        also show: only these are evidence of the mutant rather than of resampling."""
        flips = [f for f in self.flips if f not in self.noise.get("flips", ())]
        return flips + [c for c in self.cells if c not in self.noise.get("cells", ())]

    @property
    def caught(self) -> bool:
        return bool(self.credible)


@dataclass
class Control:
    """A control build loaded and evaluated once (every mutant is compared with it)."""

    entries: list
    views: dict
    build: object  # diff.Build
    outcomes: list


_CONTROLS: dict[Path, Control] = {}
_CONTROLS_LOCK = threading.Lock()


def loaded_control(control_dir: Path) -> Control:
    """The control's ledger, views, tables and claims, read once per process (its folder is
    never written after it is built: a mutant works on a copy)."""
    from lecture17.reporting import diff, ledger
    from lecture17.reporting.report import load_views

    key = Path(control_dir).resolve()
    with _CONTROLS_LOCK:
        if key not in _CONTROLS:
            entries = ledger.load_ledger(key / "report" / "ledger")
            build = diff.load_build(key)
            outcomes = ledger.evaluate_all(entries, build.tables, build.demos)
            _CONTROLS[key] = Control(entries, load_views(key / "report/views"), build, outcomes)
        return _CONTROLS[key]


def counted_flips(comparison, trained: set) -> tuple[list[str], list[str]]:
    """The counted claims whose status differs, and what else `diff` fails on: the cells it
    flags, and the claims whose printed value differs where their class is judged by it
    (exact, reconstructed, echo, beyond: e.g. a chance level measured on another test set),
    written "claim C037"."""
    from lecture17.reporting import diff, ledger

    flips, claims = [], []
    pairs = zip(comparison.outcomes_a, comparison.outcomes_b, strict=True)
    for oa, ob in pairs:
        if oa.entry["class"] in ledger.COUNTED and oa.status != ob.status:
            flips.append(oa.entry["id"])
        elif diff.compare_claim(oa, ob, comparison.cells, trained)[0] == "differs":
            claims.append(f"claim {oa.entry['id']}")
    bad = sorted(" · ".join(map(str, key)) for key in comparison.cells.bad)
    return flips, bad + claims


def judge(control_dir: Path, other: Path, noise: dict | None = None) -> Judgement:
    """`python -m lecture17 diff control other` (its text kept in the build's folder) and the
    counted verdicts of a finished build against the control, from one comparison; they must
    agree (diff fails exactly when a verdict flips or a cell differs), and a build that `diff`
    calls incomplete is a fault of this machinery, never a mutant's verdict."""
    from lecture17.reporting import diff

    control = loaded_control(control_dir)
    try:
        b = diff.load_build(other)
    except diff.IncompleteBuild as error:
        raise RuntimeError(f"diff refused {other} as incomplete: {error}") from error
    done = diff.compare(
        control.entries, control.build, b, control.views, outcomes_a=control.outcomes
    )
    status = 1 if done.failures else 0
    title = f"{control_dir} 对照 vs {other}"
    text = "\n".join([diff.headline(title, control.entries, done.failures), *done.lines])
    (other / "mutants-diff.txt").write_text(text + "\n", encoding="utf-8")
    flips, cells = counted_flips(done, control.build.trained | b.trained)
    verdict = Judgement(status, flips, cells, changed_csvs(control_dir, other), noise or {})
    if verdict.differs != (status == 1):
        raise RuntimeError(f"diff exit {status} disagrees with flips {flips}, cells {cells[:3]}")
    return verdict


# -----------------------------------------------------------------------------
# tests


def run_tests(folder: Path, mutant: Mutant, cores: int) -> tuple[bool, str]:
    """The mutated module's tests on the mutated copy (first failure stops them): failed?"""
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider"]
    command += ["-m", "not gpu", "--durations=0", *TESTS[mutant.file]]
    if cores > 1:
        command += ["-n", str(cores)]
    env = Build(folder, cores, trace=False).environment()
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True)
    (folder / "mutants-tests.log").write_text(done.stdout + done.stderr, encoding="utf-8")
    failed = [line for line in done.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
    return done.returncode != 0, (failed[0] if failed else "")[:200]


# -----------------------------------------------------------------------------
# the decision


@dataclass
class Evidence:
    build_ok: bool
    ledger: bool  # a counted verdict changed, or a cell beyond seed variation
    tests: bool | None  # the tests failed (None: not run)
    identical: bool  # every CSV byte-identical to the control's


def decide(e: Evidence) -> str:
    """The reader's verdict on a mutant, in the order a reader meets the evidence."""
    if not e.build_ok:
        return "caught-by-build"
    if e.ledger:
        if e.identical:
            raise ValueError("the ledger cannot catch a build whose CSVs are the control's")
        return "caught-by-ledger"
    if e.tests:
        return "caught-by-tests"
    return "equivalent" if e.identical else "survivor"


# -----------------------------------------------------------------------------
# one mutant


def demos_in(runs: list[str]) -> set[str]:
    return {Path(run).parts[1] for run in runs}  # results/<demo>/…


def prepare(mutant: Mutant, control_dir: Path, work: Path, cores: int) -> tuple:
    """The mutant's copy of the control build, patched: (build, rerun lecture runs, rerun
    recorded runs)."""
    folder = work / f"mutant-{mutant.name}"
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(control_dir, folder, symlinks=True)
    refresh_unkeyed(folder)
    apply(mutant, folder)
    # untraced: which jobs a mutant reaches is read from the control's traces (copied above),
    # so its own jobs may run warm (lecture17/pipeline/warm.py)
    build = Build(folder, cores, trace=False)
    lecture, recorded = run_csvs(demos_of(build), False), run_csvs(demos_of(build), True)
    rerun = keep_unreached(folder, mutant, lecture + recorded)
    return build, [r for r in rerun if r in lecture], [r for r in rerun if r in recorded]


def protocol_stage(build: Build, control_dir: Path, noise: dict) -> Judgement | None:
    """The lecture's demos rebuilt, the recordings kept (hashes renewed); None if it fails.
    One Snakemake call (its DAG costs seconds): the recordings are the control's, so they can
    be stored before the runs."""
    runs = run_csvs(demos_of(build), False)
    ok = store_recordings(build, set()) and build.snakemake(*runs, "all", "--forcerun", "report")
    return judge(control_dir, build.folder, noise) if ok else None


def recorded_stage(build: Build, control_dir: Path, runs: list[str], noise: dict):
    """The recorded demos' reached runs rebuilt and stored as the copy's recordings."""
    ok = build_runs(build, lecture=False) and build_report(build, rerun=demos_in(runs))
    return judge(control_dir, build.folder, noise) if ok else None


def tests_on_a_copy(mutant: Mutant, work: Path, cores: int) -> tuple:
    """The mutated module's tests on a copy of this checkout with the mutant applied:
    (failed, first failure, seconds)."""
    copy = work / f"tests-{mutant.name}"
    shutil.rmtree(copy, ignore_errors=True)
    apply(mutant, copy_repository(copy))
    start = time.monotonic()
    failed, first = run_tests(copy, mutant, cores)
    seconds = time.monotonic() - start
    shutil.rmtree(copy, ignore_errors=True)
    return failed, first, seconds


def through_check(mutant: Mutant, work: Path, cores: int, tests: str) -> dict:
    """A mistake in a block a student writes, judged as `python -m lecture17 check` judges a
    student's file with it (mutants/fingerprints.py's file of every block): the analytic demos
    that reach the block, against the committed reference (deterministic on every CPU kind, so
    no control build); then the module's tests, as for any mutant. The only demos these blocks
    reach are analytic (the call map), so the build's path would rerun exactly these."""
    from lecture17.checker.run import check
    from lecture17.reporting import ledger
    from mutants.fingerprints import student_file

    folder = work / f"check-{mutant.name}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    start = time.monotonic()
    report = check(student_file(mutant, folder), fingerprints=[])
    build_s = time.monotonic() - start
    flips = sorted(c.entry["id"] for c in report.changes if c.entry["class"] in ledger.COUNTED)
    crashed = any(r.failure for r in report.demos.values())
    failed, first, tests_s = None, "", 0.0
    if tests == "all" or (tests == "uncaught" and not flips):
        failed, first, tests_s = tests_on_a_copy(mutant, work, cores)
    evidence = Evidence(
        build_ok=not crashed,
        ledger=bool(report.changes),
        tests=failed,
        identical=not report.tables_changed,
    )
    measured = {
        "jobs_rerun": len(report.demos),
        "stage": "check",
        "csvs_changed": len(report.tables_changed),
        "verdict_flips": " ".join(flips),
        "cells_beyond": "",  # no second control on this path: deterministic numbers only
        "beyond_noise": "",
        "diff_exit": "",
    }
    return row_of(mutant, evidence, measured, (failed, first, tests_s), build_s)


def checked_by_the_checker(mutants: list[Mutant]) -> set[str]:
    """The names of the mutants that go through `check`'s path (fingerprints.student_facing)."""
    from mutants.fingerprints import student_facing

    return {m.name for m in student_facing()} & {m.name for m in mutants}


def row_of(mutant: Mutant, evidence: Evidence, measured: dict, tests: tuple, build_s: float):
    """A results row: the mutant, the decision its evidence makes, what its stage measured
    (jobs_rerun … diff_exit), and its tests (failed, first failure, seconds)."""
    failed, first, tests_s = tests
    return {
        "mutant": mutant.name,
        "code": mutant.code,
        "file": mutant.file,
        "function": mutant.function,
        "decision": decide(evidence),
        **measured,
        "tests_failed": "" if failed is None else failed,
        "first_failure": first,
        "build_s": round(build_s, 1),
        "tests_s": round(tests_s, 1),
        "mistake": mutant.mistake,
    }


def run_mutant(
    mutant: Mutant,
    control_dir: Path,
    work: Path,
    cores: int,
    tests: str,
    noise: dict,
    recorded_when: str = "uncaught",
) -> dict:
    """One mutant, judged in the order that costs least: the protocol's demos; the mutated
    module's tests; then, if the protocol's demos did not catch it, the recorded demos it
    reaches (whatever the tests found: the ledger's catch rate is measured on its own).
    tests: "all", "uncaught" (only when the protocol's demos did not catch it) or "none".
    recorded_when: "uncaught" (as above) or "always": the recorded demos it reaches are rebuilt
    even when the protocol's demos caught it, so that its flips of the claims decided on
    recorded seeds are known too (the coverage of mutants/coverage.py); a recorded stage that
    fails then keeps the protocol's verdict."""
    build, lecture, recorded = prepare(mutant, control_dir, work, cores)
    start, stage, failed, first, tests_s = time.monotonic(), "protocol", None, "", 0.0
    verdict = protocol_stage(build, control_dir, noise)
    caught = verdict is None or verdict.caught
    if tests == "all" or (tests == "uncaught" and not caught):
        tests_start = time.monotonic()
        failed, first = run_tests(build.folder, mutant, cores)
        tests_s = time.monotonic() - tests_start
        stage = "protocol" if caught else "tests"
    # the recorded demos whenever the protocol's did not catch it, the tests' verdict aside:
    # the ledger's catch rate is a fact about the ledger, not about what the tests found first
    if recorded and (not caught or (recorded_when == "always" and verdict is not None)):
        again = recorded_stage(build, control_dir, recorded, noise)
        if again is not None or not caught:
            stage, verdict = "recorded", again
    evidence = Evidence(
        build_ok=verdict is not None,
        ledger=bool(verdict and verdict.caught),
        tests=failed,
        identical=bool(verdict and not verdict.changed),
    )
    measured = {
        "jobs_rerun": len(lecture) + (len(recorded) if stage == "recorded" else 0),
        "stage": stage,
        "csvs_changed": len(verdict.changed) if verdict else "",
        "verdict_flips": " ".join(verdict.flips) if verdict else "",
        "cells_beyond": len(verdict.cells) if verdict else "",
        "beyond_noise": len(verdict.credible) if verdict else "",
        "diff_exit": verdict.diff_exit if verdict else "",
    }
    build_s = time.monotonic() - start - tests_s
    return row_of(mutant, evidence, measured, (failed, first, tests_s), build_s)


NOISE = "mutants-noise.json"  # in the second control's folder: its flips and cells


def second_of(control_dir: Path) -> Path:
    """The second control's folder of a control (beside it: control-<key> -> control-2-<key>),
    also when the control was given with --control and the checkout's key has moved on."""
    return control_dir.parent / f"control-2-{control_dir.name.removeprefix('control-')}"


def second_control(control_dir: Path, cores: int, overlay: Path) -> dict:
    """A control built again from scratch under a simulated other CPU (cached like the
    control), judged like a mutant; its flips and cells are kept as the noise set (NOISE)."""
    folder = second_of(control_dir)
    build = Build(folder, cores, env=SIMULATED_CPU, trace=False)
    if (folder / DONE).is_file():
        info = json.loads((folder / DONE).read_text(encoding="utf-8"))
    else:
        info = full_build(Build(fresh_copy(folder, overlay), cores, SIMULATED_CPU, trace=False))
    verdict = judge(control_dir, folder)
    noise = {"flips": verdict.flips, "cells": verdict.cells}
    (folder / NOISE).write_text(json.dumps(noise, indent=1) + "\n", encoding="utf-8")
    demos = demos_of(build)
    return {
        "mutant": "control-2",
        "code": "",
        "file": "",
        "function": "",
        "decision": "false-catch" if verdict.differs else "no-false-catch",
        "jobs_rerun": len(run_csvs(demos, False)) + len(run_csvs(demos, True)),
        "stage": "recorded",
        "csvs_changed": len(verdict.changed),
        "verdict_flips": " ".join(verdict.flips),
        "cells_beyond": len(verdict.cells),
        "beyond_noise": "",
        "diff_exit": verdict.diff_exit,
        "tests_failed": "",
        "first_failure": "",
        "build_s": info["seconds"],
        "tests_s": 0,
        "mistake": "no mutation: " + " ".join(f"{k}={v}" for k, v in SIMULATED_CPU.items()),
    }


def read_noise(control_dir: Path) -> dict:
    """The second control's flips and cells, if it was built and judged ({} otherwise)."""
    path = second_of(control_dir) / NOISE
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


# -----------------------------------------------------------------------------
# what a campaign costs, from the control's traces and benchmark files


WARM_CPU = re.compile(r"^warm start: CPU ([\d.]+) s", re.M)


def job_cpu(folder: Path, run_csv: str) -> float:
    """CPU seconds of one job of the control build: its own (the last line of its log) when it
    ran warm (lecture17/pipeline/warm.py), else its Snakemake benchmark file's."""
    files = built_job_files(run_csv, folder)
    for log in (f for f in files if f.startswith("logs/")):
        if found := WARM_CPU.search((folder / log).read_text(encoding="utf-8")):
            return float(found.group(1))
    (bench,) = [f for f in files if f.startswith("benchmarks/")]
    with (folder / bench).open(encoding="utf-8") as f:
        return float(list(csv.DictReader(f, delimiter="\t"))[0]["cpu_time"])


def estimate(control_dir: Path, mutants: list[Mutant]) -> list[dict]:
    """Per mutant: the jobs it reaches in the protocol's demos and in the recorded ones (paid
    only when the first do not catch it), and their CPU seconds in the control build."""
    demos, calls = demos_of(Build(control_dir, 1)), traces(control_dir)
    lecture, recorded = run_csvs(demos, False), run_csvs(demos, True)
    rows = []
    for m in mutants:
        first = [r for r in lecture if reaches(m, calls[r])]
        second = [r for r in recorded if reaches(m, calls[r])]
        rows.append(
            {
                "mutant": m.name,
                "protocol_jobs": len(first),
                "protocol_cpu_s": round(sum(job_cpu(control_dir, r) for r in first)),
                "recorded_jobs": len(second),
                "recorded_cpu_s": round(sum(job_cpu(control_dir, r) for r in second)),
            }
        )
    return rows


def longest_first(control_dir: Path, mutants: list[Mutant]) -> list[Mutant]:
    """The mutants in the order that ends a run of several at a time soonest: the most job CPU
    first (the protocol's demos and the recorded ones it reaches, from the control's files)."""
    cost = {
        r["mutant"]: r["protocol_cpu_s"] + r["recorded_cpu_s"]
        for r in estimate(control_dir, mutants)
    }
    return sorted(mutants, key=lambda m: -cost[m.name])


def print_estimate(rows: list[dict]) -> None:
    print("mutant protocol_jobs protocol_cpu_s recorded_jobs recorded_cpu_s")
    for r in rows:
        print(" ".join(str(v) for v in r.values()))
    first = sum(r["protocol_cpu_s"] for r in rows)
    second = sum(r["recorded_cpu_s"] for r in rows)
    print(f"作业的 CPU 时间 job CPU seconds: 协议的演示 protocol {first}, 记录的 recorded {second}")


def tests_today(mutants: list[Mutant], work: Path, cores: int, results: Path) -> list[dict]:
    """Each mutant's tests rerun on a copy of today's checkout: a test added after the control
    was built counts. The rows keep their build and ledger columns (the control's code); the
    tests columns and `tests_fingerprint` (today's code) are replaced, and a mutant only the
    tests could catch is decided again."""
    old = {r["mutant"]: r for r in read_results(results)}
    rows = []
    for mutant in mutants:
        if mutant.name not in old:
            raise ValueError(f"{mutant.name}: no row in {results.name} to update; run it first")
        folder = work / f"tests-{mutant.name}"
        shutil.rmtree(folder, ignore_errors=True)
        apply(mutant, copy_repository(folder))
        start = time.monotonic()
        failed, first = run_tests(folder, mutant, cores)
        row = dict(old[mutant.name])
        row |= {"tests_failed": failed, "first_failure": first}
        row |= {"tests_s": round(time.monotonic() - start, 1)}
        row["tests_fingerprint"] = code_fingerprint(ROOT)
        if row["decision"] in ("caught-by-tests", "survivor") and failed:
            row["decision"] = "caught-by-tests"
        print(f"{mutant.name}: tests {'caught' if failed else 'missed'} it ({first[:60]})")
        shutil.rmtree(folder, ignore_errors=True)
        rows.append(row)
    return rows


# -----------------------------------------------------------------------------
# results


COLUMNS = [
    "mutant",
    "code",
    "file",
    "function",
    "decision",
    "jobs_rerun",
    "stage",
    "csvs_changed",
    "verdict_flips",
    "cells_beyond",
    "beyond_noise",
    "diff_exit",
    "tests_failed",
    "first_failure",
    "build_s",
    "tests_s",
    "fingerprint",
    "tests_fingerprint",  # set when the tests were rerun on a later checkout (--tests-today)
    "mistake",
]


def read_results(path: Path = RESULTS) -> list[dict]:
    if not path.is_file():
        return []
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def write_results(rows: list[dict], path: Path = RESULTS) -> None:
    """Merge `rows` into results.csv (a mutant's new row replaces its old one), in catalogue
    order with control-2 last."""
    from mutants.catalogue import MUTANTS

    merged = {row["mutant"]: row for row in read_results(path)}
    merged |= {row["mutant"]: row for row in rows}
    order = [*MUTANTS, "control-2"]
    kept = [merged[name] for name in order if name in merged]
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: row.get(k, "") for k in COLUMNS} for row in kept)


CAMPAIGN_COLUMNS = [
    "started",
    "cpu",
    "cores",
    "jobs",
    "recorded",
    "mutants",
    "control_s",
    "second_control_s",
    "mutants_s",
    "total_s",
    "fingerprint",
    "command",
]


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo), as the machine a campaign's times belong to."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def built_seconds(folder: Path, since: float) -> str:
    """The build time of a control finished at or after `since` (wall clock), "cached" for
    one finished before, "" when there is none."""
    done = folder / DONE
    if not done.is_file():
        return ""
    if done.stat().st_mtime < since:
        return "cached"
    return str(json.loads(done.read_text(encoding="utf-8")).get("seconds", ""))


def append_campaign(row: dict, path: Path) -> None:
    """One line per finished campaign: what it cost on which machine, kept beside the results
    (a terminal's log or /tmp does not outlive the machine; this file is committed)."""
    new = not path.is_file()
    with path.open("a", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CAMPAIGN_COLUMNS, lineterminator="\n")
        if new:
            writer.writeheader()
        writer.writerow({k: row.get(k, "") for k in CAMPAIGN_COLUMNS})


def through_check_only(chosen: list[Mutant], args, began: float, began_wall: float) -> int:
    """Every chosen mutant is in a student-facing block: no control build is needed."""
    fingerprint, rows = code_fingerprint(ROOT), []
    for mutant in chosen:
        rows.append(through_check(mutant, args.work, args.cores, args.tests))
        rows[-1]["fingerprint"] = fingerprint
        row = rows[-1]
        print(f"{row['mutant']}: {row['decision']}（check {row['build_s']} + {row['tests_s']} s）")
        write_results(rows, args.results)
    campaign = {
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(began_wall)),
        "cpu": cpu_model(),
        "cores": args.cores,
        "jobs": 1,
        "recorded": "",
        "mutants": len(chosen),
        "control_s": "",
        "second_control_s": "",
        "mutants_s": round(time.monotonic() - began, 1),
        "total_s": round(time.monotonic() - began, 1),
        "fingerprint": fingerprint,
        "command": "python -m mutants.run " + " ".join(m.name for m in chosen),
    }
    append_campaign(campaign, args.campaigns or args.results.with_name("campaigns.csv"))
    return 0


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m mutants.run", description=__doc__)
    _what_to_run(parser)
    _where(parser)
    return parser


def _what_to_run(parser: argparse.ArgumentParser) -> None:
    """The options that choose the mutants, how many at a time, and which stages run."""
    parser.add_argument("mutants", nargs="*", help="names from the catalogue (default: all)")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="mutants built at a time, each with cores/jobs cores (the most job CPU first): a "
        "mutant's copy, report and diff are serial work, so 2 at a time on 2 cores keep both busy",
    )
    parser.add_argument(
        "--tests",
        choices=["all", "uncaught", "none"],
        default="all",
        help="when the mutated module's tests run: always (default; ~15 s a module), only when "
        "the build and the ledger did not catch the mutant, or never",
    )
    parser.add_argument(
        "--tests-today",
        action="store_true",
        help="rerun only the tests of the mutants named, on a copy of today's checkout (its "
        "tests, not the control's), and update their rows' tests columns",
    )
    parser.add_argument(
        "--recorded",
        choices=["uncaught", "always"],
        default="uncaught",
        help="when the recorded demos a mutant reaches are rebuilt: only when the protocol's "
        "demos did not catch it (default), or always (their flips count for the coverage)",
    )
    parser.add_argument("--false-catch", action="store_true", help="also the second control")
    parser.add_argument("--skip-mutants", action="store_true", help="run no mutant")
    parser.add_argument(
        "--estimate", action="store_true", help="the jobs each mutant reaches, and their CPU time"
    )
    parser.add_argument("--control-only", action="store_true")


def _where(parser: argparse.ArgumentParser) -> None:
    """The options that name folders and files: the builds, the control, the results."""
    parser.add_argument("--work", type=Path, default=WORK, help="where the builds go")
    parser.add_argument(
        "--control",
        type=Path,
        help="a finished control build to use as it is (its key not checked: the code it was "
        "built from must be the mutated code's, which its fingerprint column records)",
    )
    parser.add_argument("--results", type=Path, default=RESULTS, help="the results CSV")
    parser.add_argument(
        "--campaigns",
        type=Path,
        help="where a finished run appends its wall clock and machine (default: campaigns.csv "
        "beside the results CSV)",
    )
    parser.add_argument("--keep", action="store_true", help="keep each mutant's build folder")
    parser.add_argument(
        "--protocol", type=Path, default=protocol.OVERLAY, help="the reduced protocol's overlay"
    )


def run_all(chosen, checked, control_dir: Path, args, noise: dict, fingerprint: str) -> None:
    """Every chosen mutant, args.jobs at a time, the most job CPU first; each row written to
    args.results as it ends (a killed run keeps the rows it has)."""
    cores_each = max(1, args.cores // args.jobs)

    def one(mutant: Mutant) -> dict:
        if mutant.name in checked:  # a block a student writes: the checker's path
            row = through_check(mutant, args.work, cores_each, args.tests)
        else:
            row = run_mutant(
                mutant, control_dir, args.work, cores_each, args.tests, noise, args.recorded
            )
        if not args.keep:
            shutil.rmtree(args.work / f"mutant-{mutant.name}", ignore_errors=True)
        return row | {"fingerprint": fingerprint}

    rows = []
    order = longest_first(control_dir, chosen) if args.jobs > 1 else chosen
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:  # the work is in subprocesses
        for done in as_completed([pool.submit(one, mutant) for mutant in order]):
            rows.append(row := done.result())
            print(
                f"{row['mutant']}: {row['decision']}（{row['build_s']} + {row['tests_s']} s）",
                flush=True,
            )
            write_results(rows, args.results)


def campaign_row(args, argv, mutants: int, control_dir: Path, times: tuple, fingerprint: str):
    """campaigns.csv's row of a finished run: when, where, how long. times: the run's start
    (monotonic, wall clock) and the mutants' start (monotonic)."""
    began, began_wall, start = times
    return {
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(began_wall)),
        "cpu": cpu_model(),
        "cores": args.cores,
        "jobs": args.jobs,
        "recorded": args.recorded,
        "mutants": mutants,
        "control_s": built_seconds(control_dir, began_wall),
        "second_control_s": built_seconds(second_of(control_dir), began_wall)
        if args.false_catch
        else "",
        "mutants_s": round(time.monotonic() - start, 1),
        "total_s": round(time.monotonic() - began, 1),
        "fingerprint": fingerprint,
        "command": " ".join(
            ["python -m mutants.run", *(argv if argv is not None else sys.argv[1:])]
        ),
    }


def main(argv=None) -> int:
    parser = make_parser()
    args = parser.parse_args(argv)
    if args.jobs < 1 or args.cores < 1:
        parser.error("--jobs and --cores must be at least 1")
    chosen = select(args.mutants)
    began, began_wall = time.monotonic(), time.time()
    args.work.mkdir(parents=True, exist_ok=True)
    if args.tests_today:
        write_results(tests_today(chosen, args.work, args.cores, args.results), args.results)
        return 0
    if args.control and not (args.control / DONE).is_file():
        parser.error(f"{args.control}: not a finished control build (no {DONE})")
    checked = set() if args.skip_mutants else checked_by_the_checker(chosen)
    if checked and len(checked) == len(chosen) and not args.false_catch:
        return through_check_only(chosen, args, began, began_wall)
    control_dir = args.control or control(args.work, args.cores, args.protocol)
    print(f"控制构建 control build: {control_dir}", flush=True)
    if args.estimate:
        print_estimate(estimate(control_dir, chosen))
    if args.control_only or args.estimate:
        return 0
    fingerprint = code_fingerprint(control_dir)  # the code the control was built from
    if args.false_catch and fingerprint != code_fingerprint(ROOT):
        # the second control is a fresh copy of this checkout: it must be the control's code
        parser.error(f"--false-catch: {control_dir} was built from other code than this checkout")
    if args.results == RESULTS:  # what the control itself decides: the coverage's blind claims
        coverage.record_control(control_dir, fingerprint)
    if args.false_catch:  # first: its flips and cells are the noise the mutants are read against
        row = second_control(control_dir, args.cores, args.protocol)
        row |= {"fingerprint": fingerprint}
        print(f"control-2: {row['decision']}（{row['build_s']} s）", flush=True)
        write_results([row], args.results)
    noise = read_noise(control_dir)
    start = time.monotonic()
    chosen = [] if args.skip_mutants else chosen
    run_all(chosen, checked, control_dir, args, noise, fingerprint)
    if chosen:
        print(
            f"变异 mutants: {len(chosen)}, {args.jobs} at a time: {time.monotonic() - start:.0f} s"
        )
    times = (began, began_wall, start)
    campaign = campaign_row(args, argv, len(chosen), control_dir, times, fingerprint)
    append_campaign(campaign, args.campaigns or args.results.with_name("campaigns.csv"))
    print(f"一次运行 campaign: {campaign['total_s']:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
