"""Command line: `python -m lecture17 show 05.1` and `python -m lecture17 diff A B`.

python -m lecture17 show 05.1         print a demo's tables in the terminal (builds them first)
python -m lecture17 diff A B          compare two builds number by number (see diff.py)
python -m lecture17 diff . lecture    compare this build against the lecture's values
python -m lecture17 run 06.3 --device cuda   run one demo's jobs without Snakemake (a GPU
                                             machine that has PyTorch but no Snakemake)
python -m lecture17 changelog         which claim changed status, in which commit, and why
python -m lecture17 check FILE.py     check your own numpy blocks against the lecture
                                      (--template FILE.py writes a starting file)
python -m lecture17 recorded check    the runs recorded under report/measured/ (and record,
                                      restore, make, widen, vouch, compute: pipeline/recorded.py)
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
    from lecture17.pipeline.recorded import machine_name

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


def make_parser() -> argparse.ArgumentParser:
    """The command line: one subcommand per thing a reader does."""
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
    sub.add_parser(
        "recorded",
        help="the recorded runs: check, record, restore, make, widen, vouch, compute",
        add_help=False,
    )
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
    return parser


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["recorded"]:  # its own command line (pipeline/recorded.py)
        from lecture17.pipeline.recorded import main as recorded_main

        return recorded_main(argv[1:])
    args = make_parser().parse_args(argv)
    if args.command == "check":
        return student_cli.main(args)
    if args.command == "changelog":
        from lecture17.reporting import changelog

        return changelog.main(Path("."), since=args.since)
    if args.command == "run":
        return run_jobs(args.demo, args.config, args.device, args.results)
    if args.command == "reference":
        from lecture17.reporting.reference import write_reference

        write_reference()
        print(
            "参考构建 reference build → report/reference/；docs/RESULTS.md 的“关于实验结果”已更新"
        )
        return 0
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
