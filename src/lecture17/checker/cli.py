"""`python -m lecture17 check`: check your own numpy blocks against the lecture.

    python -m lecture17 check --template my_blocks.py   # a starting file (every block to write)
    python -m lecture17 check my_blocks.py              # which lecture numbers your blocks keep
    python -m lecture17 check my_blocks.py --json       # the same as JSON (an autograder)
    python -m lecture17 check --catches [C015]          # which catalogued mistakes a claim catches
    python -m lecture17 check --trained --template my_layers.py   # the torch classes to write
    python -m lecture17 check --trained my_layers.py    # their properties, then the trained demos
    python -m lecture17 check --grade class/ --out grades/   # a teacher: every file of a folder

It reads the checkout's report/reference/ and report/ledger/, from any folder. Nothing is
written into results/ or report/: the student's code runs in a sandbox with a scratch folder of
its own (checker/sandbox.py), and the HTML page goes to the system's temporary folder unless
--html says where. docs/CHECK.md documents the JSON and the grade files.
"""

import csv
import json
import sys
import tempfile
from pathlib import Path

from lecture17.checker import run as run_mod

EXIT_WORDS = run_mod.EXIT_WORDS


def add_arguments(parser) -> None:
    parser.add_argument(
        "file", nargs="?", type=Path, help="your .py or .ipynb file with the lecture's blocks"
    )
    parser.add_argument("--template", action="store_true", help="write a starting file to FILE")
    parser.add_argument("--json", action="store_true", help="print JSON instead of the summary")
    parser.add_argument("--html", type=Path, help="where to write the HTML page")
    parser.add_argument(
        "--timeout",
        type=float,
        default=run_mod.TIMEOUT,
        help="seconds before a block's properties or a demo counts as hung",
    )
    parser.add_argument(
        "--only", action="append", metavar="BLOCK", help="check only this block (repeatable)"
    )
    parser.add_argument("--grade", type=Path, metavar="DIR", help="grade every file of DIR")
    parser.add_argument("--out", type=Path, help="with --grade: where the grades go")
    parser.add_argument("--points", type=Path, help="with --grade: points per block (YAML)")
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


def unusable(text: str) -> int:
    print(f"检查 check: {text}", file=sys.stderr)
    return run_mod.UNUSABLE


def usage_problem(args) -> str:
    """ "" when the arguments make a check; else what is wrong, in one line."""
    from lecture17.checker import blocks as blocks_mod
    from lecture17.checker import sandbox

    if args.grade is not None:
        if not args.grade.is_dir():
            return f"--grade 要一个文件夹 needs a folder: {args.grade}"
        return "" if args.out else "--grade 要和 --out OUT/ 一起用"
    if args.file is None:
        return "用法 usage: python -m lecture17 check FILE.py（或 --template FILE.py）"
    if args.template:
        return ""
    if args.file.is_dir():
        return (
            f"{args.file} 是文件夹 a folder：一个文件一个文件地查，全班评分用 --grade DIR --out OUT"
        )
    if not args.file.exists():
        return f"找不到文件 no such file: {args.file}"
    if args.file.suffix not in sandbox.SUFFIXES and not args.trained:
        return f"只查 .py 或 .ipynb 文件 only .py or .ipynb: {args.file}"
    unknown = [b for b in args.only or [] if b not in blocks_mod.BLOCKS]
    if unknown:
        return f"--only：没有这个积木 no such block {' '.join(unknown)}"
    if not (run_mod.REFERENCE / "config.yaml").is_file():
        return f"没有参考构建 no reference build at {run_mod.REFERENCE}"
    return ""


def main(args) -> int:
    if args.catches is not None:
        return catches(args.catches)
    if problem := usage_problem(args):
        return unusable(problem)
    if args.template:
        return write_template(args.file, args.trained)
    if args.grade is not None:
        from lecture17.checker import grade

        return grade.grade(args.grade, args.out, args.timeout, args.points)
    if args.trained:
        return check_trained(args)
    from lecture17.checker import sandbox

    outcome = sandbox.check_file(args.file, args.timeout, args.only, require=sandbox.REQUIRED)
    if not outcome.contained:
        print(
            f"警告 warning：没有沙箱 no sandbox（{outcome.why}）；你的代码只是在临时文件夹里运行",
            file=sys.stderr,
        )
    html_path = args.html or default_page(args.file)
    if outcome.page:
        html_path.parent.mkdir(parents=True, exist_ok=True)
        html_path.write_text(outcome.page, encoding="utf-8")
    if args.json:
        print(json.dumps(outcome.data, ensure_ascii=False, indent=1))
    else:
        print(outcome.summary or f"检查 check {args.file}：{outcome.why}")
        if outcome.written:
            names = "、".join(outcome.written[:5]) + ("……" if len(outcome.written) > 5 else "")
            print(
                f"\n你的代码写了 {len(outcome.written)} 个文件 files written：{names}"
                "（在它自己的临时文件夹里，检查完已删除 in its scratch folder, removed）"
            )
        words = EXIT_WORDS.get(outcome.status, "")
        where = f"网页 HTML：{html_path} · " if outcome.page else ""
        print(f"\n{where}退出码 exit code {outcome.status}（{words}）")
    return outcome.status


def default_page(path: Path) -> Path:
    """The page's default place: the user's own folder under the system's temporary folder,
    named after the file and its full path (two my_blocks.py never share a page)."""
    import getpass
    import hashlib

    where = hashlib.sha256(str(Path(path).resolve()).encode()).hexdigest()[:8]
    folder = Path(tempfile.gettempdir(), f"lecture17-check-{getpass.getuser()}")
    return folder / f"{Path(path).stem}-{where}.html"


def write_template(path: Path, trained: bool = False) -> int:
    from lecture17.checker.template import template, trained_template

    if path.exists():
        print(f"检查 check: {path} 已经存在，不覆盖 exists, not overwritten", file=sys.stderr)
        return run_mod.UNUSABLE
    path.write_text((trained_template if trained else template)(path.name), encoding="utf-8")
    then = f"再运行 python -m lecture17 check {path}"
    if trained:  # the build is minutes, the first one longer: say so before it starts
        then = (
            f"先运行 python -m lecture17 check --trained --no-build {path}（只看性质，几秒）；"
            f"去掉 --no-build 会在缩短的协议上重跑训练的演示（约 7 分钟；这台机器上第一次要先建"
            "对照，2 核约 20–30 分钟）"
        )
    print(f"模板 template → {path}：把每个 raise NotImplementedError 换成你的实现，{then}")
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
