"""Behavioural fingerprints (pipeline/fingerprint.py): a recording stays valid through a change
of code that changes no result, and goes stale on one that does — tested both ways on a copy of
the repository, with a real refactor and real behaviour changes (an initialisation, a learning
rate schedule, an evaluation)."""

import json
import math
import re

import pytest
import yaml
from conftest import CONFIG, ROOT
from repository import copy_repository

from lecture17.pipeline import fingerprint, record

DEMO = "08.2"  # one grid point of 03.5's Transformer: a fingerprint in ~4 s


def stored(values: dict) -> dict:
    return {"values": {k: {"value": v, "spread": 0.0, "tol": 0.01} for k, v in values.items()}}


def test_compare_passes_within_tolerance_and_names_what_moved():
    fp = stored({"a · loss at step 1": 2.0, "a · row 0 · quantity=accuracy": 0.1})
    assert (
        fingerprint.compare(fp, {"a · loss at step 1": 2.009, "a · row 0 · quantity=accuracy": 0.1})
        == []
    )
    moved = fingerprint.compare(
        fp, {"a · loss at step 1": 2.02, "a · row 0 · quantity=accuracy": 0.1}
    )
    assert len(moved) == 1 and "1 of 2" in moved[0] and "a · loss at step 1" in moved[0]
    assert "2.02 now, 2 recorded" in moved[0]
    kind = fingerprint.compare(fp, {"a · loss at step 1": 2.0})
    assert "changed in kind" in kind[0] and "1 gone" in kind[0]


def test_non_finite_values_compare_by_identity():
    assert fingerprint.gap(math.inf, math.inf) == 0 and fingerprint.gap(math.nan, math.nan) == 0
    assert fingerprint.gap(1.0, math.inf) == math.inf and fingerprint.gap(math.inf, -math.inf) > 0


def test_tolerance_follows_the_measured_spread_with_its_floors():
    assert fingerprint.tolerance("x · loss at step 3", 2.0, 1e-4, 500) == pytest.approx(1e-3)
    assert fingerprint.tolerance("x · loss at step 3", 2.0, 0.0, 500) == pytest.approx(2e-5)
    assert fingerprint.tolerance("x · row 1 · quantity=q", 0.1, 0.0, 500) == pytest.approx(0.004)
    assert fingerprint.tolerance("x · row 1 · quantity=q", 0.1, 0.001, 500) == pytest.approx(0.01)


def test_widen_adds_another_machine_and_keeps_the_reference():
    """Another CPU's three computations widen each value's spread to its largest gap from the
    stored value; the stored values stay the reference; a loss that another CPU moves by more
    than CHAOS relative becomes unjudged from that step on."""
    spec = {"seeds": [0], "settings": {"train": {"n_test": 500}}}
    keys = ["p · train call 0 · loss at step 1", "p · train call 0 · loss at step 2"]
    first = fingerprint.judged(
        "07.9",
        spec,
        dict(zip(keys, [2.0, 1.5], strict=True)),
        dict.fromkeys(keys, 0.0),
        {"this CPU": dict(zip(keys, [2.0, 1.5], strict=True))},
        ["this CPU"],
    )
    calm = {"this CPU": dict(zip(keys, [2.0 + 1e-5, 1.5 + 3e-5], strict=True))}
    wide = fingerprint.widen(first, spec, calm, "Intel")
    assert [wide["values"][k]["value"] for k in keys] == [2.0, 1.5]
    assert wide["values"][keys[1]]["spread"] == pytest.approx(3e-5)
    assert wide["values"][keys[1]]["tol"] == pytest.approx(3e-4)
    assert wide["environments"] == ["this CPU", "Intel: this CPU"]
    assert fingerprint.compare(first, calm["this CPU"]) != []  # beyond the one machine's floor
    assert fingerprint.compare(wide, calm["this CPU"]) == []
    chaotic = fingerprint.widen(
        first, spec, {"x": dict(zip(keys, [2.01, 1.5], strict=True))}, "Intel"
    )
    assert all(math.isinf(chaotic["values"][k]["tol"]) for k in keys)  # step 1 on: unjudged
    with pytest.raises(ValueError, match="already widened"):  # one machine counted once
        fingerprint.widen(wide, spec, calm, "Intel")


