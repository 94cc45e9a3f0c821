"""Demos 01.1–01.5 (lecture17.experiments.self_attention, §1–§3) against the lecture.

Every demo runs with its settings from config/config.yaml (demos.py). Exact claims are compared
with the lecture's printed digits; equivalences against EQUIV; random demos against the trend
the lecture states (the lecture's own digits for them are one seed of one machine).
"""

from itertools import pairwise

import numpy as np
import pandas as pd
import pytest
from conftest import EQUIV, value
from demos import config, run, seeds

from lecture17.experiments import DEMOS
from lecture17.pipeline.aggregate import select
from lecture17.pipeline.job import run_demo

WORDS = ["Jane", "visite", "l'Afrique", "en", "septembre"]


# -------------------------------------------------------------------------------------------
# 01.1 Jane visite l'Afrique en septembre (§2.3)


def test_jane_query_and_scores_of_afrique():
    table = run("01.1")
    query = [
        value(table, "query_vector", query="l'Afrique", dim=d)
        for d in ("person", "action", "place", "time")
    ]
    scores = [value(table, "scaled_score", query="l'Afrique", key=k) for k in WORDS]
    assert query == [0, 4, 0, 0]  # §2.3 "l'Afrique 的 query 是 (0, 4, 0, 0)"
    assert [f"{s:g}" for s in scores] == ["0", "2", "0", "0.5", "0"]  # §2.3


def test_jane_weights_and_output_have_the_lectures_digits():
    table = run("01.1")
    afrique_visite = value(table, "weight", query="l'Afrique", key="visite")
    assert f"{afrique_visite:.3f}" == "0.614"  # §2.3, §11
    output = [
        value(table, "output", query="l'Afrique", dim=d)
        for d in ("person", "action", "place", "time")
    ]
    assert [f"{v:.3f}" for v in output] == ["0.117", "0.648", "0.117", "0.117"]  # A⟨3⟩
    for key in ("Jane", "l'Afrique"):  # §2.3 "各 0.379"
        assert f"{value(table, 'weight', query='visite', key=key):.3f}" == "0.379"


def test_jane_weight_rows_sum_to_one():
    weights = select(run("01.1"), "weight")
    sums = weights.groupby("query")["value"].sum()
    assert len(sums) == 5
    np.testing.assert_allclose(sums.to_numpy(), 1.0, rtol=0, atol=EQUIV)


# -------------------------------------------------------------------------------------------
# 01.2 loop = matrix = PyTorch (§3.1)


@pytest.mark.parametrize("seed", seeds("01.2"))
def test_loop_matrix_and_torch_agree(seed):
    table = run("01.2", seed)
    assert value(table, "max_abs_diff", comparison="loop_vs_matrix") < EQUIV  # 4.4e-16
    assert value(table, "max_abs_diff", comparison="matrix_vs_torch") < EQUIV  # 2.2e-16


# -------------------------------------------------------------------------------------------
# 01.3 permutation equivariance (§3.2, Ex5)


@pytest.mark.parametrize("seed", seeds("01.3"))
def test_without_pe_word_order_is_invisible(seed):
    table = run("01.3", seed)
    assert value(table, "visite_max_abs_diff", pe="none") < EQUIV  # §11: 2.8e-16
    assert value(table, "perm_max_abs_diff", pe="none") < EQUIV  # §3.2: 2.2e-16


@pytest.mark.parametrize("seed", seeds("01.3"))
def test_with_pe_word_order_changes_the_output(seed):
    table = run("01.3", seed)
    # §3.2: 1.29 with PE: clearly non-zero (its size depends on the random draws)
    assert value(table, "perm_max_abs_diff", pe="sinusoidal") > 1e-2
    assert value(table, "visite_max_abs_diff", pe="sinusoidal") > 1e-2


def test_visite_components_match_the_max_diff():
    table = run("01.3")
    for pe in ("none", "sinusoidal"):
        a, b = (
            select(table, "visite_output", pe=pe, sentence=s)["value"].to_numpy()
            for s in ("Jane visite Marie", "Marie visite Jane")
        )
        assert len(a) == len(b) == config()["01.3"]["settings"]["n_components"]
        assert np.max(np.abs(a - b)) <= value(table, "visite_max_abs_diff", pe=pe)


# -------------------------------------------------------------------------------------------
# 01.4 path length (§1.2)


def _sensitivity(model: str) -> pd.Series:
    rows = select(run("01.4"), "sensitivity", model=model)
    return pd.Series(rows["value"].to_numpy(), index=rows["distance"].astype(int).to_numpy())


def test_every_distance_is_reported():
    n = config()["01.4"]["settings"]["seq_len"]
    for model in ("rnn", "attention"):
        assert list(_sensitivity(model).index) == list(range(n))


def test_rnn_sensitivity_decays_roughly_exponentially():
    rnn = _sensitivity("rnn")
    # §1.2: 2.3 at distance 1, 5.3e-07 at 32, 9.2e-14 at 63
    assert rnn[32] < 1e-4 * rnn[1]
    checkpoints = [1, 2, 4, 8, 16, 32, 48, 63]
    assert all(rnn[a] > rnn[b] for a, b in pairwise(checkpoints))
    assert rnn[63] < 1e-4 * rnn[32]


