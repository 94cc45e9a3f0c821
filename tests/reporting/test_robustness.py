"""Claims about seeds as rates: per-seed values in the aggregated tables, the `seeds` stat of
the ledger, Wilson intervals, the protocol's claims judged seed by seed and reading by
reading, the pre-registered rate and exercise checks (each shown to fail), and recordings."""

import json

import pandas as pd
import pytest
from conftest import ROOT

from lecture17.pipeline import record
from lecture17.pipeline.aggregate import aggregate, seed_table, seed_values, table_seeds
from lecture17.reporting import ledger, robustness
from lecture17.reporting.checks import PREDICATES, Context
from lecture17.reporting.rates import at_least_once, rate_text, wilson

ENTRIES = {e["id"]: e for e in ledger.load_ledger(ROOT / "report/ledger")}


def runs(values: dict) -> pd.DataFrame:
    """Per-run rows as the jobs write them: {(model, seed): value} of one quantity `acc`."""
    return pd.DataFrame(
        [
            {"demo": "09.9", "seed": str(seed), "model": model, "quantity": "acc", "value": v}
            for (model, seed), v in values.items()
        ]
    )


# six seeds: rnn at 0.9 but for seed 3, attn always above
TABLE = aggregate(
    runs(
        {
            **{("rnn", s): 0.9 for s in (0, 1, 2, 4, 5)},
            ("rnn", 3): 0.2,
            **{("attn", s): 0.95 + s / 100 for s in range(6)},
        }
    )
)


# -----------------------------------------------------------------------------
# per-seed values


def test_a_table_keeps_every_seeds_value_in_seed_order():
    table = aggregate(runs({("rnn", 10): 0.5, ("rnn", 2): 0.25, ("rnn", 1): 0.125}))
    assert table["seeds"].tolist() == ["1:0.125 2:0.25 10:0.5"]  # numeric order, repr floats
    assert table_seeds(table) == [1, 2, 10]
    assert seed_values(table).tolist() == [0.125, 0.25, 0.5]


def test_a_seed_table_is_what_that_seed_alone_would_give():
    one = seed_table(TABLE, 3)
    assert one["mean"].tolist() == [0.2, 0.98] and one["n_seeds"].tolist() == [1, 1]
    assert (one["min"] == one["mean"]).all() and (one["max"] == one["mean"]).all()
    partial = aggregate(runs({("rnn", 0): 0.5, ("rnn", 1): 0.6, ("attn", 1): 0.7}))
    assert seed_table(partial, 0)["model"].tolist() == ["rnn"]  # rows that seed has


def test_the_seeds_stat_gives_every_seed_and_reduces_per_seed_over_rows():
    e = {
        "id": "X",
        "section": "§0",
        "demo": "09.9",
        "claim": "c",
        "lecture": "l",
        "class": "seeded",
        "values": {
            "each": {"quantity": "acc", "stat": "seeds", "where": {"model": "rnn"}},
            "top": {"quantity": "acc", "stat": "seeds", "reduce": "min"},
        },
        "check": [{"above": {"value": "each", "than": 0}}],
    }
    outcome = ledger.evaluate(e, {"09.9": TABLE})
    assert outcome.numbers["each"] == [0.9, 0.9, 0.9, 0.2, 0.9, 0.9]
    assert outcome.numbers["top"] == [0.9, 0.9, 0.9, 0.2, 0.9, 0.9]  # min(rnn, attn) per seed
    ragged = aggregate(runs({("rnn", 0): 0.5, ("rnn", 1): 0.6, ("attn", 1): 0.7}))
    with pytest.raises(ValueError, match="the same seeds"):
        ledger.evaluate(e, {"09.9": ragged})


def test_wilson_intervals_match_the_textbook_and_stay_in_zero_one():
    assert wilson(1, 10) == pytest.approx((0.01788, 0.40415), abs=1e-5)  # Wilson (1927)
    assert wilson(0, 10)[0] == 0 and wilson(10, 10)[1] == 1
    assert 0 < wilson(0, 10)[1] < 0.3  # not degenerate at k = 0
    assert rate_text(3, 10) == "3/10（95% 区间 interval 0.11–0.60）"
    assert at_least_once(0.1, 3) == pytest.approx(0.271)
    with pytest.raises(ValueError, match="0 <= k <= n"):
        wilson(11, 10)


# -----------------------------------------------------------------------------
# the protocol's claims, seed by seed and reading by reading


def claim(**kw):
    return {"id": "X1", "section": "§0", "demo": "09.9", "claim": "c", "lecture": "l", **kw}


ABOVE = claim(
    **{
        "class": "seeded",
        "value": {"quantity": "acc", "where": {"model": "rnn"}},
        "check": [{"above": {"value": "ours", "than": 0.5}}],
    }
)
SPREAD = claim(
    **{
        "id": "X2",
        "class": "seeded",
        "value": {"quantity": "acc", "stat": "min", "where": {"model": "rnn"}},
        "check": [{"above": {"value": "ours", "than": 0.5}}],
    }
)


