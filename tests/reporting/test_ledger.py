"""The ledger (report/ledger/) against the code that produces its numbers, and its checks.

- The ledger itself: it loads (load_ledger validates every entry and names the claim of a typo),
  ids are unique, flags are valid, every entry names a demo that exists.
- The lecture's digits from the code: the deterministic demos run here for their first seed
  (seconds), go through the pipeline's CSV → aggregation path, and every exact, reconstructed,
  echo and precision claim of those demos must agree with the lecture.
- Every check can fail: on the committed reference tables, each claim is evaluated, then the
  rows each of its values reads are mutated until one mutation changes the verdict; where no
  mutation of a table can, the predicate file's EXAMPLES give values that hold and that fail.
"""

import copy
import os
from functools import cache
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import ROOT

from lecture17.experiments import DEMOS
from lecture17.pipeline import aggregate as aggregate_mod
from lecture17.pipeline.aggregate import aggregate, read_runs
from lecture17.pipeline.csvio import write_csv
from lecture17.pipeline.job import run_demo
from lecture17.reporting import checks, ledger, rates
from lecture17.reporting.diff import load_tables
from lecture17.reporting.views import load_views

LEDGER = ROOT / "report" / "ledger"
REFERENCE = ROOT / "report" / "reference"
FLAGS = {f"F{i:02d}" for i in range(1, 11)}  # the reading aid's flags F01–F10
DETERMINISTIC = ("exact", "reconstructed", "echo", "precision")


@cache
def entries() -> list[dict]:
    return ledger.load_ledger(LEDGER)


@cache
def config() -> dict:
    with open(ROOT / "config" / "config.yaml", encoding="utf-8") as f:
        return yaml.safe_load(f)["demos"]


def examples() -> dict:
    """EXAMPLES of every predicate file: {claim id: {"holds": {...}, "fails": {...}}}."""
    entries()  # loads the predicate files
    return ledger.examples()


def fast_demos() -> list[str]:
    """The demos without training (no grid) that run on the CPU: seconds each."""
    return [
        d
        for d, spec in config().items()
        if not spec.get("grid") and "cpu" in spec.get("devices", ["cpu"])
    ]


def demos_of(entry: dict) -> set[str]:
    if not ledger._has_values(entry):  # cited, or the lecture's arithmetic shown back
        return set()
    return {str(s.get("demo", entry.get("demo"))) for s in ledger._selectors(entry).values()}


# -------------------------------------------------------------------------------------------
# The ledger itself


def test_ledger_loads_with_unique_ids_and_valid_classes():
    loaded = entries()  # load_ledger rejects unknown keys, classes, words and repeated ids
    assert len(loaded) > 100
    assert {e["class"] for e in loaded} <= set(ledger.CLASSES)


@pytest.mark.parametrize("entry", entries(), ids=lambda e: e["id"])
def test_entry_names_real_demos_and_flags(entry):
    assert entry["section"].startswith(("§", "Ex")), entry["section"]
    if "flag" in entry:
        assert entry["flag"] in FLAGS and entry.get("note"), f"{entry['id']}: flag without note"
    # the demos, the views of a demo shown from another's table (05.2), and the build's
    # own timing table (results/tables/build.csv: each lecture script's seconds)
    known = set(DEMOS) | set(load_views(ROOT / "report" / "views")) | {"build"}
    assert demos_of(entry) <= set(DEMOS) | {"build"}, entry["id"]
    if "demo" in entry:  # a demo that runs, or one the report shows from another's table (05.2)
        assert entry["demo"] in known, f"{entry['id']}: unknown demo {entry['demo']}"
    if entry["class"] == "reconstructed":
        assert entry.get("flag"), f"{entry['id']}: a reconstructed input names its flag"


def test_entries_follow_the_lecture_and_exercises_come_last():
    sections = [e["section"] for e in entries()]
    first_exercise = next(i for i, s in enumerate(sections) if s.startswith("Ex"))
    assert all(s.startswith("Ex") for s in sections[first_exercise:])


