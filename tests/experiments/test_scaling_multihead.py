"""Demos 02.1, 02.2, 02.4, 02.5 (lecture17.experiments.scaling_multihead, §4–§5) against the
lecture, and the training demo 02.3 (§4.4) at the tiny settings of .test/config/config.yaml.

The analytic demos run with their settings from config/config.yaml (demos.py): exact claims
against the lecture's printed digits, equivalences against EQUIV, random ones against the trend
the lecture states. 02.3's numbers at full settings are the build's business (the ledger checks
them); here: its table, its chance levels, and how it picks the fastest learning rate
(test_training_demos.py holds what every training demo must satisfy).
"""

import math

import numpy as np
import pytest
from conftest import EQUIV, value
from demos import config, grid_points, kwargs, run, seeds, spec, tiny_run

from lecture17 import training
from lecture17.experiments import scaling_multihead
from lecture17.experiments.scaling_multihead import one_head_vs_three
from lecture17.pipeline.aggregate import select

# -------------------------------------------------------------------------------------------
# 02.1 Var(q·k) = d_k (§4.2)


def test_dot_product_variance_grows_like_d_k():
    table = run("02.1")
    for d_k in config()["02.1"]["settings"]["d_k_values"]:
        assert value(table, "var", d_k=d_k) == pytest.approx(d_k, rel=0.05)
        assert value(table, "var_scaled", d_k=d_k) == pytest.approx(1.0, abs=0.05)
    assert f"{value(table, 'std', d_k=1024):.0f}" == "32"  # §4.2 "标准差约 32"


# -------------------------------------------------------------------------------------------
# 02.2 softmax saturation (§4.3, Ex9)


def test_scaled_softmax_looks_the_same_for_every_d_k():
    table = run("02.2")
    for d_k in config()["02.2"]["settings"]["d_k_values"]:
        # §4.3: max weight ~0.25, entropy ~2.36, ‖J‖_F ~0.30 whatever d_k
        assert 0.28 <= value(table, "jacobian_norm", d_k=d_k, scaled="scaled") <= 0.32
        assert 0.22 <= value(table, "max_weight", d_k=d_k, scaled="scaled") <= 0.27
        assert 2.30 <= value(table, "entropy", d_k=d_k, scaled="scaled") <= 2.42 < np.log(16)


def test_unscaled_softmax_saturates_as_d_k_grows():
    table = run("02.2")
    # §4.3: d_k = 1024 unscaled: 76% of queries above 0.99, ‖J‖_F 0.0543
    assert value(table, "fraction_saturated", d_k=1024, scaled="unscaled") > 0.5
    assert value(table, "jacobian_norm", d_k=1024, scaled="unscaled") < 0.1
    d_ks = config()["02.2"]["settings"]["d_k_values"]
    fractions = [value(table, "fraction_saturated", d_k=d, scaled="unscaled") for d in d_ks]
    norms = [value(table, "jacobian_norm", d_k=d, scaled="unscaled") for d in d_ks]
    assert fractions == sorted(fractions) and norms == sorted(norms, reverse=True)


def test_measured_uniform_entropy_is_ln_n_keys():
    """§4.3 "均匀分布的熵是 ln 16 = 2.77", from the code that measures the table's entropies."""
    table = run("02.2")
    n_keys = config()["02.2"]["settings"]["n_keys"]
    measured = value(table, "measured_uniform_entropy")
    assert measured == pytest.approx(np.log(n_keys), abs=1e-12)
    assert f"{measured:.2f}" == "2.77"
    assert table["quantity"].iloc[-1] == "measured_uniform_entropy"
    entropies = select(table, "entropy")["value"]  # scaled and unscaled
    assert (entropies < measured).all()  # no row of 16 random scores is more spread out


def test_small_d_k_is_not_saturated_yet():
    table = run("02.2")
    # §4.3: d_k = 4 unscaled ‖J‖_F slightly larger than scaled (0.3245 vs 0.2976)
    assert value(table, "jacobian_norm", d_k=4, scaled="unscaled") > value(
        table, "jacobian_norm", d_k=4, scaled="scaled"
    )
    # Ex9: d_k = 16 unscaled max weight 0.684, ‖J‖_F 0.2805 vs scaled 0.3030
    assert value(table, "max_weight", d_k=16, scaled="unscaled") == pytest.approx(0.684, abs=0.02)
    assert value(table, "jacobian_norm", d_k=16, scaled="unscaled") == pytest.approx(
        0.2805, abs=0.01
    )
    assert value(table, "jacobian_norm", d_k=16, scaled="scaled") == pytest.approx(0.3030, abs=0.01)


# -------------------------------------------------------------------------------------------
# 02.3 the look-up task (§4.4)


