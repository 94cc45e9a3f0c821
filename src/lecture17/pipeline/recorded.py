"""Recorded runs: one command line for the runs recorded under report/measured/.

    python -m lecture17 recorded check                 # each recording against this checkout (CI)
    python -m lecture17 recorded record 07.1 --device cpu   # results/ → report/measured/ (the rule)
    python -m lecture17 recorded restore 07.1 07.3     # valid recordings back to results/ first
    python -m lecture17 recorded make 07.1             # write its behavioural fingerprint
    python -m lecture17 recorded widen 07.1 --machine "Intel Xeon (AVX-512, AMX)"
    python -m lecture17 recorded vouch 07.1 --machine "AMD EPYC Zen 4"   # after a refactor
    python -m lecture17 recorded compute 07.1 --spec '{…}' --out x.json  # one computation, raw

What a recording is and when it holds: record.py; its behavioural fingerprint: fingerprint.py.
"""

import argparse
import json
import platform
import sys
from pathlib import Path

from lecture17.pipeline import fingerprint, record, yamlio


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo), what a record and the report's provenance say."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_name(device: str) -> str:
    """What the record says the runs ran on: the GPU's name, or the CPU model."""
    if device == "cuda":
        import torch

        return torch.cuda.get_device_name()
    return cpu_model()


def record_runs(demos: list[str], config_path: Path, device: str, results: str) -> int:
    """Copy the runs of recorded demos (07.x, 08.x) from `results` to report/measured/ with
    their record.json (the `record` rule of `snakemake robustness`)."""

    with open(config_path, encoding="utf-8") as f:
        config = yamlio.load(f)["demos"]

    for demo in demos:
        folder = record.store(demo, config[demo], device, machine_name(device), results)
        made = fingerprint.make(demo, config[demo])
        fingerprint.write(folder, made)
        print(
            f"演示 {demo} 已记录 recorded → {folder}（行为指纹 behavioural fingerprint: "
            f"{made['judged']} 个值 values）",
            flush=True,
        )
    return 0


def restore_runs(demos: list[str], config_path: Path, results: str) -> int:
    """`make robustness` after seeds were added: the recorded jobs back into results/, so
    that only the new seeds run (the recordings must still hold, by hashes or behaviour)."""

    config = yamlio.load(config_path.read_text(encoding="utf-8"))["demos"]
    for demo in demos:
        n = record.restore(demo, config[demo], results)
        print(f"演示 {demo}：{n} 个记录的作业放回 recorded jobs restored → {results}/{demo}/")
    return 0


def check_recorded(config_path: Path, root: str) -> int:
    """Every recording under `root` against this checkout's config and code (CI runs it)."""

    demos = yamlio.load(config_path.read_text(encoding="utf-8"))["demos"]
    folders = sorted(p for p in Path(root).glob("*") if p.is_dir() and p.name[0] != ".")
    stale = 0
    for folder in folders:
        demo = folder.name
        found = record.problems(demo, demos[demo], root) if demo in demos else ["not configured"]
        if found:
            stale += 1
            device = (record.read(folder) or {}).get("device", "cuda")
            print(f"✗ {folder}: " + "; ".join(found) + f" — {record.rerun_hint(demo, device)}")
        elif record.vouched_by(demo, root) == "behaviour":
            print(
                f"✓ {folder}: 和配置一致；代码变了，行为指纹在容差之内 matches the config; "
                "the code changed, its behavioural fingerprint stays within tolerance"
            )
        else:
            print(f"✓ {folder}: 和配置、代码一致 matches the config and the code")
    print(f"记录的运行 recorded runs: {len(folders)} 个演示 demos, {stale} 个过期 stale")
    return 1 if stale else 0


def fingerprints(command: str, demos: list[str], config_path: Path, root: str, machine: str):
    """make / widen / vouch the behavioural fingerprints of recorded demos."""
    config = yamlio.load(config_path.read_text(encoding="utf-8"))["demos"]
    if command == "vouch":
        for demo in demos:
            state = record.vouch(demo, config[demo], machine, root)
            what = "代码和记录时相同 the recorded code" if state is None else state["vouched"]
            print(f"演示 {demo}: 行为指纹在容差之内 fingerprint within tolerance ({what})")
        return 0
    for demo in demos:
        if found := record.problems(demo, config[demo], root, behaviour=False):
            raise SystemExit(f"{demo}: the recording is stale, no fingerprint made: {found}")
        if command == "widen":
            stored = fingerprint.read(Path(root, demo))
            if stored is None:
                raise SystemExit(f"{demo}: no {fingerprint.FINGERPRINT} to widen: make one first")
            runs = {
                name: fingerprint.run_computation(demo, config[demo], env)
                for name, env in fingerprint.ENVIRONMENTS.items()
            }
            made = fingerprint.widen(stored, config[demo], runs, machine)
        else:
            made = fingerprint.make(demo, config[demo])
        path = fingerprint.write(Path(root, demo), made)
        print(
            f"演示 {demo}: {len(made['values'])} 个值 values, {made['judged']} 个判断 judged "
            f"(其余在模拟的 CPU 之间是混沌的 the rest chaotic on the simulated CPUs), 最大相对差 "
            f"largest relative spread {made['largest_relative_spread']:.2g} → {path}"
        )
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lecture17 recorded", description=__doc__.splitlines()[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    config = {"type": Path, "default": Path("config/config.yaml")}
    p = sub.add_parser("check", help="check every recording against this config and code")
    p.add_argument("--config", **config)
    p.add_argument("--results", default=record.MEASURED)
    p = sub.add_parser("record", help="copy recorded demos' runs from results/ to report/measured/")
    p.add_argument("demos", nargs="+")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--config", **config)
    p.add_argument("--results", default="results", help="folder the run CSVs are under")
    p = sub.add_parser("restore", help="copy valid recordings back to results/ (new seeds only)")
    p.add_argument("demos", nargs="+")
    p.add_argument("--config", **config)
    p.add_argument("--results", default="results")
    for verb, text in (
        ("make", "write report/measured/<demo>/fingerprint.json"),
        ("widen", "add this machine's computations to the fingerprint"),
        ("vouch", "verify on this checkout and store the code state in record.json"),
    ):
        p = sub.add_parser(verb, help=text)
        p.add_argument("demos", nargs="+")
        p.add_argument("--config", **config)
        p.add_argument("--root", default=record.MEASURED)
        p.add_argument("--machine", required=verb != "make", default="")
    p = sub.add_parser("compute", help="one computation of a fingerprint, as JSON")
    p.add_argument("demo")
    p.add_argument("--spec", required=True, help="the demo's block of the config, JSON")
    p.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.command == "check":
        return check_recorded(args.config, args.results)
    if args.command == "record":
        return record_runs(args.demos, args.config, args.device, args.results)
    if args.command == "restore":
        return restore_runs(args.demos, args.config, args.results)
    if args.command == "compute":
        args.out.write_text(json.dumps(fingerprint.compute(args.demo, json.loads(args.spec))))
        return 0
    return fingerprints(args.command, args.demos, args.config, args.root, args.machine)


if __name__ == "__main__":
    sys.exit(main())
