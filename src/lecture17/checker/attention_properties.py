"""The properties of the attention blocks (§2.2 softmax, §3 attention, §5 multi-head
attention), in the lecture's order: each a sentence of the lecture or the equality with the
reference, tried on growing inputs (checker/properties.py lists them all).
"""

import numpy as np

from lecture17 import attention_numpy as ref
from lecture17.checker.property_base import (
    SIZES_HEADS,
    SIZES_N,
    SIZES_QKV,
    TOL,
    close,
    gap,
    mha_params,
    prop,
    qkv,
    rng_for,
)

# -----------------------------------------------------------------------------
# §2.2 softmax, §3 attention


def softmax_sums_to_one(fn, n):
    x = rng_for(n).normal(0, 2, (n, n))
    sums = np.asarray(fn(x)).sum(axis=-1)
    return "" if close(sums, np.ones(n)) else "每行的和：" + gap(sums, np.ones(n), ("和", "应为"))


def softmax_sums_to_one_float32(fn, n):
    """A fully masked row in float32 (Ex4(c)): scores near −1e9, where float32's spacing is
    64, so the row is n equal numbers. The tolerance is float32's: 1e-5 for n ≤ 8."""
    x = (np.float32(-1e9) + rng_for(n).normal(0, 2, (n, n))).astype(np.float32)
    got = np.asarray(fn(x))
    sums = got.astype(np.float64).sum(axis=-1)
    if np.all(np.abs(sums - 1) <= 1e-5):
        return ""
    sums = np.round(sums, 4).tolist()
    return f"float32 的分数 {x[0].tolist()}：权重 {got[0].tolist()}，每行的和 {sums}"


def softmax_matches(fn, n):
    x = rng_for(n).normal(0, 2, (2, n))
    return "" if close(fn(x), ref.softmax(x)) else gap(fn(x), ref.softmax(x))


def softmax_stable(fn, n):
    x = 1000.0 + np.arange(n, dtype=np.float64)[np.newaxis]  # (1, n): scores of size 1000
    got = np.asarray(fn(x))
    if not np.all(np.isfinite(got)):
        return f"softmax({x[0].tolist()}) 得到 {got[0].tolist()}：不全是有限的数 not all finite"
    return "" if close(got, ref.softmax(x)) else gap(got, ref.softmax(x))


def sdpa_matches(fn, size):
    Q, K, V = qkv(size)
    causal = np.tril(np.ones((len(Q), len(K))))
    for mask in (None, causal):  # the scores, then the mask term of §8.1
        got = fn(Q, K, V) if mask is None else fn(Q, K, V, mask)
        want = ref.scaled_dot_product_attention(Q, K, V, mask)
        for g, w in zip(got, want, strict=True):
            if not close(g, w):
                return ("有 mask 时 with a mask: " if mask is not None else "") + gap(g, w)
    return ""


def sdpa_rows_sum_to_one(fn, size):
    Q, K, V = qkv(size)
    sums = np.asarray(fn(Q, K, V)[1]).sum(axis=-1)
    ones = np.ones(len(Q))
    return "" if close(sums, ones) else "权重每行的和：" + gap(sums, ones, ("和", "应为"))


def sdpa_output_is_weighted_values(fn, size):
    Q, K, V = qkv(size)
    out, weights = fn(Q, K, V)
    return (
        ""
        if close(out, np.asarray(weights) @ V)
        else "输出 ≠ 权重 @ V: " + gap(out, np.asarray(weights) @ V)
    )


def sdpa_permutation_equivariant(fn, size):
    Q, K, V = qkv(size)
    perm_q, perm_k = np.roll(np.arange(len(Q)), 1), np.roll(np.arange(len(K)), 1)
    out = np.asarray(fn(Q, K, V)[0])
    moved = np.asarray(fn(Q[perm_q], K, V)[0])
    if not close(moved, out[perm_q]):
        return "query 的行换了顺序，输出的行和换过顺序的原输出：" + gap(
            moved, out[perm_q], ("换后", "应为")
        )
    kept = np.asarray(fn(Q, K[perm_k], V[perm_k])[0])
    if not close(kept, out):
        return "key 和 value 的行一起换了顺序，输出和原来的：" + gap(kept, out, ("换后", "原来"))
    return ""


def sdpa_mask_zeroes(fn, size):
    n, d = size
    rng = rng_for(size)
    Q, K, V = (rng.normal(0, 1, (n, d)) for _ in range(3))
    mask = np.tril(np.ones((n, n)))
    weights = np.asarray(fn(Q, K, V, mask)[1])
    leaked = np.abs(weights[mask == 0]).max(initial=0)
    if leaked > TOL:
        return f"mask = 0 的位置拿到了权重 {leaked:.3g}（应为 0）"
    want = ref.scaled_dot_product_attention(Q, K, V, mask)[1]
    return "" if close(weights, want) else gap(weights, want)


# -----------------------------------------------------------------------------
# §5 multi-head attention