def test_a_claim_is_judged_on_each_robustness_seed_and_counted():
    outcomes = [ledger.evaluate(e, {"09.9": TABLE}) for e in (ABOVE, SPREAD)]
    text = robustness.by_seed(outcomes, {"09.9": TABLE, "07.9": TABLE}, {}, "09.9", "07.9", False)
    assert "| X1 |" in text and "成立 holds 5/6" in text  # seed 3 fails
    assert "X2" in text.split("\n\n")[1]  # a claim about the spread is named, not judged
    assert robustness.per_seed_claim(ABOVE) and not robustness.per_seed_claim(SPREAD)


def test_a_claim_over_two_recorded_demos_counts_only_the_seeds_that_have_its_rows():
    # 05.3's case: the Transformer on seeds 0-5 (one demo), the RNN on seeds 0-2 (another), each
    # at two lengths; the claims are judged at L = 16 alone
    def at_len(seq_len, values):
        return aggregate(runs(values)).assign(seq_len=str(seq_len))

    attn = pd.concat(
        [at_len(16, {("attn", s): 0.95 for s in range(6)}), at_len(32, {("attn", 0): 0.0})]
    )
    rnn = pd.concat(
        [
            at_len(16, {("rnn", 0): 0.9, ("rnn", 1): 0.2, ("rnn", 2): 0.9}),
            at_len(32, {("rnn", s): 0.0 for s in range(3)}),
        ]
    )
    both = claim(
        **{
            "id": "X3",
            "class": "seeded",
            "values": {
                "rnn": {"quantity": "acc", "where": {"model": "rnn"}},
                "attn": {"quantity": "acc", "where": {"model": "attn"}},
            },
            "check": [{"below": {"value": "rnn", "than": "attn"}}],
        }
    )
    attn_only = claim(
        **{
            "id": "X4",
            "class": "seeded",
            "value": {"quantity": "acc", "where": {"model": "attn"}},
            "check": [{"above": {"value": "ours", "than": 0.5}}],
        }
    )
    protocol = TABLE
    outcomes = [ledger.evaluate(e, {"09.9": protocol}) for e in (both, attn_only)]
    tables = {"09.9": protocol, "07.8": attn, "07.9": rnn}
    text = robustness.by_seed(
        outcomes, tables, {}, "09.9", ["07.8", "07.9"], False, {"seq_len": 16}
    )
    rows = {line.split(" | ")[0]: line for line in text.splitlines() if line.startswith("| X")}
    assert "成立 holds 3/3" in rows["| X3"]  # seeds 0-2 only: rnn < attn in each
    assert "成立 holds 6/6" in rows["| X4"]  # every Transformer seed, none at L = 32
    with pytest.raises(ValueError, match="no label 'length'"):
        robustness.by_seed(outcomes, tables, {}, "09.9", ["07.8"], False, {"length": 16})
    with pytest.raises(ValueError, match="the same row twice"):
        robustness.by_seed(outcomes, tables, {}, "09.9", ["07.8", "07.8"], False, {"seq_len": 16})
    # a label only one demo has (a block of the Transformer's) is empty text on the other's rows
    tables["07.8"] = attn.assign(block="dec")
    both["values"]["rnn"]["where"]["block"] = ""
    text = robustness.by_seed(
        [ledger.evaluate(both, {"09.9": protocol.assign(block="")})],
        {**tables, "09.9": protocol.assign(block="")},
        {},
        "09.9",
        ["07.8", "07.9"],
        False,
        {"seq_len": 16},
    )
    assert "成立 holds 3/3" in text


def test_the_sensitivity_table_says_where_a_reading_changes_the_verdict():
    readings = pd.concat(
        [TABLE.assign(reading="same"), TABLE.assign(reading="low", mean=0.1)], ignore_index=True
    )
    outcomes = [ledger.evaluate(ABOVE, {"09.9": TABLE})]
    text = robustness.by_reading(
        outcomes, {"09.9": TABLE, "07.9": readings}, {}, "09.9", "07.9", False
    )
    header, _, row, _, sentence = text.split("\n")
    assert header.endswith("| same | low |") and row.count("✓") == 2 and row.count("✗") == 1
    assert "X1（low）" in sentence