def test_every_committed_recording_has_a_fingerprint_that_matches_its_demo():
    """Every recorded demo (07.x, 08.x) carries one, made with this module's STEPS, with a
    tolerance per value no smaller than its floors, and a loss for every grid point."""
    config = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))["demos"]
    for folder in sorted((ROOT / record.MEASURED).glob("0[78].*")):
        fp = fingerprint.read(folder)
        assert fp is not None, folder
        assert fp["demo"] == folder.name and fp["steps"] == fingerprint.STEPS
        spec = config[folder.name]
        assert fp["seed"] == spec["seeds"][0]
        for key, v in fp["values"].items():
            assert v["tol"] >= fingerprint.tolerance(key, v["value"], v["spread"], 500) * 0.999
        points = {k.split(" · ")[0] for k in fp["values"] if "loss at step 1" in k}
        assert len(points) == math.prod(len(v) for v in spec["grid"].values()), folder


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """A copy of the repository whose code the tests edit (report/measured/ included), its
    recording of DEMO vouched for by hashes: where this checkout's code has moved on since the
    recording (and its behaviour still vouches, which the build checks too), the copy's
    record.json takes today's hashes, so each test starts from "the hashes vouch"."""
    repo = copy_repository(tmp_path_factory.mktemp("fingerprint") / "repo")
    folder = repo / record.MEASURED / DEMO
    if record.vouched_by(DEMO, str(repo / record.MEASURED), repo) == "behaviour":
        assert problems(repo) == [], "the recording is stale: rerun it (make robustness)"
        stamped = json.loads((folder / record.RECORD).read_text(encoding="utf-8"))
        stamped["code"] = record.code_hashes(DEMO, repo)
        (folder / record.RECORD).write_text(json.dumps(stamped, indent=2), encoding="utf-8")
    return repo


def problems(work) -> list[str]:
    spec = yaml.safe_load((work / "config/config.yaml").read_text(encoding="utf-8"))["demos"]
    return record.problems(DEMO, spec[DEMO], str(work / record.MEASURED), work)


def edited(work, path: str, old: str, new: str) -> str:
    file = work / path
    original = file.read_text(encoding="utf-8")
    assert original.count(old) == 1, f"{old!r} not once in {path}: the test needs updating"
    file.write_text(original.replace(old, new), encoding="utf-8")
    return original


def test_a_refactor_that_changes_no_result_stales_no_recording(work):
    """A comment, a renamed helper and a moved function: other hashes, the same behaviour."""
    assert (
        problems(work) == []
        and record.vouched_by(DEMO, str(work / record.MEASURED), work) == "hashes"
    )
    training = "src/lecture17/training.py"
    source = (work / training).read_text(encoding="utf-8")
    moved = re.search(r"\ndef warmup_lr\(.*?\n(?=\n\n)", source, re.S).group(0)
    source = source.replace(moved, "")  # warmup_lr moved to the end of the module, renamed
    source = (
        source.replace("warmup_lr(", "linear_warmup(")
        + "\n"
        + moved.replace("warmup_lr(", "linear_warmup(")
    )
    original = (work / training).read_text(encoding="utf-8")
    (work / training).write_text("# a comment\n" + source, encoding="utf-8")
    try:
        assert problems(work) == []
        assert record.vouched_by(DEMO, str(work / record.MEASURED), work) == "behaviour"
    finally:
        (work / training).write_text(original, encoding="utf-8")