@pytest.mark.parametrize("point_index", [0, 1])
def test_lookup_rows_per_learning_rate_and_per_job(point_index):
    settings, point = spec("02.3")["settings"], grid_points("02.3")[point_index]
    out = tiny_run("02.3", point_index)
    lrs = settings["adam_lrs"] if point["optimizer"] == "adam" else settings["sgd_lrs"]
    labels = [format(lr, "g") for lr in lrs]  # text labels, as the report and ledger read them
    curve = select(out, "accuracy")
    assert list(dict.fromkeys(curve["lr"])) == labels
    every = settings["train"]["eval_every"]
    expected_steps = list(range(every, settings["train"]["steps"] + 1, every))
    for label in labels:
        assert select(curve, lr=label)["step"].tolist() == expected_steps
    reached = {label: value(out, "reached", lr=label) for label in labels}
    claim_every = settings["claim_every"]  # the claims' grid: a subset of the evaluations
    assert claim_every % every == 0 and claim_every > every  # the .test config has both grids
    for quantity, grid in (("steps_to_90", claim_every), ("steps_to_90_fine", every)):
        steps = {label: select(out, quantity, lr=label)["value"].to_numpy() for label in labels}
        for label in labels:  # a step count exactly where the threshold was reached
            accuracy = select(out, "accuracy", lr=label)["value"].to_numpy()
            first = [
                s
                for s, a in zip(expected_steps, accuracy, strict=True)
                if a >= settings["threshold"] and s % grid == 0
            ]
            assert steps[label].tolist() == first[:1]
            if grid == claim_every:
                assert reached[label] == float(bool(first))
        all_steps = [s[0] for s in steps.values() if len(s)]
        assert select(out, f"best_{quantity}")["value"].tolist() == (
            [min(all_steps)] if all_steps else []
        )
    assert select(out, "n_lrs")["value"].tolist() == [len(lrs)]
    assert select(out, "n_lrs_reached")["value"].tolist() == [sum(reached.values())]
    assert value(out, "best_lr") in lrs


def test_lookup_chance_is_one_over_the_number_of_pairs():
    n_pairs = spec("02.3")["settings"]["n_pairs"]
    assert select(tiny_run("02.3"), "chance")["value"].tolist() == [1 / n_pairs]


def test_lookup_simulated_chance_is_one_over_the_number_of_pairs():
    """A random guesser scored by LookupTask.evaluate: 1/n_pairs within ~5 standard errors."""
    p = 1 / spec("02.3")["settings"]["n_pairs"]
    out = tiny_run("02.3")
    assert out["quantity"].iloc[-1] == "simulated_chance"  # new rows go last
    sigma = math.sqrt(p * (1 - p) / training.CHANCE_DRAWS)  # 0.00077 at 1/16
    assert value(out, "simulated_chance") == pytest.approx(p, abs=min(0.005, 5 * sigma))


def test_lookup_fastest_lr_ties_and_none_reached():
    tie = {0.1: {"steps": 50, "final": 1.0}, 1: {"steps": 50, "final": 1.0}}
    assert scaling_multihead._fastest(tie) == 0.1  # the first swept lr of a tie
    none = {0.1: {"steps": None, "final": 0.3}, 1: {"steps": None, "final": 0.5}}
    assert scaling_multihead._fastest(none) == 1  # no lr reached: the best final accuracy


# -------------------------------------------------------------------------------------------
# 02.4 multi-head: parameters, three implementations, the mask pitfall (§5.2–§5.4)


def test_parameter_count_does_not_depend_on_heads():
    table = run("02.4")
    for h in (1, 8, 16):  # §5.2
        for quantity in ("n_params_torch", "n_params_formula"):
            assert f"{value(table, quantity, n_heads=h):,.0f}" == "1,050,624"


@pytest.mark.parametrize("seed", seeds("02.4"))
def test_numpy_ours_and_torch_agree(seed):
    table = run("02.4", seed)
    diffs = table[table["quantity"].str.startswith("max_abs_diff")]
    # 3 cases × 3 comparisons × (output, weights); §5.4: 1.3e-15, 8.9e-16, 2.2e-16, 6.7e-16
    assert len(diffs) == 18
    assert set(diffs["case"]) == {"self", "cross", "padding"}
    assert (diffs["value"] < EQUIV).all()


def test_inverted_mask_attends_only_to_padding():
    table = run("02.4")
    assert f"{value(table, 'pad_weight_mean', mask='inverted'):.3f}" == "1.000"  # §5.4
    assert f"{value(table, 'pad_weight_min', mask='inverted'):.3f}" == "1.000"
    assert value(table, "pad_weight_max", mask="correct") == 0.0  # exp(-inf) = 0 exactly


