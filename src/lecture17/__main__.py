"""Command line: `python -m lecture17 show 05.1` and `python -m lecture17 diff A B`.

python -m lecture17 show 05.1         print a demo's tables in the terminal (builds them first)
python -m lecture17 diff A B          compare two builds number by number (see diff.py)
python -m lecture17 diff . lecture    compare this build against the lecture's values
python -m lecture17 run 06.3 --device cuda   run one demo's jobs without Snakemake (a GPU
                                             machine that has PyTorch but no Snakemake)
python -m lecture17 changelog         which claim changed status, in which commit, and why
python -m lecture17 check FILE.py     check your own numpy blocks against the lecture
                                      (--template FILE.py writes a starting file)
"""

import argparse
import subprocess
import sys
from pathlib import Path

from lecture17.checker import cli as student_cli
from lecture17.pipeline import yamlio
from lecture17.pipeline.aggregate import read_tables
from lecture17.reporting import diff
from lecture17.reporting.views import as_text, load_views, render_view


def show(demo: str, cores: int) -> int:
    views = load_views(Path("report/views")).get(demo)
    if not views:
        raise SystemExit(
            f"演示 {demo} 没有表 has no tables; demos with tables: "
            f"{sorted(load_views(Path('report/views')))}"
        )
    sources = sorted({str(v.get("table", demo)) for v in views})
    targets = [f"results/tables/{s}.csv" for s in sources]
    subprocess.run(
        # targets first: `--quiet` takes optional values and would swallow them
        [sys.executable, "-m", "snakemake", *targets, "--cores", str(cores), "--quiet", "all"],
        check=True,
    )
    for view in views:
        source = str(view.get("table", demo))
        table = read_tables([f"results/tables/{source}.csv"])[source]
        print(f"\n{view['title']}  ({view.get('section', '')})")
        print(as_text(render_view(table, view)))
    return 0


def run_jobs(demo: str, config_path: Path, device: str, root: str) -> int:
    """Every job of one demo, as its rule would run it, written where the rule writes it.

    For a machine without Snakemake (the GPU runs of 06.3, bench/gpu_session.sh); anywhere
    else `snakemake results/tables/<demo>.csv` is the way (it also tracks what changed).
    `<root>/<demo>/record.json` records the settings, the hashes of the code the jobs ran and
    the machine (pipeline/record.py), so a build that aggregates runs recorded elsewhere
    (report/measured/) can tell whether they still are what its config and code compute.
    """

    from lecture17.pipeline import record
    from lecture17.pipeline.job import grid_folder, jobs, run_job

    with open(config_path, encoding="utf-8") as f:
        demos = yamlio.load(f)["demos"]
    if demo not in demos:
        raise SystemExit(
            f"演示 {demo} 不在 {config_path} 里 is not configured; it has {sorted(demos)}"
        )
    spec = demos[demo]
    if device not in spec.get("devices", ["cpu", "cuda"]):
        raise SystemExit(
            f"演示 {demo} 只在 device {spec['devices']} 上运行 runs only on {spec['devices']}"
        )
    settings = {**spec["settings"], **({"device": device} if spec.get("grid") else {})}
    folder = Path(root, demo)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / record.RECORD).unlink(missing_ok=True)  # no record until every run is written
    for path, point, seed in jobs(demo, spec, root):
        run_job(demo, settings, seed, point, Path(path))
        print(f"演示 {demo} · {grid_folder(point) or '—'} · seed {seed} → {path}", flush=True)
    record.write(folder, demo, settings, device, machine_name(device))
    return 0


def record_runs(demos: list[str], config_path: Path, device: str, results: str) -> int:
    """Copy the runs of recorded demos (07.x, 08.x) from `results` to report/measured/ with
    their record.json (the `record` rule of `snakemake robustness`)."""

    from lecture17.pipeline import fingerprint, record

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

    from lecture17.pipeline import record

    config = yamlio.load(config_path.read_text(encoding="utf-8"))["demos"]
    for demo in demos:
        n = record.restore(demo, config[demo], results)
        print(f"演示 {demo}：{n} 个记录的作业放回 recorded jobs restored → {results}/{demo}/")
    return 0