@pytest.mark.parametrize(
    "typo, message",
    [
        ({"clas": "exact"}, "unknown keys"),
        ({"class": "exactly"}, "class 'exactly'"),
        ({"check": [{"belo": {"value": "ours", "than": 1}}]}, "unknown check word 'belo'"),
        ({"check": [{"below": {"value": "our", "than": 1}}]}, "unknown reference 'our'"),
        ({"check": [{"below": {"value": "ours"}}]}, "missing ['than']"),
        ({"check": [{"predicate": "no_such_check"}]}, "unknown predicate"),
        ({"check": [{"near": {"value": "ours", "tol": 1, "to": "lecture.x"}}]}, "lecture number"),
        ({"fmt": ".3q"}, "format"),
        ({"ours": "L = 8 时 {weight[0]}"}, "ours names 'weight'"),
        ({"ours": "我们算出 {}"}, "names no value"),
    ],
)
def test_a_typo_in_an_entry_names_the_claim(tmp_path, typo, message):
    entry = {
        "id": "C999",
        "section": "§2.3",
        "demo": "01.1",
        "claim": "a claim",
        "lecture": "0.614",
        "class": "exact",
        "value": {"quantity": "weight"},
        "fmt": ".3f",
    }
    (tmp_path / "x.yaml").write_text(yaml.safe_dump([{**entry, **typo}]), encoding="utf-8")
    with pytest.raises(ValueError, match="C999") as error:
        ledger.load_ledger(tmp_path)
    assert message in str(error.value)


def test_ours_template_fills_in_the_values_in_the_claims_format():
    ours = "最短 {a[0]}、最长 {a[-1]}；都在 {b.min} 到 {b.max} 之间，均值 {a.mean}"
    entry = {"fmt": ".2f", "ours": ours}
    words = ledger.ours_words(entry, {"a": [1.0, 2.0, 4.5], "b": [0.301, 0.304]})
    assert words == "最短 1.00、最长 4.50；都是 0.30，均值 2.50"  # a one-number range says so
    entry["ours"] = "{b.min} 到 {b.max}"  # only "都在 … 之间" collapses
    assert ledger.ours_words(entry, {"b": [0.3, 0.9]}) == "0.30 到 0.90"
    assert ledger.ours_words({"fmt": ".2f"}, {"a": 1.0}) == ""  # no template, no words
    assert ledger.ours_words({"ours": "{a} 和 {c}"}, {"a": 1.0}) == ""  # a value not built


# -------------------------------------------------------------------------------------------
# The lecture's digits, from the code


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> dict:
    """First-seed tables of the fast demos, through the pipeline's CSV and aggregation code."""
    folder = tmp_path_factory.mktemp("ledger_runs")
    built = {}
    for demo in fast_demos():
        seed = config()[demo]["seeds"][0]
        path = folder / f"{demo}_seed{seed}.csv"
        write_csv(run_demo(demo, config()[demo]["settings"], seed), path)
        built[demo] = aggregate(read_runs([path]))
    return built


def checked(classes: tuple[str, ...]) -> list[dict]:
    return [e for e in entries() if e["class"] in classes and demos_of(e) <= set(fast_demos())]


def test_an_exact_claim_says_same_digits_only_when_its_digits_were_compared():
    """A badge that matches what it shows: C131 ("不变": 1,050,624 = 1,050,624) and
    C070 (0.151–0.154 within 3 SE of 0.153) hold; C057's digits are the same digits."""
    tables = reference_tables()
    status = {
        e["id"]: ledger.evaluate(e, tables, config()).status
        for e in entries()
        if e["id"] in ("C131", "C070", "C057", "L17-Ex4c-inf")
    }
    assert status == {"C131": "holds", "C070": "holds", "C057": "same", "L17-Ex4c-inf": "holds"}
    shown = ledger.evaluate(next(e for e in entries() if e["id"] == "L17-Ex4c-inf"), tables)
    assert shown.ours == "nan"  # the flag 1 shown as what it means


@pytest.mark.parametrize("entry", checked(DETERMINISTIC), ids=lambda e: e["id"])
def test_deterministic_claims_agree_with_the_lecture(entry, tables):
    outcome = ledger.evaluate(entry, tables, config())
    if entry.get("expect") == "differs":  # the lecture's own error (e.g. F02): it must still differ
        assert outcome.status == "differs", f"{entry['id']} now agrees: drop its `expect`"
        return
    # an exact claim judged by its own check (not its digits) holds; by its digits, same
    assert outcome.status in ("same", "precision", "echo", "holds"), (
        f"{entry['id']} ({entry['section']}): lecture {entry['lecture']!r}, "
        f"ours {outcome.ours!r}: {outcome.status} {outcome.reason}"
    )


# -------------------------------------------------------------------------------------------
# Every check can fail (and can hold): mutation testing in miniature

