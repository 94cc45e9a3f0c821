"""What each of the lecture's blocks must satisfy, tried on growing inputs, smallest first.

A property is a sentence of the lecture about a block (rows of the softmax sum to 1, §2.2;
attention is permutation equivariant, §3.2; PE(p + k) = PE(p) M_k, §6.3; row t of the decoder
never sees t + 1, §8.1) or its equality with the reference at float64 (the reference equals
PyTorch to ~1e-16: demos 02.4, 04.1, 04.5). Each is tried on inputs of growing size, and the
first that breaks it is reported: the smallest input that shows the mistake.

A tolerance follows the conditioning: these inputs are O(1) and every block is a few products
and sums, so a correct float64 implementation in any style (einsum, loops) is within ~1e-14 of
the reference; TOL = 1e-9 leaves five orders of magnitude and catches any real slip (1e-3 and
up). The conventions at the end (CONVENTIONS) are not mistakes of the maths: a block in
TensorFlow's "1 = masked" convention, or an attention that returns only its output, gets its
own message and an adapter, so the claims are judged on its maths.

Long on purpose: one short function per property of the lecture's 14 blocks, in the
lecture's order, then the conventions.
"""

from dataclasses import dataclass

import numpy as np

from lecture17 import attention_numpy as ref

TOL = 1e-9


@dataclass(frozen=True)
class Property:
    block: str
    id: str  # "<block>.<name>", what the catalogue's fingerprints list
    text: str  # the lecture's sentence, in the page's words
    check: object  # (fn, size) -> "" when it holds, else what was seen
    sizes: tuple
    names: tuple = ()  # what each number of a size is ("n", "d_k")

    def size_text(self, size) -> str:
        values = size if isinstance(size, tuple) else (size,)
        return ", ".join(f"{n} = {v}" for n, v in zip(self.names, values, strict=False)) or str(
            size
        )


def _close(a, b) -> bool:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return False
    return bool(np.all(np.abs(a - b) <= TOL * (1 + np.abs(b).max(initial=0))))


def _gap(a, b) -> str:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return f"形状 shape {a.shape}，应为 {b.shape}"
    return f"最大差 max |差| = {np.abs(a - b).max():.3g}"


def _rng(size) -> np.random.Generator:
    return np.random.default_rng(abs(hash(size)) % 2**32)


def _params(d_model, rng):
    p = {f"W_{k}": rng.normal(0, 0.5, (d_model, d_model)) for k in "qkvo"}
    return p | {f"b_{k}": rng.normal(0, 0.1, d_model) for k in "qkvo"}


def _ffn(d_model, d_ff, rng):
    return {
        "W_1": rng.normal(0, 0.5, (d_model, d_ff)),
        "b_1": rng.normal(0, 0.1, d_ff),
        "W_2": rng.normal(0, 0.5, (d_ff, d_model)),
        "b_2": rng.normal(0, 0.1, d_model),
    }


def _norm(d_model, rng):
    return {"gamma": 1 + rng.normal(0, 0.1, d_model), "beta": rng.normal(0, 0.1, d_model)}


def _layer(d_model, rng, decoder=False):
    p = {"self_attn": _params(d_model, rng), "ffn": _ffn(d_model, 2 * d_model, rng)}
    p |= {"norm1": _norm(d_model, rng), "norm2": _norm(d_model, rng)}
    if decoder:
        p |= {"cross_attn": _params(d_model, rng), "norm3": _norm(d_model, rng)}
    return p


def _first(result):
    return result[0] if isinstance(result, tuple | list) else result


# -----------------------------------------------------------------------------
# §2.2 softmax, §3 attention


def softmax_sums_to_one(fn, n):
    x = _rng(n).normal(0, 2, (n, n))
    sums = np.asarray(fn(x)).sum(axis=-1)
    return "" if _close(sums, np.ones(n)) else f"每行的和 row sums {np.round(sums, 4)}"


def softmax_matches(fn, n):
    x = _rng(n).normal(0, 2, (2, n))
    return "" if _close(fn(x), ref.softmax(x)) else _gap(fn(x), ref.softmax(x))


