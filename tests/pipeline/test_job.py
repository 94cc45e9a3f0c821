"""pipeline.job: the config checks (a bad config fails when the workflow is parsed, before any
job, naming the key and what was expected; the configs we ship pass), a config value against its
argument's annotation, and the command line that runs one demo and writes its CSV.

The bad-config builds run in a copy of the repository (builds.py, tests/repository.py).
"""

import json
import subprocess
import sys
from functools import cache
from pathlib import Path

import jsonschema
import pandas as pd
import pytest
import yaml
from builds import DEMO, TABLE, TEST_CONFIG, TIMEOUT, checkout, environment, finish, start
from conftest import CONFIG, ROOT, python_m, value
from repository import copy_repository

from lecture17.pipeline.job import check_demo, fits, run_demo

slow = pytest.mark.slow


@cache
def config() -> dict:
    """config/config.yaml's demos."""
    with open(CONFIG, encoding="utf-8") as f:
        return yaml.safe_load(f)["demos"]


# --- a bad config -------------------------------------------------------------------------------

DELETE = object()
BAD_CONFIGS = {
    # what: (where in the .test config, the value put there (DELETE: removed), what the error says)
    "unknown key": (["seed"], 3, ["'seed' is not one of ['device', 'demos']"]),
    "unknown key of a demo": (
        ["demos", "01.1", "seed"],
        [0],
        ["'seed' is not one of ['seeds', 'settings', 'devices', 'grid']", "['demos']['01.1']"],
    ),
    "unknown setting": (
        ["demos", "01.2", "settings", "dk"],
        64,
        ["config demos['01.2']", "unknown settings ['dk']", "expected exactly ['d_k', 'd_v',"],
    ),
    "unknown grid key": (
        ["demos", "02.3", "grid", "optimiser"],
        ["adam"],
        ["config demos['02.3']", "unknown settings ['optimiser']", "'optimizer'"],
    ),
    "wrong type of the seeds": (
        ["demos", "01.1", "seeds"],
        "a",
        ["'a' is not of type 'array'", "['demos']['01.1']['seeds']"],
    ),
    "wrong type of a setting": (
        ["demos", "01.1", "settings", "strength"],
        "4",
        ["config demos['01.1']: setting 'strength' is '4' (str), expected float"],
    ),
    "wrong type of a grid value": (
        ["demos", "05.1", "grid", "seq_len"],
        [32, "64"],
        ["config demos['05.1']: grid value of 'seq_len' is '64' (str), expected int"],
    ),
    "unknown demo": (
        ["demos", "99.9"],
        {"seeds": [0], "settings": {}},
        ["'99.9' does not match '^(0[1-9]|13)\\\\.[1-9]$'", "['demos']"],
    ),
    "unknown demo of a known script": (
        ["demos", "01.9"],
        {"seeds": [0], "settings": {}},
        ["unknown demo '01.9'; expected one of ['01.1', '01.2',"],
    ),
    "missing setting": (
        ["demos", "01.2", "settings", "d_k"],
        DELETE,
        ["config demos['01.2']", "missing settings ['d_k']", "expected exactly ['d_k', 'd_v',"],
    ),
    "setting also a grid key": (
        ["demos", "02.3", "settings", "d_k"],
        16,
        ["config demos['02.3']: ['d_k'] in both `settings` and `grid`; expected one of the two"],
    ),
    "training demo without its grid": (
        ["demos", "02.3", "grid"],
        DELETE,
        ["config demos['02.3']: expected a `grid` (a training demo) for lookup_task"],
    ),
}


def edited(config: dict, keys: list[str], value) -> dict:
    *parents, last = keys
    block = config
    for key in parents:
        block = block[key]
    if value is DELETE:
        del block[last]
    else:
        block[last] = value
    return config


def dry_run(work: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "snakemake", "--dry-run", "--cores", "1", TABLE, *args]
    return subprocess.run(
        cmd, cwd=work, env=environment(work), capture_output=True, text=True, timeout=TIMEOUT
    )


@pytest.fixture(scope="module")
def repository(tmp_path_factory):
    return copy_repository(tmp_path_factory.mktemp("configs"))


@slow
@pytest.mark.parametrize("what", BAD_CONFIGS)
def test_a_bad_config_fails_before_any_job_naming_the_key_and_what_was_expected(
    what, repository, tmp_path
):
    keys, value, said = BAD_CONFIGS[what]
    config = edited(yaml.safe_load((repository / TEST_CONFIG).read_text()), keys, value)
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(config))
    done = dry_run(
        repository, "--configfile", str(tmp_path / "bad.yaml"), "--replace-workflow-config"
    )
    text = done.stdout + done.stderr
    assert done.returncode != 0, text
    assert "Building DAG of jobs" not in text, text  # it failed while the workflow was parsed
    for words in said:
        assert words in text, text