def test_a_rate_claim_is_judged_under_each_reading_and_a_changed_verdict_named():
    # 07.5's shape: two labels (score, feed as booleans), three seeds per reading; reading
    # (b, True) fails on seed 1; the claim also reads another demo, which stays as it is
    values = {(score, feed, s): 0.9 for score in "ab" for feed in (False, True) for s in range(3)}
    values[("b", True, 1)] = 0.1
    rows = pd.DataFrame(
        [
            {
                "demo": "07.9",
                "seed": str(s),
                "score": score,
                "feed": str(feed),
                "quantity": "acc",
                "value": v,
            }
            for (score, feed, s), v in values.items()
        ]
    )
    tables = {"07.9": aggregate(rows), "09.9": TABLE}
    never_fails = claim(
        **{
            "id": "X5",
            "demo": "07.9",
            "class": "seeded",
            "values": {
                "acc": {"quantity": "acc", "stat": "seeds", "where": {"score": "a", "feed": False}},
                "other": {"demo": "09.9", "quantity": "acc", "where": {"model": "attn"}},
            },
            "check": [
                {"above": {"value": "acc", "than": 0.5}},
                {"above": {"value": "other", "than": 0.5}},
            ],
        }
    )
    not_a_rate = claim(
        **{
            "id": "X6",
            "demo": "07.9",
            "class": "seeded",
            "value": {"quantity": "acc", "where": {"score": "a", "feed": False}},
            "check": [{"above": {"value": "ours", "than": 0.5}}],
        }
    )
    outcomes = [ledger.evaluate(e, tables) for e in (never_fails, not_a_rate)]
    names = {"False": "off", "True": "on"}
    text = robustness.across_readings(outcomes, tables, {}, "07.9", ["score", "feed"], names, False)
    header, _, row, _, sentence = text.split("\n")
    assert header.startswith("| 编号 id | a，off（3 个种子 seeds） | a，on（3 个种子 seeds） |")
    cells = row.strip("| ").split(" | ")
    assert cells[0] == "X5" and "主读法 main" in cells[1]
    assert [c[0] for c in cells[1:]] == ["✓", "✓", "✓", "✗"]  # only (b, on) fails
    assert "X5（b，on）" in sentence and "X6" not in text  # a per-run claim is not a rate claim

    values[("b", True, 1)] = 0.9  # now no reading changes the verdict
    rows["value"] = list(values.values())
    tables["07.9"] = aggregate(rows)
    outcomes = [ledger.evaluate(never_fails, tables)]
    text = robustness.across_readings(outcomes, tables, {}, "07.9", ["score", "feed"], names, False)
    assert text.endswith("在这 4 种读法下，结论都不变 no reading changes a verdict。")
    with pytest.raises(ValueError, match="no label"):
        robustness.across_readings(outcomes, tables, {}, "07.9", ["scoring"], names, False)


def test_rates_count_the_seeds_below_a_threshold_per_group():
    text = robustness.rates(TABLE, "acc", 0.5, ["model"], {"rnn": "RNN"})
    assert "| RNN | 1/6（95% 区间 interval" in text and "| attn | 0/6" in text


# -----------------------------------------------------------------------------
# the pre-registered checks: each holds on one sample and fails on another


def run_check(name: str, values: dict, settings=None):
    context = Context(values, {"": 0.996}, "", settings, ".3f")  # L17-R9.2b's `number`
    return PREDICATES[name](context)


@pytest.mark.parametrize(
    "name, holds, fails, settings",
    [
        ("r92a_lagging_seed_rate", {"seq": [0.95, 0.96, 0.97, 0.7]}, {"seq": [0.95] * 4}, None),
        ("r92b_near_one_rate", {"seq": [0.99, 0.98, 0.5]}, {"seq": [0.99, 0.5, 0.5]}, None),
        ("r92c_unstable", {"tok": [0.3, 0.9]}, {"tok": [0.9, 0.9]}, None),
        (
            "r92d_below_every_transformer_seed",
            {"ga": [0.5, 0.6], "tf": [0.9, 0.95]},
            {"ga": [0.5, 0.96], "tf": [0.9, 0.95]},
            None,
        ),
        (
            "r94a_a_head_parks_on_bos",  # 2 heads x 2 seeds, head after head
            {"bos": [0.9, 0.1, 0.2, 0.1], "entropy": [0.2, 2.0, 2.0, 2.0]},
            {"bos": [0.9, 0.1, 0.2, 0.1], "entropy": [1.0, 2.0, 2.0, 2.0]},
            {"seeds": [100, 101]},
        ),
        (
            "c139_a_three_seed_run_shows_it",  # 12 recorded 500-step seeds, a 3-seed 1500
            {
                "ga_500": [0.5, 0.3, 0.7, 0.4, 0.6, 0.2, 0.75, 0.45, 0.55, 0.52, 0.35, 0.65],
                "ga_1500": [0.9, 0.91, 0.92],
            },
            {
                "ga_500": [0.5, 0.3, 0.7, 0.4, 0.6, 0.2, 0.75, 0.45, 0.55, 0.52, 0.35, 0.65],
                "ga_1500": [0.3] * 3,
            },
            None,
        ),
        (
            "c139_a_three_seed_run_shows_it",  # better, but the spread does not shrink
            {"ga_500": [0.5 + 0.01 * i for i in range(-6, 6)], "ga_1500": [0.9, 0.9, 0.9]},
            {"ga_500": [0.5 + 0.01 * i for i in range(-6, 6)], "ga_1500": [0.6, 0.95, 0.99]},
            None,
        ),
        (
            "ex8a_little_change",
            {"tf_500": [0.99], "tf_1500": [1.0]},
            {"tf_500": [0.8], "tf_1500": [1.0]},
            None,
        ),
        (
            "ex9a_little_effect",
            {"scaled": [0.9], "unscaled": [0.88]},
            {"scaled": [0.9], "unscaled": [0.7]},
            None,
        ),
        (
            "ex9b_clearly_larger",  # the exercise's two seeds: clearly larger on both, or none
            {
                "scaled_256": [0.9, 0.9],
                "unscaled_256": [0.6, 0.8],
                "scaled_64": [0.9, 0.9],
                "unscaled_64": [0.88, 0.88],
            },
            {
                "scaled_256": [0.9, 0.9],
                "unscaled_256": [0.88, 0.88],
                "scaled_64": [0.9, 0.9],
                "unscaled_64": [0.88, 0.88],
            },
            None,
        ),
    ],
)
def test_each_pre_registered_check_can_hold_and_can_fail(name, holds, fails, settings):
    assert run_check(name, holds, settings).ok is True
    assert run_check(name, fails, settings).ok is False


