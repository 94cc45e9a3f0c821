"""The workflow on a real SLURM cluster, through Snakemake's SLURM executor with the project's
profile (workflow/profiles/slurm): the same bytes as a local build, the profile's resources in
every submitted job, a failed job named with its log, and a rerun that only finishes the rest.

The cluster is one node on this machine, from Debian's packages, brought up and torn down by
workflow/scripts/slurm_cluster.sh (it installs slurm-wlm and munge with apt-get if they are
missing). Where that cannot be done (not root, no apt-get, a SLURM of the machine's own) the
tests are skipped with the script's reason; with LECTURE17_REQUIRE_SLURM=1 (CI) they fail
instead. The cluster is torn down even when a build fails (the fixture's `finally`), and the
last test checks the teardown: no daemon of ours left, and no slurm.conf naming a controller
that is gone (with one, every later `snakemake` start waits ~10 s, see the script).

Both builds run in copies of one snapshot of the repository, on a config of their own derived
from `.test/`: demo 03.1 (analytic, with a figure) and 03.5 at one grid point (training), so
every rule kind runs on the cluster: analytic, training, aggregate, figure, report.
"""

import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, python_m
from repository import copy_repository

pytestmark = pytest.mark.slow

SCRIPT = ROOT / "workflow" / "scripts" / "slurm_cluster.sh"
PROFILE = "workflow/profiles/slurm"
CANNOT = 77  # the script's exit status where the cluster cannot be had here
TIMEOUT = 480  # seconds for one build: generous, for a loaded 2-core machine
DEMOS = {"03.1": None, "03.5": "variant"}  # demo -> the grid key cut to its first value
# a rule of each kind: analytic, training, aggregate, figure, report (the build has others too)
RULE_KINDS = {"positional_encoding", "pe_ablation", "aggregate", "figure", "report"}

# What a one-node cluster without an accounting database needs on top of the profile: `squeue`
# as the status command (the plugin's default, `sacct`, fails there, and the plugin then waits
# for ever, taking the jobs for still running); the script's MinJobAge keeps finished jobs in
# squeue's view. Nothing else: the default partition is the node's, and without an account the
# plugin warns and submits without one (its --slurm-no-account has no effect in 2.8.0).
ONE_NODE = ["--slurm-status-command", "squeue"]
# Polling, for this test's jobs of ~10–15 s each (a Snakemake start inside the job, then the
# rule): the plugin checks first after --seconds-between-status-checks, then after
# --slurm-init-seconds-before-status-checks once a check found a job finished, adding 10 s to
# the wait after every check that found none (defaults 10 and 40 s). 15 s catches most jobs at
# the first check.
FAST_POLLING = ["--seconds-between-status-checks", "15"]
FAST_POLLING += ["--slurm-init-seconds-before-status-checks", "15"]

# A template error the report job trips over on the cluster (Jinja: an `endif` without `if`).
BROKEN = "\n{% endif %}\n"
TEMPLATE = "report/templates/lecture17.md.j2"


# -----------------------------------------------------------------------------
# the builds


def snakemake(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    return python_m(workdir, "snakemake", *args, timeout=TIMEOUT)


def small_config(test_config: dict) -> dict:
    """The `.test` config cut to DEMOS, each grid key named there cut to its first value."""
    demos = {}
    for demo, key in DEMOS.items():
        spec = test_config["demos"][demo]
        if key:
            spec["grid"][key] = spec["grid"][key][:1]
        demos[demo] = spec
    return {**test_config, "demos": demos}


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory) -> Path:
    """One copy of the repository, with the small config as its config/config.yaml (a
    `--configfile` that leaves out demos would not do: Snakemake does not pass
    `--replace-workflow-config` on to the jobs it submits)."""
    work = copy_repository(tmp_path_factory.mktemp("snapshot"))
    config = small_config(yaml.safe_load((work / ".test/config/config.yaml").read_text()))
    (work / "config/config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return work


def build_copy(snapshot: Path, tmp_path_factory, name: str) -> Path:
    work = tmp_path_factory.mktemp(name)
    shutil.copytree(snapshot, work, dirs_exist_ok=True)
    return work


@pytest.fixture(scope="module")
def local_build(snapshot, tmp_path_factory) -> Path:
    work = build_copy(snapshot, tmp_path_factory, "local")
    done = snakemake(work, "--cores", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    return work


@dataclass
class ClusterBuild:
    workdir: Path
    failed: subprocess.CompletedProcess  # the first run, with the report's template broken
    failed_log: str  # the report rule's own log after that run
    rerun: subprocess.CompletedProcess  # the second, with the template restored
    jobs: list[dict]  # `scontrol show job` of every job the two runs submitted
    daemons: list[tuple[str, int]]  # what `slurm_cluster.sh up` started
    down: subprocess.CompletedProcess
    after: dict  # the machine right after `down`: see teardown_facts


def cluster(action: str, state: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(SCRIPT), action, str(state)], capture_output=True, text=True, timeout=600
    )


def cannot_start(reason: str):
    message = f"no SLURM cluster here: {reason} (workflow/scripts/slurm_cluster.sh)"
    if os.environ.get("LECTURE17_REQUIRE_SLURM") == "1":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="module")
