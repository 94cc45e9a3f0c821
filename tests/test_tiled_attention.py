"""tiled_attention (§10.4, FlashAttention's idea in numpy) against the plain version, its memory,
its input checks, and demo 06.1 that shows both.

The plain scaled_dot_product_attention is itself checked against PyTorch at float64
(test_attention_numpy.py), so equality with it at 1e-12 is equality with PyTorch.
"""

import tracemalloc

import numpy as np
import pytest

from lecture17 import attention_numpy as an
from lecture17.experiments.beyond import memory_light_attention

ATOL = 1e-12  # float64, the same numbers summed in another order (scores and values of order 1)
EPS = np.finfo(np.float64).eps  # 2.2e-16
SEEDS = [0, 1, 2]
MIB = 2**20


def assert_close(actual, expected, atol=ATOL):
    np.testing.assert_allclose(actual, expected, rtol=0.0, atol=atol)


def attention_atol(Q, K, V):
    """What float64 can promise for |plain - tiled| of softmax(Q K^T) V, on any CPU.

    A score s = q·k sums d_k products; rounding moves it by |δs| <= c·eps·Σ_i |q_i k_i|, with
    c = d_k at worst and about sqrt(d_k) in practice (the roundings add like a random walk,
    Higham & Mary 2019). Another summation order or BLAS kernel (the tiles' small products,
    another CPU's AVX-512 or AVX2 code, FMA or not) rounds differently, within that bound.
    The softmax turns an error in the scores into relative errors in the weights,
    δw_j = w_j (δs_j - Σ_k w_k δs_k), so the output moves by δo = Σ_j w_j δs_j (v_j - o):
    |δo| <= max|δs| · 2 max|V|. Two computations, each that far from the exact one: another 2.
    Hence atol = 4 sqrt(d_k) eps max(|Q| |K|^T) max|V|; |Q| |K|^T bounds |Q K^T| (cancellation
    in a dot product does not cancel its rounding). exp, the sums and the division add only
    ~eps·|o| each. With scores of order 1 this is below ATOL; with scores in the thousands and
    values of order 10 it is ~7e-9, not 1e-12: a fixed 1e-12 there passes or fails by CPU.
    """
    score_bound = np.max(np.abs(Q) @ np.swapaxes(np.abs(K), -1, -2))  # >= max |scores|
    return 4 * np.sqrt(Q.shape[-1]) * EPS * score_bound * np.max(np.abs(V))