def softmax_stable(fn, n):
    x = 1000.0 + np.arange(n, dtype=np.float64)[np.newaxis]  # (1, n): scores of size 1000
    got = np.asarray(fn(x))
    if not np.all(np.isfinite(got)):
        return f"softmax({x[0].tolist()}) 得到 {got[0].tolist()}：exp 溢出 overflow"
    return "" if _close(got, ref.softmax(x)) else _gap(got, ref.softmax(x))


def _qkv(size):
    n, d = size
    rng = _rng(size)
    return rng.normal(0, 1, (n, d)), rng.normal(0, 1, (n + 1, d)), rng.normal(0, 1, (n + 1, d))


def sdpa_matches(fn, size):
    Q, K, V = _qkv(size)
    causal = np.tril(np.ones((len(Q), len(K))))
    for mask in (None, causal):  # the scores, then the mask term of §8.1
        got = fn(Q, K, V) if mask is None else fn(Q, K, V, mask)
        want = ref.scaled_dot_product_attention(Q, K, V, mask)
        for g, w in zip(got, want, strict=True):
            if not _close(g, w):
                return ("有 mask 时 with a mask: " if mask is not None else "") + _gap(g, w)
    return ""


def sdpa_rows_sum_to_one(fn, size):
    Q, K, V = _qkv(size)
    sums = np.asarray(fn(Q, K, V)[1]).sum(axis=-1)
    return "" if _close(sums, np.ones(len(Q))) else f"权重每行的和 row sums {np.round(sums, 4)}"


def sdpa_output_is_weighted_values(fn, size):
    Q, K, V = _qkv(size)
    out, weights = fn(Q, K, V)
    return (
        ""
        if _close(out, np.asarray(weights) @ V)
        else "输出 ≠ 权重 @ V: " + _gap(out, np.asarray(weights) @ V)
    )


def sdpa_permutation_equivariant(fn, size):
    Q, K, V = _qkv(size)
    perm_q, perm_k = np.roll(np.arange(len(Q)), 1), np.roll(np.arange(len(K)), 1)
    out = np.asarray(fn(Q, K, V)[0])
    if not _close(fn(Q[perm_q], K, V)[0], out[perm_q]):
        return "把 query 的行换个顺序，输出的行没有跟着换"
    if not _close(fn(Q, K[perm_k], V[perm_k])[0], out):
        return "把 key 和 value 的行一起换个顺序，输出变了"
    return ""


def sdpa_mask_zeroes(fn, size):
    n, d = size
    rng = _rng(size)
    Q, K, V = (rng.normal(0, 1, (n, d)) for _ in range(3))
    mask = np.tril(np.ones((n, n)))
    weights = np.asarray(fn(Q, K, V, mask)[1])
    leaked = np.abs(weights[mask == 0]).max(initial=0)
    if leaked > TOL:
        return f"mask = 0 的位置拿到了权重 {leaked:.3g}（应为 0）"
    want = ref.scaled_dot_product_attention(Q, K, V, mask)[1]
    return "" if _close(weights, want) else _gap(weights, want)


# -----------------------------------------------------------------------------
# §5 multi-head attention


def _heads_input(size):
    b, n, h, d_k = size
    return _rng(size).normal(0, 1, (b, n, h * d_k)), h


def split_heads_matches(fn, size):
    x, h = _heads_input(size)
    got, want = fn(x, h), ref.split_heads(x, h)
    return "" if _close(got, want) else _gap(got, want)


def combine_heads_matches(fn, size):
    x, h = _heads_input(size)
    heads = ref.split_heads(x, h)
    return "" if _close(fn(heads), x) else "把切开的头拼回去没有还原输入: " + _gap(fn(heads), x)