def slurm_build(request, tmp_path_factory) -> ClusterBuild:
    state = tmp_path_factory.mktemp("slurm-state")
    try:
        up = cluster("up", state)
        if up.returncode == CANNOT:
            cannot_start((up.stderr.strip().splitlines() or ["exit status 77"])[-1])
        assert up.returncode == 0, up.stderr
        lines = (state / "pids").read_text().splitlines()
        daemons = [(name, int(pid)) for name, pid in (line.split() for line in lines)]
        snapshot = request.getfixturevalue("snapshot")  # only once there is a cluster
        work = build_copy(snapshot, tmp_path_factory, "slurm")
        template = work / TEMPLATE
        original = template.read_bytes()
        template.write_bytes(original + BROKEN.encode())
        failed = snakemake(work, "--profile", PROFILE, *ONE_NODE, *FAST_POLLING)
        rule_log = work / "logs/report.log"
        failed_log = rule_log.read_text() if rule_log.exists() else ""
        template.write_bytes(original)
        rerun = snakemake(work, "--profile", PROFILE, *ONE_NODE, *FAST_POLLING)
        jobs = submitted_jobs(work)
    finally:
        down = cluster("down", state)
    after = teardown_facts(daemons)
    return ClusterBuild(work, failed, failed_log, rerun, jobs, daemons, down, after)


def teardown_facts(daemons: list[tuple[str, int]]) -> dict:
    """Right after `down` (another test run on this machine may start a cluster of its own
    later): which of our daemons still run, whether a slurm.conf is left, and how long the
    executor plugin's probe on every `snakemake` start, `scontrol show config`, takes to fail
    (at once with no slurm.conf; ~10 s with one naming a controller that is gone)."""
    start = time.monotonic()
    probe = subprocess.run(["scontrol", "show", "config"], capture_output=True, timeout=60)
    return {
        "probe_seconds": time.monotonic() - start,
        "probe_failed": probe.returncode != 0,
        "running": [pid for _, pid in daemons if Path(f"/proc/{pid}").exists()],
        "slurm_conf": Path("/etc/slurm/slurm.conf").exists(),
    }


# -----------------------------------------------------------------------------
# what SLURM recorded


def submitted_jobs(workdir: Path) -> list[dict]:
    """Every job the cluster ran from this working directory, oldest first, as `scontrol show
    job` prints it (finished jobs too: the script's MinJobAge keeps them for a day)."""
    text = subprocess.run(
        ["scontrol", "--oneliner", "show", "job"], capture_output=True, text=True, check=True
    ).stdout
    jobs = [
        dict(field.split("=", 1) for field in line.split() if "=" in field)
        for line in text.splitlines()
    ]
    ours = [job for job in jobs if job.get("WorkDir") == str(workdir)]
    return sorted(ours, key=lambda job: int(job["JobId"]))


def rule_of(job: dict) -> str:
    """The rule a job ran: the executor's comment is rule_<rule>[_wildcards_<values>]."""
    return re.fullmatch(r"rule_(\w+?)(_wildcards_.*)?", job["Comment"]).group(1)


def minutes(limit: str) -> float:
    """SLURM's time limit, [days-]hours:minutes:seconds, in minutes."""
    days, _, clock = limit.rpartition("-")
    hours, mins, secs = (int(part) for part in clock.split(":"))
    return (int(days or 0) * 24 + hours) * 60 + mins + secs / 60


def requested(job: dict) -> dict:
    return {
        "mem_mb": int(job["MinMemoryNode"].removesuffix("M")),
        "runtime": minutes(job["TimeLimit"]),
        "threads": int(job["CPUs/Task"]),
    }


def expected(profile: dict, rule: str) -> dict:
    resources = {**profile["default-resources"], **profile["set-resources"].get(rule, {})}
    threads = profile["set-threads"].get(rule, 1)
    return {"mem_mb": resources["mem_mb"], "runtime": resources["runtime"], "threads": threads}


def mismatches(jobs: list[dict], profile: dict) -> list[str]:
    """Each job whose memory, time limit or CPUs differ from what the profile gives its rule."""
    wanted = [(job, expected(profile, rule_of(job))) for job in jobs]
    return [
        f"job {job['JobId']} ({rule_of(job)}): asked for {requested(job)}, the profile says {want}"
        for job, want in wanted
        if requested(job) != want
    ]