@pytest.mark.parametrize(
    "path, old, new",
    [
        # the initialisation: attention projections drawn from a normal, not a uniform, law
        (
            "src/lecture17/tiny_transformer.py",
            "nn.init.xavier_uniform_(self.in_proj.weight)",
            "nn.init.xavier_normal_(self.in_proj.weight)",
        ),
        # the learning-rate schedule: warmup counted from step 0 instead of 1
        ("src/lecture17/training.py", "min(1.0, (step + 1) / warmup)", "min(1.0, step / warmup)"),
        # the evaluation: EOS no longer counted in the per-token accuracy
        (
            "src/lecture17/tasks.py",
            '"token_accuracy": correct.mean().item()',
            '"token_accuracy": correct[:, :-1].mean().item()',
        ),
    ],
    ids=["initialisation", "warmup", "evaluation"],
)
def test_a_change_of_behaviour_stales_the_recording(work, path, old, new):
    original = edited(work, path, old, new)
    try:
        found = problems(work)
    finally:
        (work / path).write_text(original, encoding="utf-8")
    assert len(found) == 1 and "behaviour changed" in found[0], found
    assert "recorded with other code" in found[0] and path in found[0]


def test_a_verdict_is_cached_for_the_code_it_was_made_with(work):
    cache = work / fingerprint.CACHE / f"{DEMO}.json"
    path = "src/lecture17/tiny_transformer.py"
    original = (work / path).read_text(encoding="utf-8")
    (work / path).write_text(original + "\n# a comment\n", encoding="utf-8")
    try:
        assert problems(work) == []
        made = json.loads(cache.read_text())
        made["problems"] = ["a planted verdict"]
        cache.write_text(json.dumps(made))
        assert problems(work)[0].endswith("a planted verdict")  # read back, not re-run
    finally:
        (work / path).write_text(original, encoding="utf-8")


def test_a_vouched_code_state_is_checked_by_its_hashes_and_a_behaviour_change_still_stales(
    work, monkeypatch
):
    """`vouch` runs the fingerprint once and stores the verified code state: later checks of
    that code are hash matches (the fingerprint is not run again), the recorded code stays the
    one the runs were made with, and any other edit is judged by behaviour again."""
    folder = work / record.MEASURED / DEMO
    before = (folder / record.RECORD).read_text(encoding="utf-8")
    spec = yaml.safe_load((work / "config/config.yaml").read_text(encoding="utf-8"))["demos"]
    path = "src/lecture17/training.py"
    original = (work / path).read_text(encoding="utf-8")
    monkeypatch.chdir(work)  # vouch works on the checkout it runs in, as the command does
    try:
        (work / path).write_text("# a refactor\n" + original, encoding="utf-8")
        assert record.vouch(DEMO, spec[DEMO], "a test CPU", record.MEASURED)["machine"]
        stored = json.loads((folder / record.RECORD).read_text(encoding="utf-8"))
        assert stored["code"] == json.loads(before)["code"]  # what the runs were made with
        assert stored["vouched"][-1]["code"] == record.code_hashes(DEMO, work)

        def not_again(*args, **kwargs):
            raise AssertionError("the fingerprint ran again for a vouched code state")

        monkeypatch.setattr(fingerprint, "verify", not_again)
        assert problems(work) == []
        assert record.vouched_by(DEMO, str(work / record.MEASURED), work) == "behaviour"
        assert record.vouch(DEMO, spec[DEMO], "a test CPU", record.MEASURED) is not None
        earlier = len(json.loads(before).get("vouched", []))  # committed ones (other code)
        assert len(json.loads((folder / record.RECORD).read_text())["vouched"]) == earlier + 1
        monkeypatch.undo()
        monkeypatch.chdir(work)
        old, new = "min(1.0, (step + 1) / warmup)", "min(1.0, step / warmup)"
        (work / path).write_text("# a refactor\n" + original.replace(old, new), encoding="utf-8")
        assert "behaviour changed" in problems(work)[0]
        with pytest.raises(SystemExit, match="not vouched for, the recording is stale"):
            record.vouch(DEMO, spec[DEMO], "a test CPU", record.MEASURED)
    finally:
        (work / path).write_text(original, encoding="utf-8")
        (folder / record.RECORD).write_text(before, encoding="utf-8")