def test_attention_sensitivity_does_not_depend_on_distance():
    table, att = run("01.4"), _sensitivity("attention")
    near = value(table, "mean_sensitivity_1_8", model="attention")  # §1.2: 1.1e-01
    far = value(table, "mean_sensitivity_32_63", model="attention")  # §1.2: 1.3e-01
    assert near == pytest.approx(att[1:9].mean(), rel=1e-12)
    assert far == pytest.approx(att[32:64].mean(), rel=1e-12)
    assert far / 3 < near < far * 3
    assert att[0] > att[1:].max()  # §1.2: distance 0 also enters through the query
    assert att[1:].min() > _sensitivity("rnn")[32]


# -------------------------------------------------------------------------------------------
# 01.5 complexity (§3.4)


def test_multiply_adds_and_memory():
    settings, table = config()["01.5"]["settings"], run("01.5")
    d = settings["d_model"]
    for n in settings["n_values"]:
        assert value(table, "multiply_adds", model="self_attention", n=n) == n * n * d
        assert value(table, "multiply_adds", model="rnn", n=n) == n * d * d
        assert value(table, "ratio", n=n) == n / d
    assert f"{value(table, 'weight_matrix_mb', n=2048):.1f}" == "33.6"  # §3.4


def test_counted_multiply_adds_equal_the_closed_forms():
    """FlopCounterMode's count of Q K^T and of n recurrent steps vs §3.4's n²d and nd²."""
    settings, table = config()["01.5"]["settings"], run("01.5")
    d = settings["d_model"]
    for n in settings["n_values"]:
        assert value(table, "counted_multiply_adds", model="self_attention", n=n) == n * n * d
        assert value(table, "counted_multiply_adds", model="rnn", n=n) == n * d * d
        assert value(table, "counted_ratio", n=n) == n / d  # §3.4 "比值就是 n/d"
    counted = {"counted_multiply_adds", "counted_ratio"}
    last = table["quantity"].iloc[-3 * len(settings["n_values"]) :]
    assert set(last) == counted  # the counted rows come after the others


def test_counting_sees_the_shapes_it_is_given():
    """Not the formula echoed: rectangular sizes, and a count that would miss a step."""
    from lecture17.experiments.self_attention import _counted_multiply_adds

    assert _counted_multiply_adds(3, 5) == {"self_attention": 3 * 3 * 5, "rnn": 3 * 5 * 5}
    assert _counted_multiply_adds(1, 7) == {"self_attention": 7, "rnn": 49}


def test_only_the_ms_quantities_change_between_runs():
    settings, table = config()["01.5"]["settings"], run("01.5")
    timed = table["quantity"].isin(DEMOS["01.5"].timings)  # the declared ms_… quantities
    per_layer = select(table, "ms_per_layer")
    assert len(per_layer) == 2 * len(settings["timing_n_values"])
    assert (per_layer["value"] > 0).all()
    again = run_demo("01.5", settings, 0)  # a second run: everything but the timings repeats
    pd.testing.assert_frame_equal(table[~timed], again[~timed])


# -----------------------------------------------------------------------------
# 01.4's two models against PyTorch's own (the mutants rnn_without_tanh and
# sensitivity_softmax_over_queries showed these missing: only the ledger caught them)


def test_the_sensitivity_rnn_is_torchs_rnn_with_the_same_weights():
    import torch

    from lecture17.experiments.self_attention import _random_rnn, _rnn_last

    rng = np.random.default_rng(0)
    rnn = _random_rnn(rng, 8, 16)
    x = torch.from_numpy(rng.standard_normal((12, 8)))  # (n, d_model)
    theirs = torch.nn.RNN(8, 16, nonlinearity="tanh").double()
    with torch.no_grad():
        theirs.weight_ih_l0.copy_(rnn["W_xh"].T)
        theirs.weight_hh_l0.copy_(rnn["W_hh"].T)
        theirs.bias_ih_l0.copy_(rnn["b_xh"])
        theirs.bias_hh_l0.copy_(rnn["b_hh"])
        _, h_n = theirs(x[:, None])  # (1, 1, hidden)
    torch.testing.assert_close(_rnn_last(rnn, x), h_n[0, 0], rtol=0, atol=1e-12)


def test_the_sensitivity_attention_is_torchs_sdpa_on_the_last_query():
    import torch
    import torch.nn.functional as F

    from lecture17.experiments.self_attention import _attention_last, _random_attention

    rng = np.random.default_rng(1)
    att = _random_attention(rng, 8)
    x = torch.from_numpy(rng.standard_normal((12, 8)))
    Q, K, V = x @ att["q"], x @ att["k"], x @ att["v"]
    theirs = F.scaled_dot_product_attention(Q[None], K[None], V[None])[0, -1]
    torch.testing.assert_close(_attention_last(att, x), theirs, rtol=0, atol=1e-12)