def traced_peak_bytes(fn):
    """Peak memory allocated while fn() runs (numpy reports its buffers to tracemalloc)."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def make_mask(kind, rng, batch, n_q, n_k):
    """1 = may attend; every row keeps at least one key (as in the lecture's masks)."""
    if kind == "none":
        return None
    if kind == "causal":  # §8.1, n_q == n_k
        return an.create_look_ahead_mask(n_q)
    if kind == "padding":  # §8.3: (b, 1, n_k) broadcasts over the queries; the key 0 is real
        lengths = rng.integers(1, n_k + 1, size=batch)  # (...,)
        mask = (np.arange(n_k) < lengths[..., np.newaxis]).astype(np.float64)  # (..., n_k)
        return mask[..., np.newaxis, :]  # (..., 1, n_k)
    mask = (rng.random((*batch, n_q, n_k)) < 0.5).astype(np.float64)  # "random"
    mask[..., rng.integers(n_k)] = 1.0
    return mask


# --------------------------------------------------------------------------------------------
# Same output as scaled_dot_product_attention


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("block_size", [1, 7, 64, 1000])
@pytest.mark.parametrize("mask_kind", ["none", "padding", "causal", "random"])
@pytest.mark.parametrize("scale", [True, False])
@pytest.mark.parametrize(
    ("batch_q", "batch_k", "batch_v"),
    [((), (), ()), ((3,), (3,), (3,)), ((2, 1), (1, 4), (2, 4)), ((), (), (3,))],
    ids=["unbatched", "b", "b_h_broadcast", "batched_v_only"],
)
def test_tiled_equals_plain(seed, block_size, mask_kind, scale, batch_q, batch_k, batch_v):
    rng = np.random.default_rng(seed)
    n_q, n_k = rng.integers(1, 70, size=2)
    if mask_kind == "causal":
        n_k = n_q
    d_k, d_v = rng.integers(1, 17, size=2)
    Q = rng.normal(size=(*batch_q, n_q, d_k))
    K = rng.normal(size=(*batch_k, n_k, d_k))
    V = rng.normal(size=(*batch_v, n_k, d_v))
    batch = np.broadcast_shapes(batch_q, batch_k, batch_v)
    mask = make_mask(mask_kind, rng, batch, n_q, n_k)
    expected, _ = an.scaled_dot_product_attention(Q, K, V, mask, scale=scale)
    output = an.tiled_attention(Q, K, V, mask, block_size=block_size, scale=scale)
    assert output.shape == expected.shape == (*batch, n_q, d_v)
    assert_close(output, expected)


@pytest.mark.parametrize("seed", SEEDS)
def test_tiled_matches_torch_with_a_causal_mask(seed):
    import torch
    import torch.nn.functional as F

    rng = np.random.default_rng(seed)
    Q, K, V = rng.normal(size=(3, 2, 100, 16))  # (b, n, d_k) each
    output = an.tiled_attention(Q, K, V, an.create_look_ahead_mask(100), block_size=32)
    q, k, v = (torch.from_numpy(a) for a in (Q, K, V))
    assert_close(output, F.scaled_dot_product_attention(q, k, v, is_causal=True).numpy())


def large_scores_case():
    """Unscaled scores in the thousands, values of order 10; the max moves late in each row."""
    rng = np.random.default_rng(0)
    Q, K, V = 10 * rng.normal(size=(3, 50, 64))  # scores of order 10·10·8 = 800, up to ~9000
    K[-1] = 2 * Q.max(axis=0)  # the last key, in the last tile, scores highest for many queries
    return Q, K, V


def check_large_scores(Q, K, V, on_overflow="raise"):
    with np.errstate(over=on_overflow, invalid=on_overflow):  # underflow to 0 is expected
        output = an.tiled_attention(Q, K, V, block_size=8, scale=False)
    expected, _ = an.scaled_dot_product_attention(Q, K, V, scale=False)
    # Not ATOL: outputs of ~35 computed through scores of ~9000 (see attention_atol): 7e-9.
    assert_close(output, expected, atol=attention_atol(Q, K, V))


def test_large_scores_do_not_overflow():
    # exp() of such scores overflows unless every tile subtracts the running max.
    check_large_scores(*large_scores_case())


def online_softmax_with(bug):
    """_attend_query_block (no mask) rewritten with one deliberate bug, or none (the control)."""

    def attend(q, K, V, mask, block_size, batch, dtype):
        m = np.full((*batch, q.shape[-2], 1), -np.inf, dtype)  # running max
        l = np.zeros((*batch, q.shape[-2], 1), dtype)  # running denominator
        acc = np.zeros((*batch, q.shape[-2], V.shape[-1]), dtype)  # running numerator
        for start in range(0, K.shape[-2], block_size):
            keys = slice(start, start + block_size)
            scores = q @ np.swapaxes(K[..., keys, :], -1, -2)  # (..., b_q, b_k)
            m_new = {
                None: np.maximum(m, scores.max(axis=-1, keepdims=True)),
                "no_max": np.zeros_like(m),  # exp(scores) as it is
                "stale_max": m if start > 0 else scores.max(axis=-1, keepdims=True),
                "tile_max": scores.max(axis=-1, keepdims=True),  # forgets the earlier tiles
                "no_rescale": np.maximum(m, scores.max(axis=-1, keepdims=True)),
            }[bug]
            rescale = 1.0 if bug == "no_rescale" else np.exp(m - m_new)  # (..., b_q, 1)
            p = np.exp(scores - m_new)  # (..., b_q, b_k)
            l = rescale * l + p.sum(axis=-1, keepdims=True)
            acc = rescale * acc + p @ V[..., keys, :]
            m = m_new
        return acc / l  # (..., b_q, d_v)

    return attend


def test_large_scores_check_passes_the_faithful_rewrite(monkeypatch):
    # The control for the test below: the rewrite without a bug passes the same check.
    monkeypatch.setattr(an, "_attend_query_block", online_softmax_with(None))
    check_large_scores(*large_scores_case())


@pytest.mark.parametrize("bug", ["no_max", "stale_max", "tile_max", "no_rescale"])
def test_large_scores_check_catches_a_wrong_running_max(monkeypatch, bug):
    # Every test can fail: with overflow not raised, the tolerance alone must catch each bug
    # (an inf or nan output, or for no_rescale an error of ~30 against the atol of 7e-9).
    monkeypatch.setattr(an, "_attend_query_block", online_softmax_with(bug))
    with pytest.raises(AssertionError):
        check_large_scores(*large_scores_case(), on_overflow="ignore")


def test_float32_stays_float32():
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(3, 20, 8)).astype(np.float32)
    output = an.tiled_attention(Q, K, V, an.create_look_ahead_mask(20), block_size=6)
    expected, _ = an.scaled_dot_product_attention(Q, K, V, an.create_look_ahead_mask(20))
    assert output.dtype == np.float32
    assert_close(output, expected, atol=1e-6)  # float32 rounding: eps 1.2e-7


def test_fully_masked_row_behaves_like_the_plain_version():
    # Flag F02: in float64 a fully masked row is ~ the softmax of the original scores, because
    # the -1e9 shift cancels; the tiles cancel it the same way (to the 1.2e-7 spacing at 1e9).
    Q = np.array([[1.0, 0.0], [0.0, 1.0]])
    K = np.array([[2.0, 0.0], [0.0, 0.5], [1.0, 1.0], [-1.0, 0.0]])
    mask = np.array([[1, 1, 0, 1], [0, 0, 0, 0]])
    expected, _ = an.scaled_dot_product_attention(Q, K, np.eye(4), mask)
    output = an.tiled_attention(Q, K, np.eye(4), mask, block_size=3)
    assert_close(output, expected, atol=1e-6)
    assert np.max(np.abs(output[1] - 0.25)) > 0.05  # not uniform, as in the plain version