MUTATIONS = {
    "×0": lambda v: 0 * v,
    "×1.01": lambda v: 1.01 * v,
    "×0.5": lambda v: 0.5 * v,
    "×2": lambda v: 2 * v,
    "×0.1": lambda v: 0.1 * v,
    "×10": lambda v: 10 * v,
    "×1e4": lambda v: 1e4 * v,
    "×−1": lambda v: -v,
    "+0.5": lambda v: v + 0.5,
    "−0.5": lambda v: v - 0.5,
    "reversed": lambda v: v[::-1].copy(),
}


@cache
def reference_tables() -> dict:
    return load_tables(REFERENCE)


def mutated(tables: dict, entry: dict, name: str, mutation) -> dict:
    """A copy of the tables with the rows of one of the entry's values changed; for a claim
    decided on recorded seeds (`decide`), the same rows of its recorded demos too, every
    seed's value among them (the `seeds` column the per-seed verdicts read)."""
    selector = ledger._selectors(entry)[name]
    demo = str(selector.get("demo", entry.get("demo")))
    changed = dict(tables)
    targets = [(demo, ledger.select(tables, selector, entry.get("demo")).index)]
    decide = entry.get("decide", {})
    for recorded in decide.get("recorded", []):
        if DEMOS[recorded].extends == demo and recorded in tables:
            own, extra = selector.get("where", {}), decide.get("where", {})
            where = [{**extra, **w} for w in own] if isinstance(own, list) else {**extra, **own}
            try:
                rows = ledger.select(tables, {**selector, "demo": recorded, "where": where}).index
            except ledger.MissingTable:
                continue
            targets.append((recorded, rows))
    for target, rows in targets:
        table = changed[target] = copy.deepcopy(changed[target])
        for stat in ("mean", "min", "max"):
            table.loc[rows, stat] = mutation(table.loc[rows, stat].to_numpy(float))
        if "seeds" in table.columns:
            table.loc[rows, "seeds"] = [
                _mutated_seeds(t, mutation) for t in table.loc[rows, "seeds"]
            ]
    return changed


def _mutated_seeds(text: str, mutation) -> str:
    per = aggregate_mod.per_seed(text)
    values = mutation(np.array(list(per.values()), dtype=float))
    return " ".join(f"{seed}:{float(value)!r}" for seed, value in zip(per, values, strict=True))


def verdict_of(entry, tables) -> bool | None:
    outcome = ledger.evaluate(entry, tables, config())
    return checks.verdict(outcome.findings)


def verdict_on_values(entry, values: dict) -> bool | None:
    context = checks.Context(
        values,
        ledger.lecture_numbers(entry),
        str(entry["lecture"]),
        ledger._settings(config(), entry),
        entry.get("fmt", ".3g"),
    )
    return checks.verdict(checks.run(ledger.steps_of(entry), context))


def claims_with_values() -> list[dict]:
    return [e for e in entries() if demos_of(e)]


@pytest.fixture(scope="module")
def can_fail_tables(tables) -> dict:
    """The committed reference tables; a deterministic demo the reference does not hold yet (a
    demo just added) from its first seed, run here."""
    return {**tables, **reference_tables()}


@pytest.mark.parametrize("entry", claims_with_values(), ids=lambda e: e["id"])
def test_every_check_can_fail_and_hold(entry, can_fail_tables):
    own = examples().get(entry["id"], {})
    if not demos_of(entry) <= set(can_fail_tables) and not {"holds", "fails"} <= set(own):
        pytest.fail(  # never skipped: a claim no test can make fail is a claim nobody checked
            f"{entry['id']}: no table of {sorted(demos_of(entry) - set(can_fail_tables))} in "
            "report/reference/ and none computed here (a training or GPU demo): run `make "
            "reference`, or give EXAMPLES[id]['holds'] and ['fails'] in its predicate file"
        )
    base = verdict_of(entry, can_fail_tables) if demos_of(entry) <= set(can_fail_tables) else None
    if "holds" in own:
        assert verdict_on_values(entry, own["holds"]) is True, f"{entry['id']}: EXAMPLES holds"
    else:
        assert base is True, (
            f"{entry['id']} does not hold on the reference build ({base}); "
            "give EXAMPLES[id]['holds'] (values under which it holds) in its predicate file"
        )
    if "fails" in own:
        assert verdict_on_values(entry, own["fails"]) is False, f"{entry['id']}: EXAMPLES fails"
        return
    if base is not True:
        pytest.fail(f"{entry['id']}: give EXAMPLES[id]['fails'] too")
    for name in ledger._selectors(entry):
        for mutation in MUTATIONS.values():
            if verdict_of(entry, mutated(can_fail_tables, entry, name, mutation)) is False:
                return  # this mutation of the rows `name` reads fails the check
    pytest.fail(
        f"{entry['id']}: no mutation of its rows ({', '.join(MUTATIONS)}) fails the check; "
        "the check cannot fail — tighten it, or give EXAMPLES[id]['fails']"
    )


