"""Demos 03.1–03.4 (lecture17.experiments.positional_encoding, §6) against the lecture's numbers,
and the training demo 03.5 (§6.6) at the tiny settings of .test/config/config.yaml.

The analytic demos run with their settings from config/config.yaml (demos.py). The lecture's
EXACT values are compared with the digits it prints (6.3, 47,117, 5.6569, 32.00, 22, 19/19,
0.050 …); machine-precision equivalences against EQUIV; "exactly 0" against 0.0. 03.5's numbers
at full settings are the build's business (the ledger checks them); here: its chance levels,
its norms at initialisation, and that its settings reach the model (test_training_demos.py
holds what every training demo must satisfy).
"""

import inspect
import math

import numpy as np
import pytest
from conftest import EQUIV, value
from demos import config, kwargs, run, spec, tiny_run

from lecture17 import attention_numpy as an
from lecture17 import tiny_transformer as tt
from lecture17 import training
from lecture17.experiments import positional_encoding
from lecture17.pipeline.aggregate import select

# -------------------------------------------------------------------------------------------
# 03.1 wavelengths, norms (§6.2)


def test_03_1_wavelengths_first_and_last_pair():
    table = run("03.1")
    assert f"{value(table, 'wavelength', pair=0):.1f}" == "6.3"
    assert f"{value(table, 'wavelength', pair=31):,.0f}" == "47,117"


def test_03_1_frequencies_are_the_papers():
    table = run("03.1")
    omega = select(table, "omega").sort_values("pair")["value"].to_numpy()
    np.testing.assert_allclose(omega, 1 / 10000 ** (np.arange(0, 64, 2) / 64), rtol=1e-12)


def test_03_1_every_norm_is_sqrt_half_d_model_and_values_in_unit_range():
    table = run("03.1")
    assert f"{value(table, 'norm_min'):.4f}" == "5.6569"
    assert f"{value(table, 'norm_max'):.4f}" == "5.6569"
    assert -1 <= value(table, "value_min") < -0.99
    assert 0.99 < value(table, "value_max") <= 1


def test_03_1_heatmap_is_the_pe_matrix():
    table = run("03.1")
    pe = select(table, "pe").pivot(index="pos", columns="dim", values="value").to_numpy()
    n = config()["03.1"]["settings"]["n_heatmap_positions"]
    np.testing.assert_array_equal(pe, an.positional_encoding(n, 64))


# -------------------------------------------------------------------------------------------
# 03.2 PE(p + k) = PE(p) M_k (§6.3)


def test_03_2_shift_is_linear_for_every_k_including_backwards():
    table = run("03.2")
    errors = select(table, "max_abs_err").set_index("k")["value"]
    assert set(errors.index) == {1, 3, 10, 40, -5}
    assert (errors < EQUIV).all()
    assert (select(table, "orthogonality_err")["value"] < EQUIV).all()
    assert value(table, "composition_err") < EQUIV


# -------------------------------------------------------------------------------------------
# 03.3 dot products depend only on the distance (§6.3, Ex6)


def test_03_3_dot_products_depend_only_on_k():
    table = run("03.3")
    dots = select(table, "dot").pivot(index="p", columns="k", values="value")
    assert list(dots.index) == [0, 37, 150, 280]
    assert (dots.max() - dots.min()).max() < EQUIV
    assert value(table, "row_max_diff") < EQUIV
    assert value(table, "symmetry_max_diff") < EQUIV
    # Ex6(a): PE(p)·PE(p+k) = Σ_i cos(ω_i k)
    omega = 1 / 10000 ** (np.arange(0, 64, 2) / 64)
    closed_form = [np.cos(omega * k).sum() for k in dots.columns]
    np.testing.assert_allclose(dots.to_numpy(), np.tile(closed_form, (4, 1)), atol=EQUIV)


def test_03_3_lecture_values():
    table = run("03.3")
    assert f"{value(table, 'dot', p=0, k=0):.2f}" == "32.00"  # Ex6(b): d/2
    assert value(table, "dot", p=0, k=100) > value(table, "dot", p=0, k=50)  # not monotone
    assert value(table, "n_rises") == 22


# -------------------------------------------------------------------------------------------
# 03.4 previous-token head (§6.4)


def test_03_4_every_position_looks_at_its_predecessor():
    table = run("03.4")
    assert (select(table, "n_with_predecessor")["value"] == 19).all()
    assert (select(table, "n_argmax_previous")["value"] == 19).all()


def test_03_4_weight_gets_harder_with_beta():
    weights = select(run("03.4"), "mean_weight_previous").sort_values("beta")["value"]
    assert np.all(np.diff(weights.to_numpy()) > 0)
    assert weights.iloc[0] > 1 / 20  # even the smallest β prefers the previous position


def test_03_4_control_is_uniform():
    table = run("03.4")
    assert f"{value(table, 'control_mean_weight_previous'):.3f}" == "0.050"
    assert value(table, "control_max_dev_uniform") < 1e-15


# -------------------------------------------------------------------------------------------
# 03.5 positional-encoding ablation (§6.6)


