"""How long `python -m lecture17 check --trained` takes against the estimate it prints, and
what it finds, for three student files (the control of `make mutants` already built: its cost
is said apart, from its own record).

    .venv/bin/python bench/check_trained.py                    # the three files, 2 cores
    .venv/bin/python bench/check_trained.py --control DIR      # a finished control to use

Files: tests/checker_files/torch_correct.py (three projections of their own, einsum: a
correct file in another style), torch_mistakes.py with "no_scale" (no 1/sqrt(d_k): the
properties cannot see it, only the trained demos can) and with "peek" (the look-ahead mask
shows the next token). The budget (the build within ±20 % of the printed estimate) is quoted
in bench/README.md with the machine; never asserted in a test.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CASES = {
    "torch_correct": ("tests/checker_files/torch_correct.py", ""),
    "no_scale": ("tests/checker_files/torch_mistakes.py", "no_scale"),
    "peek": ("tests/checker_files/torch_mistakes.py", "peek"),
}
CLASSES = {"torch_correct": ["MultiHeadAttention", "EncoderLayer", "DecoderLayer"]}


def one(name: str, cores: int, control: Path | None) -> dict:
    path, mistake = CASES[name]
    out = Path(tempfile.mkdtemp(prefix="bench-trained-")) / "result.json"
    command = [sys.executable, "-m", "mutants.student", str(ROOT / path), "--json", str(out)]
    command += ["--cores", str(cores), "--classes"]
    command += CLASSES.get(name, ["MultiHeadAttention", "DecoderLayer"])
    command += ["--control", str(control)] if control else []
    env = {**os.environ, "LECTURE17_TORCH_MISTAKE": mistake, "PYTHONPATH": f"{ROOT}/src:{ROOT}"}
    subprocess.run(command, cwd=ROOT, env=env, check=True)
    result = json.loads(out.read_text(encoding="utf-8"))
    return {
        "case": name,
        "jobs": len(result.get("rerun", [])),
        "reference_jobs": len(result.get("reference", [])),
        "estimate_s": result.get("estimate_s"),
        "seconds": result.get("seconds"),
        "ratio": round(result["seconds"] / result["estimate_s"], 2)
        if result.get("seconds") and result.get("estimate_s")
        else "",
        "flips": " ".join(r["id"] for r in result.get("flips", [])),
        "excluded": " ".join(sorted(result.get("excluded_flips", {}))),
        "cells": len(result.get("cells", [])),
        "failed": result.get("log", "build failed") if result.get("failed") else "",
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--control", type=Path)
    parser.add_argument("cases", nargs="*", default=list(CASES))
    args = parser.parse_args(argv)
    rows = [one(name, args.cores, args.control) for name in args.cases]
    keys = list(rows[0])
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for row in rows:
        print("| " + " | ".join(str(row[k]) for k in keys) + " |")
    return 1 if any(row["failed"] for row in rows) else 0  # a failed build is no timing


if __name__ == "__main__":
    sys.exit(main())