def _heads_input(size):
    b, n, h, d_k = size
    return rng_for(size).normal(0, 1, (b, n, h * d_k)), h


def split_heads_matches(fn, size):
    x, h = _heads_input(size)
    got, want = fn(x, h), ref.split_heads(x, h)
    return "" if close(got, want) else gap(got, want)


def combine_heads_matches(fn, size):
    x, h = _heads_input(size)
    heads = ref.split_heads(x, h)
    return "" if close(fn(heads), x) else "把切开的头拼回去没有还原输入: " + gap(fn(heads), x)


def mha_matches(fn, size):
    b, n, h, d_k = size
    rng = rng_for(size)
    x_q, x_kv = rng.normal(0, 1, (b, n, h * d_k)), rng.normal(0, 1, (b, n + 1, h * d_k))
    params = mha_params(h * d_k, rng)
    causal = np.broadcast_to(np.tril(np.ones((n, n + 1))), (b, n, n + 1))  # (b, n_q, n_k)
    for mask in (None, causal):
        got = fn(x_q, x_kv, params, h) if mask is None else fn(x_q, x_kv, params, h, mask)
        want = ref.multi_head_attention(x_q, x_kv, params, h, mask)
        for g, w in zip(got, want, strict=True):
            if not close(g, w):
                return ("有 mask 时 with a mask: " if mask is not None else "") + gap(g, w)
    return ""


def mha_permutation_equivariant(fn, size):
    b, n, h, d_k = size
    rng = rng_for(size)
    x, params = rng.normal(0, 1, (b, n, h * d_k)), mha_params(h * d_k, rng)
    perm = np.roll(np.arange(n), 1)
    out = np.asarray(fn(x, x, params, h)[0])
    moved = np.asarray(fn(x[:, perm], x[:, perm], params, h)[0])
    if close(moved, out[:, perm]):
        return ""
    return "词换了顺序，输出和换过顺序的原输出：" + gap(moved, out[:, perm], ("换后", "应为"))


def count_mha_params_formula(fn, d_model):
    want = 4 * d_model**2 + 4 * d_model
    got = fn(d_model)
    return "" if got == want else f"d_model = {d_model}: 得到 {got}，4 d² + 4 d = {want}"


PROPERTIES = [  # in the lecture's order
    prop("softmax", "sums_to_one", "每一行加起来等于 1（§2.2）", softmax_sums_to_one, SIZES_N),
    prop(
        "softmax",
        "sums_to_one_float32",
        "float32 的分数在 −1e9 左右（整行被遮住，练习 4(c)）时每一行也加起来等于 1",
        softmax_sums_to_one_float32,
        SIZES_N,
    ),
    prop(
        "softmax",
        "stable",
        "分数很大（1000 起）时权重仍是有限的数，和参考实现一致（§2.2）",
        softmax_stable,
        SIZES_N,
    ),
    prop("softmax", "matches", "和参考实现逐数一致（float64）", softmax_matches, SIZES_N),
    prop(
        "scaled_dot_product_attention",
        "rows_sum_to_one",
        "注意力权重每一行加起来等于 1（§3.1）",
        sdpa_rows_sum_to_one,
        SIZES_QKV,
    ),
    prop(
        "scaled_dot_product_attention",
        "weighted_values",
        "输出 = 权重 @ V（§3.1）",
        sdpa_output_is_weighted_values,
        SIZES_QKV,
    ),
    prop(
        "scaled_dot_product_attention",
        "permutation_equivariant",
        "置换等变：query 换顺序，输出跟着换；key、value 一起换顺序，输出不变（§3.2）",
        sdpa_permutation_equivariant,
        SIZES_QKV,
    ),
    prop(
        "scaled_dot_product_attention",
        "mask_zeroes",
        "mask = 0 的位置权重正好是 0（§8.1）",
        sdpa_mask_zeroes,
        SIZES_QKV,
    ),
    prop(
        "scaled_dot_product_attention",
        "matches",
        "softmax(QKᵀ/√d_k)V 和参考实现逐数一致（float64）",
        sdpa_matches,
        SIZES_QKV,
    ),
    prop(
        "split_heads",
        "matches",
        "第 i 个头拿到第 i 段 d_k 维（§5.3）",
        split_heads_matches,
        SIZES_HEADS,
    ),
    prop(
        "combine_heads",
        "inverts_split",
        "拼回去正好还原切开前的输入（§5.3）",
        combine_heads_matches,
        SIZES_HEADS,
    ),
    prop(
        "multi_head_attention",
        "permutation_equivariant",
        "自注意力置换等变（§3.2）",
        mha_permutation_equivariant,
        SIZES_HEADS,
    ),
    prop(
        "multi_head_attention", "matches", "和参考实现逐数一致（float64）", mha_matches, SIZES_HEADS
    ),
    prop(
        "count_mha_params",
        "formula",
        "4 d_model² + 4 d_model，和头数无关（§5.2）",
        count_mha_params_formula,
        (1, 2, 4, 512),
    ),
]
