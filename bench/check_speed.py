"""How long `python -m lecture17 check` takes, as a student runs it (wall clock, a fresh process).

    .venv/bin/python bench/check_speed.py                 # 3 runs of each case, the median
    .venv/bin/python bench/check_speed.py --repeats 5

Cases: a complete numpy submission (the reference file itself, every block replaced: the
most demos rerun), a correct file in another style (tests/checker_files/einsum_blocks.py),
one block (only `softmax`, the block that reaches the most demos) and one catalogued mistake
(sdpa_divides_by_d_k, a flagged file: the ledger and the fingerprints on top). The budgets
(≤ 30 s for a complete submission, ≤ 10 s for one block, 2 cores, the venv in place) are
quoted in bench/README.md with the machine; never asserted in a test.
"""

import argparse
import functools
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from lecture17.timing import timed

ROOT = Path(__file__).resolve().parents[1]
SOFTMAX_ONLY = """import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)
"""


def cases(folder: Path) -> dict[str, Path]:
    sys.path.insert(0, str(ROOT))
    from mutants.catalogue import CATALOGUE
    from mutants.patch import mutate_source

    source = (ROOT / "src/lecture17/attention_numpy.py").read_text(encoding="utf-8")
    mutant = next(m for m in CATALOGUE if m.name == "sdpa_divides_by_d_k")
    (folder / "softmax_only.py").write_text(SOFTMAX_ONLY)
    (folder / "mistake.py").write_text(
        mutate_source(source, mutant.function, mutant.old, mutant.new)
    )
    return {
        "完整的提交 complete (reference file)": ROOT / "src/lecture17/attention_numpy.py",
        "另一种写法 einsum_blocks.py": ROOT / "tests/checker_files/einsum_blocks.py",
        "一个积木 softmax only": folder / "softmax_only.py",
        "一个已知错误 sdpa_divides_by_d_k": folder / "mistake.py",
    }


def wall(path: Path) -> tuple[float, int]:
    env = {
        **os.environ,
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    command = [sys.executable, "-m", "lecture17", "check", str(path), "--json"]
    run = functools.partial(subprocess.run, capture_output=True, env=env, cwd=ROOT)
    done, seconds = timed(run, command)
    return seconds, done.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        print("| 情形 case | 退出码 exit | 中位数 median s | 最慢 max s |")
        print("|---|---|---|---|")
        for name, path in cases(Path(folder)).items():
            runs = [wall(path) for _ in range(args.repeats)]
            seconds = [s for s, _ in runs]
            print(
                f"| {name} | {runs[0][1]} | {statistics.median(seconds):.1f} | {max(seconds):.1f} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