@pytest.mark.parametrize(
    "word, args, expected",
    [
        ("below", {"value": "a", "than": "b"}, True),
        ("below", {"value": "b", "than": "a", "times": 2}, False),
        ("above", {"value": "b", "than": "a"}, True),
        ("above", {"value": "a", "than": 1.5}, False),
        ("between", {"value": "a", "lo": 1, "hi": 2}, True),
        ("between", {"value": "a", "lo": 1.5, "hi": 2}, False),
        ("order_of", {"value": "a"}, True),  # within 10× of the lecture's 2.0
        ("order_of", {"value": "a", "of": 100}, False),
        ("near", {"value": "b", "tol": 1}, True),
        ("near", {"value": "b", "tol": 0.5}, False),
        ("equal", {"value": "b", "to": 3}, True),
        ("equal", {"value": "b", "to": "settings.n"}, False),
        ("increasing", {"value": "a"}, True),
        ("decreasing", {"value": "a"}, False),
        ("digits", {"value": "a", "each": False}, False),  # (1.0, 2.0) is not "2.0"
        ("digits", {"value": "c"}, True),
        ("within_se", {"value": "e", "of": 0.5, "n": 100}, True),  # 0.55: 3 SE = 0.15
        ("within_se", {"value": "e", "of": 0.5, "n": 10000}, False),  # 3 SE = 0.015
        ("vanishes", {"value": "z", "tol": 1e-15}, True),  # 6.9e-18: one ulp of 0.05
        ("vanishes", {"value": "e", "tol": 1e-15}, False),
    ],
)
def test_each_word_of_the_vocabulary_can_hold_and_fail(word, args, expected):
    context = checks.Context(
        {"a": [1.0, 2.0], "b": [3.0], "c": [2.04], "e": [0.55], "z": [6.9e-18, 0.0]},
        {"": 2.0},
        "2.0",
        {"n": 4},
        ".1f",
    )
    assert checks.VOCABULARY[word](context, **args).ok is expected


def test_the_embedding_rule_reads_the_tasks_vocabulary_and_catches_a_small_init():
    """C073's standard error counts the task's vocabulary rows (training.VOCAB_SIZE) and an
    N(0, 1/d) embedding (‖x‖ ≈ 1, the mistake §6.6 warns about) fails it."""
    from lecture17 import training

    entries()  # loads the predicate files
    module = next(m for path, m in ledger.MODULES.items() if path.stem == "03_positional_encoding")
    assert module.VOCAB == training.VOCAB_SIZE
    mean, sd = module.chi_moments(64)
    assert abs(mean - 7.9688) < 1e-4 and abs(mean**2 + sd**2 - 64) < 1e-9  # E‖x‖, E‖x‖² = d
    entry = next(e for e in entries() if e["id"] == "C073")
    assert verdict_on_values(entry, {"norm": [8.0], "norm_min": [7.9], "norm_max": [8.1]})
    assert not verdict_on_values(entry, {"norm": [1.0], "norm_min": [0.9], "norm_max": [1.1]})


def test_the_sampled_word_follows_the_lecture_digits_and_the_seed_count():
    """Rulebook R4: half a unit + 4 SE of the difference, σ the larger of the seeds' spread and
    one run's binomial error; more seeds of ours, a tighter band."""
    values = {"x": [0.503], "sd": [0.012], "n": [10.0], "t": [500.0]}
    context = checks.Context(values, {"": 0.594}, "0.594", {}, ".3f")
    word = checks.VOCABULARY["sampled"]
    assert word(context, "x", "sd", "n", 0.001, n_test="t", n_lecture=3).ok is False
    context = checks.Context({**values, "x": [0.56]}, {"": 0.594}, "0.594", {}, ".3f")
    assert word(context, "x", "sd", "n", 0.001, n_test="t", n_lecture=3).ok is True
    # a quantity that is no share (an entropy): the seeds' spread alone, no binomial floor
    tight = checks.Context({**values, "x": [0.56], "sd": [0.001]}, {"": 0.594}, "0.594", {}, ".3f")
    assert word(tight, "x", "sd", "n", 0.001, n_test="t", n_lecture=3).ok is True
    assert word(tight, "x", "sd", "n", 0.001, n_lecture=3).ok is False