# -------------------------------------------------------------------------------------------
# 02.5 one head vs three (§5.1)


def test_one_head_averages_three_heads_each_answer():
    table = run("02.5")
    for key in ("Jane", "l'Afrique", "septembre"):  # §5.1 "各 0.284"
        assert f"{value(table, 'weight', head='single', key=key):.3f}" == "0.284"
    for head, key in (("who", "Jane"), ("where", "l'Afrique"), ("when", "septembre")):
        assert f"{value(table, 'weight', head=head, key=key):.3f}" == "0.797"  # §5.1


def test_three_heads_concatenate_to_twelve_dims():
    table = run("02.5")
    concat = select(table, "concat_output")
    assert list(concat["head"]) == ["who"] * 4 + ["where"] * 4 + ["when"] * 4
    # each head's answer sits in its own slice: who → person, where → place, when → time
    for head, dim in (("who", "person"), ("where", "place"), ("when", "time")):
        block = concat[concat["head"] == head].set_index("dim")["value"]
        assert block.idxmax() == dim


def test_three_heads_do_not_interfere():
    """§5.1 "互不干扰": each head alone = its slice of the heads computed together (§5.3);
    noise on the other heads' W^Q, W^K, W^V leaves a slice exactly unchanged, its own moves it."""
    table = run("02.5")
    for head in ("who", "where", "when"):
        assert value(table, "head_alone_vs_slice", head=head) < EQUIV
        assert value(table, "cross_head_change", head=head) == 0.0
        assert value(table, "own_head_change", head=head) > 0.1  # the control
    new = {"head_alone_vs_slice", "cross_head_change", "own_head_change"}
    assert set(table["quantity"].iloc[-9:]) == new  # the new rows come last


def test_head_interference_would_be_seen(monkeypatch):
    """The measurement can fail: let W^O mix the heads before the slices are read."""
    from lecture17.experiments import scaling_multihead as sm

    unmixed = sm._heads_together
    mixing = np.random.default_rng(0).standard_normal((12, 12))  # (12, 12), a dense W^O
    monkeypatch.setattr(sm, "_heads_together", lambda *a: unmixed(*a) @ mixing)
    table = sm.one_head_vs_three(strength=6, seed=0)
    for head in ("who", "where", "when"):
        assert value(table, "head_alone_vs_slice", head=head) > 0.1
        assert value(table, "cross_head_change", head=head) > 0.1


def test_f03_strength_4_gives_the_01_1_numbers_instead():
    # Flag F03: with §2.3's strength 4 the 02.5 digits are 0.267 / 0.614, not 0.284 / 0.797.
    table = one_head_vs_three(strength=4, seed=0)
    assert f"{value(table, 'weight', head='single', key='Jane'):.3f}" == "0.267"
    assert f"{value(table, 'weight', head='who', key='Jane'):.3f}" == "0.614"


def test_lookup_claims_grid_must_be_a_multiple_of_the_evaluations():
    arguments = kwargs("02.3")
    arguments["claim_every"] = arguments["train"].eval_every + 1
    with pytest.raises(ValueError, match=r"claim_every .* must be a multiple of train.eval_every"):
        scaling_multihead.lookup_task(**arguments, seed=0)


@pytest.mark.parametrize(
    "reading, match",
    [("wide", "unknown reading 'wide'"), ("lr", "a reading changes d_model, readout or keys")],
)
def test_a_sensitivity_reading_that_is_not_declared_or_changes_other_settings_is_refused(
    reading, match
):
    readings = {"layer": {"readout": "layer"}, "lr": {"threshold": 0.5}}
    with pytest.raises(ValueError, match=match):
        scaling_multihead.lookup_sensitivity(
            reading=reading, readings=readings, **kwargs("02.3"), seed=0
        )


@pytest.mark.parametrize("readout, keys", [("layer", "random"), ("onehot", "embedded")])
def test_each_lookup_reading_trains_and_scores_like_the_main_one(readout, keys):
    """The other readings of §4.4 (07.2) give the same rows, and are another model."""
    main = tiny_run("02.3")
    other = scaling_multihead.lookup_task(**kwargs("02.3", readout=readout, keys=keys), seed=0)
    always = ["accuracy", "reached", "final_accuracy", "n_lrs_reached", "n_lrs", "best_lr"]
    for table in (main, other):
        assert set(always) <= set(table["quantity"])
    mine, theirs = select(main, "accuracy"), select(other, "accuracy")
    assert mine[["lr", "step"]].equals(theirs[["lr", "step"]])  # the same evaluations
    assert not mine["value"].reset_index(drop=True).equals(theirs["value"].reset_index(drop=True))
