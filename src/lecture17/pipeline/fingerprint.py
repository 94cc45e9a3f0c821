"""Behavioural fingerprints of recorded runs: is a recording still what this code computes?

A recording (report/measured/<demo>/, pipeline/record.py) hashes the source files its jobs
import. A hash is too strict a judge: a comment, a moved function or a refactor changes it and
would cost an hour of re-recording, although the runs would come out the same. So each
recording also carries a fingerprint of its behaviour, `fingerprint.json`, made while its
hashes still vouch for it:

- for every grid point of the demo, its first seed is run with `training.train` cut to its
  first STEPS optimizer steps (the same initialisation, batches and warmup as the recorded run,
  so its losses ARE the recorded run's first losses), and the demo's own table is computed
  from those steps: the loss of every step of every `train` call, and every value of the table
  (timings apart) — the model, its initialisation, the learning rate and schedule, the data,
  the loss, the evaluation and the demo's analysis all leave their mark;
- it is computed three times, in fresh processes: on this CPU as it is, and as two other CPUs
  would compute it (`ATEN_CPU_CAPABILITY=avx2`, and `ATEN_CPU_CAPABILITY=default` with
  `MKL_CBWR=COMPATIBLE`: other kernels, other rounding). Each value's tolerance is SAFETY times
  the largest difference seen between them, floored (see `tolerance`), so the judge follows
  the conditioning of each number, not a guess;
- the simulated CPUs of one machine underestimate real ones (an Intel Xeon's MKL path against
  an AMD EPYC's moved early Adam losses of 07.1 by 8e-4 relative, ~400x the simulated spread:
  Adam's first steps follow the sign of gradient components that rounding decides), so
  `widen`, run while the hashes vouch, adds another machine's three computations: the spread
  becomes the largest gap to the stored value over every machine seen.

When the hashes no longer match, `verify` runs the fingerprint on this checkout and compares
every value within its tolerance: within, and the recording is still valid (the build says it
was vouched for by behaviour); beyond, and it is stale, with the values that moved. What a
fingerprint cannot see: a change that acts only after STEPS steps (e.g. a warmup longer than
STEPS whose later part changed, or an evaluation schedule), and a change to evaluation code
whose effect on a STEPS-step model stays below one test sample's worth (the floor). The
settings are compared exactly, as before (record.problems).

    python -m lecture17 recorded make 07.1 07.2     # write fingerprint.json
    python -m lecture17 recorded widen 07.1 --machine "Intel Xeon (AVX-512, AMX)"
    python -m lecture17 recorded vouch 07.1 --machine "AMD EPYC"  # after a refactor
    python -m lecture17 recorded compute 07.1 --spec '{…}' --out x.json  # one, raw

Long on purpose: one mechanism (make, verify, widen) whose parts share the tolerance rule;
split, the rule would be read in three places. Its command line is pipeline/recorded.py's.
"""

import argparse
import contextlib
import dataclasses
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from lecture17.experiments import DEMOS
from lecture17.pipeline.codehash import code_hashes, registry_entry

FINGERPRINT = "fingerprint.json"
STEPS = 10  # optimizer steps per training run in a fingerprint: seconds per demo
SAFETY = 10  # tolerance = SAFETY x the largest difference between the simulated CPUs, floored
# Floors, for values the simulated CPUs happened to compute identically:
# - every value: REL_FLOOR relative. float32 carries 6e-8 relative per rounding; STEPS steps of
#   forward and backward passes compound it to ~1e-6 at most (measured spreads: README); 1e-5
#   is ten times that, and a learning rate off by 1 % or any change of initialisation moves the
#   losses by 1e-3 or more;
# - a table value: SAMPLE_FLOOR / n_test absolute, two test samples' worth. A test sample near
#   its decision boundary may flip on another CPU; a bug in an evaluation moves many.
# Chaotic values are not judged (tolerance inf): a loss whose simulated CPUs differ by more than
# CHAOS relative (SGD at lr 10 or 100 in 07.1: rounding grows to O(1) within ten steps), every
# later loss of the same run, and a table value on which they differ by more than SAMPLE_FLOOR
# test samples. Three samples of a chaotic process say little about a fourth CPU's; the
# well-conditioned values, hundreds per demo, carry the judgement.
REL_FLOOR = 1e-5
SAMPLE_FLOOR = 2.0
CHAOS = 1e-3
ENVIRONMENTS = {
    "this CPU": {},
    "ATEN_CPU_CAPABILITY=avx2": {"ATEN_CPU_CAPABILITY": "avx2"},
    "ATEN_CPU_CAPABILITY=default MKL_CBWR=COMPATIBLE": {
        "ATEN_CPU_CAPABILITY": "default",
        "MKL_CBWR": "COMPATIBLE",
    },
}
THREADS = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
CACHE = Path(".snakemake/lecture17-fingerprints")


# -----------------------------------------------------------------------------
# computing one fingerprint (in this process)


