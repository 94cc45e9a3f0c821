"""The properties of the layers and the masks (§7 the encoder layer: feed-forward, layer norm;
§8 the look-ahead and padding masks, the decoder layer), in the lecture's order
(checker/properties.py lists them all).
"""

import numpy as np

from lecture17 import attention_numpy as ref
from lecture17.checker.blocks import broadcasts_alike, shape_words
from lecture17.checker.property_base import (
    SIZES_LAYER,
    SIZES_N,
    SIZES_ROWS,
    close,
    ffn_params,
    gap,
    layer_params,
    norm_params,
    prop,
    rng_for,
)

# -----------------------------------------------------------------------------
# §7 the encoder layer


def ffn_matches(fn, size):
    n, d_model = size
    rng = rng_for(size)
    x, params = rng.normal(0, 1, (n, d_model)), ffn_params(d_model, 2 * d_model, rng)
    got, want = fn(x, params), ref.feed_forward(x, params)
    return "" if close(got, want) else gap(got, want)


def ffn_relu(fn, size):
    n, d_model = size
    x = rng_for(size).normal(0, 1, (n, d_model))
    eye, zero = np.eye(d_model), np.zeros(d_model)
    got = np.asarray(fn(x, {"W_1": eye, "b_1": zero, "W_2": eye, "b_2": zero}))
    want = np.maximum(x, 0)
    return "" if close(got, want) else "W₁ = W₂ = I、偏置为 0，应得 max(x, 0)：" + gap(got, want)


def ffn_biases(fn, size):
    n, d_model = size
    rng = rng_for(size)
    x, params = rng.normal(0, 1, (n, d_model)), ffn_params(d_model, 2 * d_model, rng)
    params = params | {"W_2": np.zeros_like(params["W_2"])}
    got = np.asarray(fn(x, params))
    want = np.broadcast_to(params["b_2"], (n, d_model))
    return "" if close(got, want) else "W₂ = 0，应得 b₂：" + gap(got, want)


def ln_unit_variance(fn, size):
    n, d_model = size
    x = rng_for(size).normal(0, 2, (n, d_model))
    got = np.asarray(fn(x, np.ones(d_model), np.zeros(d_model)))
    var = got.var(axis=-1)
    if np.all(np.abs(var - 1) < 1e-3) or d_model == 1:
        return ""
    return f"γ = 1、β = 0 时每个词的方差 {np.round(var, 4).tolist()}，应为 1"


def ln_matches(fn, size):
    n, d_model = size
    rng = rng_for(size)
    x, norm = rng.normal(0, 2, (n, d_model)), norm_params(d_model, rng)
    got, want = fn(x, norm["gamma"], norm["beta"]), ref.layer_norm(x, norm["gamma"], norm["beta"])
    return "" if close(got, want) else gap(got, want)


def ln_per_token(fn, size):
    n, d_model = size
    rng = rng_for(size)
    x, ones, zeros = rng.normal(0, 2, (n, d_model)), np.ones(d_model), np.zeros(d_model)
    alone = np.stack([np.asarray(fn(x[i : i + 1], ones, zeros))[0] for i in range(n)])
    together = np.asarray(fn(x, ones, zeros))
    if not close(together, alone):
        return "n 个词一起算和一个一个算，结果不同：" + gap(together, alone)
    means = together.mean(axis=-1)
    zeros = np.zeros(n)
    return "" if close(means, zeros) else "每个词的均值：" + gap(means, zeros, ("均值", "应为"))


def _encoder_case(size):
    n, d_model, h = size
    rng = rng_for(size)
    return rng.normal(0, 1, (n, d_model)), layer_params(d_model, rng), h


def encoder_matches(fn, size):
    x, params, h = _encoder_case(size)
    for norm_first in (False, True):
        got = fn(x, params, h, None, norm_first)
        want = ref.encoder_layer_forward(x, params, h, None, norm_first)
        if not close(got, want):
            return ("Pre-LN" if norm_first else "Post-LN") + ": " + gap(got, want)
    return ""


def encoder_permutation_equivariant(fn, size):
    x, params, h = _encoder_case(size)
    perm = np.roll(np.arange(len(x)), 1)
    out = np.asarray(fn(x, params, h))
    moved = np.asarray(fn(x[perm], params, h))
    if close(moved, out[perm]):
        return ""
    return "词换了顺序，输出和换过顺序的原输出：" + gap(moved, out[perm], ("换后", "应为"))


# -----------------------------------------------------------------------------
# §8 masks and the decoder layer


def _mask_of(fn, n):
    return np.asarray(fn(n), dtype=np.float64).reshape(-1, n)[-n:]


def look_ahead_sees_itself(fn, n):
    got = _mask_of(fn, n)
    return (
        ""
        if np.all(np.diag(got) == 1)
        else f"n = {n}: 对角线 {np.diag(got).tolist()}，位置 t 应当看得见自己"
    )


def look_ahead_no_future(fn, n):
    got = _mask_of(fn, n)
    return (
        ""
        if np.all(np.triu(got, k=1) == 0)
        else f"n = {n}: 对角线以上有 1：位置 t 看见了 t 之后的词"
    )


def look_ahead_lower_triangular(fn, n):
    got = np.asarray(fn(n), dtype=np.float64).reshape(-1, n)[-n:]
    want = np.tril(np.ones((n, n)))
    if got.shape == want.shape and np.array_equal(got, want):
        return ""
    return f"n = {n}: 得到 {got.astype(int).tolist()}，应为第 t 行看得见 0..t"