def mha_matches(fn, size):
    b, n, h, d_k = size
    rng = _rng(size)
    x_q, x_kv = rng.normal(0, 1, (b, n, h * d_k)), rng.normal(0, 1, (b, n + 1, h * d_k))
    params = _params(h * d_k, rng)
    causal = np.broadcast_to(np.tril(np.ones((n, n + 1))), (b, n, n + 1))  # (b, n_q, n_k)
    for mask in (None, causal):
        got = fn(x_q, x_kv, params, h) if mask is None else fn(x_q, x_kv, params, h, mask)
        want = ref.multi_head_attention(x_q, x_kv, params, h, mask)
        for g, w in zip(got, want, strict=True):
            if not _close(g, w):
                return ("有 mask 时 with a mask: " if mask is not None else "") + _gap(g, w)
    return ""


def mha_permutation_equivariant(fn, size):
    b, n, h, d_k = size
    rng = _rng(size)
    x, params = rng.normal(0, 1, (b, n, h * d_k)), _params(h * d_k, rng)
    perm = np.roll(np.arange(n), 1)
    out = np.asarray(fn(x, x, params, h)[0])
    moved = np.asarray(fn(x[:, perm], x[:, perm], params, h)[0])
    return "" if _close(moved, out[:, perm]) else "把词的顺序换一下，输出没有跟着换"


def count_mha_params_formula(fn, d_model):
    want = 4 * d_model**2 + 4 * d_model
    got = fn(d_model)
    return "" if got == want else f"d_model = {d_model}: 得到 {got}，4 d² + 4 d = {want}"


# -----------------------------------------------------------------------------
# §6 positional encoding


def pe_matches(fn, size):
    got, want = fn(*size), ref.positional_encoding(*size)
    return "" if _close(got, want) else _gap(got, want)