@contextlib.contextmanager
def first_steps(losses: list):
    """training.train cut to its first STEPS steps, each call's losses appended to `losses`."""
    from lecture17 import training

    original = training.train

    def train(make_model, task, settings, **kwargs):
        result = original(
            make_model,
            task,
            dataclasses.replace(settings, steps=min(STEPS, settings.steps)),
            **kwargs,
        )
        losses.append([h["loss"] for h in result.history])
        return result

    training.train = train
    try:
        yield
    finally:
        training.train = original


def compute(demo: str, spec: dict) -> dict:
    """{key: value} of one fingerprint: the first seed of every grid point, STEPS steps."""
    from lecture17.pipeline.job import grid_folder, grid_points, run_demo

    settings = {**spec["settings"], "device": "cpu"}
    seed = spec["seeds"][0]
    values = {}
    for point in grid_points(spec):
        losses = []
        with first_steps(losses):
            table = run_demo(demo, settings, seed, point)
        if not losses:
            raise RuntimeError(
                f"{demo}: no training.train call was seen, so no fingerprint can be made "
                "(the demo no longer trains through lecture17.training.train?)"
            )
        where = f"{grid_folder(point)}/seed{seed}"
        for call, run in enumerate(losses):
            for step, loss in enumerate(run, start=1):
                values[f"{where} · train call {call} · loss at step {step}"] = loss
        table = table[~table["quantity"].isin(DEMOS[demo].timings)]
        labels = [c for c in table.columns if c not in ("demo", "seed", "value")]
        for i, (_, r) in enumerate(table.iterrows()):
            named = ", ".join(f"{c}={r[c]}" for c in labels if str(r[c]) not in ("", "nan"))
            values[f"{where} · row {i} · {named}"] = float(r["value"])
    return values


# -----------------------------------------------------------------------------
# making one (three processes) and judging one