def _resampled(table, rng):
    """The table as another sample of its seeds: every seed's value moved by up to the row's
    seed spread (its std, or its range where the std is 0), means and ranges recomputed."""
    table = copy.deepcopy(table)
    if "seeds" not in table.columns:
        return table
    texts = []
    for _, row in table.iterrows():
        per = aggregate_mod.per_seed(row["seeds"])
        if not per:
            texts.append(row["seeds"])
            continue
        spread = float(row["std"]) if float(row["std"]) > 0 else float(row["max"] - row["min"])
        values = np.array(list(per.values())) + spread * rng.uniform(-1, 1, len(per))
        texts.append(" ".join(f"{s}:{float(x)!r}" for s, x in zip(per, values, strict=True)))
    table["seeds"] = texts
    values = [np.array(list(aggregate_mod.per_seed(t).values())) for t in texts]
    table["mean"] = [v.mean() if len(v) else m for v, m in zip(values, table["mean"], strict=True)]
    table["min"] = [v.min() if len(v) else m for v, m in zip(values, table["min"], strict=True)]
    table["max"] = [v.max() if len(v) else m for v, m in zip(values, table["max"], strict=True)]
    return table


def test_no_counted_verdict_moves_when_the_protocol_seeds_are_resampled():
    """A counted verdict is a fact about the lecture and the code, not about one CPU's sample
    of the default build's trained runs: resampling every trained protocol table (02.3, 03.5,
    04.3, 05.1, 05.3) within its seed spread — what another CPU does — changes no counted
    claim's status (they are decided on the recorded seeds, which are the same everywhere)."""
    tables = reference_tables()
    trained = [d for d, demo in DEMOS.items() if demo.kind == "training" and d in tables]
    assert {"02.3", "03.5", "04.3", "05.1", "05.3"} <= set(trained)
    counted = [e for e in entries() if e["class"] in ledger.COUNTED]
    before = {o.entry["id"]: o.status for o in ledger.evaluate_all(counted, tables, config())}
    for draw in range(3):
        rng = np.random.default_rng(draw)
        other = {**tables, **{d: _resampled(tables[d], rng) for d in trained}}
        after = {o.entry["id"]: o.status for o in ledger.evaluate_all(counted, other, config())}
        moved = {k: (before[k], after[k]) for k in before if before[k] != after[k]}
        assert not moved, f"draw {draw}: counted verdicts that follow the protocol sample: {moved}"


def test_the_resampling_moves_verdicts_that_read_the_protocol_seeds():
    """The test above can fail: the same claims read on the protocol seeds alone (no `decide`)
    move under the same resampling."""
    tables = reference_tables()
    trained = [d for d, demo in DEMOS.items() if demo.kind == "training" and d in tables]
    plain = [{k: v for k, v in e.items() if k != "decide"} for e in entries() if "decide" in e]
    before = {o.entry["id"]: o.status for o in ledger.evaluate_all(plain, tables, config())}
    moved = set()
    for draw in range(3):
        rng = np.random.default_rng(draw)
        other = {**tables, **{d: _resampled(tables[d], rng) for d in trained}}
        after = ledger.evaluate_all(plain, other, config())
        moved |= {o.entry["id"] for o in after if o.status != before[o.entry["id"]]}
    assert moved, "no protocol-seed verdict moved: the resampling has no power"


@pytest.mark.parametrize("temperature", [0.9, 1.1])
def test_the_monte_carlo_rule_catches_a_softmax_temperature_off_by_ten_percent(
    temperature, monkeypatch, tmp_path
):
    """Rulebook R3 on 02.2: with the measured per-trial spread (not a Bhatia–Davis bound, 3–8×
    too wide), scores off by 10 % (a temperature of 0.9 or 1.1) fail a counted claim; the
    unmutated run holds them all."""
    from lecture17.experiments import scaling_multihead

    spec = config()["02.2"]
    counted = [e for e in entries() if e.get("demo") == "02.2" and e["class"] == "seeded"]

    def verdicts() -> dict:
        path = tmp_path / f"02.2_t{temperature}.csv"
        write_csv(run_demo("02.2", spec["settings"], spec["seeds"][0]), path)
        table = aggregate(read_runs([path]))
        outcomes = ledger.evaluate_all(counted, {"02.2": table}, config())
        return {o.entry["id"]: o.status for o in outcomes}

    assert set(verdicts().values()) == {"holds"}
    scores = scaling_multihead._random_scores
    monkeypatch.setattr(scaling_multihead, "_random_scores", lambda *a: scores(*a) / temperature)
    failed = [claim for claim, status in verdicts().items() if status != "holds"]
    assert failed, f"a temperature of {temperature} passes every claim of 02.2"


