"""How long a teacher waits for `python -m lecture17 check --grade` on a class of 30 files.

    .venv/bin/python bench/grade_class.py            # 30 files, once
    .venv/bin/python bench/grade_class.py --files 10

The class is made of the students' files in tests/checker_files/ (correct ones, one mistake
each, a notebook), repeated to 30, each in a folder of its own under the same name
(student_NN/my_blocks.py): the wall clock of one `check --grade` (a fresh process, the venv in
place). The budget (≤ 4 minutes for 30 files on 2 cores) is quoted in bench/README.md with the
machine; never asserted in a test.
"""

import argparse
import functools
import subprocess
import sys
import tempfile
from pathlib import Path

from lecture17.timing import timed

ROOT = Path(__file__).resolve().parents[1]
STUDENTS = ROOT / "tests" / "checker_files" / "students"


def make_class(folder: Path, n: int) -> None:
    pool = sorted(STUDENTS.glob("*.py")) + [STUDENTS / "bad" / "notebook_magics.ipynb"]
    for i in range(n):
        source = pool[i % len(pool)]
        (folder / f"student_{i:02d}").mkdir(parents=True)
        name = "my_blocks" + source.suffix
        (folder / f"student_{i:02d}" / name).write_bytes(source.read_bytes())


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--files", type=int, default=30)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "class"
        make_class(folder, args.files)
        command = [sys.executable, "-m", "lecture17", "check", "--grade", folder]
        command += ["--out", Path(tmp) / "out"]
        run = functools.partial(subprocess.run, command, capture_output=True, text=True)
        done, seconds = timed(run)
    print(done.stdout[-2000:], done.stderr[-2000:])
    print(f"{args.files} 个文件 files: {seconds:.1f} s（退出码 exit {done.returncode}）")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