# --------------------------------------------------------------------------------------------
# Memory: O(n · block) instead of the (n, n) matrix (§3.4, §10.4)


def test_tiled_never_holds_the_n_by_n_matrix():
    n, d = 4096, 64
    matrix_bytes = n * n * 8  # 128 MiB in float64
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(3, n, d))
    padding = (np.arange(n) < n - 100).astype(np.float64)[np.newaxis]  # (1, n)
    plain = traced_peak_bytes(lambda: an.scaled_dot_product_attention(Q, K, V))
    tiled = traced_peak_bytes(lambda: an.tiled_attention(Q, K, V, block_size=64))
    tiled_masked = traced_peak_bytes(lambda: an.tiled_attention(Q, K, V, padding, block_size=64))
    assert plain >= matrix_bytes == 128 * MIB  # the scores/weights, at least once
    assert tiled <= 0.05 * matrix_bytes
    assert tiled_masked <= 0.05 * matrix_bytes  # the mask is sliced, never broadcast in full


# --------------------------------------------------------------------------------------------
# Bad input raises ValueError, as in the plain version


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        ((np.ones((3, 4)), np.ones((5, 2)), np.ones((5, 2))), {}, "same depth d_k"),
        ((np.ones((3, 4)), np.ones((5, 4)), np.ones((6, 2))), {}, "same length n_k"),
        (
            (np.ones((3, 4)), np.ones((5, 4)), np.ones((5, 2)), np.ones((3, 4))),
            {},
            r"mask of shape \(3, 4\) does not broadcast.*\(3, 5\)",
        ),
        (
            (np.ones((3, 4)), np.ones((3, 4)), np.ones((3, 2)), np.full((3, 3), -np.inf)),
            {},
            "only 1",
        ),
        ((np.ones(4), np.ones((3, 4)), np.ones((3, 2))), {}, r"Q must have shape"),
        (([["a", "b"]], np.ones((1, 2)), np.ones((1, 2))), {}, "real numeric"),
        ((np.ones((2, 3, 4)), np.ones((3, 5, 4)), np.ones((3, 5, 2))), {}, "leading axes"),
        ((np.ones((3, 4)), np.ones((3, 4)), np.ones((3, 2))), {"block_size": 0}, "block_size"),
        ((np.ones((3, 4)), np.ones((3, 4)), np.ones((3, 2))), {"block_size": 2.5}, "block_size"),
        ((np.ones((3, 4)), np.ones((3, 4)), np.ones((3, 2))), {"block_size": True}, "block_size"),
    ],
)
def test_bad_input_raises_value_error(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        an.tiled_attention(*args, **kwargs)
    if "block_size" not in kwargs:  # the same message as the plain version's
        with pytest.raises(ValueError, match=match):
            an.scaled_dot_product_attention(*args)


# --------------------------------------------------------------------------------------------
# Demo 06.1


def test_demo_06_1_rows_and_values():
    sizes = [8, 20]
    table = memory_light_attention(sizes=sizes, d=4, block_size=3, repeats=2, seed=0)
    assert list(table.columns) == ["method", "n", "quantity", "value"]
    expected = {
        (method, n, quantity)
        for n in sizes
        for method, quantity in [
            ("plain", "ms"),
            ("plain", "peak_mb"),
            ("plain", "matrix_mb"),
            ("tiled", "ms"),
            ("tiled", "peak_mb"),
            ("tiled", "max_abs_diff"),
        ]
    }
    rows = list(zip(table["method"], table["n"], table["quantity"], strict=True))
    assert len(rows) == len(set(rows)) and set(rows) == expected
    value = table.set_index(["method", "n", "quantity"])["value"]
    for n in sizes:
        assert value["plain", n, "matrix_mb"] == n * n * 8 / 1e6
        assert value["tiled", n, "max_abs_diff"] < ATOL
        assert value["plain", n, "peak_mb"] >= value["plain", n, "matrix_mb"]
        assert value["plain", n, "ms"] > 0 and value["tiled", n, "ms"] > 0


def test_demo_06_1_lecture_matrix_size_and_memory_gap():
    # §3.4: "一个 (n, n) 的 float64 权重矩阵在 n = 2048 时就占 33.6 MB"
    table = memory_light_attention(sizes=[2048], d=8, block_size=64, repeats=1, seed=0)
    value = table.set_index(["method", "quantity"])["value"]
    assert f"{value['plain', 'matrix_mb']:.1f}" == "33.6"
    assert value["plain", "peak_mb"] >= 33.6
    assert value["tiled", "peak_mb"] <= 0.05 * value["plain", "matrix_mb"]
    assert value["tiled", "max_abs_diff"] < ATOL


def test_demo_06_1_peak_memory_is_deterministic():
    # The report shows peak_mb outside the machine-dependent block: it must repeat exactly.
    def peaks():
        table = memory_light_attention(sizes=[16, 100], d=8, block_size=16, repeats=1, seed=1)
        return table[table["quantity"] == "peak_mb"]["value"].to_numpy()

    np.testing.assert_array_equal(peaks(), peaks())
