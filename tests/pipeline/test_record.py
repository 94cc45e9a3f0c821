"""Runs recorded on another machine (report/measured/): used only while they are what this
checkout's config and code compute, and `python -m lecture17 check-recorded` says which are
stale and how to rerun them."""

import json
import shutil

import yaml
from conftest import CONFIG, ROOT, python_m
from repository import copy_repository

from lecture17.pipeline import record


def lecture17(work, *args):
    return python_m(work, "lecture17", *args)


def test_a_recording_holds_until_its_settings_code_registry_or_files_change(tmp_path):
    work = copy_repository(tmp_path / "repo")
    results = work / "report/measured"
    done = lecture17(work, "run", "01.1", "--results", str(results))
    assert done.returncode == 0, done.stderr
    spec = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))["demos"]["01.1"]
    saved = json.loads((results / "01.1/record.json").read_text())
    assert saved["demo"] == "01.1" and saved["device"] == "cpu" and saved["machine"]
    assert set(saved["code"]) == set(record.job_code("self_attention", work))

    def problems(spec=spec):
        return record.problems("01.1", spec, str(results), work)

    assert problems() == []
    assert problems({**spec, "settings": {"strength": 5}}) == [
        "recorded with other settings than the config's: ['strength']"
    ]
    module = work / "src/lecture17/experiments/self_attention.py"
    original = module.read_text()
    module.write_text(original + "\n# an edit\n")
    assert problems() == [
        "recorded with other code: ['src/lecture17/experiments/self_attention.py']"
    ]
    module.write_text(original)
    saved_text = (results / "01.1/record.json").read_text()
    (results / "01.1/record.json").write_text(saved_text.replace("timings=", "timings=ms_x"))
    assert problems()[0].startswith("recorded for registry entry")
    (results / "01.1/record.json").write_text(saved_text)
    (results / "01.1/seed0.timing.csv").unlink()
    assert problems() == ["1 run files missing, e.g. " + str(results / "01.1/seed0.timing.csv")]
    shutil.rmtree(results / "01.1")
    assert problems() == [f"{results}/01.1/record.json is missing"]


def test_check_recorded_fails_on_a_stale_recording_and_says_how_to_rerun(tmp_path):
    work = copy_repository(tmp_path / "repo")
    results = work / "report/measured"
    assert lecture17(work, "run", "01.1", "--results", str(results)).returncode == 0
    fine = lecture17(work, "check-recorded", "--results", str(results))
    assert fine.returncode == 0 and "✓" in fine.stdout, fine.stdout + fine.stderr
    config = work / "config/config.yaml"
    config.write_text(config.read_text().replace("strength: 4 #", "strength: 5 #", 1))
    stale = lecture17(work, "check-recorded", "--results", str(results))
    assert stale.returncode == 1
    assert "['strength']" in stale.stdout and "python -m lecture17 run 01.1" in stale.stdout


def test_the_committed_recordings_match_this_checkout():
    """CI: every run under report/measured/ is what this config and code compute."""
    done = lecture17(ROOT, "check-recorded")
    assert done.returncode == 0, done.stdout + done.stderr
