"""Demos 04.1, 04.2, 04.4–04.6 (lecture17.experiments.layers, §7–§8) against the lecture's
numbers, and the training demo 04.3 (§7.5) at the tiny settings of .test/config/config.yaml.

The analytic demos run with their settings from config/config.yaml (demos.py): the lecture's
EXACT values against the digits it prints (1,050,624, 63,082,496, …), machine-precision
equivalences against EQUIV, "exactly 0" against 0.0, random (seeded) quantities against the
trend the lecture states, for every configured seed. 04.3's numbers at full settings are the
build's business (the ledger checks them); here: its curve, its chance level and the norm
placement each setup builds (test_training_demos.py holds what every training demo must satisfy).
"""

import math

import numpy as np
import pytest
from conftest import EQUIV, value
from demos import config, kwargs, run, seeds, spec, tiny_run

from lecture17 import training
from lecture17.experiments import layers
from lecture17.pipeline.aggregate import select
from lecture17.pipeline.job import load_demo

O1 = 0.1  # "changes by O(1)": the lecture quotes 1.46 … 2.74 for these random quantities


# -------------------------------------------------------------------------------------------
# 04.1 encoder layer = PyTorch; parameters of the base model (§7.4)


@pytest.mark.parametrize("seed", seeds("04.1"))
def test_04_1_numpy_encoder_layer_equals_pytorch(seed):
    table = run("04.1", seed)
    assert value(table, "max_abs_diff", placement="post_ln") < EQUIV
    assert value(table, "max_abs_diff", placement="pre_ln") < EQUIV


@pytest.mark.parametrize(
    ("part", "printed"),
    [
        ("mha", "1,050,624"),
        ("ffn", "2,099,712"),
        ("layer_norms", "2,048"),
        ("encoder_layer", "3,152,384"),
        ("decoder_layer", "4,204,032"),
        ("encoder_stack", "18,914,304"),
        ("decoder_stack", "25,224,192"),
        ("embedding", "18,944,000"),
        ("total", "63,082,496"),
    ],
)
def test_04_1_base_model_parameters(part, printed):
    table = run("04.1")
    assert f"{value(table, 'params_numpy', part=part):,.0f}" == printed
    assert value(table, "params_torch", part=part) == value(table, "params_numpy", part=part)


def test_04_1_total_is_about_63m_and_ffn_is_twice_attention_per_layer():
    table = run("04.1")
    assert f"{value(table, 'params_numpy', part='total') / 1e6:.0f}" == "63"
    assert f"{value(table, 'ffn_to_attention', part='encoder_layer'):.1f}" == "2.0"
    assert f"{value(table, 'ffn_to_attention', part='model'):.2f}" == "1.33"  # flag F05


# -------------------------------------------------------------------------------------------
# 04.2 LayerNorm vs BatchNorm (§7.3)


@pytest.mark.parametrize("seed", seeds("04.2"))
def test_04_2_batchnorm_moves_layernorm_does_not(seed):
    table = run("04.2", seed)
    for change in ("batch", "padding"):
        assert value(table, "max_abs_change", norm="batch_norm", change=change) > O1
        assert value(table, "max_abs_change", norm="layer_norm", change=change) == 0.0
    assert value(table, "layer_norm_vs_torch") < EQUIV


# -------------------------------------------------------------------------------------------
# 04.3 Post-LN vs Pre-LN (§7.5)


def test_ln_curve_starts_at_initialisation_and_chance_is_one_in_ten():
    settings = spec("04.3")["settings"]
    out = tiny_run("04.3")
    curve = select(out, "accuracy")
    every = settings["train"]["eval_every"]
    assert curve["step"].tolist() == list(range(0, settings["train"]["steps"] + 1, every))
    assert select(out, "chance")["value"].tolist() == [1 / training.N_SYMBOLS] == [0.1]
    assert len(select(out, "sequence_accuracy")["value"].to_numpy()) == 1


def test_ln_simulated_chance_is_one_in_ten():
    out = tiny_run("04.3")
    assert out["quantity"].iloc[-1] == "simulated_chance"
    sigma = math.sqrt(0.1 * 0.9 / training.CHANCE_DRAWS)
    assert value(out, "simulated_chance") == pytest.approx(0.1, abs=5 * sigma)


def test_ln_setups_build_the_right_norm_placement(monkeypatch):
    built = []
    original = training.train

    def spy(make_model, task, settings, **kw):
        built.append((make_model(), settings.warmup, settings.lr))
        return original(make_model, task, settings, **kw)

    monkeypatch.setattr(training, "train", spy)
    for setup in layers.LN_SETUPS:
        point = {"lr": 0.01, "setup": setup}
        layers.post_vs_pre_ln(**kwargs("04.3", point, train={"steps": 1}), seed=0)
    warmup = spec("04.3")["settings"]["train"]["warmup"]
    assert {lr for *_, lr in built} == {0.01}  # the grid's lr, set per run
    (post, w_post, _), (pre, w_pre, _), (post_warm, w_warm, _) = built
    assert [layer.norm_first for layer in post.encoder.layers] == [False] * len(post.encoder.layers)
    assert all(layer.norm_first for layer in pre.encoder.layers)
    assert not any(layer.norm_first for layer in post_warm.encoder.layers)
    assert (w_post, w_pre, w_warm) == (0, 0, warmup)


