"""Command line: `python -m lecture17 show 05.1` and `python -m lecture17 diff A B`.

python -m lecture17 show 05.1         print a demo's tables in the terminal (builds them first)
python -m lecture17 diff A B          compare two builds number by number (see diff.py)
python -m lecture17 diff . lecture    compare this build against the lecture's values
"""

import argparse
import subprocess
import sys
import unicodedata
from pathlib import Path

from lecture17 import diff
from lecture17.aggregate import read_tables
from lecture17.report import load_views, render_view


def width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def as_text(markdown_table: str) -> str:
    """A Markdown table, aligned for a terminal (CJK characters are two columns wide)."""
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in markdown_table.splitlines()]
    rows = [rows[0]] + rows[2:]
    widths = [max(width(r[i]) for r in rows) for i in range(len(rows[0]))]
    pad = lambda cell, w: cell + " " * (w - width(cell))  # noqa: E731
    lines = ["  ".join(pad(c, w) for c, w in zip(r, widths, strict=True)) for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


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
    p_diff.add_argument("--ledger", type=Path, default=Path("report/ledger.yaml"))
    p_diff.add_argument("--timing", action="store_true", help="also list machine-dependent timings")
    sub.add_parser("reference", help="store this build as report/reference/ and update the README")
    args = parser.parse_args(argv)
    if args.command == "reference":
        from lecture17.reference import write_reference

        write_reference()
        print("参考构建 reference build → report/reference/；README 的“关于实验结果”已更新")
        return 0
    if args.command == "show":
        return show(args.demo, args.cores)
    return diff.main(args.a, args.b, args.ledger, args.timing)


if __name__ == "__main__":
    sys.exit(main())