def runs_of(jobs: list[dict]) -> list[list[dict]]:
    """The jobs grouped by the `snakemake` run that submitted them (the job name is its id)."""
    runs = {}
    for job in jobs:
        runs.setdefault(job["JobName"], []).append(job)
    return list(runs.values())


# -----------------------------------------------------------------------------
# the outputs


def strip_machine(text: str) -> str:
    """The report without its sections marked machine-dependent (timings, the CPU)."""
    return re.sub(
        r"<!-- machine-dependent:begin -->.*?<!-- machine-dependent:end -->", "", text, flags=re.S
    )


def outputs(workdir: Path) -> dict[str, bytes]:
    """Every result and figure (timing CSVs left out, machine-dependent by design), and the
    report without its machine-dependent sections."""
    files = [*(workdir / "results").rglob("*"), *(workdir / "report/figures").glob("*")]
    found = {
        str(p.relative_to(workdir)): p.read_bytes()
        for p in sorted(files)
        if p.is_file() and not p.name.endswith(".timing.csv")
    }
    for name in ("report/lecture17.md", "report/lecture17.html"):
        found[name] = strip_machine((workdir / name).read_text()).encode()
    return found


# -----------------------------------------------------------------------------
# the tests


def test_the_cluster_build_writes_the_local_builds_bytes(slurm_build, local_build):
    assert slurm_build.rerun.returncode == 0, slurm_build.rerun.stdout + slurm_build.rerun.stderr
    ours, local = outputs(slurm_build.workdir), outputs(local_build)
    assert sorted(ours) == sorted(local)
    assert "results/03.5/variant=sinusoidal/seed0.csv" in ours
    assert "report/figures/03.1_pe_heatmap.png" in ours
    assert [name for name in ours if ours[name] != local[name]] == []


def test_every_rule_kind_ran_on_the_cluster(slurm_build):
    assert RULE_KINDS <= {rule_of(job) for job in slurm_build.jobs}


def test_every_job_asked_for_the_profiles_memory_time_and_threads(slurm_build):
    profile = yaml.safe_load((ROOT / PROFILE / "config.yaml").read_text())
    assert slurm_build.jobs and mismatches(slurm_build.jobs, profile) == []


def test_the_resource_check_catches_a_job_that_asked_for_other_resources():
    profile = yaml.safe_load((ROOT / PROFILE / "config.yaml").read_text())
    want = expected(profile, "figure")
    job = {
        "JobId": "1",
        "Comment": "rule_figure_wildcards_03.1_pe_heatmap",
        "MinMemoryNode": f"{want['mem_mb']}M",
        "TimeLimit": f"00:{want['runtime']:02d}:00",
        "CPUs/Task": str(want["threads"]),
    }
    assert mismatches([job], profile) == []
    assert mismatches([{**job, "MinMemoryNode": f"{want['mem_mb'] + 1}M"}], profile) != []
    assert mismatches([{**job, "TimeLimit": "1-00:00:00"}], profile) != []
    assert mismatches([{**job, "CPUs/Task": str(want["threads"] + 1)}], profile) != []


def test_a_job_that_fails_on_the_cluster_fails_the_workflow_with_its_log(slurm_build):
    failed = slurm_build.failed
    text = failed.stdout + failed.stderr
    assert failed.returncode != 0
    first = runs_of(slurm_build.jobs)[0]
    report = [job for job in first if rule_of(job) == "report"]
    assert [job["JobState"] for job in report] == ["FAILED"]
    assert all(job["JobState"] == "COMPLETED" for job in first if job not in report)
    log = Path(report[0]["StdOut"])  # the executor's log of the job: .snakemake/slurm_logs/…
    assert "Error in rule report" in text and str(log) in text
    assert log.is_file() and "Error in rule report" in log.read_text()
    # the rule's own log, named there too, says what went wrong
    assert "logs/report.log" in text and "TemplateSyntaxError" in slurm_build.failed_log


def test_the_rerun_submits_only_what_is_missing(slurm_build):
    first, second = runs_of(slurm_build.jobs)
    assert RULE_KINDS <= {rule_of(job) for job in first}
    assert [rule_of(job) for job in second] == ["report"]
    assert [job["JobState"] for job in second] == ["COMPLETED"]


def test_teardown_stops_its_daemons_and_leaves_no_config_that_slows_snakemake(slurm_build):
    assert slurm_build.down.returncode == 0, slurm_build.down.stderr
    assert [name for name, _ in slurm_build.daemons] == ["munged", "slurmctld", "slurmd"]
    after = slurm_build.after
    assert after["running"] == [] and not after["slurm_conf"]
    assert after["probe_failed"] and after["probe_seconds"] < 5
