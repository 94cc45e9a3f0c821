"""The mutation-testing machinery (mutants/): the catalogue applies to today's code, patches
survive a moved function and fail loudly on a missing one, and the runner's pieces (which jobs
a mutant reaches, what counts as changed, the decision) on synthetic inputs. Fast: no build."""

import csv
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import ROOT

sys.path.insert(0, str(ROOT))  # the mutants/ package lives beside src/, not in it

from mutants import coverage, protocol, run, table  # noqa: E402
from mutants.catalogue import (  # noqa: E402
    CATALOGUE,
    DECODING,
    GRU,
    MUTANTS,
    NUMPY,
    TASKS,
    TORCH,
    TRAINING,
    Mutant,
    select,
)
from mutants.patch import MutantError, apply, function_span, mutate_source  # noqa: E402

# -----------------------------------------------------------------------------
# the catalogue


def test_the_catalogue_has_enough_mutants_in_the_trained_code():
    trained = [m for m in CATALOGUE if m.file in (TORCH, GRU, DECODING, TRAINING, TASKS)]
    assert len(CATALOGUE) >= 25 and len(trained) >= 12
    assert {m.code for m in trained} == {"trained"}
    assert {m.code for m in CATALOGUE if m.file == NUMPY} == {"analytic"}
    assert len(MUTANTS) == len(CATALOGUE)
    assert all(m.mistake and "\n" not in m.mistake for m in CATALOGUE)


@pytest.mark.parametrize("mutant", CATALOGUE, ids=lambda m: m.name)
def test_every_mutant_applies_once_inside_its_function(mutant):
    source = (ROOT / mutant.file).read_text(encoding="utf-8")
    start, end = function_span(source, mutant.function, mutant.name)
    assert source[start:end].count(mutant.old) == 1
    mutated = mutate_source(source, mutant.function, mutant.old, mutant.new, mutant.name)
    assert mutated != source
    assert mutated[:start] == source[:start]  # nothing outside the function changed
    assert mutated[len(mutated) - (len(source) - end) :] == source[end:]


def test_select_names_mutants_in_catalogue_order_and_refuses_unknown_ones():
    first, last = CATALOGUE[0].name, CATALOGUE[-1].name
    assert [m.name for m in select([last, first])] == [first, last]
    assert select([]) == CATALOGUE
    with pytest.raises(ValueError, match="no_such_mutant"):
        select(["no_such_mutant"])


# -----------------------------------------------------------------------------
# the patch: keyed on function names

SOURCE = '''"""A module."""


def helper(x):
    return x + 1


class Model:
    def forward(self, x):
        y = x * 2  # the line a mutant edits
        return helper(y)

    @staticmethod
    def other(x):
        return x * 2
'''

MUTANT = Mutant("double_to_triple", "m.py", "Model.forward", "x * 2", "x * 3", "a slip", "trained")


def test_a_patch_edits_only_its_function():
    mutated = mutate_source(SOURCE, MUTANT.function, MUTANT.old, MUTANT.new, MUTANT.name)
    assert "y = x * 3" in mutated and "return x * 2" in mutated  # Model.other untouched


def test_a_moved_function_still_patches(tmp_path):
    moved = SOURCE.replace('"""A module."""\n', '"""A module."""\n\nCONSTANT = 1\n' * 20)
    moved = moved.replace("class Model:", "def before():\n    return 0\n\n\nclass Model:")
    (tmp_path / "m.py").write_text(moved)
    apply(MUTANT, tmp_path)
    patched = (tmp_path / "m.py").read_text()
    assert "y = x * 3" in patched and "return x * 2" in patched


def test_a_missing_function_raises_naming_the_mutant(tmp_path):
    (tmp_path / "m.py").write_text(SOURCE.replace("def forward", "def forward_renamed"))
    with pytest.raises(MutantError, match="double_to_triple.*Model.forward.*not found"):
        apply(MUTANT, tmp_path)
    with pytest.raises(MutantError, match="double_to_triple.*file"):
        apply(MUTANT, tmp_path / "elsewhere")


def test_a_snippet_that_is_gone_or_ambiguous_raises_naming_the_mutant():
    with pytest.raises(MutantError, match="double_to_triple.*0 times"):
        mutate_source(SOURCE, "helper", "x * 2", "x * 3", "double_to_triple")
    with pytest.raises(MutantError, match="twice.*2 times"):
        mutate_source(SOURCE, "Model.forward", "x", "z", "twice")


def test_a_patch_that_does_not_parse_raises():
    with pytest.raises(MutantError, match="broken.*does not parse"):
        mutate_source(SOURCE, "helper", "return x + 1", "return x +", "broken")