def run_computation(demo: str, spec: dict, env: dict, cwd: Path = Path(".")) -> dict:
    """compute() in a fresh process under `env` (ATEN_CPU_CAPABILITY is read at import)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp, "fingerprint.json")
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "lecture17.pipeline.fingerprint",
                "compute",
                demo,
                "--spec",
                json.dumps(spec),
                "--out",
                str(out),
            ],
            cwd=cwd,
            env={**os.environ, **THREADS, **env, "PYTHONPATH": str(Path(cwd, "src").resolve())},
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise RuntimeError(
                f"fingerprint of {demo} failed ({env or 'this CPU'}):\n{done.stderr}"
            )
        return json.loads(out.read_text())


def n_test(spec: dict) -> int:
    return int(spec["settings"].get("train", {}).get("n_test", 500))


def tolerance(key: str, value: float, spread: float, n: int) -> float:
    """How far a value may move on another CPU: SAFETY x the spread the simulated CPUs showed,
    at least REL_FLOOR relative, and for a table value at least two test samples (SAMPLE_FLOOR
    / n_test) absolute; inf (not judged) for a chaotic value (CHAOS)."""
    floor = REL_FLOOR * abs(value) if math.isfinite(value) else 0.0
    if " · row " in key:
        if spread > SAMPLE_FLOOR / n:
            return math.inf
        floor = max(floor, SAMPLE_FLOOR / n)
    elif spread > CHAOS * abs(value):
        return math.inf
    return max(SAFETY * spread, floor)


def chaotic_runs(spread: dict, reference: dict) -> set[str]:
    """The '<point> · train call <i>' runs with a chaotic loss at some step (CHAOS): their
    later steps are not judged either."""
    return {
        key.rsplit(" · ", 1)[0]
        for key, s in spread.items()
        if " · loss at step " in key and s > CHAOS * abs(reference[key])
    }


def step_of(key: str) -> int:
    return int(key.rsplit(" ", 1)[1])


def make(demo: str, spec: dict, cwd: Path = Path(".")) -> dict:
    """The fingerprint of `demo` as stored: values on this CPU, each with its tolerance."""
    runs = {name: run_computation(demo, spec, env, cwd) for name, env in ENVIRONMENTS.items()}
    reference = runs["this CPU"]
    spread = {k: 0.0 for k in reference}
    return judged(demo, spec, reference, spread, runs, list(ENVIRONMENTS))


def widen(stored: dict, spec: dict, runs: dict, machine: str) -> dict:
    """`stored` with the computations `runs` ({environment: compute()}) of another machine
    added: each value's spread becomes the largest gap to the stored value over every machine
    seen, so the tolerance covers real CPUs (a vendor's MKL path, AMX), not only the simulated
    ones of the machine that made it. The stored values stay the reference."""
    if any(e.startswith(f"{machine}: ") for e in stored["environments"]):
        raise ValueError(f"{stored['demo']}: already widened with {machine!r}")
    reference = {k: v["value"] for k, v in stored["values"].items()}
    spread = {k: v["spread"] for k, v in stored["values"].items()}
    seen = stored["environments"] + [f"{machine}: {name}" for name in runs]
    return judged(stored["demo"], spec, reference, spread, runs, seen)


def judged(demo, spec, reference: dict, spread: dict, runs: dict, environments: list) -> dict:
    """The stored form: every value with its spread over `runs` (and the spread already seen)
    and its tolerance; a chaotic run is unjudged from its first chaotic step on."""
    for name, run in runs.items():
        if set(run) != set(reference):
            raise RuntimeError(f"{demo}: the fingerprint's values differ in kind under {name}")
    spread = {
        k: max([spread[k], *(gap(v, run[k]) for run in runs.values())])
        for k, v in reference.items()
    }
    for run in chaotic_runs(spread, reference):  # from its first chaotic step on
        steps = [k for k in spread if k.startswith(f"{run} · loss at step ")]
        first = min(step_of(k) for k in steps if spread[k] > CHAOS * abs(reference[k]))
        for k in steps:
            if step_of(k) >= first:
                spread[k] = math.inf
    values = {
        k: {"value": v, "spread": spread[k], "tol": tolerance(k, v, spread[k], n_test(spec))}
        for k, v in reference.items()
    }
    return {
        "demo": demo,
        "steps": STEPS,
        "seed": spec["seeds"][0],
        "environments": environments,
        "rule": f"tolerance = max({SAFETY} x spread, {REL_FLOOR:g} relative"
        f"{f', {SAMPLE_FLOOR:g} / n_test = {SAMPLE_FLOOR / n_test(spec):g} for table values'})",
        "largest_relative_spread": max(
            (s / abs(reference[k]) for k, s in spread.items() if reference[k] and math.isfinite(s)),
            default=0.0,
        ),
        "judged": sum(math.isfinite(v["tol"]) for v in values.values()),
        "values": values,
    }


def gap(a: float, b: float) -> float:
    """|a - b|, 0 for the same non-finite value, inf for a finite and a non-finite one."""
    if math.isfinite(a) and math.isfinite(b):
        return abs(a - b)
    return 0.0 if (a == b or (math.isnan(a) and math.isnan(b))) else math.inf


def compare(stored: dict, now: dict) -> list[str]:
    """Why `now` (compute()) is not the stored fingerprint's behaviour ([] when it is)."""
    values = stored["values"]
    if set(values) != set(now):
        lost, new = sorted(set(values) - set(now)), sorted(set(now) - set(values))
        return [
            f"the fingerprint's values changed in kind: {len(lost)} gone (e.g. {lost[:1]}), "
            f"{len(new)} new (e.g. {new[:1]})"
        ]
    beyond = [
        (k, v["value"], now[k], v["tol"])
        for k, v in values.items()
        if gap(v["value"], now[k]) > v["tol"]
    ]
    if not beyond:
        return []
    k, was, is_, tol = max(beyond, key=lambda b: gap(b[1], b[2]) / max(b[3], 1e-300))
    return [
        f"behaviour changed: {len(beyond)} of {len(values)} fingerprint values beyond their "
        f"tolerance, e.g. {k}: {is_:.7g} now, {was:.7g} recorded (tolerance {tol:.2g})"
    ]


def write(folder: Path, made: dict) -> Path:
    path = Path(folder) / FINGERPRINT
    path.write_text(json.dumps(made, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


def read(folder: Path) -> dict | None:
    path = Path(folder) / FINGERPRINT
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def verify(demo: str, spec: dict, folder: Path, repo: Path = Path(".")) -> list[str]:
    """The fingerprint under `folder` re-run on the checkout at `repo` and judged ([] = same
    behaviour). A result is cached under repo/.snakemake/ for the code it was made with, so a
    build pays for it once per change of code, not once per parse of the workflow."""
    stored = read(folder)
    if stored is None:
        return [f"{folder}/{FINGERPRINT} is missing"]
    key = {
        "code": code_hashes(demo, repo),
        "registry": registry_entry(demo),
        "settings": spec["settings"],
        "fingerprint": stored,
    }
    cache = Path(repo, CACHE, f"{demo}.json")
    if cache.is_file():
        cached = json.loads(cache.read_text(encoding="utf-8"))
        if cached.get("key") == key:
            return cached["problems"]
    print(
        f"演示 {demo}：代码变了，重跑行为指纹 code changed, re-running the behavioural "
        f"fingerprint ({STEPS} steps per grid point)…",
        file=sys.stderr,
        flush=True,
    )
    found = compare(stored, run_computation(demo, spec, {}, repo))
    cache.parent.mkdir(parents=True, exist_ok=True)
    partial = cache.with_suffix(f".{os.getpid()}.tmp")
    partial.write_text(json.dumps({"key": key, "problems": found}, sort_keys=True))
    partial.replace(cache)
    return found


def main(argv=None) -> int:
    """`compute` only: one computation in a fresh process (run_computation); the command
    line a person uses is `python -m lecture17 recorded` (pipeline/recorded.py)."""
    parser = argparse.ArgumentParser(prog="python -m lecture17.pipeline.fingerprint")
    sub = parser.add_subparsers(dest="command", required=True)
    p_compute = sub.add_parser("compute", help="one computation of a fingerprint, as JSON")
    p_compute.add_argument("demo")
    p_compute.add_argument("--spec", required=True, help="the demo's block of the config, JSON")
    p_compute.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    args.out.write_text(json.dumps(compute(args.demo, json.loads(args.spec))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