def test_the_rate_claims_read_every_seed():
    for claim_id in ("L17-R9.2a", "L17-R9.2b", "L17-R9.2c", "L17-R9.2d", "L17-R9.4a"):
        selectors = ledger.selectors(ENTRIES[claim_id]).values()
        assert all(s.get("stat") == "seeds" for s in selectors), claim_id


# -----------------------------------------------------------------------------
# recordings


def test_a_recording_is_swapped_in_whole_or_not_at_all(tmp_path):
    results, measured = tmp_path / "results", tmp_path / "measured"
    spec = {"seeds": [0, 1], "settings": {"p": 1}, "grid": {"model": ["a"]}}
    for seed in (0, 1):
        folder = results / "07.9/model=a"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"seed{seed}.csv").write_text(f"run {seed}\n")
        (folder / f"seed{seed}.timing.csv").write_text("timing\n")
    monkey = pytest.MonkeyPatch()
    monkey.setattr(record, "code_hashes", lambda demo: {"src/x.py": "0"})
    monkey.setattr(record, "registry_entry", lambda demo: "m.f timings=")
    try:
        folder = record.store("07.9", spec, "cpu", "a CPU", str(results), str(measured))
        saved = json.loads((folder / "record.json").read_text())
        assert saved["settings"] == {"p": 1, "device": "cpu"} and saved["machine"] == "a CPU"
        assert (folder / "model=a/seed1.csv").read_text() == "run 1\n"
        (results / "07.9/model=a/seed1.csv").unlink()  # a run missing: the old recording stays
        with pytest.raises(FileNotFoundError, match="1 run files of 07.9 missing"):
            record.store("07.9", spec, "cpu", "another CPU", str(results), str(measured))
        assert json.loads((folder / "record.json").read_text())["machine"] == "a CPU"
        assert sorted(p.name for p in measured.iterdir()) == ["07.9"]
    finally:
        monkey.undo()


def test_every_recorded_demo_is_recorded_and_matches_this_checkout():
    """The robustness runs are committed (make robustness) and current: the default build
    shows them without rerunning."""
    import yaml

    from lecture17.experiments import DEMOS

    config = yaml.safe_load((ROOT / "config/config.yaml").read_text(encoding="utf-8"))["demos"]
    recorded = [d for d in config if DEMOS[d].kind == "recorded"]
    assert recorded
    for demo in recorded:
        assert record.problems(demo, config[demo], str(ROOT / record.MEASURED), ROOT) == [], demo


def test_a_rate_that_holds_still_shows_its_count():
    """A claim judged on every seed shows k/N and its interval whether or not it holds (the
    rate is the result); an ordinary claim that holds shows no reason."""
    from lecture17.reporting.claims import why

    rate = claim(
        **{
            "class": "seeded",
            "value": {"quantity": "acc", "stat": "seeds", "where": {"model": "attn"}},
            "check": [{"above": {"value": "ours", "than": 0.5}}],
        }
    )
    outcome = ledger.evaluate(rate, {"09.9": TABLE})
    assert outcome.status == "holds" and "0.5" in why(outcome)
    assert why(ledger.evaluate(ABOVE, {"09.9": AGGREGATED_ABOVE})) == ""


AGGREGATED_ABOVE = aggregate(runs({("rnn", 0): 0.9, ("rnn", 1): 0.8}))