# -----------------------------------------------------------------------------
# the reduced protocol


def test_the_protocol_keeps_analytic_demos_and_reduces_trained_ones():
    from lecture17.experiments import DEMOS

    full = yaml.safe_load((ROOT / "config" / "config.yaml").read_text(encoding="utf-8"))
    reduced = protocol.load()["demos"]
    for demo, spec in full["demos"].items():
        if DEMOS[demo].kind == "analytic":
            assert reduced[demo] == spec, demo
    assert "05.4" not in reduced  # timings only
    assert reduced["05.1"]["settings"]["train"]["steps"] < spec_steps(full, "05.1")
    assert reduced["05.1"]["seeds"] == full["demos"]["05.1"]["seeds"]
    assert reduced["02.3"]["settings"]["train"]["steps"] == 200  # anchors unshared: 07.1 too
    assert full["demos"]["07.1"]["settings"]["train"]["steps"] == spec_steps(full, "02.3")


def test_every_trained_demo_is_reduced_and_a_reading_demo_trains_like_the_one_it_reads():
    """A trained or recorded demo added to the config must join the reduced protocol (else a
    campaign trains it in full, or the build refuses it: 06.6 reads 05.1's kept models)."""
    from lecture17.experiments import DEMOS

    full = yaml.safe_load((ROOT / "config" / "config.yaml").read_text(encoding="utf-8"))
    reduced = protocol.load()["demos"]
    for demo, spec in reduced.items():
        if "train" in spec.get("settings", {}):
            assert spec["settings"]["train"]["steps"] < spec_steps(full, demo), demo
        if source := DEMOS[demo].reads_models:
            assert spec["settings"]["train"] == reduced[source]["settings"]["train"], demo
        if DEMOS[demo].kind == "recorded" and demo != "08.1":
            assert len(spec["seeds"]) <= 2, demo


def spec_steps(config, demo):
    return config["demos"][demo]["settings"]["train"]["steps"]


def test_the_protocol_refuses_a_demo_the_config_lacks():
    with pytest.raises(ValueError, match="99.9"):
        protocol.reduced_config({"demos": {}}, {"demos": {"99.9": {}}})


# -----------------------------------------------------------------------------
# the runner's pieces


def test_a_mutant_reaches_the_jobs_that_called_its_function_or_one_inside_it():
    m = MUTANTS["decoder_not_causal"]  # DecoderLayer.forward
    assert run.reaches(m, [f"{TORCH}::DecoderLayer.forward"])
    assert run.reaches(m, [f"{TORCH}::DecoderLayer.forward.<locals>.self_attend"])
    assert not run.reaches(m, [f"{TORCH}::DecoderLayer.forward_step", f"{TORCH}::Decoder.forward"])
    assert not run.reaches(m, [f"{TRAINING}::DecoderLayer.forward"])  # another file


def test_unreached_jobs_keep_the_controls_csvs(tmp_path):
    reached, kept = "results/03.5/variant=learned/seed0.csv", "results/03.5/variant=none/seed0.csv"
    m = MUTANTS["learned_pe_frozen"]  # Embedding.__init__
    calls = {reached: [f"{TORCH}::Embedding.__init__"], kept: [f"{TORCH}::Embedding.forward"]}
    for run_csv in calls:
        for path in run.job_files(run_csv):
            (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / path).write_text("x")
            os.utime(tmp_path / path, (1000, 1000))
        trace = tmp_path / run.TRACE / run_csv.replace(".csv", ".json")
        trace.parent.mkdir(parents=True, exist_ok=True)
        trace.write_text(json.dumps(calls[run_csv]))
    (tmp_path / m.file).parent.mkdir(parents=True)
    (tmp_path / m.file).write_text("x")
    assert run.keep_unreached(tmp_path, m, list(calls)) == [reached]
    patched = (tmp_path / m.file).stat().st_mtime
    assert all((tmp_path / p).stat().st_mtime > patched for p in run.job_files(kept))
    assert all((tmp_path / p).stat().st_mtime < patched for p in run.job_files(reached))
    assert run.job_files(kept)[2] == "benchmarks/pe_ablation/03.5/variant=none/seed0.tsv"


def test_a_traced_build_may_run_its_jobs_warm():
    """The tracer acts in each warm-started job's child (start_job, warm.py's job_hook), so the
    control's jobs need not run cold (cold, a control build took ~6 more minutes)."""
    assert "LECTURE17_WARM" not in run.Build(ROOT, 1).environment() or (
        os.environ.get("LECTURE17_WARM") == "0"
    )