@pytest.mark.parametrize("claim", ["C108", "C111", "C112", "L17-Ex9c"])
def test_the_re_read_claims_hold_and_fail_on_their_examples(claim):
    """R8 (C108), R12 as per-seed rates (C111, C112, as C109), R4 on step counts (L17-Ex9c):
    each holds on its EXAMPLES' holding values and fails on the failing ones."""
    entry = next(e for e in entries() if e["id"] == claim)
    example = examples()[claim]
    as_arrays = {k: np.asarray(v, float) for k, v in example["holds"].items()}
    assert verdict_on_values(entry, as_arrays) is True
    as_arrays = {k: np.asarray(v, float) for k, v in example["fails"].items()}
    assert verdict_on_values(entry, as_arrays) is False


def test_the_three_seed_decision_counts_disjoint_runs_not_subsets():
    """A chance averaged over every 3-subset of n seeds is judged as n // 3 trials (a
    U-statistic is no more precise than its disjoint runs): 10 seeds cannot decide a chance of
    0 or 1 (3 runs), 12 can; fewer than 3 seeds never decide."""
    from lecture17.reporting.rates import three_seed_decision

    assert three_seed_decision(0.0, 10)[0] is None and three_seed_decision(1.0, 10)[0] is None
    assert three_seed_decision(0.0, 12)[0] is False and three_seed_decision(1.0, 12)[0] is True
    assert three_seed_decision(float("nan"), 2)[0] is None
    assert "2 more seeds" in three_seed_decision(0.0, 10)[1]


# -----------------------------------------------------------------------------
# a check's sentence: true either way, each value named by what it is


def _context(values, labels=None):
    return checks.Context(values, {"": 0.0}, "0", {}, ".2f", labels=labels)


@pytest.mark.parametrize(
    "word, args, values, text",
    [
        ("below", {"value": "a", "than": "b"}, {"a": [3.0], "b": [2.0]}, "a = 3.00 ≥ b = 2.00"),
        ("below", {"value": "a", "than": "b"}, {"a": [1.0, 3.0], "b": [2.0]}, "不都 < not every <"),
        ("above", {"value": "a", "than": "b"}, {"a": [1.0], "b": [2.0]}, "a = 1.00 ≤ b = 2.00"),
        ("equal", {"value": "a", "to": "b"}, {"a": [2.0], "b": [0.0]}, "a = 2.00 ≠ b = 0.00"),
        ("near", {"value": "a", "tol": 0.5, "to": "b"}, {"a": [2.0], "b": [0.0]}, "| > 0.5"),
        ("order_of", {"value": "a", "of": "b"}, {"a": [100.0], "b": [1.0]}, "10 倍以外 beyond"),
        (
            "between",
            {"value": "a", "lo": "b", "hi": "c"},
            {"a": [5.0], "b": [0.0], "c": [1.0]},
            "不都在",
        ),
        ("decreasing", {"value": "a"}, {"a": [1.0, 2.0]}, "不是逐个减小 not strictly decreasing"),
    ],
)
def test_a_failed_step_states_the_relation_as_it_came_out(word, args, values, text):
    (found,) = checks.run([{word: args}], _context(values, {n: n for n in values}))
    assert found.ok is False and text in found.text, found.text


def test_a_step_names_a_value_by_its_label_and_a_failed_predicate_as_a_condition_not_met():
    values = {"rnn_32_lo": [3.0], "b": [2.0]}
    labels = {"rnn_32_lo": "敏感度 sensitivity（RNN，距离 32，种子中最小）", "b": "b"}
    (found,) = checks.run(
        [{"below": {"value": "rnn_32_lo", "than": "b"}}], _context(values, labels)
    )
    assert "rnn_32_lo" not in found.text and found.text.startswith("敏感度 sensitivity（RNN")
    checks.PREDICATES["_always_fails"] = lambda c: checks.Finding(False, "x < y")
    try:
        (found,) = checks.run([{"predicate": "_always_fails"}], _context(values))
    finally:
        del checks.PREDICATES["_always_fails"]
    assert found.text == checks.NOT_MET + "x < y"


