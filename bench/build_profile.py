"""The build's profile from its Snakemake benchmark files: per rule and in all.

    .venv/bin/python bench/build_profile.py              # this checkout's benchmarks/
    .venv/bin/python bench/build_profile.py --build DIR  # another build's

Every job of the build writes benchmarks/<rule>/…/<job>.tsv (Snakemake's `benchmark:`): `s`, the
job's wall seconds, `max_rss` (MB) and `cpu_time`. Per rule: jobs, wall seconds in all, the
longest job, the peak memory, and the CPU seconds as recorded — with how many jobs ran longer
than Snakemake's sampling reaches, since `cpu_time` is not the job's CPU time: Snakemake samples
the process every 0.5 s for its first 30 samples (~15 s), then every 30 s
(snakemake/benchmark.py, BENCHMARK_INTERVAL_SHORT and BENCHMARK_INTERVAL), and keeps the last
sample, so a job of 32 s records the CPU of its first ~15 s; jobs under 0.5 s record 0. The
wall seconds are complete; they include the time a job waited for a core when others shared it.
"""

import argparse
import csv
import sys
from dataclasses import dataclass, field
from pathlib import Path

FIRST_SAMPLES_S = 15.0  # 30 samples 0.5 s apart: what a job's cpu_time surely covers


@dataclass
class Rule:
    name: str
    wall: list = field(default_factory=list)
    cpu: list = field(default_factory=list)
    rss: list = field(default_factory=list)

    @property
    def undersampled(self) -> int:
        """Jobs longer than the first samples: their cpu_time misses the rest."""
        return sum(w > FIRST_SAMPLES_S for w in self.wall)


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:  # "NA": the job ended before the first sample
        return 0.0


def read_rules(benchmarks: Path) -> dict[str, Rule]:
    """rule -> its jobs' wall, cpu_time and max_rss, from benchmarks/<rule>/**/*.tsv."""
    rules: dict[str, Rule] = {}
    for path in sorted(benchmarks.rglob("*.tsv")):
        name = path.relative_to(benchmarks).parts[0]
        with path.open(encoding="utf-8") as f:
            rows = list(csv.DictReader(f, delimiter="\t"))
        if not rows:
            continue
        last = rows[-1]  # a rerun appends a line: the last one is the job that made the output
        rule = rules.setdefault(name, Rule(name))
        rule.wall.append(_number(last["s"]))
        rule.cpu.append(_number(last["cpu_time"]))
        rule.rss.append(_number(last["max_rss"]))
    return rules


def table(rules: dict[str, Rule]) -> str:
    head = (
        "| 规则 rule | 作业 jobs | 墙钟 wall s | 最长 longest s | 记录的 CPU recorded cpu_time s "
        "| 超过采样的作业 jobs past the samples | 峰值内存 peak MB |\n|---|---|---|---|---|---|---|"
    )
    order = sorted(rules.values(), key=lambda r: -sum(r.wall))
    lines = [
        f"| `{r.name}` | {len(r.wall)} | {sum(r.wall):.1f} | {max(r.wall):.1f} | {sum(r.cpu):.1f} "
        f"| {r.undersampled} | {max(r.rss):.0f} |"
        for r in order
    ]
    jobs = sum(len(r.wall) for r in order)
    wall = sum(sum(r.wall) for r in order)
    cpu = sum(sum(r.cpu) for r in order)
    past = sum(r.undersampled for r in order)
    lines.append(f"| 合计 all | {jobs} | {wall:.1f} | | {cpu:.1f} | {past} | |")
    return "\n".join([head, *lines])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, default=Path("."), help="a build's root")
    args = parser.parse_args(argv)
    benchmarks = args.build / "benchmarks"
    rules = read_rules(benchmarks)
    if not rules:
        print(f"{benchmarks} 里没有基准文件 no benchmark files: build first", file=sys.stderr)
        return 1
    print(table(rules))
    return 0


if __name__ == "__main__":
    sys.exit(main())