@pytest.mark.parametrize("config", ["config/config.yaml", TEST_CONFIG])
def test_the_configs_we_ship_pass_the_schema_and_check_demo(config):
    """What common.smk runs on them (test_lint and test_workflow also parse the workflow)."""
    schema = yaml.safe_load((ROOT / "workflow/schemas/config.schema.yaml").read_text())
    loaded = yaml.safe_load((ROOT / config).read_text())
    jsonschema.Draft202012Validator(schema).validate(loaded)
    for demo, spec in loaded["demos"].items():
        check_demo(demo, spec, loaded.get("device", "cpu"))


@slow
def test_a_bad_config_starts_no_job(tmp_path):
    """Not a dry run: the build stops before it runs or writes anything."""
    work = checkout(tmp_path)
    config = yaml.safe_load((work / "faults.yaml").read_text())
    (work / "faults.yaml").write_text(
        yaml.safe_dump(edited(config, ["demos", DEMO, "settings", "strenght"], 4))
    )
    returncode, log = finish(start(work), work)
    assert returncode != 0 and "unknown settings ['strenght']" in log, log
    assert not any((work / folder).exists() for folder in ("results", "logs", "benchmarks"))


@pytest.mark.parametrize(
    "value, annotation, fit",
    [
        (4, float, True),  # YAML's 4 for a float setting
        (True, float, False),  # `true` is no number
        (True, int, False),
        (True, bool, True),
        (yaml.safe_load("lr: 1e-3")["lr"], float, False),  # YAML 1.1: no dot, a string
        (yaml.safe_load("lr: 1.0e-3")["lr"], float, True),
        ([64, 128], list[int], True),
        ([64, 128.5], list[int], False),
        (64, list[int], False),
        (["gru", "nn.GRU"], list[str], True),
        ({"gru": {"hidden": 128}}, dict, True),
        ("small", str, True),
        (8, str, False),
        (None, int | None, True),  # eval_every: null
        (25, int | None, True),
        ("25", int | None, False),  # a union is checked too, not waved through
        (True, float | None, False),
    ],
)
def test_a_config_value_fits_its_argument_annotation_or_not(value, annotation, fit):
    assert fits(value, annotation) is fit


def test_a_grid_on_a_demo_that_trains_nothing_is_a_config_error():
    spec = {"seeds": [0], "settings": {}, "grid": {"strength": [4, 6]}}
    with pytest.raises(ValueError, match=r"expected no `grid` \(not a training demo\)"):
        check_demo("01.1", spec, "cpu")
    check_demo("01.1", {"seeds": [0], "settings": {"strength": 4}}, "cpu")  # the same, right


# --- the command line ---------------------------------------------------------------------------


def test_cli_writes_the_csv(tmp_path):
    out = tmp_path / "01.1" / "seed0.csv"
    settings = json.dumps(config()["01.1"]["settings"])
    cmd = [
        sys.executable,
        "-m",
        "lecture17.pipeline.job",
        "01.1",
        "--seed",
        "0",
        "--settings",
        settings,
        "--out",
        str(out),
    ]
    subprocess.run(cmd, check=True, cwd=ROOT, capture_output=True, timeout=120)
    table = pd.read_csv(out, dtype={"demo": str}, keep_default_na=False)
    assert list(table.columns) == ["demo", "seed", "query", "key", "dim", "quantity", "value"]
    assert set(table["demo"]) == {"01.1"} and set(table["seed"]) == {0}
    afrique_visite = value(table, "weight", query="l'Afrique", key="visite")
    assert f"{afrique_visite:.3f}" == "0.614"


def test_unknown_setting_is_an_error():
    settings = config()["01.1"]["settings"] | {"streng": 4}
    with pytest.raises(ValueError, match="unknown settings"):
        run_demo("01.1", settings, 0)


def test_running_a_demo_without_snakemake_writes_what_its_rule_writes(tmp_path):
    settings = config()["01.1"]
    rule = python_m(
        ROOT,
        "lecture17.pipeline.job",
        "01.1",
        "--seed",
        "0",
        "--settings",
        json.dumps(settings["settings"], sort_keys=True),
        "--out",
        str(tmp_path / "rule/01.1/seed0.csv"),
    )
    assert rule.returncode == 0, rule.stderr
    alone = python_m(ROOT, "lecture17", "run", "01.1", "--results", str(tmp_path / "alone"))
    assert alone.returncode == 0, alone.stderr
    for name in ("seed0.csv", "seed0.timing.csv"):
        assert (tmp_path / "alone/01.1" / name).read_bytes() == (
            tmp_path / "rule/01.1" / name
        ).read_bytes()
    record = json.loads((tmp_path / "alone/01.1/record.json").read_text())
    assert record["settings"] == settings["settings"] and record["demo"] == "01.1"
