"""Runs recorded on another machine (report/measured/): used only while they are what this
checkout's config and code compute, and `python -m lecture17 recorded check` says which are
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
    own = "src/lecture17/experiments/self_attention.py"
    assert set(saved["code"]) == {*record.job_code("01.1", work), *record.part_hashes("01.1", work)}
    assert f"{own}::jane_example" in saved["code"]
    assert own not in saved["code"]  # the lines its function runs stand for the module

    def problems(spec=spec):
        return record.problems("01.1", spec, str(results), work)

    assert problems() == []
    assert problems({**spec, "settings": {"strength": 5}}) == [
        "recorded with other settings than the config's: ['strength']"
    ]
    module = work / "src/lecture17/experiments/self_attention.py"
    original = module.read_text()
    module.write_text(original + "\n\ndef another_demo():\n    return 0\n")
    assert problems() == []  # another function of the module: not what 01.1 runs
    module.write_text(original.replace("K = V = X @ np.eye(4)", "K = V = X @ np.eye(4) * 2"))
    assert problems() == [f"recorded with other code: ['{own}::jane_example']"]
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
    fine = lecture17(work, "recorded", "check", "--results", str(results))
    assert fine.returncode == 0 and "✓" in fine.stdout, fine.stdout + fine.stderr
    config = work / "config/config.yaml"
    config.write_text(config.read_text().replace("strength: 4 #", "strength: 5 #", 1))
    stale = lecture17(work, "recorded", "check", "--results", str(results))
    assert stale.returncode == 1
    assert "['strength']" in stale.stdout and "python -m lecture17 run 01.1" in stale.stdout


def test_the_committed_recordings_match_this_checkout():
    """CI: every run under report/measured/ is what this config and code compute."""
    done = lecture17(ROOT, "recorded", "check")
    assert done.returncode == 0, done.stdout + done.stderr


def _t_quantile(p_two_sided: float, df: int) -> float:
    """Student's t with df degrees of freedom: the t with P(|T| > t) = p (bisection on the
    diff's own tail function, reporting.diff.welch_p's regularized beta)."""
    import mpmath

    def tail(t):
        return float(mpmath.betainc(df / 2, 0.5, 0, df / (df + t * t), regularized=True))

    lo, hi = 0.0, 1e3
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if tail(mid) > p_two_sided else (lo, mid)
    return hi


def test_a_recorded_run_reruns_here_within_the_recorded_seeds_spread(tmp_path):
    """CI reruns one recorded job (07.3: 03.5's sinusoidal row, seed 100, ~20 s) and checks
    its accuracies against the recorded robustness seeds: on the recording's CPU kind the
    same bytes; on another, a new sample of the same distribution, inside the 99.9%
    prediction interval of the recorded seeds (mean ± t·std·√(1 + 1/n))."""
    import pandas as pd

    from lecture17.pipeline.aggregate import aggregate, read_runs, select
    from lecture17.pipeline.job import run_job

    config = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))["demos"]
    spec, folder = config["07.3"], ROOT / record.MEASURED / "07.3/variant=sinusoidal"
    seed = spec["seeds"][0]
    settings = {**spec["settings"], "device": "cpu"}
    rerun = run_job("07.3", settings, seed, {"variant": "sinusoidal"}, tmp_path / "seed.csv")
    recorded = aggregate(read_runs(sorted(folder.glob("seed*[0-9].csv"))))
    mine = pd.read_csv(folder / f"seed{seed}.csv")
    for quantity in ("token_accuracy", "sequence_accuracy"):
        ours = float(select(rerun, quantity)["value"].iloc[0])
        row = select(recorded, quantity).iloc[0]
        n = row["n_seeds"]
        half = _t_quantile(0.001, n - 1) * row["std"] * (1 + 1 / n) ** 0.5
        assert abs(ours - row["mean"]) <= half + 1e-12, (quantity, ours, row["mean"], half)
        same = ours == float(select(mine, quantity)["value"].iloc[0])
        print(f"{quantity}: rerun {ours}, recorded {row['seeds']} ({'same' if same else 'new'})")
