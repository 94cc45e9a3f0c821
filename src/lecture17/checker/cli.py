"""`python -m lecture17 check`: check your own numpy blocks against the lecture.

    python -m lecture17 check --template my_blocks.py   # a starting file (every block to write)
    python -m lecture17 check my_blocks.py              # which lecture numbers your blocks keep
    python -m lecture17 check my_blocks.py --json       # the same as JSON (an autograder)
    python -m lecture17 check --catches [C015]          # which catalogued mistakes a claim catches
    python -m lecture17 check --trained --template my_layers.py   # the torch classes to write
    python -m lecture17 check --trained my_layers.py    # their properties, then the trained demos

It reads the checkout's report/reference/ and report/ledger/, from any folder. Nothing is
written into results/ or report/: the demos run in a temporary folder, and the HTML page goes
to the system's temporary folder unless --html says where.
"""

import csv
import sys
import tempfile
from pathlib import Path

from lecture17.checker import run as run_mod

EXIT_WORDS = {0: "通过", 1: "有问题", 2: "文件用不了", 3: "没有替换任何积木"}


def add_arguments(parser) -> None:
    parser.add_argument(
        "file", nargs="?", type=Path, help="your .py file with the lecture's blocks"
    )
    parser.add_argument("--template", action="store_true", help="write a starting file to FILE")
    parser.add_argument("--json", action="store_true", help="print JSON instead of the summary")
    parser.add_argument("--html", type=Path, help="where to write the HTML page")
    parser.add_argument(
        "--timeout", type=float, default=60.0, help="seconds before a block or demo counts as hung"
    )
    parser.add_argument(
        "--trained",
        action="store_true",
        help="FILE has torch classes (MultiHeadAttention, EncoderLayer, DecoderLayer): check "
        "them, then rebuild the trained demos that reach them on the reduced protocol",
    )
    parser.add_argument(
        "--no-build",
        action="store_true",
        help="with --trained: the classes' properties only (seconds), no trained demo",
    )
    parser.add_argument("--cores", type=int, help="with --trained: cores for the build")
    parser.add_argument(
        "--catches",
        nargs="?",
        const="",
        metavar="CLAIM",
        help="which catalogued mistakes each claim (or CLAIM) catches",
    )


def main(args) -> int:
    if args.catches is not None:
        return catches(args.catches)
    if args.file is None:
        print(
            "用法 usage: python -m lecture17 check FILE.py（或 --template FILE.py）",
            file=sys.stderr,
        )
        return run_mod.UNUSABLE
    if args.template:
        return write_template(args.file, args.trained)
    if not args.file.is_file():
        print(f"检查 check: 找不到文件 no such file: {args.file}", file=sys.stderr)
        return run_mod.UNUSABLE
    if args.trained:
        return check_trained(args)
    if not (run_mod.REFERENCE / "config.yaml").is_file():
        print(
            f"检查 check: 没有参考构建 no reference build at {run_mod.REFERENCE}", file=sys.stderr
        )
        return run_mod.UNUSABLE
    from lecture17.checker import render

    report = run_mod.check(args.file, timeout=args.timeout)
    html_path = args.html or Path(
        tempfile.gettempdir(), "lecture17-check", f"{args.file.stem}.html"
    )
    render.write_page(report, html_path)
    if args.json:
        print(render.json_text(report))
    else:
        print("\n".join(render.lines(report)))
        words = EXIT_WORDS[report.status]
        print(f"\n网页 HTML：{html_path} · 退出码 exit code {report.status}（{words}）")
    return report.status


def write_template(path: Path, trained: bool = False) -> int:
    from lecture17.checker.template import template, trained_template

    if path.exists():
        print(f"检查 check: {path} 已经存在，不覆盖 exists, not overwritten", file=sys.stderr)
        return run_mod.UNUSABLE
    path.write_text((trained_template if trained else template)(path.name), encoding="utf-8")
    flag = " --trained" if trained else ""
    print(
        f"模板 template → {path}：把每个 raise NotImplementedError 换成你的实现，"
        f"再运行 python -m lecture17 check{flag} {path}"
    )
    return 0


def check_trained(args) -> int:
    """Torch classes: their properties (seconds), then the trained demos (minutes)."""
    import os

    from lecture17.checker import trained

    report = trained.check_classes(args.file, timeout=args.timeout)
    if report.status in (0, 1) and not args.no_build:
        if not args.json:
            print("\n".join(trained.lines(report)), flush=True)
        report = trained.run_build(report, args.cores or os.cpu_count() or 1, run_mod.ROOT)
    if args.json:
        print(trained.as_json(report))
    else:
        print("\n".join(trained.lines(report)))
        words = EXIT_WORDS[report.status]
        print(f"\n退出码 exit code {report.status}（{words}）")
    return report.status


def catches(claim: str) -> int:
    """Per claim, the catalogued mistakes whose campaign run flipped it (mutants/results.csv)."""
    path = run_mod.ROOT / "mutants" / "results.csv"
    by_claim: dict[str, list[str]] = {}
    with open(path, encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            for flipped in (row.get("verdict_flips") or "").split():
                by_claim.setdefault(flipped, []).append(row["mutant"])
    wanted = [claim] if claim else sorted(by_claim)
    for c in wanted:
        names = by_claim.get(c, [])
        print(f"{c}: {len(names)} 个已知错误 mistakes — {' '.join(names) or '—'}")
    return 0
