"""attention_numpy against PyTorch's own modules (float64), the lecture's properties, its exercises,
and tiled_attention (§10.4) against the plain version.

Parameters are drawn at random and copied with the module's converters (which check shapes),
so a transposed or mis-split matrix fails here. Biases and LayerNorm weights are randomised
too: PyTorch initialises them to 0 and 1, which would hide a bias bug.
"""

import math
import re
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from conftest import ATOL, RTOL
from hypothesis import given, settings
from hypothesis import strategies as st

from lecture17 import attention_numpy as an

torch.set_num_threads(1)  # §0.5: single-threaded, like the lecture

SEEDS = [0, 1, 2]
PROPERTY = settings(max_examples=30, deadline=None)


def assert_close(actual, expected, atol=ATOL):
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=atol)


def to_numpy(tensor):
    return tensor.detach().numpy()


def randomise_(module, seed, scale=0.5):
    """Overwrite every parameter with uniform(-scale, scale) noise from a seeded generator."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_((torch.rand(p.shape, generator=gen, dtype=p.dtype) * 2 - 1) * scale)
    return module.eval()


def random_tokens(rng, b, n):
    """(b, n) token ids in 1..9 followed by padding (0); every sentence keeps >= 1 real token."""
    lengths = rng.integers(1, n + 1, size=b)
    lengths[0] = n  # one full sentence, so the batch really needs length n
    tokens = rng.integers(1, 10, size=(b, n))
    tokens[np.arange(n) >= lengths[:, None]] = 0
    return tokens


def random_mask(rng, shape):
    """Random 0/1 mask; every row keeps >= 1 key (a fully masked row is NaN in torch)."""
    mask = (rng.random(shape) < 0.6).astype(np.float64)
    first = rng.integers(0, shape[-1], size=shape[:-1])
    np.put_along_axis(mask, first[..., None], 1.0, axis=-1)
    return mask


def random_mha_params(rng, d_model):
    return an.mha_params_from_torch(
        randomise_(
            torch.nn.MultiheadAttention(d_model, 1, dtype=torch.float64), int(rng.integers(10**9))
        )
    )


# --------------------------------------------------------------------------------------------
# Primitives


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("shape", [(5,), (3, 7), (2, 3, 4)])
def test_softmax_matches_torch(seed, shape):
    x = np.random.default_rng(seed).normal(scale=5.0, size=shape)
    for axis in range(-len(shape), 0):
        assert_close(an.softmax(x, axis=axis), to_numpy(torch.softmax(torch.from_numpy(x), axis)))


def test_softmax_is_stable_for_large_scores():
    # Without subtracting the max, exp(1000) overflows to inf and the result is nan.
    assert_close(an.softmax(np.array([1000.0, 1000.0, -1000.0])), [0.5, 0.5, 0.0])


def test_softmax_in_place_gives_the_same_numbers_and_attention_uses_it(monkeypatch):
    x = np.random.default_rng(0).normal(scale=5.0, size=(3, 4, 6))
    expected, buffer = an.softmax(x, axis=1), x.copy()
    assert an.softmax(buffer, axis=1, out=buffer) is buffer
    np.testing.assert_array_equal(buffer, expected)  # bit for bit, not only close
    assert x.dtype == np.float64 and not np.shares_memory(an.softmax(x), x)  # x untouched
    # §3.1's attention is §2.2's softmax of the scores, not a second copy of it
    calls = []
    monkeypatch.setattr(an, "softmax", lambda s, axis=-1, out=None: calls.append(s) or s)
    an.scaled_dot_product_attention(x[0], x[1], x[2])
    assert len(calls) == 1 and calls[0].shape == (4, 4)


def test_masks():
    tokens = np.array([[5, 3, 0, 0], [2, 0, 0, 0]])
    expected = np.array([[[1, 1, 0, 0]], [[1, 0, 0, 0]]], dtype=np.float64)
    np.testing.assert_array_equal(an.create_padding_mask(tokens), expected)
    np.testing.assert_array_equal(an.create_padding_mask(tokens + 1, pad_id=1), expected)
    np.testing.assert_array_equal(an.create_look_ahead_mask(3), [[1, 0, 0], [1, 1, 0], [1, 1, 1]])


# --------------------------------------------------------------------------------------------
# Scaled dot-product attention vs F.scaled_dot_product_attention


def torch_sdpa(Q, K, V, mask, scale=None):
    """PyTorch's output and weights; its boolean attn_mask means True = may attend.

    Q, K, V first get the batch axes of the whole call, the mask's included:
    F.scaled_dot_product_attention adds the mask to its scores in place, so there a mask cannot
    add axes (a (1, n_q, n_k) mask with 2-D Q, K, V fails in PyTorch).
    """
    mask_batch = () if mask is None else np.shape(mask)[:-2]
    batch = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2], mask_batch)
    q, k, v = (
        torch.from_numpy(np.broadcast_to(a, (*batch, *a.shape[-2:])).copy()) for a in (Q, K, V)
    )
    bool_mask = None if mask is None else torch.from_numpy(np.asarray(mask) == 1)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=bool_mask, scale=scale)
    scores = q @ k.transpose(-1, -2) * (Q.shape[-1] ** -0.5 if scale is None else scale)
    if bool_mask is not None:
        scores = scores.masked_fill(~bool_mask, -torch.inf)
    return to_numpy(out), to_numpy(torch.softmax(scores, dim=-1))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("batch", [(), (3,), (2, 4)], ids=["unbatched", "b", "b_h"])
@pytest.mark.parametrize("masked", [False, True])
def test_sdpa_matches_torch(seed, batch, masked):
    rng = np.random.default_rng(seed)
    n_q, n_k, d_k, d_v = rng.integers(1, 9, size=4)
    Q = rng.normal(size=(*batch, n_q, d_k))
    K = rng.normal(size=(*batch, n_k, d_k))
    V = rng.normal(size=(*batch, n_k, d_v))
    mask = random_mask(rng, (*batch, n_q, n_k)) if masked else None
    output, weights = an.scaled_dot_product_attention(Q, K, V, mask)
    expected_output, expected_weights = torch_sdpa(Q, K, V, mask)
    assert output.shape == (*batch, n_q, d_v)
    assert_close(output, expected_output)
    assert_close(weights, expected_weights)


@pytest.mark.parametrize("seed", SEEDS)
def test_sdpa_unscaled_matches_torch_with_scale_one(seed):
    rng = np.random.default_rng(seed)
    Q, K, V = rng.normal(size=(2, 5, 16)), rng.normal(size=(2, 6, 16)), rng.normal(size=(2, 6, 3))
    output, weights = an.scaled_dot_product_attention(Q, K, V, scale=False)
    expected_output, expected_weights = torch_sdpa(Q, K, V, None, scale=1.0)
    assert_close(output, expected_output)
    assert_close(weights, expected_weights)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sdpa_keeps_the_float_dtype(dtype):
    rng = np.random.default_rng(0)
    Q, K, V = (rng.normal(size=(3, 4)).astype(dtype) for _ in range(3))
    output, weights = an.scaled_dot_product_attention(Q, K, V, np.ones((3, 3)))
    assert output.dtype == dtype and weights.dtype == dtype


def test_sdpa_integer_input_is_float64():
    output, weights = an.scaled_dot_product_attention(np.eye(2, dtype=int), np.eye(2), np.eye(2))
    assert output.dtype == np.float64 and weights.dtype == np.float64


def test_padding_mask_broadcasts_over_queries():
    rng = np.random.default_rng(0)
    tokens = np.array([[4, 2, 0], [7, 0, 0]])
    X = rng.normal(size=(2, 3, 4))
    _, weights = an.scaled_dot_product_attention(X, X, X, an.create_padding_mask(tokens))
    # §8.3: every row, padding rows included, puts exactly 0 on padded keys.
    np.testing.assert_array_equal(weights[tokens[:, None, :].repeat(3, 1) == 0], 0.0)


# --------------------------------------------------------------------------------------------
# Multi-head attention vs nn.MultiheadAttention


def make_torch_mha(seed, d_model, n_heads):
    mha = torch.nn.MultiheadAttention(d_model, n_heads, batch_first=True, dtype=torch.float64)
    return randomise_(mha, seed)


def mha_case(seed):
    """Random sizes: b, n_q, n_k, n_heads, d_k (d_model = n_heads * d_k)."""
    rng = np.random.default_rng(seed)
    b, n_q, n_k = rng.integers(1, 5), rng.integers(1, 8), rng.integers(2, 8)
    n_heads, d_k = rng.integers(1, 5), rng.integers(1, 6)
    return rng, b, n_q, n_k, int(n_heads), int(n_heads * d_k)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("kind", ["self", "cross", "key_padding", "causal"])
def test_mha_matches_torch(seed, kind):
    rng, b, n_q, n_k, n_heads, d_model = mha_case(seed)
    mha = make_torch_mha(seed, d_model, n_heads)
    params = an.mha_params_from_torch(mha)
    if kind in ("self", "causal"):
        n_k = n_q
    if kind == "cross" and n_k == n_q:
        n_k = n_q + 1  # cross-attention with a different source length
    x_q = rng.normal(size=(b, n_q, d_model))
    x_kv = x_q if n_k == n_q and kind != "cross" else rng.normal(size=(b, n_k, d_model))
    mask, torch_kwargs = None, {}
    if kind == "key_padding":
        tokens = random_tokens(rng, b, n_k)
        mask = an.create_padding_mask(tokens)  # (b, 1, n_k), 1 = real token
        torch_kwargs["key_padding_mask"] = torch.from_numpy(tokens == 0)  # True = ignore (§5.4)
    if kind == "causal":
        mask = an.create_look_ahead_mask(n_q)  # (n, n), 1 = may attend
        torch_kwargs["attn_mask"] = torch.from_numpy(mask == 0)  # True = ignore (§5.4)

    output, weights = an.multi_head_attention(x_q, x_kv, params, n_heads, mask)
    x_q_t, x_kv_t = torch.from_numpy(x_q), torch.from_numpy(x_kv)
    expected, expected_weights = mha(
        x_q_t, x_kv_t, x_kv_t, need_weights=True, average_attn_weights=False, **torch_kwargs
    )
    assert weights.shape == (b, n_heads, n_q, n_k)
    assert_close(output, to_numpy(expected))
    assert_close(weights, to_numpy(expected_weights))


@pytest.mark.parametrize("seed", SEEDS)
def test_mha_unbatched_equals_batch_of_one(seed):
    rng, _, n_q, n_k, n_heads, d_model = mha_case(seed)
    params = an.mha_params_from_torch(make_torch_mha(seed, d_model, n_heads))
    x_q, x_kv = rng.normal(size=(n_q, d_model)), rng.normal(size=(n_k, d_model))
    mask = random_mask(rng, (n_q, n_k))
    output, weights = an.multi_head_attention(x_q, x_kv, params, n_heads, mask)
    batched, batched_weights = an.multi_head_attention(
        x_q[None], x_kv[None], params, n_heads, mask[None]
    )
    assert output.shape == (n_q, d_model) and weights.shape == (n_heads, n_q, n_k)
    assert_close(output, batched[0])
    assert_close(weights, batched_weights[0])


@pytest.mark.parametrize("seed", SEEDS)
def test_split_and_combine_heads(seed):
    rng = np.random.default_rng(seed)
    b, n, n_heads, d_k = rng.integers(1, 5, size=4)
    x = rng.normal(size=(b, n, n_heads * d_k))
    heads = an.split_heads(x, n_heads)
    assert heads.shape == (b, n_heads, n, d_k)
    for i in range(n_heads):  # §5.3: head i is the i-th slice of d_model
        np.testing.assert_array_equal(heads[:, i], x[..., i * d_k : (i + 1) * d_k])
    np.testing.assert_array_equal(an.combine_heads(heads), x)


# --------------------------------------------------------------------------------------------
# LayerNorm, encoder and decoder layers vs PyTorch


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("shape", [(7,), (4, 6), (2, 3, 10)])
def test_layer_norm_matches_torch(seed, shape):
    rng = np.random.default_rng(seed)
    x = rng.normal(loc=3.0, scale=2.0, size=shape)
    norm = randomise_(torch.nn.LayerNorm(shape[-1], dtype=torch.float64), seed)
    gamma, beta = to_numpy(norm.weight), to_numpy(norm.bias)
    assert gamma.shape == beta.shape == (shape[-1],)
    assert_close(an.layer_norm(x, gamma, beta), to_numpy(norm(torch.from_numpy(x))))


def layer_case(seed):
    rng = np.random.default_rng(seed)
    n_heads, d_k = int(rng.integers(1, 4)), int(rng.integers(2, 5))
    d_ff = int(rng.integers(4, 20))
    b, n_src, n_tgt = rng.integers(1, 4), rng.integers(2, 7), rng.integers(2, 7)
    return rng, n_heads, n_heads * d_k, d_ff, b, n_src, n_tgt


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("norm_first", [False, True], ids=["post_ln", "pre_ln"])
def test_encoder_layer_matches_torch(seed, norm_first):
    rng, n_heads, d_model, d_ff, b, n, _ = layer_case(seed)
    layer = torch.nn.TransformerEncoderLayer(
        d_model,
        n_heads,
        d_ff,
        dropout=0.0,
        batch_first=True,
        norm_first=norm_first,
        dtype=torch.float64,
    )
    randomise_(layer, seed)
    params = an.encoder_layer_params_from_torch(layer)
    x, tokens = rng.normal(size=(b, n, d_model)), random_tokens(rng, b, n)
    output = an.encoder_layer_forward(
        x, params, n_heads, mask=an.create_padding_mask(tokens), norm_first=norm_first
    )
    # Parameters require grad, so PyTorch takes its reference (not "fast path") implementation.
    expected = layer(torch.from_numpy(x), src_key_padding_mask=torch.from_numpy(tokens == 0))
    assert_close(output, to_numpy(expected))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("norm_first", [False, True], ids=["post_ln", "pre_ln"])
def test_decoder_layer_matches_torch(seed, norm_first):
    rng, n_heads, d_model, d_ff, b, n_src, n_tgt = layer_case(seed)
    layer = torch.nn.TransformerDecoderLayer(
        d_model,
        n_heads,
        d_ff,
        dropout=0.0,
        batch_first=True,
        norm_first=norm_first,
        dtype=torch.float64,
    )
    randomise_(layer, seed)
    params = an.decoder_layer_params_from_torch(layer)
    y, memory = rng.normal(size=(b, n_tgt, d_model)), rng.normal(size=(b, n_src, d_model))
    tgt_tokens, src_tokens = random_tokens(rng, b, n_tgt), random_tokens(rng, b, n_src)
    look_ahead = an.create_look_ahead_mask(n_tgt)
    self_mask = look_ahead * an.create_padding_mask(tgt_tokens)  # (b, n_tgt, n_tgt), §8.3
    output = an.decoder_layer_forward(
        y,
        memory,
        params,
        n_heads,
        self_mask=self_mask,
        memory_mask=an.create_padding_mask(src_tokens),
        norm_first=norm_first,
    )
    expected = layer(
        torch.from_numpy(y),
        torch.from_numpy(memory),
        tgt_mask=torch.from_numpy(look_ahead == 0),  # True = ignore
        tgt_key_padding_mask=torch.from_numpy(tgt_tokens == 0),
        memory_key_padding_mask=torch.from_numpy(src_tokens == 0),
    )
    assert_close(output, to_numpy(expected))


def n_params(module):
    return sum(p.numel() for p in module.parameters())


@pytest.mark.parametrize(
    ("d_model", "d_ff", "n_heads"), [(8, 16, 1), (48, 100, 3), (64, 256, 8), (512, 2048, 16)]
)
def test_parameter_counts_match_torch(d_model, d_ff, n_heads):
    kwargs = {"dim_feedforward": d_ff, "batch_first": True}
    assert an.count_mha_params(d_model) == n_params(torch.nn.MultiheadAttention(d_model, n_heads))
    encoder = torch.nn.TransformerEncoderLayer(d_model, n_heads, **kwargs)
    decoder = torch.nn.TransformerDecoderLayer(d_model, n_heads, **kwargs)
    assert an.count_encoder_layer_params(d_model, d_ff) == n_params(encoder)
    assert an.count_decoder_layer_params(d_model, d_ff) == n_params(decoder)


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: torch.nn.TransformerEncoderLayer(8, 2, 16, activation="gelu"), "relu"),
        (lambda: torch.nn.TransformerDecoderLayer(8, 2, 16, activation="gelu"), "relu"),
        (lambda: torch.nn.TransformerEncoderLayer(8, 2, 16, bias=False), "bias=True"),
        (lambda: torch.nn.TransformerEncoderLayer(8, 2, 16, layer_norm_eps=1e-6), "eps"),
        (lambda: torch.nn.MultiheadAttention(8, 2, bias=False), "bias=True"),
        (lambda: torch.nn.MultiheadAttention(8, 2, kdim=4, vdim=4), "kdim"),
    ],
    ids=["enc_gelu", "dec_gelu", "no_bias", "eps", "mha_no_bias", "mha_kdim"],
)
def test_converters_reject_unsupported_modules(make, match):
    module = make()
    convert = {
        torch.nn.MultiheadAttention: an.mha_params_from_torch,
        torch.nn.TransformerEncoderLayer: an.encoder_layer_params_from_torch,
        torch.nn.TransformerDecoderLayer: an.decoder_layer_params_from_torch,
    }[type(module)]
    with pytest.raises(ValueError, match=match):
        convert(module)


def test_converters_transpose_linear_weights():
    # nn.Linear stores (out, in); with d_ff != d_model a missing transpose would change shapes.
    layer = torch.nn.TransformerEncoderLayer(8, 2, 24)
    ffn = an.encoder_layer_params_from_torch(layer)["ffn"]
    assert ffn["W_1"].shape == (8, 24) and ffn["W_2"].shape == (24, 8)
    np.testing.assert_array_equal(ffn["W_1"], to_numpy(layer.linear1.weight).T)
    assert ffn["W_1"].dtype == np.float64


# --------------------------------------------------------------------------------------------
# Masks as the peers pass them: NumPy's broadcasting, as in NumPy and TensorFlow
#
# Coursera's graders call scaled_dot_product_attention with 2-D Q, K, V and a (1, n_q, n_k) or
# (1, 1, n_k) mask, and expect (1, n_q, n_k) weights. TensorFlow's tutorial passes (b, 1, 1, n)
# padding masks to its multi-head attention, whose scores are (b, h, n_q, n_k).

MHA8 = {f"W_{p}": np.eye(8) for p in "qkvo"} | {f"b_{p}": np.zeros(8) for p in "qkvo"}
MHA8_LAYER = {  # a whole encoder layer's parameters (d_model 8, d_ff 16), every block present
    "self_attn": MHA8,
    "ffn": {
        "W_1": np.ones((8, 16)),
        "b_1": np.zeros(16),
        "W_2": np.ones((16, 8)),
        "b_2": np.zeros(8),
    },
    "norm1": {"gamma": np.ones(8), "beta": np.zeros(8)},
    "norm2": {"gamma": np.ones(8), "beta": np.zeros(8)},
}

MASK_BROADCASTS = [
    # Q, K, V shapes; mask; weights, output (what NumPy's broadcasting gives)
    ((3, 4), (5, 4), (5, 2), (1, 3, 5), (1, 3, 5), (1, 3, 2)),  # Coursera
    ((3, 4), (5, 4), (5, 2), (1, 1, 5), (1, 3, 5), (1, 3, 2)),  # Coursera's padding mask
    ((3, 4), (5, 4), (5, 2), (2, 1, 5), (2, 3, 5), (2, 3, 2)),
    ((3, 4), (5, 4), (5, 2), (5,), (3, 5), (3, 2)),
    ((3, 4), (5, 4), (6, 5, 2), (1, 3, 5), (1, 3, 5), (6, 3, 2)),  # V plays no part in weights
    ((2, 3, 4), (2, 5, 4), (2, 5, 2), (4, 1, 1, 5), (4, 2, 3, 5), (4, 2, 3, 2)),
    ((2, 3, 3, 4), (2, 3, 5, 4), (2, 3, 5, 2), (2, 1, 1, 5), (2, 3, 3, 5), (2, 3, 3, 2)),  # TF
    ((2, 1, 3, 4), (1, 4, 5, 4), (1, 4, 5, 2), (2, 1, 3, 5), (2, 4, 3, 5), (2, 4, 3, 2)),
]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(
    ("q_shape", "k_shape", "v_shape", "mask_shape", "weights_shape", "output_shape"),
    MASK_BROADCASTS,
)
def test_sdpa_mask_broadcasts_like_numpy_and_matches_torch(
    seed, q_shape, k_shape, v_shape, mask_shape, weights_shape, output_shape
):
    rng = np.random.default_rng(seed)
    Q, K, V = (rng.normal(size=shape) for shape in (q_shape, k_shape, v_shape))
    mask = random_mask(rng, mask_shape)
    output, weights = an.scaled_dot_product_attention(Q, K, V, mask)
    scores_shape = (*np.broadcast_shapes(q_shape[:-2], k_shape[:-2]), q_shape[-2], k_shape[-2])
    assert weights.shape == weights_shape == np.broadcast_shapes(scores_shape, mask_shape)
    assert output.shape == output_shape
    expected_output, expected_weights = torch_sdpa(Q, K, V, mask)
    assert_close(output, expected_output)
    assert_close(np.broadcast_to(weights, expected_weights.shape), expected_weights)
    assert_close(an.tiled_attention(Q, K, V, mask, block_size=2), expected_output)


def test_sdpa_coursera_mask_gives_the_unbatched_numbers_with_a_batch_axis():
    # The leading 1 only adds an axis: the numbers are those of the (n_q, n_k) mask, exactly.
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
    mask = random_mask(rng, (3, 5))
    output, weights = an.scaled_dot_product_attention(Q, K, V, mask[np.newaxis])
    unbatched_output, unbatched_weights = an.scaled_dot_product_attention(Q, K, V, mask)
    np.testing.assert_array_equal(output, unbatched_output[np.newaxis])
    np.testing.assert_array_equal(weights, unbatched_weights[np.newaxis])


@pytest.mark.parametrize("seed", SEEDS)
def test_mha_tensorflow_padding_mask_matches_torch_key_padding_mask(seed):
    rng, b, n_q, n_k, n_heads, d_model = mha_case(seed)
    mha = make_torch_mha(seed, d_model, n_heads)
    params = an.mha_params_from_torch(mha)
    x_q, x_kv = rng.normal(size=(b, n_q, d_model)), rng.normal(size=(b, n_k, d_model))
    tokens = random_tokens(rng, b, n_k)
    ours = an.create_padding_mask(tokens)  # (b, 1, n_k): shared by the heads
    tensorflow = ours[:, np.newaxis]  # (b, 1, 1, n_k): broadcast against (b, h, n_q, n_k)
    output, weights = an.multi_head_attention(x_q, x_kv, params, n_heads, tensorflow)
    x_q_t, x_kv_t = torch.from_numpy(x_q), torch.from_numpy(x_kv)
    expected, expected_weights = mha(
        x_q_t,
        x_kv_t,
        x_kv_t,
        key_padding_mask=torch.from_numpy(tokens == 0),  # True = ignore (§5.4)
        need_weights=True,
        average_attn_weights=False,
    )
    assert weights.shape == (b, n_heads, n_q, n_k)
    assert_close(output, to_numpy(expected))
    assert_close(weights, to_numpy(expected_weights))
    # Both conventions put the same -1e9 on the same scores: the same numbers, bit for bit.
    output_3d, weights_3d = an.multi_head_attention(x_q, x_kv, params, n_heads, ours)
    np.testing.assert_array_equal(output, output_3d)
    np.testing.assert_array_equal(weights, weights_3d)


@pytest.mark.parametrize("seed", SEEDS)
def test_mha_per_head_mask_matches_torch_attn_mask(seed):
    rng, b, n_q, n_k, n_heads, d_model = mha_case(seed)
    mha = make_torch_mha(seed, d_model, n_heads)
    params = an.mha_params_from_torch(mha)
    x_q, x_kv = rng.normal(size=(b, n_q, d_model)), rng.normal(size=(b, n_k, d_model))
    mask = random_mask(rng, (b, n_heads, n_q, n_k))  # one mask per head
    output, weights = an.multi_head_attention(x_q, x_kv, params, n_heads, mask)
    # PyTorch's 3-D attn_mask is (b * n_heads, n_q, n_k), batch-major; True = ignore (§5.4).
    attn_mask = torch.from_numpy(mask.reshape(b * n_heads, n_q, n_k) == 0)
    x_q_t, x_kv_t = torch.from_numpy(x_q), torch.from_numpy(x_kv)
    expected, expected_weights = mha(
        x_q_t, x_kv_t, x_kv_t, attn_mask=attn_mask, need_weights=True, average_attn_weights=False
    )
    assert weights.shape == (b, n_heads, n_q, n_k)
    assert_close(output, to_numpy(expected))
    assert_close(weights, to_numpy(expected_weights))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("mask_axes", [(1,), (1, 1)], ids=["b_nq_nk", "b_h_nq_nk"])
def test_mha_unbatched_inputs_with_a_batched_mask_give_a_batch_of_one(seed, mask_axes):
    # NumPy's rule: a mask with a batch axis makes the result batched, as in Coursera's call.
    rng, _, n_q, n_k, n_heads, d_model = mha_case(seed)
    mha = make_torch_mha(seed, d_model, n_heads)
    params = an.mha_params_from_torch(mha)
    x_q, x_kv = rng.normal(size=(n_q, d_model)), rng.normal(size=(n_k, d_model))
    mask = random_mask(rng, (n_q, n_k))
    output, weights = an.multi_head_attention(
        x_q, x_kv, params, n_heads, mask.reshape(*mask_axes, n_q, n_k)
    )
    assert output.shape == (1, n_q, d_model) and weights.shape == (1, n_heads, n_q, n_k)
    x_q_t, x_kv_t = torch.from_numpy(x_q), torch.from_numpy(x_kv)  # PyTorch's unbatched call
    expected, expected_weights = mha(
        x_q_t,
        x_kv_t,
        x_kv_t,
        attn_mask=torch.from_numpy(mask == 0),
        need_weights=True,
        average_attn_weights=False,
    )
    assert_close(output[0], to_numpy(expected))
    assert_close(weights[0], to_numpy(expected_weights))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("norm_first", [False, True], ids=["post_ln", "pre_ln"])
def test_layers_with_tensorflow_masks_match_torch(seed, norm_first):
    rng, n_heads, d_model, d_ff, b, n_src, n_tgt = layer_case(seed)
    kwargs = {"dropout": 0.0, "batch_first": True, "norm_first": norm_first}
    encoder = torch.nn.TransformerEncoderLayer(
        d_model, n_heads, d_ff, dtype=torch.float64, **kwargs
    )
    decoder = torch.nn.TransformerDecoderLayer(
        d_model, n_heads, d_ff, dtype=torch.float64, **kwargs
    )
    randomise_(encoder, seed)
    randomise_(decoder, seed + 1)
    x, y = rng.normal(size=(b, n_src, d_model)), rng.normal(size=(b, n_tgt, d_model))
    src_tokens, tgt_tokens = random_tokens(rng, b, n_src), random_tokens(rng, b, n_tgt)
    src_mask = an.create_padding_mask(src_tokens)[:, np.newaxis]  # (b, 1, 1, n_src)
    look_ahead = an.create_look_ahead_mask(n_tgt)
    self_mask = (look_ahead * an.create_padding_mask(tgt_tokens))[:, np.newaxis]  # (b, 1, n, n)
    memory = an.encoder_layer_forward(
        x, an.encoder_layer_params_from_torch(encoder), n_heads, src_mask, norm_first
    )
    output = an.decoder_layer_forward(
        y,
        memory,
        an.decoder_layer_params_from_torch(decoder),
        n_heads,
        self_mask=self_mask,
        memory_mask=src_mask,
        norm_first=norm_first,
    )
    src_padding = torch.from_numpy(src_tokens == 0)  # True = ignore
    expected_memory = encoder(torch.from_numpy(x), src_key_padding_mask=src_padding)
    expected = decoder(
        torch.from_numpy(y),
        expected_memory,
        tgt_mask=torch.from_numpy(look_ahead == 0),
        tgt_key_padding_mask=torch.from_numpy(tgt_tokens == 0),
        memory_key_padding_mask=src_padding,
    )
    assert_close(memory, to_numpy(expected_memory))
    assert_close(output, to_numpy(expected))


@pytest.mark.parametrize("seed", SEEDS)
def test_unbatched_layers_with_coursera_masks_equal_a_batch_of_one(seed):
    rng, n_heads, d_model, d_ff, _, n_src, n_tgt = layer_case(seed)
    encoder = an.encoder_layer_params_from_torch(
        randomise_(torch.nn.TransformerEncoderLayer(d_model, n_heads, d_ff), seed)
    )
    decoder = an.decoder_layer_params_from_torch(
        randomise_(torch.nn.TransformerDecoderLayer(d_model, n_heads, d_ff), seed)
    )
    x, y = rng.normal(size=(n_src, d_model)), rng.normal(size=(n_tgt, d_model))
    src_mask = an.create_padding_mask(random_tokens(rng, 1, n_src))  # (1, 1, n_src)
    self_mask = an.create_look_ahead_mask(n_tgt)[np.newaxis]  # (1, n_tgt, n_tgt)
    memory = an.encoder_layer_forward(x, encoder, n_heads, src_mask)
    output = an.decoder_layer_forward(y, x, decoder, n_heads, self_mask, src_mask)
    assert memory.shape == (1, n_src, d_model) and output.shape == (1, n_tgt, d_model)
    assert_close(memory, an.encoder_layer_forward(x[np.newaxis], encoder, n_heads, src_mask))
    batched = an.decoder_layer_forward(y[None], x[None], decoder, n_heads, self_mask, src_mask)
    assert_close(output, batched)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_mask_with_a_larger_batch_stretches_a_batch_of_one(seed):
    # NumPy's rule for size-1 axes, through both sublayers of a decoder layer: sentence i of
    # the result is the batch of one under mask i.
    rng, n_heads, d_model, d_ff, _, n_src, n_tgt = layer_case(seed)
    decoder = an.decoder_layer_params_from_torch(
        randomise_(torch.nn.TransformerDecoderLayer(d_model, n_heads, d_ff), seed)
    )
    y, memory = rng.normal(size=(1, n_tgt, d_model)), rng.normal(size=(1, n_src, d_model))
    self_mask = random_mask(rng, (3, n_tgt, n_tgt))
    memory_mask = random_mask(rng, (3, 1, n_src))
    output = an.decoder_layer_forward(y, memory, decoder, n_heads, self_mask, memory_mask)
    assert output.shape == (3, n_tgt, d_model)
    for i in range(3):
        alone = an.decoder_layer_forward(
            y, memory, decoder, n_heads, self_mask[i : i + 1], memory_mask[i : i + 1]
        )
        assert_close(output[i : i + 1], alone)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (  # Coursera's shape with the wrong n_q: a mask never adds queries
            lambda: an.scaled_dot_product_attention(
                np.ones((3, 4)), np.ones((5, 4)), np.ones((5, 2)), np.ones((1, 4, 5))
            ),
            r"mask of shape \(1, 4, 5\) does not broadcast with the scores' shape \(3, 5\)"
            r".*last two axes to be 1 or \(3, 5\)",
        ),
        (  # NumPy would stretch the single query to 3; attention must not
            lambda: an.scaled_dot_product_attention(
                np.ones((1, 4)), np.ones((5, 4)), np.ones((5, 2)), np.ones((3, 5))
            ),
            r"last two axes to be 1 or \(1, 5\)",
        ),
        (
            lambda: an.scaled_dot_product_attention(
                np.ones((2, 3, 4)), np.ones((2, 5, 4)), np.ones((2, 5, 2)), np.ones((3, 1, 5))
            ),
            r"scores' shape \(2, 3, 5\).*leading axes to broadcast with \(2,\)",
        ),
        (
            lambda: an.tiled_attention(
                np.ones((2, 3, 4)), np.ones((2, 5, 4)), np.ones((2, 5, 2)), np.ones((3, 1, 5))
            ),
            r"scores' shape \(2, 3, 5\).*leading axes to broadcast with \(2,\)",
        ),
        (
            lambda: an.multi_head_attention(
                np.ones((2, 3, 8)), np.ones((2, 3, 8)), MHA8, 2, np.ones((3, 1, 3))
            ),
            r"mask of shape \(3, 1, 3\) does not broadcast with the scores' shape \(2, 3, 3\)",
        ),
        (
            lambda: an.multi_head_attention(
                np.ones((2, 3, 8)), np.ones((2, 3, 8)), MHA8, 2, np.ones((2, 4, 3, 3))
            ),
            r"mask of shape \(2, 4, 3, 3\) does not broadcast.*\(2, 2, 3, 3\)",
        ),
        (
            lambda: an.multi_head_attention(
                np.ones((2, 3, 8)), np.ones((2, 3, 8)), MHA8, 2, np.ones((1, 2, 1, 3, 3))
            ),
            r"at most 4 axes, \(b, n_heads, n_q, n_k\)",
        ),
        (
            lambda: an.encoder_layer_forward(np.ones((2, 3, 8)), MHA8_LAYER, 2, np.ones((2, 1, 4))),
            r"mask of shape \(2, 1, 4\).*last two axes to be 1 or \(3, 3\)",
        ),
    ],
    ids=[
        "coursera_n_q",
        "stretch_queries",
        "batch",
        "tiled_batch",
        "mha_batch",
        "mha_heads",
        "mha_5d",
        "encoder",
    ],
)
def test_mask_that_does_not_broadcast_names_the_expected_shape(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_encoder_layer_and_converters_check_their_inputs_first():
    lacking = {k: v for k, v in MHA8_LAYER.items() if k != "norm2"}
    with pytest.raises(ValueError, match=r"encoder layer params lack \['norm2'\]"):
        an.encoder_layer_forward(np.ones((2, 3, 8)), lacking, 2)
    with pytest.raises(ValueError, match="expected a torch.nn.TransformerEncoderLayer"):
        an.encoder_layer_params_from_torch(object())
    with pytest.raises(ValueError, match="expected a torch.nn.TransformerDecoderLayer"):
        an.decoder_layer_params_from_torch(object())


# --------------------------------------------------------------------------------------------
# Properties the lecture claims (hypothesis)

sizes = st.integers(1, 6)
seeds = st.integers(0, 2**32 - 1)


@PROPERTY
@given(seed=seeds, n_q=sizes, n_k=sizes, d_k=sizes)
def test_weights_rows_sum_to_one_and_masked_weights_are_zero(seed, n_q, n_k, d_k):
    rng = np.random.default_rng(seed)
    Q, K, V = rng.normal(size=(n_q, d_k)), rng.normal(size=(n_k, d_k)), rng.normal(size=(n_k, 2))
    mask = random_mask(rng, (n_q, n_k))
    _, weights = an.scaled_dot_product_attention(3 * Q, 3 * K, V, mask)
    assert_close(weights.sum(axis=-1), np.ones(n_q))
    np.testing.assert_array_equal(weights[mask == 0], 0.0)  # §8.1: exp(-1e9) is exactly 0
    assert np.all(weights >= 0)


@PROPERTY
@given(seed=seeds, n=st.integers(2, 7), n_heads=st.integers(1, 3))
def test_self_attention_is_permutation_equivariant(seed, n, n_heads):
    # §3.2, exercise 5: Attn(PX) = P Attn(X) without positional encoding.
    rng = np.random.default_rng(seed)
    d_model = 2 * n_heads
    params = random_mha_params(rng, d_model)
    X, perm = rng.normal(size=(n, d_model)), rng.permutation(n)
    output, weights = an.multi_head_attention(X, X, params, n_heads)
    permuted, permuted_weights = an.multi_head_attention(X[perm], X[perm], params, n_heads)
    assert_close(permuted, output[perm])
    assert_close(
        permuted_weights, weights[:, perm][:, :, perm]
    )  # softmax(PAP^T) = P softmax(A) P^T


def test_positional_encoding_breaks_permutation_equivariance():
    # The control for the property above: with PE added (§6.1) the equality fails (§3.2: 1.29).
    rng = np.random.default_rng(0)
    params, n, d_model = random_mha_params(rng, 8), 6, 8
    X, perm = rng.normal(size=(n, d_model)), np.array([5, 4, 3, 2, 1, 0])
    pe = an.positional_encoding(n, d_model)
    output, _ = an.multi_head_attention(X + pe, X + pe, params, 2)
    permuted, _ = an.multi_head_attention(X[perm] + pe, X[perm] + pe, params, 2)
    assert np.max(np.abs(permuted - output[perm])) > 1e-3


def decoder_params(seed, d_model, n_heads, d_ff=12):
    layer = torch.nn.TransformerDecoderLayer(d_model, n_heads, d_ff, dtype=torch.float64)
    return an.decoder_layer_params_from_torch(randomise_(layer, seed))


@PROPERTY
@given(seed=seeds, n=st.integers(2, 7), data=st.data(), norm_first=st.booleans())
def test_look_ahead_mask_makes_the_decoder_causal(seed, n, data, norm_first):
    # §8.1, §8.4: changing inputs after position t leaves outputs 0..t bit-for-bit unchanged.
    t = data.draw(st.integers(0, n - 2), label="t")
    rng = np.random.default_rng(seed)
    params = decoder_params(seed % 1000, 8, 2)
    y, memory = rng.normal(size=(1, n, 8)), rng.normal(size=(1, 3, 8))
    changed = y.copy()
    changed[:, t + 1 :] = rng.normal(size=(1, n - t - 1, 8))
    mask = an.create_look_ahead_mask(n)
    out = an.decoder_layer_forward(y, memory, params, 2, self_mask=mask, norm_first=norm_first)
    out2 = an.decoder_layer_forward(
        changed, memory, params, 2, self_mask=mask, norm_first=norm_first
    )
    np.testing.assert_array_equal(out2[:, : t + 1], out[:, : t + 1])


def test_without_look_ahead_mask_the_past_sees_the_future():
    # The control: the same change without the mask moves the early outputs (§8.1: 2.74).
    rng = np.random.default_rng(0)
    params = decoder_params(0, 8, 2)
    y, memory = rng.normal(size=(1, 6, 8)), rng.normal(size=(1, 3, 8))
    changed = y.copy()
    changed[:, 3:] = rng.normal(size=(1, 3, 8))
    out = an.decoder_layer_forward(y, memory, params, 2)
    out2 = an.decoder_layer_forward(changed, memory, params, 2)
    assert np.max(np.abs(out2[:, :3] - out[:, :3])) > 1e-3


@PROPERTY
@given(seed=seeds, n_real=st.integers(1, 5), n_pad=st.integers(1, 4), norm_first=st.booleans())
def test_padding_with_mask_equals_the_sentence_alone(seed, n_real, n_pad, norm_first):
    # §8.3: padded + masked gives the real tokens exactly what the unpadded sentence gives.
    rng = np.random.default_rng(seed)
    layer = torch.nn.TransformerEncoderLayer(8, 2, 12, dtype=torch.float64)
    params = an.encoder_layer_params_from_torch(randomise_(layer, seed % 1000))
    sentence = rng.normal(size=(1, n_real, 8))
    padded = np.concatenate([sentence, rng.normal(scale=10, size=(1, n_pad, 8))], axis=1)
    tokens = np.array([[1] * n_real + [0] * n_pad])
    alone = an.encoder_layer_forward(sentence, params, 2, norm_first=norm_first)
    out = an.encoder_layer_forward(
        padded, params, 2, mask=an.create_padding_mask(tokens), norm_first=norm_first
    )
    assert_close(out[:, :n_real], alone)


@PROPERTY
@given(p=st.integers(0, 500), k=st.integers(-200, 200), d_model=st.sampled_from([2, 8, 64, 128]))
def test_positional_encoding_shift_is_linear(p, k, d_model):
    # §6.3: PE(p + k) = PE(p) M_k for every p, also for negative k.
    k = max(k, -p)  # positions stay >= 0
    pe = an.positional_encoding(p + 201, d_model)
    assert_close(pe[p] @ an.relative_shift_matrix(k, d_model), pe[p + k])


@PROPERTY
@given(a=st.integers(-300, 300), b=st.integers(-300, 300), d_model=st.sampled_from([2, 16, 64]))
def test_shift_matrices_are_orthogonal_rotations(a, b, d_model):
    M_a, M_b = an.relative_shift_matrix(a, d_model), an.relative_shift_matrix(b, d_model)
    assert_close(M_a @ M_a.T, np.eye(d_model))
    assert_close(M_a @ M_b, an.relative_shift_matrix(a + b, d_model))  # §6.3: M_3 M_7 = M_10
    assert_close(an.relative_shift_matrix(-a, d_model), M_a.T)


def test_positional_encoding_formula_and_norms():
    d_model, pe = 6, an.positional_encoding(50, 6)
    for pos in (0, 1, 17, 49):
        for i in range(d_model // 2):
            angle = pos / 10000 ** (2 * i / d_model)
            assert_close(pe[pos, 2 * i], np.sin(angle))
            assert_close(pe[pos, 2 * i + 1], np.cos(angle))
    pe64 = an.positional_encoding(200, 64)  # §6.2: every norm is sqrt(d/2) = 5.6569
    assert_close(np.linalg.norm(pe64, axis=1), np.full(200, np.sqrt(32)))
    assert np.max(np.abs(pe64)) <= 1.0


# --------------------------------------------------------------------------------------------
# The lecture's exercises (§13)


def test_exercise_1_hand_computed_attention():
    # Q and K are reconstructed (reading aid F09); they reproduce every printed answer.
    Q = np.array([[2, 2, 0, 0], [0, 2, 0, 0], [0, 0, 2, 0]], dtype=np.float64)
    K = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 1]], dtype=np.float64)
    V = np.array([[1, 0], [0, 1], [1, 1]], dtype=np.float64)
    output, weights = an.scaled_dot_product_attention(Q, K, V)
    np.testing.assert_array_equal(
        np.round(weights, 4),
        [[0.4223, 0.4223, 0.1554], [0.2119, 0.5761, 0.2119], [0.3333, 0.3333, 0.3333]],
    )
    np.testing.assert_array_equal(
        np.round(output, 4), [[0.5777, 0.5777], [0.4239, 0.7881], [0.6667, 0.6667]]
    )
    assert_close(weights[2], np.full(3, 1 / 3))  # (d): orthogonal query → exact average


def test_exercise_3_parameter_counts_of_the_big_model():
    assert an.count_mha_params(1024) == 4_198_400
    assert an.count_encoder_layer_params(1024, 4096) == 12_596_224
    assert an.count_decoder_layer_params(1024, 4096) == 16_796_672
    # (c) heads do not change the count (§5.2: 1,050,624 for h = 1, 8, 16).
    for n_heads in (1, 8, 16):
        assert n_params(torch.nn.MultiheadAttention(512, n_heads)) == an.count_mha_params(512)
    assert an.count_mha_params(512) == 1_050_624


def test_exercise_4_combined_mask():
    tokens = np.array([[1, 7, 3, 0]])
    combined = an.create_look_ahead_mask(4) * an.create_padding_mask(tokens)
    expected = [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 0]]
    np.testing.assert_array_equal(combined, [expected])
    # (c) the padding row still attends to the three real tokens, never to itself.
    X = np.random.default_rng(0).normal(size=(1, 4, 8))
    _, weights = an.scaled_dot_product_attention(X, X, X, combined)
    assert np.all(weights[0, 3, :3] > 0) and weights[0, 3, 3] == 0


FULLY_MASKED_SCORES_Q = np.array([[1.0, 0.0], [0.0, 1.0]])
FULLY_MASKED_K = np.array([[2.0, 0.0], [0.0, 0.5], [1.0, 1.0], [-1.0, 0.0]])
FULLY_MASKED_MASK = np.array([[1, 1, 0, 1], [0, 0, 0, 0]])  # row 1: every key masked


def test_exercise_4_fully_masked_row_float64_is_not_uniform():
    # Reading-aid flag F02: the lecture's answer says "uniform"; in float64 the -1e9 shift
    # cancels in the softmax and the row is the softmax of the ORIGINAL scores.
    Q, K, V = FULLY_MASKED_SCORES_Q, FULLY_MASKED_K, np.eye(4)
    _, weights = an.scaled_dot_product_attention(Q, K, V, FULLY_MASKED_MASK)
    original = an.softmax(Q[1] @ K.T / np.sqrt(2))
    assert_close(weights[1], original, atol=1e-6)  # float64 spacing at 1e9 is 1.2e-7
    assert np.max(np.abs(weights[1] - 0.25)) > 0.05


def test_exercise_4_fully_masked_row_float32_is_uniform():
    # In float32 the spacing at 1e9 is 64: every shifted score rounds to -1e9.
    Q, K = FULLY_MASKED_SCORES_Q.astype(np.float32), FULLY_MASKED_K.astype(np.float32)
    _, weights = an.scaled_dot_product_attention(
        Q, K, np.eye(4, dtype=np.float32), FULLY_MASKED_MASK
    )
    assert weights.dtype == np.float32
    np.testing.assert_array_equal(weights[1], np.full(4, 0.25, dtype=np.float32))


def test_exercise_4_fully_masked_row_with_minus_inf_is_nan():
    scores = FULLY_MASKED_SCORES_Q @ FULLY_MASKED_K.T / np.sqrt(2)
    with np.errstate(invalid="ignore"):
        weights = an.softmax(np.where(FULLY_MASKED_MASK == 1, scores, -np.inf))
    assert np.all(np.isnan(weights[1]))
    assert_close(weights[0].sum(), 1.0)  # a row with some key left is fine


def test_exercise_4_demo_masks_every_key_of_its_row():
    """13.1's own rows (experiments/exercises.py), not the computation above redone: its row
    must mask every key (the mutant fully_masked_row_as_ones showed it untested), so float32
    is uniform, float64 is not, and −∞ gives nan."""
    from lecture17.experiments.exercises import exercise_4

    found = {
        (r["quantity"], r.get("dtype")): r["value"] for r in exercise_4([1, 7, 3, 0], 4, seed=0)
    }
    assert found[("max_dev_from_uniform", "float32")] < 1e-6
    assert found[("max_dev_from_uniform", "float64")] > 0.05
    assert found[("nan_with_minus_inf", "float64")] == 1.0


def _matmul_multiply_adds(*shapes) -> int:
    """Multiply-adds of a chain of (rows, inner) @ (inner, cols) products, from their shapes."""
    return sum(rows * inner * cols for rows, inner, cols in shapes)


def test_exercise_7_counts_are_the_layers_matrix_products_and_give_the_lectures_digits():
    from lecture17.experiments.exercises import exercise_7

    def answers(n, d):
        rows = exercise_7(n, d, ff_mult=4, bytes_per_value=2)
        return {r.get("part", r["quantity"]): r["value"] for r in rows}

    n, d = 100_000, 4096
    ours = answers(n, d)
    # counted from the shapes of the layer's products, not from the closed forms
    assert ours["attention"] == _matmul_multiply_adds((n, d, n), (n, n, d))  # QKᵀ, weights·V
    assert ours["projections"] == _matmul_multiply_adds(*[(n, d, d)] * 4)  # W_q, W_k, W_v, W_o
    assert ours["ffn"] == _matmul_multiply_adds((n, d, 4 * d), (n, 4 * d, d))
    assert f"{ours['attention']:.2e}" == "8.19e+13"  # the lecture quotes three digits
    assert f"{ours['projections_and_ffn']:.2e}" == "2.01e+13"
    assert f"{ours['attention_over_rest']:.0f}" == "4"  # "about 4 times"
    assert ours["matrix_gb"] == 20.0  # one fp16 n × n matrix: 20 GB
    # (c) at the break-even length attention costs exactly what the rest does
    even = int(ours["break_even_n"])
    assert answers(even, d)["attention_over_rest"] == 1.0
    assert (
        answers(even - 1, d)["attention_over_rest"]
        < 1
        < answers(even + 1, d)["attention_over_rest"]
    )


# --------------------------------------------------------------------------------------------
# Bad input raises ValueError saying what was expected


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (
            lambda: an.scaled_dot_product_attention(
                np.ones((3, 4)), np.ones((5, 2)), np.ones((5, 2))
            ),
            "same depth d_k",
        ),
        (
            lambda: an.scaled_dot_product_attention(
                np.ones((3, 4)), np.ones((5, 4)), np.ones((6, 2))
            ),
            "same length n_k",
        ),
        (
            lambda: an.scaled_dot_product_attention(
                np.ones((3, 4)), np.ones((5, 4)), np.ones((5, 2)), np.ones((3, 4))
            ),
            r"mask of shape \(3, 4\) does not broadcast.*\(3, 5\)",
        ),
        (
            lambda: an.scaled_dot_product_attention(
                np.ones((3, 4)), np.ones((3, 4)), np.ones((3, 2)), np.ones((2, 1, 2))
            ),
            r"does not broadcast.*last two axes to be 1 or \(3, 3\)",
        ),
        (
            lambda: an.scaled_dot_product_attention(
                np.ones((3, 4)), np.ones((3, 4)), np.ones((3, 2)), np.full((3, 3), -np.inf)
            ),
            "only 1",
        ),
        (
            lambda: an.scaled_dot_product_attention(np.ones(4), np.ones((3, 4)), np.ones((3, 2))),
            r"Q must have shape \(\.\.\., n_q, d_k\)",
        ),
        (
            lambda: an.scaled_dot_product_attention([["a", "b"]], np.ones((1, 2)), np.ones((1, 2))),
            "real numeric",
        ),
        (lambda: an.softmax(np.array([1.0, 2.0], dtype=object)), "real numeric"),
        (lambda: an.split_heads(np.ones((2, 3, 10)), 4), "divisible by n_heads"),
        (lambda: an.split_heads(np.ones((3, 8)), 2), r"\(b, n, d_model\)"),
        (lambda: an.combine_heads(np.ones((2, 3, 8))), r"\(b, h, n, d_k\)"),
        (
            lambda: an.multi_head_attention(np.ones((2, 3, 8)), np.ones((2, 3, 8)), MHA8, 3),
            "divisible by n_heads",
        ),
        (
            lambda: an.multi_head_attention(np.ones((3, 8)), np.ones((2, 3, 8)), MHA8, 2),
            "both be batched",
        ),
        (
            lambda: an.multi_head_attention(np.ones(8), np.ones(8), MHA8, 2),
            r"x_q must have shape \(b, n_q, d_model\)",
        ),
        (
            lambda: an.scaled_dot_product_attention(
                np.ones((2, 3, 4)), np.ones((3, 5, 4)), np.ones((3, 5, 2))
            ),
            "leading axes",
        ),
        (
            lambda: an.multi_head_attention(
                np.ones((1, 3, 8)), np.ones((1, 3, 8)), MHA8, 2, np.ones((1, 3, 4))
            ),
            "does not broadcast",
        ),
        (
            lambda: an.multi_head_attention(np.ones((3, 6)), np.ones((3, 6)), MHA8, 2),
            r"W_q.*\(6, 6\)",
        ),
        (
            lambda: an.multi_head_attention(np.ones((2, 3, 8)), np.ones((3, 4, 8)), MHA8, 2),
            r"x_q \(2, 3, 8\) and x_kv \(3, 4, 8\) need the same d_model and the same b",
        ),
        (lambda: an.create_padding_mask(np.array([1, 2, 0])), r"\(batch, n\)"),
        (lambda: an.create_padding_mask(np.array([[1.5, 0.0]])), "integer"),
        (lambda: an.create_look_ahead_mask(0), "positive integer"),
        (lambda: an.positional_encoding(10, 7), "even"),
        (lambda: an.relative_shift_matrix("1", 8), "real number"),
        (lambda: an.layer_norm(np.ones((2, 4)), np.ones(3), np.zeros(3)), r"gamma.*\(4,\)"),
        (lambda: an.feed_forward(np.ones((2, 4)), {"W_1": np.ones((5, 6))}), r"W_1.*\(4, 6\)"),
    ],
)
def test_bad_input_raises_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# --------------------------------------------------------------------------------------------
# The module's layout: the lecture's order, then what goes beyond it, then the input checks

RULER = re.compile(r"^# --- (.+) ---$", re.MULTILINE)
LECTURE, BEYOND, CHECKS = 0, 1, 2
# One block per section, so moving a block (not only its ruler) out of its section fails too.
HOME = {
    "softmax": (2, 2),
    "scaled_dot_product_attention": (3,),
    "multi_head_attention": (5,),
    "mha_params_from_torch": (5, 4),
    "positional_encoding": (6,),
    "encoder_layer_forward": (7,),
    "count_encoder_layer_params": (7, 4),
    "create_look_ahead_mask": (8,),
    "decoder_layer_forward": (8, 2),
    "tiled_attention": (10, 4),
}


def ruler_kind(title):
    if "input checks" in title and "not in the lecture" in title:
        return CHECKS
    return BEYOND if "beyond the lecture" in title else LECTURE


def ruler_section(title):
    """The first § a ruler names, as a tuple: '§5.4 ...' → (5, 4)."""
    found = re.search(r"§(\d+(?:\.\d+)*)", title)
    assert found, f"the ruler {title!r} names no §"
    return tuple(int(part) for part in found.group(1).split("."))


def test_module_sections_follow_the_lecture_then_beyond_and_the_checks_live_apart():
    source = Path(an.__file__).read_text(encoding="utf-8")
    rulers = [(m.start(), m.group(1)) for m in RULER.finditer(source)]
    kinds = [ruler_kind(title) for _, title in rulers]
    assert kinds == sorted(kinds), f"lecture, then beyond expected, got {kinds}"
    assert BEYOND in kinds and CHECKS not in kinds
    lecture = [ruler_section(title) for _, title in rulers if ruler_kind(title) == LECTURE]
    assert lecture == sorted(set(lecture)), f"the lecture's §s must increase, got {lecture}"
    assert all(ruler_section(title) for _, title in rulers if ruler_kind(title) == BEYOND)

    def ruler_above(name):
        at = source.index(f"\ndef {name}(")
        return [title for pos, title in rulers if pos < at][-1]

    for name, section in HOME.items():
        assert ruler_section(ruler_above(name)) == section, f"{name} belongs under §{section}"
    assert ruler_kind(ruler_above("tiled_attention")) == BEYOND
    assert not re.findall(r"^def (_check_\w+)\(", source, re.MULTILINE), "checks: _numpy_checks"
    checks = Path(an.__file__).with_name("_numpy_checks.py").read_text(encoding="utf-8")
    assert not set(an.__all__) & set(re.findall(r"^def (\w+)\(", checks, re.MULTILINE))


# --------------------------------------------------------------------------------------------
# tiled_attention (§10.4, FlashAttention's idea in numpy) against the plain version, its memory,
# its input checks. The plain scaled_dot_product_attention is checked against PyTorch at float64
# above, so equality with it at ATOL is equality with PyTorch. (Demo 06.1, which shows both, is
# tested in tests/experiments/test_beyond.py.)

EPS = np.finfo(np.float64).eps  # 2.2e-16
MIB = 2**20


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
def test_tiled_bad_input_raises_value_error(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        an.tiled_attention(*args, **kwargs)
    if "block_size" not in kwargs:  # the same message as the plain version's
        with pytest.raises(ValueError, match=match):
            an.scaled_dot_product_attention(*args)


# -----------------------------------------------------------------------------
# §6.5 beyond the lecture: RoPE and ALiBi, each against an independent formulation


def rope_complex(x, positions, base=10000.0):
    """RoPE in the paper's complex form: pair i is x_2i + i·x_2i+1, times e^(i m θ_i)."""
    d = x.shape[-1]
    z = x[..., 0::2] + 1j * x[..., 1::2]
    theta = base ** (-np.arange(0, d, 2) / d)
    z = z * np.exp(1j * np.asarray(positions)[:, None] * theta)
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = z.real, z.imag
    return out


