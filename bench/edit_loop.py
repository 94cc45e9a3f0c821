"""One numpy block edited → report rebuilt: the wall clock of `snakemake --cores 2`, parse included.

    .venv/bin/python bench/edit_loop.py /path/to/built/checkout [--block softmax]

In a checkout whose build is complete (`make report` done), for each block: apply an edit
that changes no number (a trailing comment; for `softmax`, `e /= e.sum(…)` split over two
lines), count the jobs `snakemake -n` plans, time `snakemake --cores 2` to the end
(Snakemake's parse, the jobs, their tables, the report), then restore the file (and, before
the next block, build again, not timed). Run it on the code before a change and after, the
same day, on the same idle machine; bench/README.md quotes both with the machine.
"""

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

from lecture17.timing import timed

EDITS = {
    "softmax": (
        "e /= e.sum(axis=axis, keepdims=True)",
        "total = e.sum(axis=axis, keepdims=True)\n    e /= total",
    ),
    "create_look_ahead_mask": (
        "return np.tril(np.ones((n, n)))",
        "return np.tril(np.ones((n, n)))  # edit",
    ),
    "positional_encoding": ("pe[:, 0::2] = np.sin(angles)", "pe[:, 0::2] = np.sin(angles)  # edit"),
    "layer_norm": (
        "mean = x.mean(axis=-1, keepdims=True)",
        "mean = x.mean(axis=-1, keepdims=True)  # edit",
    ),
}


def snakemake(work: Path, *args: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "OMP_NUM_THREADS": "1",
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    return subprocess.run(
        [sys.executable, "-m", "snakemake", *args],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )


def planned(work: Path) -> int:
    out = snakemake(work, "-n", "--quiet", "rules").stdout
    total = re.search(r"^total\s+(\d+)", out, re.MULTILINE)
    return int(total.group(1)) if total else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path)
    parser.add_argument("--block", action="append", choices=sorted(EDITS))
    args = parser.parse_args()
    source = args.checkout / "src/lecture17/attention_numpy.py"
    original = source.read_text(encoding="utf-8")
    print("| 积木 block | 计划的作业 jobs planned | 墙钟 wall s（含解析 parse） |")
    print("|---|---|---|")
    chosen = args.block or ["softmax"]
    for i, block in enumerate(chosen):
        old, new = EDITS[block]
        assert original.count(old) == 1, f"{block}: the edit's text is not in {source} once"
        try:
            source.write_text(original.replace(old, new), encoding="utf-8")
            jobs = planned(args.checkout)
            done, wall = timed(snakemake, args.checkout, "--cores", "2")
            if done.returncode:
                print(done.stderr[-2000:], file=sys.stderr)
                return 1
            print(f"| {block} | {jobs} | {wall:.1f} |", flush=True)
        finally:
            source.write_text(original, encoding="utf-8")
            if i < len(chosen) - 1:  # the next block starts from a complete build
                snakemake(args.checkout, "--cores", "2")
    return 0


if __name__ == "__main__":
    sys.exit(main())
