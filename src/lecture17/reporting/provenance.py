"""Provenance blocks of the report.

reproducible_info: what makes a build what it is (commit, config and code hashes, seeds,
package versions). It is part of any diff of two reports.
machine_info: where it ran, and what decides the float rounding of the trained numbers: the CPU
model, PyTorch's CPU capability (the kernels ATen dispatches to: `ATEN_CPU_CAPABILITY` changes
it), the BLAS of PyTorch and of numpy, the variables that steer them (MKL_CBWR, OPENBLAS_CORETYPE),
threads, and the per-job times from Snakemake's `benchmark:` files. It is printed inside the
machine-dependent block that diffs skip.
"""

import argparse
import hashlib
import os
import platform
import subprocess
from collections import defaultdict
from importlib import metadata
from pathlib import Path

import pandas as pd

from lecture17.pipeline import yamlio
from lecture17.pipeline.csvio import write_with_timing
from lecture17.pipeline.recorded import cpu_model

PACKAGES = ["numpy", "torch", "pandas", "matplotlib", "jinja2", "markdown", "snakemake"]


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:12]


def git_state() -> tuple[str, str]:
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown", "unknown"
    return commit, ("有未提交的修改 dirty" if dirty else "干净 clean")


def reproducible_info(config_path: Path, code_files: list) -> dict:
    with open(config_path, encoding="utf-8") as f:
        config = yamlio.load(f)
    commit, dirty = git_state()
    return {
        "commit": commit,
        "dirty": dirty,
        "config_sha256": sha256(config_path),
        "code": {str(p): sha256(p) for p in sorted(map(Path, code_files))},
        "seeds": {demo: spec["seeds"] for demo, spec in config["demos"].items()},
        "python": platform.python_version(),
        "packages": {name: _version(name) for name in PACKAGES},
    }


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "未安装 not installed"


def blas_name() -> str:
    import numpy as np

    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f"{blas.get('name')} {blas.get('version')}"
    except (KeyError, TypeError):
        return "unknown"


ROUNDING_VARIABLES = ("ATEN_CPU_CAPABILITY", "MKL_CBWR", "OPENBLAS_CORETYPE", "OMP_NUM_THREADS")


def torch_kernels() -> dict:
    """PyTorch's CPU capability and BLAS: what picks the float32 kernels of the trained demos."""
    try:
        import torch
    except ImportError:
        return {"torch": "未安装 not installed"}
    config = torch.__config__.show()
    blas = [
        line.strip().removeprefix("- ").split(" for ")[0]  # no build-flag soup
        for line in config.splitlines()
        if any(word in line for word in ("Math Kernel Library", "OpenBLAS", "oneDNN"))
    ]
    return {
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "torch_blas": "; ".join(blas) or "unknown",
        "mkldnn": bool(torch.backends.mkldnn.is_available()),
    }


def cpu_flags() -> str:
    """The vector extensions that decide which kernels run (AVX2, AVX-512, AMX)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                wanted = ("avx2", "fma", "avx512f", "avx512_bf16", "avx512_vnni", "amx_tile")
                return " ".join(f for f in wanted if f in flags) or "none of AVX2/AVX-512/AMX"
    except OSError:
        pass
    return "unknown"


def job_seconds(benchmarks: Path) -> dict:
    """Wall seconds per rule and demo, summed over seeds and settings.

    Snakemake's benchmark TSVs (column `s`) live at benchmarks/<rule>/<demo or name>[/…].tsv.
    """
    totals = defaultdict(float)
    for tsv in sorted(Path(benchmarks).rglob("*.tsv")):
        lines = tsv.read_text().splitlines()
        if len(lines) >= 2:
            parts = tsv.relative_to(benchmarks).with_suffix("").parts
            totals[" ".join(parts[:2])] += float(lines[1].split("\t")[0])
    return dict(totals)


SCRIPT_RULES_SKIPPED = ("aggregate", "figure", "report", "script_seconds")


def script_seconds(benchmarks: Path) -> pd.DataFrame:
    """Wall ms of each lecture script's jobs, summed (all its demos, settings and seeds).

    The lecture's scripts 01–05 each ran in one process; ours run as one job per demo, seed
    and setting, each paying its own Python start-up and imports (about 3 s for torch). A tidy
    timing table: `script`, quantity `ms_script`, value.
    """
    totals = defaultdict(float)
    for tsv in sorted(Path(benchmarks).rglob("*.tsv")):
        parts = tsv.relative_to(benchmarks).parts
        lines = tsv.read_text().splitlines()
        if parts[0] in SCRIPT_RULES_SKIPPED or len(parts) < 2 or len(lines) < 2:
            continue
        script = parts[1].split(".")[0]  # benchmarks/<rule>/<demo>/…: "05.1" -> "05"
        totals[script] += 1000 * float(lines[1].split("\t")[0])
    rows = [{"script": k, "quantity": "ms_script", "value": v} for k, v in sorted(totals.items())]
    return pd.DataFrame(rows, columns=["script", "quantity", "value"])


def main(argv=None) -> int:
    """python -m lecture17.reporting.provenance BENCHMARKS --out results/tables/build.csv"""
    parser = argparse.ArgumentParser(prog="python -m lecture17.reporting.provenance")
    parser.add_argument("benchmarks", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    table = script_seconds(args.benchmarks)
    table.insert(0, "demo", "build")
    table["mean"] = table["min"] = table["max"] = table.pop("value")
    table["std"], table["n_seeds"] = 0.0, 1
    # every row is a timing: build.csv has a header only
    write_with_timing(table, args.out, set(table["quantity"]))
    return 0


def machine_info(benchmarks: Path) -> dict:
    return {
        "cpu": cpu_model(),
        "cpu_flags": cpu_flags(),
        "cores": os.cpu_count(),
        "threads_per_job": os.environ.get("OMP_NUM_THREADS", "未设置 unset"),
        "blas": blas_name(),
        **torch_kernels(),
        "rounding_variables": {v: os.environ.get(v, "未设置 unset") for v in ROUNDING_VARIABLES},
        "job_seconds": job_seconds(benchmarks),
    }


if __name__ == "__main__":
    raise SystemExit(main())