def padding_marks_real_tokens(fn, size):
    b, n = size
    tokens = np.arange(1, b * n + 1).reshape(b, n) % 3  # some 0 = padding in every row
    got = np.asarray(fn(tokens), dtype=np.float64)
    want = ref.create_padding_mask(tokens)
    if not broadcasts_alike(got.shape, want.shape):
        return shape_words("create_padding_mask", got.shape, want.shape)
    if np.array_equal(got.reshape(want.shape), want):
        return ""
    return f"tokens {tokens.tolist()}: 得到 {got.reshape(b, -1).astype(int).tolist()}"


def _decoder_case(size):
    n, d_model, h = size
    rng = rng_for(size)
    y, memory = rng.normal(0, 1, (n, d_model)), rng.normal(0, 1, (n + 2, d_model))
    return y, memory, layer_params(d_model, rng, decoder=True), h, np.tril(np.ones((n, n)))


def decoder_matches(fn, size):
    y, memory, params, h, causal = _decoder_case(size)
    for norm_first in (False, True):
        got = fn(y, memory, params, h, causal, None, norm_first)
        want = ref.decoder_layer_forward(y, memory, params, h, causal, None, norm_first)
        if not close(got, want):
            return ("Pre-LN" if norm_first else "Post-LN") + ": " + gap(got, want)
    return ""


def decoder_causal(fn, size):
    y, memory, params, h, causal = _decoder_case(size)
    later = y.copy()
    later[-1] += 1.0
    a, b = (
        np.asarray(fn(y, memory, params, h, causal)),
        np.asarray(fn(later, memory, params, h, causal)),
    )
    return (
        ""
        if close(a[:-1], b[:-1])
        else "只改最后一个词，前面位置的输出也变了：" + gap(b[:-1], a[:-1], ("改后", "改前"))
    )


def decoder_reads_memory(fn, size):
    y, memory, params, h, causal = _decoder_case(size)
    a = np.asarray(fn(y, memory, params, h, causal))
    b = np.asarray(fn(y, memory[::-1] * 2, params, h, causal))
    return "" if not close(a, b) else "编码器的输出 memory 换了，解码器的输出一点没变"


PROPERTIES = [  # in the lecture's order
    prop("feed_forward", "relu", "隐藏层过 ReLU：负的值变成 0（§7.2）", ffn_relu, SIZES_ROWS),
    prop(
        "feed_forward",
        "biases",
        "两层都有偏置：W₂ = 0 时输出就是 b₂（§7.2）",
        ffn_biases,
        SIZES_ROWS,
    ),
    prop(
        "feed_forward",
        "matches",
        "ReLU(x W₁ + b₁) W₂ + b₂，每个位置各自算（§7.2）",
        ffn_matches,
        SIZES_ROWS,
    ),
    prop(
        "layer_norm",
        "per_token",
        "每个词各自归一（最后一维），均值 0（§7.3）",
        ln_per_token,
        SIZES_ROWS,
    ),
    prop(
        "layer_norm",
        "unit_variance",
        "γ = 1、β = 0 时每个词方差为 1（有偏方差，§7.3）",
        ln_unit_variance,
        SIZES_ROWS,
    ),
    prop(
        "layer_norm",
        "matches",
        "和 nn.LayerNorm 的公式逐数一致（有偏方差，ε 在根号里）",
        ln_matches,
        SIZES_ROWS,
    ),
    prop(
        "encoder_layer_forward",
        "permutation_equivariant",
        "没有位置编码时编码器层置换等变（§3.2）",
        encoder_permutation_equivariant,
        SIZES_LAYER,
    ),
    prop(
        "encoder_layer_forward",
        "matches",
        "Post-LN 和 Pre-LN 都和参考实现逐数一致（§7.1、§7.5）",
        encoder_matches,
        SIZES_LAYER,
    ),
    prop(
        "create_look_ahead_mask",
        "sees_itself",
        "位置 t 看得见自己：对角线是 1（§8.1）",
        look_ahead_sees_itself,
        SIZES_N,
    ),
    prop(
        "create_look_ahead_mask",
        "no_future",
        "位置 t 看不见 t 之后：对角线以上是 0（§8.1）",
        look_ahead_no_future,
        SIZES_N,
    ),
    prop(
        "create_look_ahead_mask",
        "lower_triangular",
        "第 t 行只看得见 0..t：下三角的 1（§8.1）",
        look_ahead_lower_triangular,
        SIZES_N,
    ),
    prop(
        "create_padding_mask",
        "marks_real_tokens",
        "形状 (b, 1, n)，真实的词是 1，padding 是 0（§8.3）",
        padding_marks_real_tokens,
        ((1, 2), (2, 3), (3, 5)),
    ),
    prop(
        "decoder_layer_forward",
        "causal",
        "有 look-ahead mask 时，位置 t 看不到 t 之后的词（§8.1）",
        decoder_causal,
        SIZES_LAYER[1:],
    ),
    prop(
        "decoder_layer_forward",
        "reads_memory",
        "交叉注意力的 K、V 来自编码器的输出（§8.2）",
        decoder_reads_memory,
        SIZES_LAYER[2:],
    ),
    prop(
        "decoder_layer_forward",
        "matches",
        "Post-LN 和 Pre-LN 都和参考实现逐数一致（§8.2）",
        decoder_matches,
        SIZES_LAYER,
    ),
]