# -------------------------------------------------------------------------------------------
# 04.4 look-ahead mask (§8.1)


@pytest.mark.parametrize("seed", seeds("04.4"))
def test_04_4_with_the_mask_the_future_is_invisible(seed):
    table = run("04.4", seed)
    assert value(table, "max_weight_future", mask="look_ahead") == 0.0
    assert value(table, "max_change_past", mask="look_ahead") == 0.0
    assert value(table, "jacobian_future_max", mask="look_ahead") == 0.0


@pytest.mark.parametrize("seed", seeds("04.4"))
def test_04_4_without_the_mask_the_future_leaks(seed):
    table = run("04.4", seed)
    assert value(table, "max_weight_future", mask="none") > 0.01
    assert value(table, "max_change_past", mask="none") > O1  # lecture: 2.74
    assert value(table, "jacobian_future_min", mask="none") > 0.01  # lecture: 0.147


def test_04_4_numpy_attention_weights_are_variance_preserving(monkeypatch):
    """§8.1's single-head numpy attention draws W^Q, W^K, W^V ~ N(0, 1/d_model), §4.4's init
    (the mutant look_ahead_init_variance_as_std, standard deviation 1/d_model, shrank the
    past's change tenfold and still passed every O(1) test above)."""
    drawn, real = [], layers._masked_attention_values

    def spy(weights_qkv, *args):
        drawn.append(np.asarray(weights_qkv))
        return real(weights_qkv, *args)

    monkeypatch.setattr(layers, "_masked_attention_values", spy)
    settings = config()["04.4"]["settings"]
    load_demo("04.4")(**settings, seed=0)
    d_model = settings["d_model"]
    assert drawn and drawn[0].shape == (3, d_model, d_model)
    # 3 d² draws: the sample variance's relative sd is √(2 / 3d²), 2.6 % at d = 32
    assert drawn[0].var() * d_model == pytest.approx(1, rel=0.15)


# -------------------------------------------------------------------------------------------
# 04.5 decoder layer = PyTorch; parallel = step by step (§8.2, §8.4)


@pytest.mark.parametrize("seed", seeds("04.5"))
def test_04_5_numpy_decoder_layer_equals_pytorch(seed):
    table = run("04.5", seed)
    assert value(table, "max_abs_diff", placement="post_ln") < EQUIV
    assert value(table, "max_abs_diff", placement="pre_ln") < EQUIV
    assert value(table, "parallel_vs_incremental") < EQUIV


def test_04_5_positions_computed_with_and_without_a_kv_cache():
    table = run("04.5")
    assert value(table, "positions_without_cache") == 36
    assert value(table, "positions_with_cache") == 8


@pytest.mark.parametrize("tgt_len", [1, 5, 11])
def test_04_5_counted_positions_follow_the_sum_over_prefixes(tgt_len):
    """Counted by a hook on the decoder (06.2's count_positions), vs §8.4's Σ_t t and n."""
    settings = config()["04.5"]["settings"] | {"tgt_len": tgt_len}
    table = load_demo("04.5")(**settings, seed=0)
    assert value(table, "positions_without_cache") == tgt_len * (tgt_len + 1) // 2
    assert value(table, "positions_with_cache") == tgt_len


@pytest.mark.parametrize("seed", seeds("04.5"))
def test_04_5_cached_decoding_gives_the_parallel_outputs(seed):
    table = run("04.5", seed)
    assert value(table, "parallel_vs_cached") < EQUIV
    assert table["quantity"].iloc[-1] == "parallel_vs_cached"  # the new row comes last


# -------------------------------------------------------------------------------------------
# 04.6 padding mask (§8.3)


@pytest.mark.parametrize("seed", seeds("04.6"))
def test_04_6_padding_mask_makes_the_padded_sentence_the_sentence_alone(seed):
    table = run("04.6", seed)
    assert value(table, "max_weight_on_pads", mask="padding") == 0.0
    assert value(table, "max_change_new_pads", mask="padding") == 0.0
    assert value(table, "max_diff_vs_alone", mask="padding") < EQUIV


@pytest.mark.parametrize("seed", seeds("04.6"))
def test_04_6_without_the_mask_the_padding_leaks(seed):
    table = run("04.6", seed)
    assert value(table, "max_weight_on_pads", mask="none") > 0.01
    assert value(table, "max_change_new_pads", mask="none") > O1  # lecture: 1.73
    assert value(table, "max_diff_vs_alone", mask="none") > O1  # lecture: 1.46