def test_value_labels_read_the_views_and_never_merge_two_values():
    entry = {
        "demo": "01.4",
        "values": {
            "rnn_1": {"quantity": "sensitivity", "where": {"model": "rnn", "distance": 1}},
            "rnn_1_lo": {
                "quantity": "sensitivity",
                "where": {"model": "rnn", "distance": 1},
                "stat": "min",
            },
            "att": {
                "quantity": "sensitivity",
                "where": {"model": "attention", "distance": list(range(1, 64))},
            },
            "same": {"quantity": "sensitivity", "where": {"model": "rnn", "distance": 1}},
        },
    }
    labels = ledger.value_labels(entry)
    assert "种子中最小 lowest seed" in labels["rnn_1_lo"] and "1–63" in labels["att"]
    assert labels["rnn_1"] != labels["same"] and "[same]" in labels["same"]
    assert not any("rnn_1_lo" in t for n, t in labels.items() if n != "rnn_1_lo")


def test_no_claim_sentence_names_a_value_by_its_selector_name():
    """On the reference tables: a selector name (rnn_32_lo, tf_128) is ledger code, never
    shown to a student."""
    import re

    from lecture17.reporting import claims

    outcomes = ledger.evaluate_all(entries(), reference_tables(), config())
    for o in outcomes:
        if "value" not in o.entry and "values" not in o.entry:
            continue
        names = [n for n in ledger.selectors(o.entry) if re.search(r"[_0-9]", n)]
        text = claims.sentence(o)
        shown = [n for n in names if re.search(rf"(?<![\w.]){re.escape(n)}(?!\w)", text)]
        assert not shown, f"{o.entry['id']}: {shown} in {text[:200]}"


# -------------------------------------------------------------------------------------------
# One assertion, one counted verdict, a rule that can reach both verdicts


def _normalised(text: str) -> str:
    return " ".join(text.split())


def test_every_entry_names_the_span_it_judges_and_the_quantity_it_asserts():
    for e in entries():
        assert _normalised(str(e.get("span", ""))), f"{e['id']}: no span"
        assert str(e.get("asserts", "")).replace("_", "").isalnum(), f"{e['id']}: asserts"


def test_every_span_is_verbatim_lecture_text():
    """The span is the lecture's own text (whitespace normalised): a paraphrase fails."""
    path = os.environ.get("LECTURE17_TEXT")
    if not path:
        pytest.skip("LECTURE17_TEXT not set: the lecture's text is not part of the clone")
    lecture = _normalised(Path(path).read_text(encoding="utf-8"))
    missing = [e["id"] for e in entries() if _normalised(e["span"]) not in lecture]
    assert not missing, f"spans that are not the lecture's text: {missing}"


def test_no_two_counted_entries_judge_one_assertion():
    """Two counted entries on the same span and quantity would count one assertion twice."""
    seen = {}
    for e in entries():
        if ledger.counts(e):
            key = ledger.assertion(e)
            assert key not in seen, f"{seen.get(key)} and {e['id']} both count {key}"
            seen[key] = e["id"]


def test_twins_pair_each_other_and_the_pre_registered_one_decides(tmp_path):
    """The loader refuses a second counted twin and an evidence twin that is pre-registered."""
    twins = [
        {"id": "X1", "section": "§1", "claim": "a", "lecture": "b", "class": "cited"},
        {"id": "X2", "section": "§1", "claim": "a", "lecture": "b", "class": "cited"},
    ]
    for t in twins:
        t.update(span="同一句话", asserts="q")
    for edit, message in [
        ({}, "one pair"),
        ({0: {"pair": "X2"}, 1: {"pair": "X1"}}, "exactly one"),
        (
            {0: {"pair": "X2", "preregistered": True, "evidence": True}, 1: {"pair": "X1"}},
            "decides",
        ),
    ]:
        ledger_file = tmp_path / "twins.yaml"
        case = [{**t, **edit.get(i, {})} for i, t in enumerate(twins)]
        ledger_file.write_text(yaml.safe_dump(case, allow_unicode=True), encoding="utf-8")
        with pytest.raises(ValueError, match=message):
            ledger.load_ledger(ledger_file)


def test_the_headline_counts_by_fields_not_names():
    """A derivation (the lecture's own arithmetic) and an evidence twin are not counted."""
    entry = {"class": "seeded"}
    assert ledger.counts(entry)
    assert not ledger.counts({**entry, "derivation": "√4 = 2"})
    assert not ledger.counts({**entry, "evidence": True})
    assert not ledger.counts({"class": "echo"})


def _rules_of(entry) -> list:
    """The rate rules the entry's evaluation on the reference tables decided by (rates.TRACE)."""
    rates.TRACE = []
    try:
        ledger.evaluate(entry, reference_tables(), config())
        return list(rates.TRACE)
    finally:
        rates.TRACE = None