def pe_starts_at_zero(fn, size):
    _, d_model = size
    first = np.asarray(fn(*size))[0]
    want = np.tile([0.0, 1.0], d_model // 2)
    return (
        ""
        if _close(first, want)
        else f"PE(0) = {np.round(first, 3).tolist()}，应为 (0, 1, 0, 1, …)"
    )


def pe_norm(fn, size):
    _, d_model = size
    norms = np.linalg.norm(np.asarray(fn(*size)), axis=-1)
    want = np.full(len(norms), np.sqrt(d_model / 2))
    return (
        "" if _close(norms, want) else f"每个位置的范数 {np.round(norms, 4).tolist()}，应为 √(d/2)"
    )


def pe_shift_is_linear(fn, size):
    max_len, d_model = size
    if max_len < 2:  # one position: nothing to shift to
        return ""
    pe = np.asarray(fn(max_len, d_model))
    moved = pe[:-1] @ ref.relative_shift_matrix(1, d_model)
    if _close(moved, pe[1:]):
        return ""
    return f"p = 0..{max_len - 2}：PE(p + 1) 不是 PE(p) M_1，" + _gap(moved, pe[1:])


def shift_matrix_moves_pe(fn, size):
    k, d_model = size
    pe = ref.positional_encoding(8 + k, d_model)
    moved = pe[:8] @ np.asarray(fn(k, d_model))
    return "" if _close(moved, pe[k:]) else f"PE(p) M_{k} ≠ PE(p + {k}): " + _gap(moved, pe[k:])


def shift_matrix_orthogonal(fn, size):
    M = np.asarray(fn(*size))
    return "" if _close(M @ M.T, np.eye(len(M))) else "M_k M_kᵀ ≠ I：不是旋转"


# -----------------------------------------------------------------------------
# §7 the encoder layer


def ffn_matches(fn, size):
    n, d_model = size
    rng = _rng(size)
    x, params = rng.normal(0, 1, (n, d_model)), _ffn(d_model, 2 * d_model, rng)
    got, want = fn(x, params), ref.feed_forward(x, params)
    return "" if _close(got, want) else _gap(got, want)


def ffn_relu(fn, size):
    n, d_model = size
    x = _rng(size).normal(0, 1, (n, d_model))
    eye, zero = np.eye(d_model), np.zeros(d_model)
    got = np.asarray(fn(x, {"W_1": eye, "b_1": zero, "W_2": eye, "b_2": zero}))
    return (
        ""
        if _close(got, np.maximum(x, 0))
        else "W₁ = W₂ = I、偏置为 0 时输出不是 max(x, 0)：ReLU 不对"
    )


def ffn_biases(fn, size):
    n, d_model = size
    rng = _rng(size)
    x, params = rng.normal(0, 1, (n, d_model)), _ffn(d_model, 2 * d_model, rng)
    params = params | {"W_2": np.zeros_like(params["W_2"])}
    got = np.asarray(fn(x, params))
    want = np.broadcast_to(params["b_2"], got.shape)
    return "" if _close(got, want) else "W₂ = 0 时输出不是 b₂：第二个偏置不对"


def ln_unit_variance(fn, size):
    n, d_model = size
    x = _rng(size).normal(0, 2, (n, d_model))
    got = np.asarray(fn(x, np.ones(d_model), np.zeros(d_model)))
    var = got.var(axis=-1)
    if np.all(np.abs(var - 1) < 1e-3) or d_model == 1:
        return ""
    return f"γ = 1、β = 0 时每个词的方差 {np.round(var, 4).tolist()}，应为 1（除以 d，不是 d − 1）"


def ln_matches(fn, size):
    n, d_model = size
    rng = _rng(size)
    x, norm = rng.normal(0, 2, (n, d_model)), _norm(d_model, rng)
    got, want = fn(x, norm["gamma"], norm["beta"]), ref.layer_norm(x, norm["gamma"], norm["beta"])
    return "" if _close(got, want) else _gap(got, want)


def ln_per_token(fn, size):
    n, d_model = size
    rng = _rng(size)
    x, ones, zeros = rng.normal(0, 2, (n, d_model)), np.ones(d_model), np.zeros(d_model)
    alone = np.stack([np.asarray(fn(x[i : i + 1], ones, zeros))[0] for i in range(n)])
    together = np.asarray(fn(x, ones, zeros))
    if not _close(together, alone):
        return "一个词的结果取决于同一批里的其他词：统计量不是按每个词（最后一维）算的"
    means = together.mean(axis=-1)
    return (
        "" if _close(means, np.zeros(n)) else f"每个词的均值 {np.round(means, 4).tolist()}，应为 0"
    )


def _encoder_case(size):
    n, d_model, h = size
    rng = _rng(size)
    return rng.normal(0, 1, (n, d_model)), _layer(d_model, rng), h


def encoder_matches(fn, size):
    x, params, h = _encoder_case(size)
    for norm_first in (False, True):
        got = fn(x, params, h, None, norm_first)
        want = ref.encoder_layer_forward(x, params, h, None, norm_first)
        if not _close(got, want):
            return ("Pre-LN" if norm_first else "Post-LN") + ": " + _gap(got, want)
    return ""


def encoder_permutation_equivariant(fn, size):
    x, params, h = _encoder_case(size)
    perm = np.roll(np.arange(len(x)), 1)
    out = np.asarray(fn(x, params, h))
    return "" if _close(fn(x[perm], params, h), out[perm]) else "把词的顺序换一下，输出没有跟着换"


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
    if got.size == want.size and np.array_equal(got.reshape(want.shape), want):
        return ""
    return f"tokens {tokens.tolist()}: 得到 {got.reshape(b, -1).astype(int).tolist()}"


def _decoder_case(size):
    n, d_model, h = size
    rng = _rng(size)
    y, memory = rng.normal(0, 1, (n, d_model)), rng.normal(0, 1, (n + 2, d_model))
    return y, memory, _layer(d_model, rng, decoder=True), h, np.tril(np.ones((n, n)))


def decoder_matches(fn, size):
    y, memory, params, h, causal = _decoder_case(size)
    for norm_first in (False, True):
        got = fn(y, memory, params, h, causal, None, norm_first)
        want = ref.decoder_layer_forward(y, memory, params, h, causal, None, norm_first)
        if not _close(got, want):
            return ("Pre-LN" if norm_first else "Post-LN") + ": " + _gap(got, want)
    return ""


def decoder_causal(fn, size):
    y, memory, params, h, causal = _decoder_case(size)
    later = y.copy()
    later[-1] += 1.0
    a, b = (
        np.asarray(fn(y, memory, params, h, causal)),
        np.asarray(fn(later, memory, params, h, causal)),
    )
    return "" if _close(a[:-1], b[:-1]) else "改最后一个词，前面位置的输出也变了：看到了未来"


def decoder_reads_memory(fn, size):
    y, memory, params, h, causal = _decoder_case(size)
    a = np.asarray(fn(y, memory, params, h, causal))
    b = np.asarray(fn(y, memory[::-1] * 2, params, h, causal))
    return (
        ""
        if not _close(a, b)
        else "编码器的输出 memory 变了，解码器的输出不变：K、V 没有来自编码器"
    )


SIZE_NAMES = {  # what the numbers of each kind of size are, for "the smallest input"
    "softmax": ("n",),
    "scaled_dot_product_attention": ("n_q", "d_k"),
    "split_heads": ("b", "n", "h", "d_k"),
    "combine_heads": ("b", "n", "h", "d_k"),
    "multi_head_attention": ("b", "n", "h", "d_k"),
    "count_mha_params": ("d_model",),
    "positional_encoding": ("max_len", "d_model"),
    "relative_shift_matrix": ("k", "d_model"),
    "feed_forward": ("n", "d_model"),
    "layer_norm": ("n", "d_model"),
    "encoder_layer_forward": ("n", "d_model", "h"),
    "create_look_ahead_mask": ("n",),
    "create_padding_mask": ("b", "n"),
    "decoder_layer_forward": ("n", "d_model", "h"),
}


def _p(block, name, text, check, sizes):
    return Property(block, f"{block}.{name}", text, check, tuple(sizes), SIZE_NAMES[block])


SIZES_N = (1, 2, 3, 5, 8)
SIZES_QKV = ((1, 1), (2, 2), (3, 4), (5, 8))
SIZES_HEADS = ((1, 1, 1, 1), (1, 2, 2, 1), (2, 3, 2, 2), (2, 5, 4, 3))
SIZES_PE = ((1, 2), (2, 2), (3, 4), (8, 8), (16, 16))
SIZES_ROWS = ((1, 2), (2, 2), (3, 4), (5, 8))
SIZES_LAYER = ((1, 2, 1), (2, 2, 1), (3, 4, 2), (5, 8, 2))
PROPERTIES = [
    _p("softmax", "sums_to_one", "每一行加起来等于 1（§2.2）", softmax_sums_to_one, SIZES_N),
    _p(
        "softmax", "stable", "分数很大（1000）也不溢出：先减去每行的最大值", softmax_stable, SIZES_N
    ),
    _p("softmax", "matches", "和参考实现逐数一致（float64）", softmax_matches, SIZES_N),
    _p(
        "scaled_dot_product_attention",
        "rows_sum_to_one",
        "注意力权重每一行加起来等于 1（§3.1）",
        sdpa_rows_sum_to_one,
        SIZES_QKV,
    ),
    _p(
        "scaled_dot_product_attention",
        "weighted_values",
        "输出 = 权重 @ V（§3.1）",
        sdpa_output_is_weighted_values,
        SIZES_QKV,
    ),
    _p(
        "scaled_dot_product_attention",
        "permutation_equivariant",
        "置换等变：换 query 的顺序，输出跟着换（§3.2）",
        sdpa_permutation_equivariant,
        SIZES_QKV,
    ),
    _p(
        "scaled_dot_product_attention",
        "mask_zeroes",
        "mask = 0 的位置权重正好是 0（§8.1）",
        sdpa_mask_zeroes,
        SIZES_QKV,
    ),
    _p(
        "scaled_dot_product_attention",
        "matches",
        "softmax(QKᵀ/√d_k)V 和参考实现逐数一致（float64）",
        sdpa_matches,
        SIZES_QKV,
    ),
    _p(
        "split_heads",
        "matches",
        "第 i 个头拿到第 i 段 d_k 维（§5.3）",
        split_heads_matches,
        SIZES_HEADS,
    ),
    _p(
        "combine_heads",
        "inverts_split",
        "拼回去正好还原切开前的输入（§5.3）",
        combine_heads_matches,
        SIZES_HEADS,
    ),
    _p(
        "multi_head_attention",
        "permutation_equivariant",
        "自注意力置换等变（§3.2）",
        mha_permutation_equivariant,
        SIZES_HEADS,
    ),
    _p(
        "multi_head_attention", "matches", "和参考实现逐数一致（float64）", mha_matches, SIZES_HEADS
    ),
    _p(
        "count_mha_params",
        "formula",
        "4 d_model² + 4 d_model，和头数无关（§5.2）",
        count_mha_params_formula,
        (1, 2, 4, 512),
    ),
    _p(
        "positional_encoding",
        "starts_at_zero",
        "PE(0) = (0, 1, 0, 1, …)：sin 在偶数维，cos 在奇数维（§6.2）",
        pe_starts_at_zero,
        SIZES_PE,
    ),
    _p("positional_encoding", "norm", "每个位置的范数都是 √(d_model/2)（§6.2）", pe_norm, SIZES_PE),
    _p(
        "positional_encoding",
        "shift_is_linear",
        "PE(p + k) = PE(p) M_k（§6.3）",
        pe_shift_is_linear,
        SIZES_PE,
    ),
    _p("positional_encoding", "matches", "和参考实现逐数一致（float64）", pe_matches, SIZES_PE),
    _p(
        "relative_shift_matrix",
        "moves_pe",
        "PE(p) M_k = PE(p + k)，对每个 p（§6.3）",
        shift_matrix_moves_pe,
        ((1, 2), (2, 4), (3, 8)),
    ),
    _p(
        "relative_shift_matrix",
        "orthogonal",
        "M_k 是旋转：M_k M_kᵀ = I（§6.3）",
        shift_matrix_orthogonal,
        ((1, 2), (2, 4), (3, 8)),
    ),
    _p("feed_forward", "relu", "隐藏层过 ReLU：负的值变成 0（§7.2）", ffn_relu, SIZES_ROWS),
    _p(
        "feed_forward",
        "biases",
        "两层都有偏置：W₂ = 0 时输出就是 b₂（§7.2）",
        ffn_biases,
        SIZES_ROWS,
    ),
    _p(
        "feed_forward",
        "matches",
        "ReLU(x W₁ + b₁) W₂ + b₂，每个位置各自算（§7.2）",
        ffn_matches,
        SIZES_ROWS,
    ),
    _p(
        "layer_norm",
        "per_token",
        "每个词各自归一（最后一维），均值 0（§7.3）",
        ln_per_token,
        SIZES_ROWS,
    ),
    _p(
        "layer_norm",
        "unit_variance",
        "γ = 1、β = 0 时每个词方差为 1（有偏方差，§7.3）",
        ln_unit_variance,
        SIZES_ROWS,
    ),
    _p(
        "layer_norm",
        "matches",
        "和 nn.LayerNorm 的公式逐数一致（有偏方差，ε 在根号里）",
        ln_matches,
        SIZES_ROWS,
    ),
    _p(
        "encoder_layer_forward",
        "permutation_equivariant",
        "没有位置编码时编码器层置换等变（§3.2）",
        encoder_permutation_equivariant,
        SIZES_LAYER,
    ),
    _p(
        "encoder_layer_forward",
        "matches",
        "Post-LN 和 Pre-LN 都和参考实现逐数一致（§7.1、§7.5）",
        encoder_matches,
        SIZES_LAYER,
    ),
    _p(
        "create_look_ahead_mask",
        "sees_itself",
        "位置 t 看得见自己：对角线是 1（§8.1）",
        look_ahead_sees_itself,
        SIZES_N,
    ),
    _p(
        "create_look_ahead_mask",
        "no_future",
        "位置 t 看不见 t 之后：对角线以上是 0（§8.1）",
        look_ahead_no_future,
        SIZES_N,
    ),
    _p(
        "create_look_ahead_mask",
        "lower_triangular",
        "第 t 行只看得见 0..t：下三角的 1（§8.1）",
        look_ahead_lower_triangular,
        SIZES_N,
    ),
    _p(
        "create_padding_mask",
        "marks_real_tokens",
        "真实的词是 1，padding 是 0（§8.3）",
        padding_marks_real_tokens,
        ((1, 2), (2, 3), (3, 5)),
    ),
    _p(
        "decoder_layer_forward",
        "causal",
        "有 look-ahead mask 时，位置 t 看不到 t 之后的词（§8.1）",
        decoder_causal,
        SIZES_LAYER[1:],
    ),
    _p(
        "decoder_layer_forward",
        "reads_memory",
        "交叉注意力的 K、V 来自编码器的输出（§8.2）",
        decoder_reads_memory,
        SIZES_LAYER[2:],
    ),
    _p(
        "decoder_layer_forward",
        "matches",
        "Post-LN 和 Pre-LN 都和参考实现逐数一致（§8.2）",
        decoder_matches,
        SIZES_LAYER,
    ),
]


def of(block: str) -> list[Property]:
    return [p for p in PROPERTIES if p.block == block]


# -----------------------------------------------------------------------------
# probes: a block's outputs on fixed inputs, to compare a flagged block with a known mistake's


def _probe_inputs(block):
    rng = np.random.default_rng(17)
    x = rng.normal(0, 1, (2, 5, 8))
    Q, K, V = _qkv((4, 8))
    causal = np.tril(np.ones((4, 5)))
    layer, decoder = _layer(8, rng), _layer(8, rng, decoder=True)
    memory, mask5 = rng.normal(0, 1, (2, 6, 8)), np.tril(np.ones((5, 5)))
    return {
        "softmax": [(3 * x[0],), (1000 + x[0],)],
        "scaled_dot_product_attention": [(Q, K, V), (Q, K, V, causal)],
        "split_heads": [(x, 2), (x, 4)],
        "combine_heads": [(ref.split_heads(x, 2),)],
        "multi_head_attention": [
            (x, memory, _params(8, rng), 2),
            (x, x, _params(8, rng), 4, mask5),
        ],
        "count_mha_params": [(1,), (8,), (512,)],
        "positional_encoding": [(9, 8), (5, 4)],
        "relative_shift_matrix": [(1, 8), (3, 4)],
        "feed_forward": [(x, _ffn(8, 16, rng))],
        "layer_norm": [(2 * x, *_norm(8, rng).values())],
        "encoder_layer_forward": [(x, layer, 2, None, False), (x, layer, 2, None, True)],
        "create_look_ahead_mask": [(5,)],
        "create_padding_mask": [(np.array([[3, 4, 0, 0], [5, 0, 0, 0]]),)],
        "decoder_layer_forward": [
            (x, memory, decoder, 2, mask5, None, False),
            (x, memory, decoder, 2, mask5, None, True),
        ],
    }[block]


def probe(block: str, fn) -> list | None:
    """fn's outputs on the block's probe inputs, as float arrays (None if it fails on them)."""
    try:
        out = []
        for args in _probe_inputs(block):
            result = fn(*args)
            for r in result if isinstance(result, tuple | list) else (result,):
                out.append(np.asarray(r, dtype=np.float64))
        return out
    except Exception:  # noqa: BLE001 - a block that fails on its probe matches no mistake
        return None


def same_probe(a, b) -> bool:
    if a is None or b is None or len(a) != len(b):
        return False
    return all(
        x.size == y.size and _close(x.reshape(y.shape), y) for x, y in zip(a, b, strict=True)
    )


# -----------------------------------------------------------------------------
# conventions: a block written to another (known) convention gets a message and an adapter


@dataclass(frozen=True)
class Convention:
    block: str
    id: str
    text: str  # what the student's block does, and what the lecture does
    accepted: bool  # True: the lecture's code works with it as it is (no claim, no property)


def _returns_only_output(fn):
    Q, K, V = _qkv((3, 4))
    return not isinstance(fn(Q, K, V), tuple | list)


def _only_output_adapter(student, pos, kw):
    out = student(*pos, **kw)
    return out, ref.scaled_dot_product_attention(*pos[:4], **kw)[1]


def _masks_ones_are_blocked(fn, size=(4, 3)):
    """True when fn(..., mask) behaves as the lecture's attention with 1 - mask."""
    Q, K, V = (_rng(size).normal(0, 1, (size[0], size[1])) for _ in range(3))
    mask = np.tril(np.ones((size[0], size[0])))
    got = _first(fn(Q, K, V, mask))
    lecture = ref.scaled_dot_product_attention(Q, K, V, mask)[0]
    flipped = ref.scaled_dot_product_attention(Q, K, V, 1 - mask)[0]
    return _close(got, flipped) and not _close(got, lecture)


def _flip_mask_adapter(student, pos, kw):
    pos = list(pos)
    if len(pos) > 3 and pos[3] is not None:
        pos[3] = 1 - np.asarray(pos[3])
    return student(*pos, **kw)


def _flip_result_adapter(student, pos, kw):
    return 1 - np.asarray(student(*pos, **kw), dtype=np.float64)


def conventions(block: str, fn) -> list[tuple[Convention, object]]:
    """The conventions `fn` (a student's block) follows that are not the lecture's, each with
    its adapter (adapter(student, args, kwargs) computes the lecture's result)."""
    found = []
    try:
        if block == "scaled_dot_product_attention":
            only = _returns_only_output(fn)
            if only:
                found.append((ONLY_OUTPUT, _only_output_adapter))
            if _masks_ones_are_blocked(fn):
                found.append((TF_MASK, _flip_mask_adapter))
        elif block == "create_look_ahead_mask":
            got = np.asarray(fn(4), dtype=np.float64).reshape(-1, 4)[-4:]
            if np.array_equal(got, 1 - np.tril(np.ones((4, 4)))):
                found.append((TF_LOOK_AHEAD, _flip_result_adapter))
        elif block == "create_padding_mask":
            tokens = np.array([[5, 7, 0, 0]])
            got = np.asarray(fn(tokens), dtype=np.float64).reshape(-1)
            if np.array_equal(got, [0, 0, 1, 1]):
                found.append((TF_PADDING, _flip_result_adapter))
            elif np.asarray(fn(tokens)).shape == (1, 1, 1, 4):
                found.append((PADDING_4D, None))
    except Exception:  # noqa: BLE001 - a crash here shows in the properties, with its line
        return []
    return found


ONLY_OUTPUT = Convention(
    "scaled_dot_product_attention",
    "returns_output_only",
    "只返回了输出 output；讲义的 scaled_dot_product_attention 返回 (output, weights)，"
    "演示要读权重。下面用参考实现的权重补上，只检查你的输出",
    False,
)
TF_MASK = Convention(
    "scaled_dot_product_attention",
    "mask_one_is_blocked",
    "把 mask = 1 当成“屏蔽”（TensorFlow 教程的旧约定，§12 误区 7）；讲义是 1 = 可以看、"
    "0 = 屏蔽，加的是 (1 − mask)·(−1e9)。下面的检查替你把 mask 换成 1 − mask",
    False,
)
TF_LOOK_AHEAD = Convention(
    "create_look_ahead_mask",
    "mask_one_is_blocked",
    "返回的是 1 = 屏蔽 的 look-ahead mask（TensorFlow 的 1 − band_part）；"
    "讲义是下三角的 1 = 可以看。下面的检查替你换成 1 − mask",
    False,
)
TF_PADDING = Convention(
    "create_padding_mask",
    "mask_one_is_blocked",
    "padding 位置是 1（TensorFlow 的约定）；讲义是真实的词 = 1、padding = 0。"
    "下面的检查替你换成 1 − mask",
    False,
)
PADDING_4D = Convention(
    "create_padding_mask",
    "shape_b_1_1_n",
    "返回 (b, 1, 1, n)（TensorFlow 教程的形状）；讲义是 (b, 1, n)。两者广播的方式一样，接受",
    True,
)