def rope_rotate_half(x, positions, base=10000.0):
    """GPT-NeoX / Hugging Face LLaMA: x cos + rotate_half(x) sin, the angles repeated twice."""
    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)
    angle = np.concatenate([np.asarray(positions)[:, None] * theta] * 2, axis=-1)
    rotated_half = np.concatenate([-x[..., d // 2 :], x[..., : d // 2]], axis=-1)
    return x * np.cos(angle) + rotated_half * np.sin(angle)


def paper_slopes(n):
    """ALiBi's get_slopes, as in Press et al.'s repository (attention_with_linear_biases)."""

    def power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start**i for i in range(n)]

    if math.log2(n).is_integer():
        return power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_2(closest) + paper_slopes(2 * closest)[0::2][: n - closest]


@pytest.mark.parametrize("layout", ["interleaved", "halves"])
@pytest.mark.parametrize("seed", SEEDS)
def test_rope_matches_its_published_formulations(seed, layout):
    rng = np.random.default_rng(seed)
    x, positions = rng.normal(size=(3, 7, 16)), rng.integers(0, 500, size=7)
    ours = an.rope_rotate(x, positions, layout=layout)
    oracle = rope_complex if layout == "interleaved" else rope_rotate_half
    np.testing.assert_allclose(ours, oracle(x, positions), rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_rope_is_the_relative_shift_matrix_of_minus_the_position(seed):
    rng = np.random.default_rng(seed)
    x, m = rng.normal(size=(1, 12)), int(rng.integers(0, 1000))
    expected = x @ an.relative_shift_matrix(-m, 12)
    np.testing.assert_allclose(an.rope_rotate(x, [m]), expected, rtol=0, atol=1e-12)


@PROPERTY
@given(
    st.integers(0, 2**31 - 1),
    st.lists(st.integers(0, 2000), min_size=2, max_size=6),
    st.integers(0, 3000),
    st.sampled_from(["interleaved", "halves"]),
)
def test_rope_score_depends_only_on_the_offset(seed, positions, shift, layout):
    """q rotated by m, k by n: the score is the same for every (m + c, n + c)."""
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=(len(positions), 8)), rng.normal(size=(len(positions), 8))
    pos = np.array(positions)
    moved = pos + shift  # every position shifted alike: every offset n − m unchanged

    def scores(p):
        return an.rope_rotate(q, p, layout=layout) @ an.rope_rotate(k, p, layout=layout).T

    np.testing.assert_allclose(scores(moved), scores(pos), rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_rope_preserves_norms_and_position_zero_is_the_identity(seed):
    rng = np.random.default_rng(seed)
    x, positions = rng.normal(size=(9, 10)), rng.integers(0, 10_000, size=9)
    for layout in ("interleaved", "halves"):
        rotated = an.rope_rotate(x, positions, layout=layout)
        np.testing.assert_allclose(
            np.linalg.norm(rotated, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-13
        )
        assert np.array_equal(an.rope_rotate(x, np.zeros(9, dtype=int), layout=layout), x)


@pytest.mark.parametrize("d", [2, 8, 64])
def test_the_two_rope_layouts_are_one_rotation_up_to_a_permutation(d):
    rng = np.random.default_rng(d)
    x, positions = rng.normal(size=(5, d)), rng.integers(0, 100, size=5)
    perm = an.rope_layout_permutation(d)
    assert sorted(perm) == list(range(d))
    interleaved = an.rope_rotate(x, positions)
    halves = an.rope_rotate(x[:, perm], positions, layout="halves")
    np.testing.assert_allclose(halves, interleaved[:, perm], rtol=0, atol=1e-12)
    if d > 2:  # the layouts differ: a model cannot swap one for the other unpermuted
        assert not np.allclose(an.rope_rotate(x, positions, layout="halves"), interleaved)


def test_alibi_slopes_for_4_heads_are_the_papers():
    assert an.alibi_slopes(4).tolist() == [1 / 4, 1 / 16, 1 / 64, 1 / 256]
    assert an.alibi_slopes(8).tolist() == [2.0**-k for k in range(1, 9)]  # the paper's example


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20])
def test_alibi_slopes_match_the_papers_code(n):
    np.testing.assert_allclose(
        an.alibi_slopes(n), paper_slopes(n), rtol=1e-14
    )  # their code multiplies


def test_alibi_bias_is_minus_slope_times_distance():
    bias = an.alibi_bias(4, 3, 5, q_offset=2)
    slopes = an.alibi_slopes(4)
    for h, i, j in np.ndindex(bias.shape):
        assert bias[h, i, j] == -slopes[h] * abs(2 + i - j)
    assert np.all(bias[:, np.arange(3), np.arange(3) + 2] == 0)  # a query's own position


@pytest.mark.parametrize("seed", SEEDS)
def test_alibi_causal_attention_equals_the_papers_one_sided_bias(seed):
    """The paper adds -m(i - j) for j ≤ i; ours adds -m|i - j|. Under a look-ahead mask they
    agree; and -m(i - j) differs from +m j by a constant per row, which softmax ignores."""
    rng = np.random.default_rng(seed)
    n, d_model, h = 6, 8, 4
    x = rng.normal(size=(2, n, d_model))
    params = random_mha_params(rng, d_model)
    causal = an.create_look_ahead_mask(n)
    ours, _ = an.multi_head_attention(x, x, params, h, causal, positions="alibi")
    slopes = an.alibi_slopes(h)[:, None, None]
    Q, K, V = (an.split_heads(x @ params[f"W_{c}"] + params[f"b_{c}"], h) for c in "qkv")
    j = np.arange(n)
    papers = an.scaled_dot_product_attention(Q, K, V, causal, bias=slopes * j)  # +m j
    out = an.combine_heads(papers[0]) @ params["W_o"] + params["b_o"]
    np.testing.assert_allclose(ours, out, rtol=0, atol=1e-12)


@pytest.mark.parametrize("positions", ["rope", "alibi"])
@pytest.mark.parametrize("seed", SEEDS)
def test_mha_with_positions_in_the_scores_is_no_longer_permutation_equivariant(seed, positions):
    """Without positions, self-attention permutes with its input (§3); with RoPE or ALiBi the
    order changes the output, and each weight row still sums to 1."""
    rng = np.random.default_rng(seed)
    n, d_model, h = 5, 8, 2
    x = rng.normal(size=(n, d_model))
    params = random_mha_params(rng, d_model)
    perm = np.array([1, 0, 2, 3, 4])
    plain, _ = an.multi_head_attention(x, x, params, h)
    plain_permuted, _ = an.multi_head_attention(x[perm], x[perm], params, h)
    np.testing.assert_allclose(plain_permuted, plain[perm], rtol=0, atol=1e-12)
    out, weights = an.multi_head_attention(x, x, params, h, positions=positions)
    permuted, _ = an.multi_head_attention(x[perm], x[perm], params, h, positions=positions)
    assert not np.allclose(permuted, out[perm])
    np.testing.assert_allclose(weights.sum(-1), 1.0, rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_mha_rope_rotates_every_heads_queries_and_keys(seed):
    rng = np.random.default_rng(seed)
    n_q, n_k, d_model, h = 4, 6, 8, 2
    x_q, x_kv = rng.normal(size=(2, n_q, d_model)), rng.normal(size=(2, n_k, d_model))
    params = random_mha_params(rng, d_model)
    ours, weights = an.multi_head_attention(x_q, x_kv, params, h, positions="rope")
    Q = an.split_heads(x_q @ params["W_q"] + params["b_q"], h)
    K = an.split_heads(x_kv @ params["W_k"] + params["b_k"], h)
    V = an.split_heads(x_kv @ params["W_v"] + params["b_v"], h)
    Q, K = rope_complex(Q, np.arange(n_q)), rope_complex(K, np.arange(n_k))
    out, expected_weights = an.scaled_dot_product_attention(Q, K, V)
    np.testing.assert_allclose(weights, expected_weights, rtol=0, atol=1e-12)
    expected = an.combine_heads(out) @ params["W_o"] + params["b_o"]
    np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: an.rope_rotate(np.zeros((3, 5)), [0, 1, 2]), "d even"),
        (lambda: an.rope_rotate(np.zeros((3, 4)), [0, 1]), "one per row"),
        (lambda: an.rope_rotate(np.zeros((3, 4)), [0.0, 1.0, 2.0]), "integers"),
        (lambda: an.rope_rotate(np.zeros((3, 4)), [0, 1, 2], layout="neox"), "layout"),
        (lambda: an.rope_rotate(np.zeros((3, 4)), [0, 1, 2], base=1), "base"),
        (lambda: an.alibi_slopes(0), "n_heads"),
        (lambda: an.alibi_bias(4, 3, 3, q_offset=-1), "q_offset"),
        (lambda: an.rope_layout_permutation(7), "even"),
        (
            lambda: an.multi_head_attention(
                np.zeros((3, 8)),
                np.zeros((3, 8)),
                random_mha_params(np.random.default_rng(0), 8),
                2,
                positions="relative",
            ),
            "unknown positions",
        ),
        (
            lambda: an.scaled_dot_product_attention(
                np.zeros((3, 4)), np.zeros((5, 4)), np.zeros((5, 4)), bias=np.zeros((3, 4))
            ),
            "does not broadcast",
        ),
    ],
)
def test_positions_in_scores_bad_input_raises_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()