@pytest.mark.parametrize(
    "entry", [e for e in claims_with_values() if not e.get("evidence")], ids=lambda e: e["id"]
)
def test_every_rate_rule_can_reach_both_verdicts_with_the_seeds_recorded(entry):
    """A rate over n seeds decided by a rule (a Wilson interval against a threshold, the chance
    a 3-seed run shows it) must hold for some k of n and fail for another: a rule that cannot
    fail (or hold) with the seeds the build records decides nothing. n is the number of seeds
    the evaluation read from the reference tables (the recordings the config names)."""
    if not demos_of(entry) <= set(reference_tables()):
        pytest.skip(f"{entry['id']}: a demo not in the reference build")
    for n, rule in _rules_of(entry):
        reached = {rule(k) for k in range(n + 1)}
        assert {True, False} <= reached, f"{entry['id']}: with n = {n}, only {reached}"


def _reached(n_seeds: int) -> set:
    """The verdicts 'a 3-seed run shows it' (rates.three_seed_decision) reaches at n_seeds."""
    rates.TRACE = []
    try:
        rates.three_seed_decision(0.5, n_seeds)
        ((n, rule),) = rates.TRACE
    finally:
        rates.TRACE = None
    return {rule(k) for k in range(n + 1)}


def test_the_reachability_test_can_fail():
    """Ten seeds of a rule 'a 3-seed run shows it' judged at 3 disjoint runs reach neither."""
    assert _reached(10) == {None}
    assert {True, False} <= _reached(12)


def _named(steps, names: set) -> set:
    """The value names and predicates a list of check steps reads."""
    found = set()
    if isinstance(steps, dict):
        for key, value in steps.items():
            found |= {f"predicate:{value}"} if key == "predicate" else _named(value, names)
    elif isinstance(steps, list):
        for step in steps:
            found |= _named(step, names)
    elif isinstance(steps, str) and steps in names:
        found.add(steps)
    return found


def test_every_card_that_does_not_hold_gives_a_reason_that_reads_another_quantity():
    """A card that does not hold (differs, partly, undecided, or false on this machine) shows a
    likely reason on the reference data, and the reason's check reads a value or a predicate
    the claim's own check does not: a cause, not the result restated. Evidence twins (their
    twin's card carries the verdict), claims that need a GPU and timings (their badge says "on
    this machine": the machine is the cause, and another one may decide otherwise) are left
    out."""
    from lecture17.reporting.claim_verdict import study_verdict

    tables = reference_tables()
    without = []
    for e in claims_with_values():
        if e.get("evidence") or e.get("needs") or e["class"] == "timing":
            continue
        if not demos_of(e) <= set(tables):
            continue
        o = ledger.evaluate(e, tables, config())
        if study_verdict(o) not in ("differs", "partly", "unresolved", "timing_fails"):
            continue
        names = set(ledger._selectors(e))
        own = _named(ledger.steps_of(e), names)
        why = _named(e.get("why", {}).get("check", []), names)
        if not o.why or not why - own:
            without.append(e["id"])
    assert not without, f"cards that do not hold with no reason that explains: {without}"


def test_an_ours_template_prints_a_ratio_and_a_difference_of_two_values():
    """ "{a.per_b}" (one decimal) and "{a.minus_b}" read two values; an unknown one is refused."""
    words = ledger.ours_words(
        {"ours": "慢 {a.per_b.min}–{a.per_b.max} 倍，多 {b.minus_a}", "fmt": ".0f"},
        {"a": [30.0, 10.0], "b": [10.0, 5.0]},
    )
    assert words == "慢 2.0–3.0 倍，多 (-20, -5)"
    assert set(ledger.ours_fields("{a.per_b.min}")) == {"a", "b"}


def test_a_card_decided_on_recorded_seeds_gives_the_number_of_the_table_above_it():
    """The table above a card shows the default build's protocol seeds; a card decided on the
    recorded seeds whose short number differs from the table's gives the table's too, so the
    two never read as one quantity with two values (every such card, not a list of ids)."""
    from lecture17.reporting.claim_words import takeaway

    tables = reference_tables()
    checked = 0
    for e in entries():
        if "decide" not in e or e.get("evidence") or not demos_of(e) <= set(tables):
            continue
        o = ledger.evaluate(e, tables, config())
        p = o.protocol
        if p is None or not p.ours or p.ours == o.ours or p.ours.startswith("("):
            continue  # a list of numbers: the table shows it, the card says which seeds
        if ledger.STATUS.get(p.status) and p.status in ("missing", "gpu"):
            continue
        checked += 1
        assert p.ours in takeaway(o), f"{e['id']}: the table's {p.ours} is not on its card"
    assert checked >= 5