def test_a_warm_started_job_is_traced_as_a_new_process_would_be(tmp_path, monkeypatch):
    from lecture17.pipeline import warm

    package = tmp_path / "src" / "lecture17"
    (package / "pipeline").mkdir(parents=True)
    for name in ("__init__.py", "pipeline/__init__.py"):
        (package / name).write_text("")
    (package / "pipeline" / "warm.py").write_text(
        (ROOT / "src/lecture17/pipeline/warm.py").read_text()
    )
    (package / "tiny.py").write_text(
        "def outer():\n    def inner():\n        return 1\n    return inner()\n"
    )
    (package / "job.py").write_text("from lecture17 import tiny\n\ntiny.outer()\n")
    env = {
        "PYTHONPATH": f"{tmp_path / 'src'}{os.pathsep}{ROOT / 'mutants' / 'trace'}",
        "LECTURE17_TRACE_SRC": str(package),
        "OMP_NUM_THREADS": "1",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv(warm.SOCKET_VARIABLE, raising=False)

    def job(trace: str) -> tuple[set, str]:
        out = "results/01.1/seed0.csv"
        folder = tmp_path / trace
        done = subprocess.run(
            [sys.executable, "-m", "lecture17.pipeline.warm", "lecture17.job", "--out", out],
            cwd=tmp_path,
            env={**os.environ, "LECTURE17_TRACE_DIR": str(folder)},
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
        calls = json.loads((folder / "results/01.1/seed0.json").read_text())
        return {c for c in calls if "/warm.py::" not in c}, done.stderr  # the client's own

    cold, log = job("cold")
    assert "warm start" not in log
    server = warm.start_server({}, tmp_path / "server.log")
    try:
        warm_calls, log = job("warm")
    finally:
        warm.stop_server(server)
    assert "warm start" in log  # the job ran in the server's child
    job_calls = {
        "src/lecture17/job.py::<module>",
        "src/lecture17/tiny.py::<module>",
        "src/lecture17/tiny.py::outer",
        "src/lecture17/tiny.py::outer.<locals>.inner",
    }
    assert job_calls <= cold
    assert warm_calls == cold  # the job's calls came from the child: its client ran no job


def test_a_mutants_copy_reads_the_controls_traces_and_runs_untraced(tmp_path, monkeypatch):
    """Which jobs a mutant reaches comes from the control's traces, copied with it; its own
    build needs none, so its jobs may start warm (a traced build would run them cold)."""
    control, work = tmp_path / "control", tmp_path / "work"
    (control / "results").mkdir(parents=True)
    monkeypatch.setattr(run, "apply", lambda mutant, folder: None)
    monkeypatch.setattr(run, "demos_of", lambda build: {})
    seen = []
    monkeypatch.setattr(run, "keep_unreached", lambda folder, m, runs: seen.append(folder) or [])
    build, lecture, recorded = run.prepare(MUTANTS["warmup_never_caps"], control, work, 1)
    assert seen == [work / "mutant-warmup_never_caps"] and build.folder == seen[0]
    assert not build.trace and (lecture, recorded) == ([], [])


@pytest.mark.parametrize(
    "when, stages", [("uncaught", ["protocol"]), ("always", ["protocol", "recorded"])]
)
def test_the_recorded_demos_of_a_caught_mutant_are_rebuilt_only_when_asked(
    tmp_path, monkeypatch, when, stages
):
    """--recorded always: a mutant the protocol's demos caught still has its recorded demos
    rebuilt, and its row's flips are the whole build's (the coverage of the recorded claims)."""
    seen = []
    caught = run.Judgement(1, ["C001"], [], ["x.csv"])
    both = run.Judgement(1, ["C001", "C107"], [], ["x.csv", "y.csv"])
    build = run.Build(tmp_path, 1, trace=False)
    monkeypatch.setattr(run, "prepare", lambda *a: (build, ["a"], ["results/07.8/x.csv"]))
    monkeypatch.setattr(run, "protocol_stage", lambda *a: seen.append("protocol") or caught)
    monkeypatch.setattr(run, "recorded_stage", lambda *a: seen.append("recorded") or both)
    monkeypatch.setattr(run, "run_tests", lambda folder, mutant, cores: (True, "FAILED t::x"))
    row = run.run_mutant(MUTANTS["warmup_never_caps"], tmp_path, tmp_path, 1, "all", {}, when)
    assert seen == stages and row["decision"] == "caught-by-ledger"
    assert row["verdict_flips"] == ("C001 C107" if when == "always" else "C001")


def test_a_job_without_a_trace_fails_loudly(tmp_path):
    (tmp_path / "results").mkdir()
    with pytest.raises(RuntimeError, match="no trace of 1 jobs"):
        run.keep_unreached(tmp_path, CATALOGUE[0], ["results/01.1/seed0.csv"])


def test_changed_csvs_compare_bytes_and_leave_timings_out(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    files = {
        "results/01.1/seed0.csv": ("1\n", "1\n"),
        "results/01.1/seed0.timing.csv": ("5\n", "6\n"),
        "results/tables/02.1.csv": ("1\n", "2\n"),
        "report/measured/07.1/x/seed100.csv": ("1\n", None),
    }
    for name, (x, y) in files.items():
        for folder, text in ((a, x), (b, y)):
            if text is not None:
                (folder / name).parent.mkdir(parents=True, exist_ok=True)
                (folder / name).write_text(text)
    assert run.changed_csvs(a, b) == [
        "report/measured/07.1/x/seed100.csv",
        "results/tables/02.1.csv",
    ]


@pytest.mark.parametrize(
    ("evidence", "decision"),
    [
        (
            run.Evidence(build_ok=False, ledger=False, tests=False, identical=False),
            "caught-by-build",
        ),
        (run.Evidence(build_ok=True, ledger=True, tests=True, identical=False), "caught-by-ledger"),
        (
            run.Evidence(build_ok=True, ledger=True, tests=False, identical=False),
            "caught-by-ledger",
        ),
        (run.Evidence(build_ok=True, ledger=False, tests=True, identical=False), "caught-by-tests"),
        (run.Evidence(build_ok=True, ledger=False, tests=True, identical=True), "caught-by-tests"),
        (run.Evidence(build_ok=True, ledger=False, tests=False, identical=True), "equivalent"),
        (run.Evidence(build_ok=True, ledger=False, tests=None, identical=True), "equivalent"),
        (run.Evidence(build_ok=True, ledger=False, tests=False, identical=False), "survivor"),
    ],
)
def test_the_decision_on_synthetic_evidence(evidence, decision):
    assert run.decide(evidence) == decision
    assert decision in run.DECISIONS


def test_a_ledger_catch_with_identical_csvs_is_refused():
    with pytest.raises(ValueError, match="cannot catch"):
        run.decide(run.Evidence(build_ok=True, ledger=True, tests=False, identical=True))


def test_a_judgement_catches_on_a_flip_or_a_cell_the_second_control_does_not_show():
    cell = "05.1 · gru · 8 · token_accuracy"
    assert run.Judgement(1, ["C087"], [], ["x.csv"]).caught
    assert run.Judgement(1, [], [cell], ["x.csv"]).caught
    assert not run.Judgement(0, [], [], ["x.csv"]).caught
    noise = {"flips": ["L17-Ex9b"], "cells": [cell]}
    resampled = run.Judgement(1, ["L17-Ex9b"], [cell], ["x.csv"], noise)
    assert resampled.differs and not resampled.caught and resampled.credible == []
    assert run.Judgement(1, ["L17-Ex9b", "C087"], [cell], ["x.csv"], noise).credible == ["C087"]


def test_results_merge_by_mutant_in_catalogue_order(tmp_path):
    path = tmp_path / "results.csv"
    second, first = CATALOGUE[1].name, CATALOGUE[0].name
    run.write_results([{"mutant": second, "decision": "survivor"}], path)
    run.write_results([{"mutant": "control-2", "decision": "no-false-catch"}], path)
    run.write_results([{"mutant": first, "decision": "equivalent"}], path)
    run.write_results([{"mutant": second, "decision": "caught-by-tests"}], path)
    rows = run.read_results(path)
    assert [(r["mutant"], r["decision"]) for r in rows] == [
        (first, "equivalent"),
        (second, "caught-by-tests"),
        ("control-2", "no-false-catch"),
    ]


def test_the_trace_hook_notes_the_lectures_functions_a_job_called(tmp_path):
    package = tmp_path / "src" / "lecture17"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "tiny.py").write_text(
        "def outer():\n    def inner():\n        return 1\n    return inner()\n"
    )
    env = dict(
        os.environ,
        PYTHONPATH=f"{tmp_path / 'src'}{os.pathsep}{ROOT / 'mutants' / 'trace'}",
        LECTURE17_TRACE_SRC=str(package),
        LECTURE17_TRACE_DIR=str(tmp_path / "trace"),
    )
    code = "import lecture17.tiny as t; t.outer()"
    done = subprocess.run(
        [sys.executable, "-c", code, "--out", "results/01.1/seed0.csv"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    calls = json.loads((tmp_path / "trace" / "results/01.1/seed0.json").read_text())
    assert "src/lecture17/tiny.py::outer" in calls
    assert "src/lecture17/tiny.py::outer.<locals>.inner" in calls


def test_the_table_has_a_row_per_mutant_and_splices_between_its_markers():
    text = table.markdown({})
    assert text.count("\n| `") == len(CATALOGUE)
    spliced = table.splice(f"a\n{table.BEGIN}\nold\n{table.END}\nb", "new\n", raw=True)
    assert spliced == f"a\n{table.BEGIN}\n{{% raw %}}\nnew\n{{% endraw %}}\n{table.END}\nb"
    with pytest.raises(ValueError, match="markers"):
        table.splice("no markers", "new\n", raw=False)


def test_the_estimate_adds_the_cpu_time_of_the_jobs_a_mutant_reaches(tmp_path):
    spec = {"seeds": [0, 1], "settings": {}, "grid": {"variant": ["learned", "none"]}}
    (tmp_path / "config").mkdir()
    (tmp_path / protocol.CONFIG).write_text(yaml.safe_dump({"demos": {"03.5": spec}}))
    for i, variant in enumerate(["learned", "none"]):
        for seed in (0, 1):
            run_csv = f"results/03.5/variant={variant}/seed{seed}.csv"
            calls = [f"{TORCH}::Embedding.__init__"] if variant == "learned" else []
            trace = tmp_path / run.TRACE / run_csv.replace(".csv", ".json")
            trace.parent.mkdir(parents=True, exist_ok=True)
            trace.write_text(json.dumps(calls))
            bench = tmp_path / run.job_files(run_csv)[2]
            bench.parent.mkdir(parents=True, exist_ok=True)
            bench.write_text(f"s\tcpu_time\n9.0\t{2.0 + i + seed}\n")
    (row,) = run.estimate(tmp_path, [MUTANTS["learned_pe_frozen"]])
    assert row == {
        "mutant": "learned_pe_frozen",
        "protocol_jobs": 2,
        "protocol_cpu_s": 5,  # 2.0 + 3.0: the learned variant's two seeds
        "recorded_jobs": 0,
        "recorded_cpu_s": 0,
    }
    # a job that ran warm: the benchmark saw only the client; its log has the job's own CPU
    log = tmp_path / "logs/03.5/variant=learned/seed1.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("演示 03.5\nwarm start: CPU 7.50 s, peak memory 300 MB\n")
    (row,) = run.estimate(tmp_path, [MUTANTS["learned_pe_frozen"]])
    assert row["protocol_cpu_s"] == 10  # 2.0 + 7.5, rounded


def test_a_given_control_must_be_a_finished_build(tmp_path):
    """--control reuses a control as it is (its cache key is not checked), but only a finished
    one: a folder without the build's done-file is refused before any work."""
    with pytest.raises(SystemExit):
        run.main(["--control", str(tmp_path), "--estimate"])


def test_mutants_run_several_at_a_time_longest_first_each_row_kept_as_it_ends(
    tmp_path, monkeypatch
):
    """--jobs 2: two mutants at a time, each with cores/jobs cores, the most job CPU first
    (longest_first); every mutant gets its row, written as it ends, in catalogue order."""
    control = tmp_path / "control"
    control.mkdir()
    (control / run.DONE).write_text("{}")
    names = ["softmax_no_max_shift", "warmup_never_caps", "sdpa_mask_inverted"]
    cpu = {"softmax_no_max_shift": 5, "warmup_never_caps": 900, "sdpa_mask_inverted": 50}
    monkeypatch.setattr(
        run,
        "estimate",
        lambda c, ms: [
            {"mutant": m.name, "protocol_cpu_s": cpu[m.name], "recorded_cpu_s": 0} for m in ms
        ],
    )
    assert [m.name for m in run.longest_first(control, select(names))] == [
        "warmup_never_caps",
        "sdpa_mask_inverted",
        "softmax_no_max_shift",
    ]
    seen = []

    def fake(mutant, control_dir, work, cores, *rest):
        seen.append((mutant.name, cores))
        return {"mutant": mutant.name, "decision": "caught-by-tests", "build_s": 1, "tests_s": 1}

    monkeypatch.setattr(run, "run_mutant", fake)
    # the student-facing ones take the checker's path, with the same share of the cores
    monkeypatch.setattr(run, "through_check", lambda m, work, cores, tests: fake(m, 0, 0, cores))
    monkeypatch.setattr(run, "code_fingerprint", lambda root: "f" * 64)
    results = tmp_path / "results.csv"
    argv = ["--control", str(control), "--work", str(tmp_path / "w"), "--results", str(results)]
    assert run.main([*argv, "--cores", "2", "--jobs", "2", *names]) == 0
    assert sorted(seen) == sorted((n, 1) for n in names)
    assert [r["mutant"] for r in run.read_results(results)] == [n for n in MUTANTS if n in names]
    with pytest.raises(SystemExit):
        run.main([*argv, "--jobs", "0", *names])


def test_a_finished_campaign_leaves_its_wall_clock_and_machine_beside_the_results(
    tmp_path, monkeypatch
):
    """Each finished run appends one line to campaigns.csv beside its results: when, on which
    CPU, how many mutants, the controls it built (their seconds) or found ("cached"), and the
    wall clock of the mutants and of the whole run; a second run adds a line."""
    control = tmp_path / "control"
    control.mkdir()
    (control / run.DONE).write_text('{"seconds": 7.5}')
    old = time.time() - 60
    os.utime(control / run.DONE, (old, old))

    def fake(mutant, *rest):
        time.sleep(0.2)
        return {"mutant": mutant.name, "decision": "caught-by-tests", "build_s": 1, "tests_s": 1}

    monkeypatch.setattr(run, "run_mutant", fake)
    monkeypatch.setattr(run, "code_fingerprint", lambda root: "f" * 64)
    results = tmp_path / "results.csv"
    argv = ["--control", str(control), "--work", str(tmp_path / "w"), "--results", str(results)]
    assert run.main([*argv, "warmup_never_caps", "sdpa_mask_inverted"]) == 0
    assert run.main([*argv, "warmup_never_caps"]) == 0
    with (tmp_path / "campaigns.csv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [r["mutants"] for r in rows] == ["2", "1"]
    first = rows[0]
    assert first["control_s"] == "cached" and first["second_control_s"] == ""
    assert first["cpu"] == run.cpu_model() != ""
    assert 0.4 <= float(first["mutants_s"]) <= float(first["total_s"])
    assert first["fingerprint"] == "f" * 64
    assert first["command"].endswith("warmup_never_caps sdpa_mask_inverted")
    # a control finished during the run reports its own build time
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    since = time.time() - 1
    (fresh / run.DONE).write_text('{"seconds": 754.5}')
    assert run.built_seconds(fresh, since) == "754.5"
    assert run.built_seconds(fresh, time.time() + 60) == "cached"
    assert run.built_seconds(tmp_path / "none", since) == ""


def test_the_second_control_sits_beside_its_control_and_must_share_its_code(tmp_path):
    """The noise of a control given with --control is its own second control's (its key, not
    the checkout's); --false-catch refuses a control built from other code than the checkout
    (the second control is a fresh copy of the checkout)."""
    control = tmp_path / "control-abc"
    assert run.second_of(control) == tmp_path / "control-2-abc"
    (tmp_path / "control-2-abc").mkdir()
    (tmp_path / "control-2-abc" / run.NOISE).write_text('{"flips": ["C001"], "cells": []}')
    assert run.read_noise(control) == {"flips": ["C001"], "cells": []}
    control.mkdir()
    (control / run.DONE).write_text("{}")
    argv = ["--control", str(control), "--results", str(tmp_path / "r.csv"), "--false-catch"]
    with pytest.raises(SystemExit):
        run.main([*argv, "warmup_never_caps"])


# -----------------------------------------------------------------------------
# the counted claims a mutant flipped (mutants/coverage.py)


def _row(mutant, flips):
    return {"mutant": mutant, "verdict_flips": flips}


def test_coverage_sorts_each_counted_claim_into_flipped_unreachable_or_gap():
    results = [_row("m1", "C1 C2"), _row("m2", "C2"), _row("control-2", "C3"), _row("m3", "C3")]
    cov = coverage.coverage(["C1", "C2", "C3", "C4", "C5"], results, {"C4": "PyTorch's number"})
    assert cov == {
        "C1": ("flipped", ["m1"]),
        "C2": ("flipped", ["m1", "m2"]),
        "C3": ("gap", ""),  # the second control flips it too: resampling, not a catch
        "C4": ("unreachable", "PyTorch's number"),
        "C5": ("gap", ""),
    }
    text = "\n".join(coverage.summary(cov))
    assert "flipped 2 条" in text and "unreachable 1 条" in text and "C3、C5" in text


def test_a_gap_the_control_cannot_decide_is_blind_and_said_apart(tmp_path):
    results = [_row("m1", "C1")]
    control = {"C1": "unresolved", "C2": "unresolved", "C3": "holds"}
    cov = coverage.coverage(["C1", "C2", "C3"], results, {}, control)
    # flipped wins over the control's status (a flip from "not resolvable" is a flip)
    assert cov == {"C1": ("flipped", ["m1"]), "C2": ("blind", ""), "C3": ("gap", "")}
    text = "\n".join(coverage.summary(cov))
    assert "其余 2 条" in text and "缺口 gaps（1 条）：C3。" in text and "另外 1 条" in text
    path = tmp_path / "control-verdicts.csv"
    coverage.write_control_verdicts(control, "abc", path)
    assert coverage.load_control_verdicts(path) == control
    assert coverage.load_control_verdicts(tmp_path / "none.csv") == {}


def test_a_gap_the_control_decides_otherwise_than_the_full_build_is_short(tmp_path):
    """A claim the reduced protocol already judges otherwise than the full build (a GRU that has
    not learned in the protocol's steps) is "short", said with the full build's status; a gap
    judged alike in both stays a gap, and so does one whose full-build status is unknown."""
    control = {"C1": "differs", "C2": "differs", "C3": "differs", "C4": "unresolved"}
    full = {"C1": "holds", "C2": "differs", "C4": "holds"}
    cov = coverage.coverage(["C1", "C2", "C3", "C4"], [], {}, control, full)
    assert cov == {
        "C1": ("short", "differs -> holds"),
        "C2": ("gap", ""),
        "C3": ("gap", ""),
        "C4": ("blind", ""),
    }
    text = "\n".join(coverage.summary(cov))
    assert "其余 4 条" in text and "还有 1 条" in text and "C1（不同，完整构建成立）" in text
    assert f"只训练 {coverage.training_steps()} 步" in text and "只训练 150 步" in "\n".join(
        coverage.summary(cov, steps=150)
    )
    assert "缺口 gaps（2 条）：C2、C3。" in text
    path = tmp_path / "control-verdicts.csv"
    coverage.write_control_verdicts(control, "abc", path, full=full)
    assert coverage.load_control_verdicts(path) == control
    assert coverage.load_control_verdicts(path, column="full") == {**full, "C3": ""}


def test_a_reason_for_a_flipped_or_uncounted_claim_is_refused():
    with pytest.raises(ValueError, match="C1 by m1"):
        coverage.coverage(["C1"], [_row("m1", "C1")], {"C1": "no bug reaches it"})
    with pytest.raises(ValueError, match="not counted"):
        coverage.coverage(["C1"], [], {"C9": "no bug reaches it"})


def test_a_reason_must_be_a_sentence(tmp_path):
    path = tmp_path / "unreachable.yaml"
    path.write_text("C1: ''\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no reason"):
        coverage.load_reasons(path)


def test_the_committed_reasons_hold_against_the_committed_results():
    """Every claim of mutants/unreachable.yaml is counted today and no mutant flipped it; the
    table's coverage lines are today's (mutants/README.md)."""
    claims = coverage.counted_claims()
    cov = coverage.coverage(
        claims,
        run.read_results(),
        coverage.load_reasons(),
        coverage.load_control_verdicts(),
        coverage.load_control_verdicts(column="full"),
    )
    assert set(cov) == set(claims)
    readme = (ROOT / "mutants" / "README.md").read_text(encoding="utf-8")
    for line in coverage.summary(cov):
        assert line in readme, "rerun `python -m mutants.table`"


def test_tests_today_replaces_only_the_tests_columns_and_decides_a_tests_only_mutant(
    tmp_path, monkeypatch
):
    results = tmp_path / "results.csv"
    base = {c: "" for c in run.COLUMNS}
    rows = [
        base | {"mutant": "warmup_never_caps", "decision": "caught-by-ledger", "fingerprint": "a"},
        base | {"mutant": "learned_pe_frozen", "decision": "survivor", "tests_failed": "False"},
    ]
    run.write_results(rows, results)
    monkeypatch.setattr(run, "copy_repository", lambda dest, root=run.ROOT: dest)
    monkeypatch.setattr(run, "apply", lambda mutant, folder: folder)
    monkeypatch.setattr(run, "run_tests", lambda folder, mutant, cores: (True, "FAILED t::x"))
    monkeypatch.setattr(run, "code_fingerprint", lambda root=run.ROOT: "today")
    chosen = select(["warmup_never_caps", "learned_pe_frozen"])
    new = {r["mutant"]: r for r in run.tests_today(chosen, tmp_path, 1, results)}
    assert new["warmup_never_caps"]["decision"] == "caught-by-ledger"  # the ledger's, kept
    assert new["warmup_never_caps"]["fingerprint"] == "a"
    assert new["learned_pe_frozen"]["decision"] == "caught-by-tests"
    assert all(r["tests_fingerprint"] == "today" and r["tests_failed"] for r in new.values())
    with pytest.raises(ValueError, match="no row"):
        run.tests_today(select(["tiled_no_rescale"]), tmp_path, 1, results)


def test_a_row_on_older_code_names_the_src_files_changed_since(tmp_path):
    def git(*args):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
            cwd=tmp_path,
            check=True,
            capture_output=True,
        )

    (tmp_path / "src").mkdir()
    (tmp_path / "src/a.py").write_text("A = 1\n")
    (tmp_path / "src/b.py").write_text("B = 1\n")
    (tmp_path / "notes.txt").write_text("not code\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "old")
    old = run.code_fingerprint(tmp_path)
    assert table.changed_since(old, tmp_path) == []
    (tmp_path / "src/b.py").write_text("B = 2\n")
    (tmp_path / "notes.txt").write_text("edited\n")
    git("commit", "-q", "-am", "new")
    assert table.changed_since(old, tmp_path) == ["src/b.py"]
    assert table.changed_since(run.code_fingerprint(tmp_path), tmp_path) == []
    assert table.changed_since("0" * 64, tmp_path) is None


def test_the_readmes_count_of_the_catalogue_is_the_catalogues():
    """mutants/README.md's prose names the catalogue's size (it said 41 after 17 were added)."""
    text = (ROOT / "mutants" / "README.md").read_text(encoding="utf-8")
    total, trained, analytic = map(
        int, re.search(r"的 (\d+) 个错误（(\d+) 个在训练的代码里，(\d+) 个", text).groups()
    )
    codes = [m.code for m in CATALOGUE]
    assert (total, trained, analytic) == (
        len(codes),
        codes.count("trained"),
        codes.count("analytic"),
    )


# -----------------------------------------------------------------------------
# the student-facing mistakes go through the checker's path


def test_the_student_facing_mistakes_go_through_the_checkers_path():
    from mutants.fingerprints import student_facing

    names = run.checked_by_the_checker(CATALOGUE)
    assert names == {m.name for m in student_facing()} and len(names) >= 19
    assert all(m.file == NUMPY for m in CATALOGUE if m.name in names)


def test_a_mistake_through_the_checker_is_judged_by_the_ledger(tmp_path):
    (mutant,) = select(["sdpa_divides_by_d_k"])
    row = run.through_check(mutant, tmp_path, 2, "none")
    assert row["stage"] == "check" and row["decision"] == "caught-by-ledger"
    assert {"C015", "C049"} <= set(row["verdict_flips"].split()) and row["csvs_changed"] > 0


def test_only_student_facing_mistakes_build_no_control(tmp_path, monkeypatch):
    def no_control(*args):
        raise AssertionError("a control was built")

    seen = []
    monkeypatch.setattr(run, "control", no_control)
    monkeypatch.setattr(
        run,
        "through_check",
        lambda m, work, cores, tests: (
            seen.append(m.name) or {"mutant": m.name, "decision": "x", "build_s": 1, "tests_s": 0}
        ),
    )
    results = tmp_path / "results.csv"
    argv = ["sdpa_divides_by_d_k", "--results", str(results), "--work", str(tmp_path)]
    assert run.main(argv) == 0 and seen == ["sdpa_divides_by_d_k"]
    assert (tmp_path / "campaigns.csv").is_file()


def test_the_files_changed_since_a_rows_code_are_named_when_few_and_counted_when_many():
    from mutants import table

    assert table.changed_words(["src/a.py", "src/b.py"]) == "`src/a.py`、`src/b.py`"
    many = [f"src/m{i}.py" for i in range(table.LISTED + 40)]
    assert table.changed_words(many).startswith(f"src/ 的 {len(many)} 个文件")
    assert "m3.py" not in table.changed_words(many)


def test_the_control_is_keyed_by_what_its_tables_are_made_from():
    """Editing the checker, the report's words or the diff keeps a cached control (check
    --trained waits for none); the code a job runs, the settings and the ledger are keyed."""
    keyed = set(run.keyed_files())
    for made_from in (
        "src/lecture17/tiny_transformer.py",
        "src/lecture17/training.py",
        "src/lecture17/attention_numpy.py",
        "src/lecture17/experiments/transformer_vs_rnn.py",
        "src/lecture17/pipeline/aggregate.py",
        "config/config.yaml",
        "mutants/protocol.yaml",
        "Snakefile",
    ):
        assert made_from in keyed, made_from
    assert any(n.startswith("report/ledger/") for n in keyed)
    for read_only in (
        "src/lecture17/checker/render.py",
        "src/lecture17/checker/sandbox.py",
        "src/lecture17/reporting/page.py",
        "src/lecture17/reporting/diff.py",
        "tests/test_mutants.py",
        "docs/CHECK.md",
    ):
        assert read_only not in keyed, read_only