def test_pe_chance_counts_the_eos():
    # F01: uniform guessing is right 1 time in 10 on each symbol; EOS is counted and right
    L = spec("03.5")["settings"]["length"]
    assert value(tiny_run("03.5"), "chance") == pytest.approx((L * 0.1 + 1) / (L + 1), abs=1e-15)
    assert (16 * 0.1 + 1) / 17 == pytest.approx(0.1529, abs=1e-4)  # the lecture's 0.153 at L=16


def test_pe_simulated_chance_counts_the_eos():
    """F01 measured: random symbols then EOS, scored by greedy_accuracy like the models."""
    L = spec("03.5")["settings"]["length"]
    out = tiny_run("03.5")
    assert list(out["quantity"].iloc[-2:]) == ["simulated_chance", "simulated_symbol_chance"]
    sigma = math.sqrt(0.1 * 0.9 / training.CHANCE_DRAWS)  # one random symbol: 0.00095
    token = value(out, "simulated_chance")
    assert token == pytest.approx((L * 0.1 + 1) / (L + 1), abs=5 * sigma * L / (L + 1))
    assert value(out, "simulated_symbol_chance") == pytest.approx(0.1, abs=5 * sigma)
    assert abs(token - value(out, "chance")) < 0.005


def test_pe_norms_at_initialisation():
    d_model = spec("03.5")["settings"]["d_model"]
    plain, scaled = tiny_run("03.5", 0), tiny_run("03.5", 1)  # sinusoidal, sinusoidal_scaled
    default = inspect.signature(tt.Embedding).parameters["emb_scale"].default
    assert value(plain, "emb_scale") == default == 1.0  # §6.6: the code's default
    assert value(scaled, "emb_scale") == pytest.approx(math.sqrt(d_model))
    assert value(scaled, "scaled_embedding_norm") == pytest.approx(
        math.sqrt(d_model) * value(scaled, "embedding_norm"), rel=1e-12
    )
    for frame in (plain, scaled):  # ‖PE(pos)‖ = √(d/2) at every position (§6.2)
        assert value(frame, "pe_norm") == pytest.approx(math.sqrt(d_model / 2), rel=1e-6)
    # the same seed draws the same token embeddings in both variants
    assert value(plain, "embedding_norm") == value(scaled, "embedding_norm")


def test_pe_init_embedding_norm_is_the_mean_length_of_a_token_row():
    """§6.6's "mean length of the embeddings": ‖row‖ of each token, averaged over the
    vocabulary (the mutant init_norms_over_vocabulary, each dimension's norm over the
    vocabulary instead, passed the test above), about √d_model for N(0, 1) rows."""
    import torch

    settings = spec("03.5")["settings"]
    keys = ("d_model", "n_heads", "d_ff", "n_enc_layers", "n_dec_layers", "scale")
    torch.manual_seed(0)
    model = positional_encoding.pe_ablation_model(
        variant="sinusoidal", vocab_size=training.VOCAB_SIZE, **{k: settings[k] for k in keys}
    )
    norms = positional_encoding._init_norms(model, settings["length"])
    rows = model.encoder.embed.token.weight.detach().numpy()  # (vocab, d_model)
    expected = np.linalg.norm(rows, axis=1).mean()
    assert norms["embedding_norm"] == pytest.approx(expected, rel=1e-6)  # float32 rows
    assert norms["embedding_norm"] == pytest.approx(math.sqrt(settings["d_model"]), rel=0.25)


def test_pe_no_positional_encoding_has_no_pe_norm():
    out = positional_encoding.pe_ablation(**kwargs("03.5", {"variant": "none"}), seed=0)
    assert "pe_norm" not in set(out["quantity"])
    assert {"token_accuracy", "symbol_accuracy", "sequence_accuracy"} <= set(out["quantity"])


@pytest.mark.parametrize("scale", [True, False])
def test_pe_scale_setting_reaches_every_attention_block(scale):
    sizes = {k: spec("03.5")["settings"][k] for k in ("d_model", "n_heads", "d_ff")}
    model = positional_encoding.pe_ablation_model(
        variant="sinusoidal", vocab_size=training.VOCAB_SIZE, scale=scale, **sizes
    )
    blocks = [m for m in model.modules() if isinstance(m, tt.MultiHeadAttention)]
    assert len(blocks) == 3 and all(b.scale is scale for b in blocks)  # enc self, dec self, cross


def test_pe_ablation_trains_the_model_it_was_asked_for(monkeypatch):
    """scale=False and the variant reach the model train() builds (Ex9 is a config edit)."""
    built = []
    original = training.train

    def spy(make_model, task, settings, **kw):
        def recording():
            built.append(make_model())
            return built[-1]

        return original(recording, task, settings, **kw)

    monkeypatch.setattr(training, "train", spy)
    positional_encoding.pe_ablation(
        **kwargs("03.5", {"variant": "learned"}, scale=False, train={"steps": 2}), seed=0
    )
    (model,) = built
    assert model.encoder.embed.pe_kind == "learned"
    blocks = [m for m in model.modules() if isinstance(m, tt.MultiHeadAttention)]
    assert blocks and not any(b.scale for b in blocks)
