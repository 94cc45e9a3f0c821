"""The build's profile from its Snakemake benchmark files: per rule and in all.

    .venv/bin/python bench/build_profile.py              # this checkout's benchmarks/
    .venv/bin/python bench/build_profile.py --build DIR  # another build's
    .venv/bin/python bench/build_profile.py --by-demo    # per demo, and what 06.x adds

Every job of the build writes benchmarks/<rule>/…/<job>.tsv (Snakemake's `benchmark:`): `s`, the
job's wall seconds, `max_rss` (MB) and `cpu_time`. Per rule: jobs, wall seconds in all, the
longest job, the peak memory, and the CPU seconds as recorded — with how many jobs ran longer
than Snakemake's sampling reaches, since `cpu_time` is not the job's CPU time: Snakemake samples
the process every 0.5 s for its first 30 samples (~15 s), then every 30 s
(snakemake/benchmark.py, BENCHMARK_INTERVAL_SHORT and BENCHMARK_INTERVAL), and keeps the last
sample, so a job of 32 s records the CPU of its first ~15 s; jobs under 0.5 s record 0. The
wall seconds are complete; they include the time a job waited for a core when others shared it.

A job that ran warm (lecture17/pipeline/warm.py: forked from a server that had imported torch)
computes in the server's child, which the benchmark does not see: its `cpu_time` and `max_rss`
are those of the client. The child's own CPU seconds (getrusage: complete, not sampled) and peak
memory are the last line of the job's log; the line under the table sums them over logs/.
"""

import argparse
import csv
import re
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


DEMO_ID = re.compile(r"\d\d\.\d")


def demo_of(parts: tuple[str, ...]) -> str:
    """The demo a benchmark file belongs to: benchmarks/<rule>/<demo>/…, aggregate/<demo>.tsv,
    figure/<demo>_<name>.tsv; "report" for the rest (script_seconds, report)."""
    for part in parts[1:]:
        if found := DEMO_ID.match(part):
            return found.group()
    return "report"


def read_rules(benchmarks: Path, by_demo: bool = False) -> dict[str, Rule]:
    """rule (or demo, by_demo) -> its jobs' wall, cpu_time and max_rss, from
    benchmarks/<rule>/**/*.tsv."""
    rules: dict[str, Rule] = {}
    for path in sorted(benchmarks.rglob("*.tsv")):
        parts = path.relative_to(benchmarks).parts
        name = demo_of(parts) if by_demo else parts[0]
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


WARM_LINE = re.compile(r"^warm start: CPU ([\d.]+) s, peak memory (\d+) MB$", re.M)


def warm_summary(logs: Path) -> str | None:
    """The jobs that ran warm, and their own CPU seconds and peak memory (from their logs)."""
    found = [m for log in sorted(logs.rglob("*.log")) for m in WARM_LINE.finditer(log.read_text())]
    if not found:
        return None
    cpu = sum(float(m.group(1)) for m in found)
    peak = max(int(m.group(2)) for m in found)
    return (
        f"热启动 warm start：{len(found)} 个作业在服务进程的子进程里运行，它们自己的 CPU 时间合计 "
        f"{cpu:.1f} 秒 s（getrusage），峰值内存最大 {peak} MB；这些作业的 `cpu_time` 和 `max_rss` "
        "是客户端进程的"
    )


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


def beyond_share(demos: dict[str, Rule]) -> str:
    """What the beyond-the-lecture demos (06.x: their jobs, tables and figures) add to the
    rest of the build, in job wall seconds (the beyond-the-lecture demos' budget: at most 15 %)."""
    beyond = sum(sum(r.wall) for name, r in demos.items() if name.startswith("06."))
    rest = sum(sum(r.wall) for name, r in demos.items() if not name.startswith("06."))
    return (
        f"超出讲义的演示 beyond the lecture (06.x)：{beyond:.1f} 秒 s，"
        f"其余 the rest {rest:.1f} 秒 s，多出 adds {100 * beyond / rest:.1f} %"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, default=Path("."), help="a build's root")
    parser.add_argument(
        "--by-demo", action="store_true", help="per demo (jobs, table, figures), not per rule"
    )
    args = parser.parse_args(argv)
    benchmarks = args.build / "benchmarks"
    rules = read_rules(benchmarks, args.by_demo)
    if not rules:
        print(f"{benchmarks} 里没有基准文件 no benchmark files: build first", file=sys.stderr)
        return 1
    print(table(rules).replace("规则 rule", "演示 demo") if args.by_demo else table(rules))
    if summary := warm_summary(args.build / "logs"):
        print("\n" + summary)
    if args.by_demo:
        print("\n" + beyond_share(rules))
    return 0


if __name__ == "__main__":
    sys.exit(main())