def machine_name(device: str) -> str:
    """What the record says the runs ran on: the GPU's name, or the CPU model."""
    if device == "cuda":
        import torch

        return torch.cuda.get_device_name()
    from lecture17.reporting.provenance import cpu_model

    return cpu_model()


def check_recorded(config_path: Path, root: str) -> int:
    """Every recording under `root` against this checkout's config and code (CI runs it)."""

    from lecture17.pipeline import record

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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lecture17", description=__doc__.splitlines()[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p_show = sub.add_parser("show", help="print one demo's tables (building them if needed)")
    p_show.add_argument("demo")
    p_show.add_argument("--cores", type=int, default=1)
    p_diff = sub.add_parser("diff", help="compare two builds, or a build and the lecture")
    p_diff.add_argument("a")
    p_diff.add_argument("b", help="another build folder, or 'lecture'")
    p_diff.add_argument("--ledger", type=Path, default=Path("report/ledger"))
    p_diff.add_argument("--timing", action="store_true", help="also list machine-dependent timings")
    p_diff.add_argument(
        "--incomplete",
        action="store_true",
        help="compare a build that did not finish: only the tables that match its report",
    )
    sub.add_parser("reference", help="store this build as report/reference/ and update the README")
    sub.add_parser("readme", help="write the README's demo map from the demo registry")
    p_check = sub.add_parser(
        "check-recorded",
        help="check the runs recorded under report/measured/ against config and code",
    )
    p_check.add_argument("--config", type=Path, default=Path("config/config.yaml"))
    p_check.add_argument("--results", default="report/measured")
    p_record = sub.add_parser(
        "record", help="copy recorded demos' runs from results/ to report/measured/ (robustness)"
    )
    p_record.add_argument("demos", nargs="+")
    p_record.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p_record.add_argument("--config", type=Path, default=Path("config/config.yaml"))
    p_record.add_argument("--results", default="results", help="folder the run CSVs are under")
    p_restore = sub.add_parser(
        "restore", help="copy valid recordings back to results/ (record new seeds only)"
    )
    p_restore.add_argument("demos", nargs="+")
    p_restore.add_argument("--config", type=Path, default=Path("config/config.yaml"))
    p_restore.add_argument("--results", default="results")
    p_log = sub.add_parser("changelog", help="which claim changed status, in which commit, why")
    p_log.add_argument("--since", help="only the commits after this revision")
    p_run = sub.add_parser("run", help="run one demo's jobs without Snakemake (e.g. on a GPU box)")
    p_run.add_argument("demo")
    p_run.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p_run.add_argument("--config", type=Path, default=Path("config/config.yaml"))
    p_run.add_argument("--results", default="results", help="folder the run CSVs go under")
    p_student = sub.add_parser(
        "check", help="check your own numpy blocks against the lecture (checker/cli.py)"
    )
    student_cli.add_arguments(p_student)
    args = parser.parse_args(argv)
    if args.command == "check":
        return student_cli.main(args)
    if args.command == "changelog":
        from lecture17.reporting import changelog

        return changelog.main(Path("."), since=args.since)
    if args.command == "run":
        return run_jobs(args.demo, args.config, args.device, args.results)
    if args.command == "restore":
        return restore_runs(args.demos, args.config, args.results)
    if args.command == "record":
        return record_runs(args.demos, args.config, args.device, args.results)
    if args.command == "reference":
        from lecture17.reporting.reference import write_reference

        write_reference()
        print("参考构建 reference build → report/reference/；docs/RESULTS.md 的“关于实验结果”已更新")
        return 0
    if args.command == "check-recorded":
        return check_recorded(args.config, args.results)
    if args.command == "readme":
        from lecture17.reporting.reference import write_demo_map

        write_demo_map()
        print("README 的演示地图 demo map 已从登记表 registry 更新")
        return 0
    if args.command == "show":
        return show(args.demo, args.cores)
    return diff.main(args.a, args.b, args.ledger, args.timing, args.incomplete)


if __name__ == "__main__":
    sys.exit(main())
