"""Execution profiles: the local default, and the SLURM one a cluster user types one command for."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT

from lecture17.experiments import rules as experiment_rules

PROFILES = ROOT / "workflow" / "profiles"


def test_no_profile_changes_snakemakes_rerun_triggers():
    """A changed setting, rule, code file or input reruns exactly the jobs it affects (README):
    Snakemake's default triggers, which no profile here overrides. (A local default profile
    would have to sit in profiles/ beside the Snakefile to be read; there is none.)"""
    profiles = sorted(PROFILES.glob("*/config.yaml"))
    assert profiles == [PROFILES / "slurm" / "config.yaml"]
    for path in profiles:
        profile = yaml.safe_load(path.read_text())
        assert "rerun-triggers" not in profile and "rerun_triggers" not in profile, path
    assert not (PROFILES.parents[1] / "profiles").exists()


def test_the_slurm_profile_gives_every_rule_measured_resources():
    profile = yaml.safe_load((PROFILES / "slurm" / "config.yaml").read_text())
    assert profile["executor"] == "slurm"
    # every rule a CPU build benchmarks: the registry's experiment rules (a GPU rule asks for its
    # own resources in experiments.smk) and the report's rules
    rules = {name for name, demos in experiment_rules().items() if demos[0].kind != "gpu"}
    rules |= {"aggregate", "figure", "script_seconds", "report"}
    assert set(profile["set-resources"]) == rules
    for rule, resources in profile["set-resources"].items():
        assert resources["mem_mb"] >= 1000 and resources["runtime"] >= 5, rule
        assert profile["set-threads"][rule] == 1


def test_the_profile_generator_scales_what_the_benchmarks_measured(tmp_path):
    sys.path.insert(0, str(ROOT / "workflow" / "scripts"))
    from make_slurm_profile import measured, profile

    folder = tmp_path / "transformer_vs_rnn" / "05.1"
    folder.mkdir(parents=True)
    header = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    (folder / "a.tsv").write_text(header + "200.0\t0:03:20\t1500.0\t1\t1\t1\t0\t0\t100\t200\n")
    (folder / "b.tsv").write_text(header + "20.0\t0:00:20\t500.0\t1\t1\t1\t0\t0\t100\t20\n")
    worst = measured(tmp_path)
    assert worst == {"transformer_vs_rnn": [200.0, 1500.0]}
    text = yaml.safe_load(profile(worst))
    assert text["set-resources"]["transformer_vs_rnn"] == {"mem_mb": 2300, "runtime": 10}


@pytest.mark.slow
def test_a_dry_run_with_the_slurm_profile_plans_every_job(tmp_path):
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "--profile",
            "workflow/profiles/slurm",
            "--dry-run",
            "--forceall",
            "--configfile",
            ".test/config/config.yaml",
            "--replace-workflow-config",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "transformer_vs_rnn" in done.stdout and "report" in done.stdout
