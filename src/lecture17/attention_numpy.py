"""Every Transformer block from scratch in numpy: rows are tokens, float64 (lecture 17, §2–§8).

Read it from the top with the lecture open: the sections follow the lecture's order, each
ruler names its §, and a block is defined before it is used. Softmax (§2.2) → scaled dot-product
attention (§3) → multi-head attention and its parameters (§5) → positional encoding (§6) → the
encoder layer: feed-forward, LayerNorm, residual sublayers, parameter counts (§7) → masks and the
decoder layer (§8). After the lecture's blocks, what goes beyond it: attention without the n×n
matrix (tiled, §10.4), and positions that enter the scores instead of the inputs (RoPE, ALiBi,
§6.5). Every public function validates its arguments in one call on its first line, so its
maths reads right after it; those checks live apart, in `_numpy_checks.py`.

Shapes (one notation for docstrings and comments):
    b           batch
    n_q, n_k    query, key positions (n where they are the same); n_tgt, n_src in the decoder
    d_model     the model's width
    h           heads (the ``n_heads`` argument)
    d_k, d_v    query/key depth, value depth; d_k = d_v = d_model / h in multi-head attention
    d_ff        the feed-forward network's hidden width
    max_len     positions of the positional encoding
    ...         any leading (batch, head) axes
    b_q, b_k    rows of Q, of K in one tile (tiled attention, §10.4)
    x | 1       an axis of size x or 1 (broadcast), in mask shapes

Conventions (lecture §0.4, §8.1):
    - Rows are tokens: ``X`` has shape ``(n, d_model)`` or ``(b, n, d_model)`` and
      ``Q = X @ W_q``; weight matrices are ``(d_in, d_out)``. PyTorch's ``nn.Linear`` stores
      ``(out, in)``; the transpose happens once, in the ``*_from_torch`` converters.
    - Masks: 1 = may attend, 0 = must not (Coursera's newer convention). They are applied by
      adding ``(1 - mask) * -1e9`` to the scores before the softmax, broadcast with them by
      NumPy's rules (a (1, n_q, n_k) mask gives 2-D inputs a batch axis, as in NumPy and
      TensorFlow). PyTorch's ``nn.MultiheadAttention`` boolean masks mean the opposite
      (True = ignore), see §5.4.

References:
    Vaswani et al. (2017), "Attention Is All You Need", NeurIPS. arXiv:1706.03762
    Ba, Kiros & Hinton (2016), "Layer Normalization". arXiv:1607.06450
    Xiong et al. (2020), "On Layer Normalization in the Transformer Architecture", ICML
        (Pre-LN). arXiv:2002.04745
    Dao et al. (2022), "FlashAttention: Fast and Memory-Efficient Exact Attention with
        IO-Awareness", NeurIPS (tiled attention, §10.4). arXiv:2205.14135
    Su et al. (2021), "RoFormer: Enhanced Transformer with Rotary Position Embedding" (RoPE,
        §6.5). arXiv:2104.09864
    Press, Smith & Lewis (2022), "Train Short, Test Long: Attention with Linear Biases Enables
        Input Length Extrapolation", ICLR (ALiBi, §6.5). arXiv:2108.12409

Long on purpose: the lecture's numpy blocks in one file, in the lecture's order, to be read
beside it; most of the length is the docstrings (shapes, the lecture's §).
"""

import numpy as np

from lecture17._numpy_checks import (  # the input checks, apart from the lecture's maths
    ROPE_LAYOUTS,  # noqa: F401 - rope_rotate's layouts, importable here as before
    _as_float,
    _check_attention_inputs,
    _check_decoder_layer_inputs,
    _check_encoder_layer_inputs,
    _check_even_d_model,
    _check_feed_forward_inputs,
    _check_float_array,
    _check_layer_norm_inputs,
    _check_mha_inputs,
    _check_positional_encoding_inputs,
    _check_positions_kind,
    _check_positive_int,
    _check_relative_shift_inputs,
    _check_rope_inputs,
    _check_score_bias,
    _check_split_heads_inputs,
    _check_tiled_attention_inputs,
    _check_tokens,
    _check_torch_activation,
    _check_torch_layer,
    _check_torch_mha,
    _check_torch_norm,
    _to_numpy,
)

__all__ = [
    "softmax",
    "scaled_dot_product_attention",
    "split_heads",
    "combine_heads",
    "multi_head_attention",
    "count_mha_params",
    "mha_params_from_torch",
    "positional_encoding",
    "relative_shift_matrix",
    "feed_forward",
    "layer_norm",
    "encoder_layer_forward",
    "count_encoder_layer_params",
    "encoder_layer_params_from_torch",
    "create_look_ahead_mask",
    "create_padding_mask",
    "decoder_layer_forward",
    "count_decoder_layer_params",
    "decoder_layer_params_from_torch",
    "tiled_attention",
    "rope_rotate",
    "rope_layout_permutation",
    "alibi_slopes",
    "alibi_bias",
]


# --- §2.2 softmax: scores → weights that sum to 1 ---


def softmax(x, axis=-1, *, out=None):
    """Numerically stable softmax along ``axis``.

    Parameters
    ----------
    x : array_like, shape (..., n)
        Scores. Ints are computed in float64; float32 stays float32.
    axis : int, default -1
        The axis that sums to 1 (the key axis for attention, §3.1).
    out : ndarray, optional, shape and dtype of ``x``
        Where to write the result; ``x`` itself computes in place (attention turns its scores'
        buffer into the weights, §3.4, so the largest array is allocated once).

    Returns
    -------
    ndarray, same shape as ``x`` (``out`` when given)
    """
    x = _as_float(x, "x")
    # Subtracting the row max changes nothing mathematically and keeps exp() from overflowing.
    e = np.subtract(x, x.max(axis=axis, keepdims=True), out=out)
    np.exp(e, out=e)
    e /= e.sum(axis=axis, keepdims=True)  # each row sums to 1
    return e


# --- §3 scaled dot-product attention (§3.1; the scale, §4.2; the mask term, §8.1) ---


# Long on purpose: 14 lines of code under the docstring a student reads first (shapes, the
# mask's convention and broadcasting, the scale and bias options, the -1e9 in float64).
def scaled_dot_product_attention(Q, K, V, mask=None, *, scale=True, bias=None):
    """Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k) + (1 - mask) * -1e9) V (§3.1, §8.1).

    Parameters
    ----------
    Q : array_like, shape (..., n_q, d_k)
    K : array_like, shape (..., n_k, d_k)
    V : array_like, shape (..., n_k, d_v)
        Leading (batch, head) axes must broadcast against each other.
    mask : array_like, optional, shape (..., n_q or 1, n_k or 1)
        1 = may attend, 0 = must not. Masked weights are exactly 0 (exp(-1e9) underflows).
        Broadcast with the scores (..., n_q, n_k) by NumPy's rules, as NumPy and TensorFlow
        do: its leading axes may add or stretch batch axes, e.g. a (1, n_q, n_k) or (1, 1, n_k)
        mask with 2-D Q, K, V (Coursera's graders), or TensorFlow's (b, 1, 1, n_k) padding
        mask with (b, h, n, d_k) heads. A mask that does not broadcast raises ValueError.
    scale : bool, default True
        Divide the scores by sqrt(d_k). ``False`` gives the unscaled scores of §4.3.
    bias : array_like, optional, broadcastable to (..., n_q, n_k)
        Added to the (scaled) scores before the mask term: ALiBi's -m |i - j| (§6.5, beyond the
        lecture; :func:`alibi_bias`). It may not add axes the scores do not have.

    Returns
    -------
    output : ndarray, shape (*batch, n_q, d_v)
        ``batch``: the leading axes of Q, K, V and the mask, broadcast.
    weights : ndarray, shape (*batch_w, n_q, n_k)
        The shape of ``scores + mask``: ``batch_w`` broadcasts the leading axes of Q, K and
        the mask (V plays no part, as in NumPy and TensorFlow). Each row sums to 1.

    Notes
    -----
    Computed in the inputs' float dtype (float32 in → float32 out; ints → float64).

    The (n_q, n_k) scores are the largest array here (§3.4: 33.6 MB at n = 2048 in float64),
    so they are allocated once and turned into the weights in place; the scale is applied to
    Q (n_q·d_k numbers) rather than to the scores (n_q·n_k numbers). Same formula, same result
    up to rounding; :func:`tiled_attention` never stores that array at all (§10.4).

    A row whose keys are *all* masked (reading-aid flag F02, exercise 4(c)): every score gets the
    same shift of -1e9, which cancels in the softmax up to rounding. In float64 the spacing of
    numbers near 1e9 is about 1.2e-7, so score differences of order 1 survive and the row
    becomes (to ~1e-7) the softmax of the ORIGINAL, unmasked scores -- not uniform. In float32
    the spacing near 1e9 is 64, every shifted score rounds to -1e9 and the row is uniform.
    Replacing scores with -inf instead (``np.where(mask, scores, -np.inf)``) gives nan.
    """
    Q, K, V, mask, _, dtype = _check_attention_inputs(Q, K, V, mask)
    if scale:
        # §4.2: Var(q·k) grows like d_k; dividing by sqrt(d_k) keeps the scores at variance ~1.
        # (Q / sqrt(d_k)) K^T = Q K^T / sqrt(d_k): n_q·d_k divisions instead of n_q·n_k.
        Q = Q / np.sqrt(dtype.type(Q.shape[-1]))  # (..., n_q, d_k)
    scores = Q @ np.swapaxes(K, -1, -2)  # (..., n_q, n_k)
    if bias is not None:  # ALiBi (§6.5): a penalty by distance, before the mask term
        scores = scores + _check_score_bias(bias, scores.shape, dtype)  # (..., n_q, n_k)
    if mask is not None:
        # §8.1: add -1e9 where mask == 0, BEFORE the softmax; exp(-1e9) underflows to exactly 0.
        scores = scores + (1 - mask) * dtype.type(-1e9)  # (..., n_q, n_k)
    weights = softmax(scores, axis=-1, out=scores)  # (..., n_q, n_k): §2.2's, in place
    return weights @ V, weights  # (..., n_q, d_v), (..., n_q, n_k)


# --- §5 multi-head attention: split and combine heads (§5.3), the layer and its size (§5.2) ---


def split_heads(x, n_heads):
    """Cut d_model into n_heads slices of d_k = d_model / n_heads (§5.3).

    Parameters
    ----------
    x : array_like, shape (b, n, d_model)
    n_heads : int

    Returns
    -------
    ndarray, shape (b, h, n, d_k)
    """
    x = _check_split_heads_inputs(x, n_heads)
    b, n, d_model = x.shape
    x = x.reshape(b, n, n_heads, d_model // n_heads)  # (b, n, h, d_k)
    return x.transpose(0, 2, 1, 3)  # (b, h, n, d_k)


def combine_heads(x):
    """Inverse of :func:`split_heads`: concatenate the heads (§5.3).

    Parameters
    ----------
    x : array_like, shape (b, h, n, d_k)

    Returns
    -------
    ndarray, shape (b, n, h * d_k)
    """
    x = _check_float_array(x, "x", (4,), "(b, h, n, d_k)")
    b, h, n, d_k = x.shape
    return x.transpose(0, 2, 1, 3).reshape(b, n, h * d_k)  # (b, n, h * d_k)


# Long on purpose: 18 lines of code under its docstring (shapes of every parameter, the
# head split, the positions option); the lecture's §5.2 in one function, as the lecture writes it.
def multi_head_attention(x_q, x_kv, params, n_heads, mask=None, *, positions=None):
    """Multi-head attention: project, split into heads, attend, concatenate, project (§5.2).

    Parameters
    ----------
    x_q : array_like, shape (b, n_q, d_model) or (n_q, d_model)
        Where the queries come from (the decoder, for cross-attention, §8.2).
    x_kv : array_like, shape (b, n_k, d_model) or (n_k, d_model)
        Where keys and values come from. Pass ``x_kv = x_q`` for self-attention. A batch of
        one broadcasts against the other's batch.
    params : dict
        ``W_q, W_k, W_v, W_o`` of shape (d_model, d_model), rows-are-tokens (``Q = X @ W_q``),
        and ``b_q, b_k, b_v, b_o`` of shape (d_model,).
    n_heads : int
        Must divide d_model.
    mask : array_like, optional
        1 = may attend. Up to 3 axes: (b, n_q, n_k), the same mask for every head, e.g. a
        padding mask (b, 1, n_k) or a look-ahead mask (n, n). 4 axes: (b, h, n_q, n_k),
        e.g. TensorFlow's padding mask (b, 1, 1, n_k). Any of these axes may be 1 or (the
        leading ones) missing, and the mask's batch axis broadcasts with x's: a (1, n_q, n_k)
        mask makes unbatched inputs give batched outputs, as in NumPy.
    positions : {None, "rope", "alibi"}, optional
        Beyond the lecture (§6.5): positions enter the scores instead of the inputs. Queries
        sit at positions 0 .. n_q - 1 and keys at 0 .. n_k - 1 (a decoder's t and a source's
        s in cross-attention). "rope": each head's q and k rotated by :func:`rope_rotate`
        (interleaved pairs); "alibi": :func:`alibi_bias` added to each head's scores.

    Returns
    -------
    output : ndarray, shape (b, n_q, d_model)
    weights : ndarray, shape (b, h, n_q, n_k)
        ``b``: the batch sizes of x_q, x_kv and the mask, broadcast. Unbatched x_q, x_kv with
        a mask of at most 2 axes (or none) give (n_q, d_model) and (h, n_q, n_k).
    """
    # Past the checks x_q is (b, n_q, d_model) and x_kv (b, n_k, d_model), b = 1 if unbatched,
    # and the mask is (b | 1, h | 1, n_q | 1, n_k | 1): one mask for every head unless 4-D.
    x_q, x_kv, p, mask, unbatched = _check_mha_inputs(x_q, x_kv, params, n_heads, mask)
    _check_positions_kind(positions)
    Q = split_heads(x_q @ p["W_q"] + p["b_q"], n_heads)  # (b, h, n_q, d_k)
    K = split_heads(x_kv @ p["W_k"] + p["b_k"], n_heads)  # (b, h, n_k, d_k)
    V = split_heads(x_kv @ p["W_v"] + p["b_v"], n_heads)  # (b, h, n_k, d_v)
    n_q, n_k, bias = Q.shape[-2], K.shape[-2], None
    if positions == "rope":
        Q, K = rope_rotate(Q, np.arange(n_q)), rope_rotate(K, np.arange(n_k))
    elif positions == "alibi":
        bias = alibi_bias(n_heads, n_q, n_k)  # (h, n_q, n_k)
    context, weights = scaled_dot_product_attention(Q, K, V, mask, bias=bias)  # (b, h, n_q, d_v)
    output = combine_heads(context) @ p["W_o"] + p["b_o"]  # (b, n_q, d_model)
    if unbatched:
        return output[0], weights[0]  # (n_q, d_model), (h, n_q, n_k)
    return output, weights


def count_mha_params(d_model):
    """4 d_model² + 4 d_model: W_q, W_k, W_v, W_o and their biases; n_heads plays no part (§5.2)."""
    _check_positive_int(d_model, "d_model")
    return 4 * d_model**2 + 4 * d_model


# --- §5.4 nn.MultiheadAttention's parameters, copied from PyTorch ---
#
# PyTorch computes nn.Linear as x @ weight.T with weight stored (out, in); we store (in, out)
# so that rows are tokens (Q = X @ W_q). Every transpose lives in the *_from_torch converters
# (here, §7.4 and §8.2), nowhere else.


def mha_params_from_torch(mha):
    """Copy an ``nn.MultiheadAttention``'s parameters for :func:`multi_head_attention`.

    Parameters
    ----------
    mha : torch.nn.MultiheadAttention
        With bias=True, kdim = vdim = embed_dim, add_bias_kv=False, add_zero_attn=False.
        batch_first does not matter (parameters do not depend on it).

    Returns
    -------
    dict of float64 ndarrays
        ``W_q, W_k, W_v, W_o`` (d_model, d_model), ``b_q, b_k, b_v, b_o`` (d_model,).
    """
    _check_torch_mha(mha)
    d = mha.embed_dim
    # in_proj_weight stacks W_q, W_k, W_v vertically: (3 d_model, d_model), each (out, in).
    in_weight = _to_numpy(mha.in_proj_weight, (3 * d, d), "in_proj_weight")
    in_bias = _to_numpy(mha.in_proj_bias, (3 * d,), "in_proj_bias")
    params = {}
    for i, p in enumerate("qkv"):
        params[f"W_{p}"] = in_weight[i * d : (i + 1) * d].T  # (out, in) -> (d_in, d_out)
        params[f"b_{p}"] = in_bias[i * d : (i + 1) * d]
    params["W_o"] = _to_numpy(mha.out_proj.weight, (d, d), "out_proj.weight").T
    params["b_o"] = _to_numpy(mha.out_proj.bias, (d,), "out_proj.bias")
    return params


# --- §6 positional encoding (§6.2 sines and cosines, §6.3 a shift is a rotation) ---


def _frequencies(d_model):
    """omega_i = 1 / 10000^(2i / d_model), i = 0 .. d_model/2 - 1 (§6.2)."""
    two_i = np.arange(0, d_model, 2, dtype=np.float64)  # (d_model/2,)
    return 1.0 / 10000.0 ** (two_i / d_model)


def positional_encoding(max_len, d_model):
    """Sinusoidal positional encoding, PE(pos, 2i) = sin(pos ω_i), PE(pos, 2i+1) = cos(pos ω_i).

    Parameters
    ----------
    max_len : int
        Number of positions 0 .. max_len - 1.
    d_model : int
        Must be even (dimensions 2i and 2i+1 are a pair sharing ω_i, §6.2).

    Returns
    -------
    pe : ndarray of float64, shape (max_len, d_model)
    """
    _check_positional_encoding_inputs(max_len, d_model)
    angles = np.arange(max_len)[:, np.newaxis] * _frequencies(d_model)  # (max_len, d_model/2)
    pe = np.empty((max_len, d_model))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles)
    return pe


def relative_shift_matrix(k, d_model):
    """The block rotation M_k with PE(p + k) = PE(p) @ M_k for every position p (§6.3).

    For each pair (sin ωp, cos ωp), the angle-sum formulas give
    [sin ω(p+k), cos ω(p+k)] = [sin ωp, cos ωp] @ [[cos ωk, -sin ωk], [sin ωk, cos ωk]];
    the angle ωk depends on k only, never on p. Works for negative k too (M_{-k} = M_k^T).

    Parameters
    ----------
    k : int or float
        The shift.
    d_model : int
        Must be even.

    Returns
    -------
    M : ndarray of float64, shape (d_model, d_model)
        Orthogonal, block-diagonal with d_model/2 2×2 rotation blocks.
    """
    _check_relative_shift_inputs(k, d_model)
    angle = k * _frequencies(d_model)  # (d_model/2,)
    even = np.arange(0, d_model, 2)
    M = np.zeros((d_model, d_model))
    M[even, even] = np.cos(angle)
    M[even, even + 1] = -np.sin(angle)
    M[even + 1, even] = np.sin(angle)
    M[even + 1, even + 1] = np.cos(angle)
    return M


# --- §7 encoder layer: feed-forward (§7.2), LayerNorm (§7.3), sublayers (§7.1, §7.5) ---


def feed_forward(x, params):
    """Position-wise feed-forward network FFN(x) = ReLU(x W_1 + b_1) W_2 + b_2 (§7.2).

    Parameters
    ----------
    x : array_like, shape (..., d_model)
    params : dict
        ``W_1`` (d_model, d_ff), ``b_1`` (d_ff,), ``W_2`` (d_ff, d_model), ``b_2`` (d_model,).

    Returns
    -------
    ndarray, shape (..., d_model)
    """
    x, p = _check_feed_forward_inputs(x, params)
    hidden = np.maximum(x @ p["W_1"] + p["b_1"], 0)  # (..., d_ff)
    return hidden @ p["W_2"] + p["b_2"]  # (..., d_model)


def layer_norm(x, gamma, beta, eps=1e-5):
    """LayerNorm over the last axis (each token on its own), as ``nn.LayerNorm`` (§7.3).

    Parameters
    ----------
    x : array_like, shape (..., d_model)
    gamma, beta : array_like, shape (d_model,)
    eps : float, default 1e-5
        PyTorch's default.

    Returns
    -------
    ndarray, shape (..., d_model)

    Notes
    -----
    Uses the biased variance (divide by d_model), like PyTorch and Ba et al.; the unbiased
    std of some teaching code cannot match ``nn.LayerNorm``.
    """
    x, gamma, beta = _check_layer_norm_inputs(x, gamma, beta)
    mean = x.mean(axis=-1, keepdims=True)  # (..., 1)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)  # (..., 1)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta  # (..., d_model)


def _residual(x, sublayer, norm, norm_first):
    """One sublayer with its residual connection and LayerNorm, in either placement (§7.5).

    Post-LN (the paper, PyTorch's default): LN(x + sublayer(x)).
    Pre-LN (Xiong et al. 2020): x + sublayer(LN(x)); nothing normalises the residual path.
    """
    if norm_first:
        return x + sublayer(layer_norm(x, norm["gamma"], norm["beta"]))
    return layer_norm(x + sublayer(x), norm["gamma"], norm["beta"])


def encoder_layer_forward(x, params, n_heads, mask=None, norm_first=False):
    """One encoder layer: self-attention and FFN, each with residual + LayerNorm (§7.1).

    Same computation as ``nn.TransformerEncoderLayer`` with dropout off (no final LayerNorm:
    a Pre-LN stack adds that once, after its last layer, §7.5).

    Parameters
    ----------
    x : array_like, shape (b, n, d_model) or (n, d_model)
    params : dict
        ``{"self_attn": mha params, "ffn": ffn params, "norm1": {"gamma", "beta"},
        "norm2": {"gamma", "beta"}}``.
    n_heads : int
    mask : array_like, optional
        1 = may attend: (b, n, n) or broadcasting to it, e.g. a padding mask (b, 1, n) (§8.3),
        or (b, h, n, n), e.g. (b, 1, 1, n); as in :func:`multi_head_attention`.
    norm_first : bool, default False
        False = Post-LN, True = Pre-LN (PyTorch's name).

    Returns
    -------
    ndarray, same shape as ``x``
        Or its broadcast with the mask's batch axis (a (1, n, n) mask with 2-D x: (1, n, d_model)).
    """
    x = _check_encoder_layer_inputs(x, params)

    def self_attention(h):
        return multi_head_attention(h, h, params["self_attn"], n_heads, mask)[0]

    x = _residual(x, self_attention, params["norm1"], norm_first)  # (b, n, d_model)
    return _residual(x, lambda h: feed_forward(h, params["ffn"]), params["norm2"], norm_first)


# --- §7.4 numpy = PyTorch: the encoder layer's parameters, counted and copied ---


def _count_ffn_params(d_model, d_ff):
    return 2 * d_model * d_ff + d_ff + d_model  # W_1, W_2, b_1, b_2


def count_encoder_layer_params(d_model, d_ff):
    """Self-attention + FFN + two LayerNorms (gamma and beta each)."""
    _check_positive_int(d_ff, "d_ff")
    return count_mha_params(d_model) + _count_ffn_params(d_model, d_ff) + 2 * 2 * d_model


def _norm_params_from_torch(norm, d_model, name):
    _check_torch_norm(norm, name)
    gamma = _to_numpy(norm.weight, (d_model,), f"{name}.weight")
    return {"gamma": gamma, "beta": _to_numpy(norm.bias, (d_model,), f"{name}.bias")}


def _ffn_params_from_torch(layer, d_model):
    _check_torch_activation(layer)
    d_ff = layer.linear1.out_features
    W_1 = _to_numpy(layer.linear1.weight, (d_ff, d_model), "linear1.weight").T  # (d_model, d_ff)
    b_1 = _to_numpy(layer.linear1.bias, (d_ff,), "linear1.bias")
    W_2 = _to_numpy(layer.linear2.weight, (d_model, d_ff), "linear2.weight").T  # (d_ff, d_model)
    b_2 = _to_numpy(layer.linear2.bias, (d_model,), "linear2.bias")
    return {"W_1": W_1, "b_1": b_1, "W_2": W_2, "b_2": b_2}


def encoder_layer_params_from_torch(layer):
    """Copy an ``nn.TransformerEncoderLayer``'s parameters for :func:`encoder_layer_forward`.

    Pass ``norm_first=layer.norm_first`` and ``n_heads=layer.self_attn.num_heads`` alongside.

    Parameters
    ----------
    layer : torch.nn.TransformerEncoderLayer
        activation='relu', bias=True, layer_norm_eps=1e-5.

    Returns
    -------
    dict
        ``{"self_attn", "ffn", "norm1", "norm2"}`` of float64 ndarrays.
    """
    _check_torch_layer(layer, "TransformerEncoderLayer")
    d_model = layer.self_attn.embed_dim
    return {
        "self_attn": mha_params_from_torch(layer.self_attn),
        "ffn": _ffn_params_from_torch(layer, d_model),
        "norm1": _norm_params_from_torch(layer.norm1, d_model, "norm1"),
        "norm2": _norm_params_from_torch(layer.norm2, d_model, "norm2"),
    }


# --- §8 masks: look-ahead (§8.1) and padding (§8.3), 1 = may attend ---


def create_look_ahead_mask(n):
    """Look-ahead (causal) mask: lower-triangular ones, row t may attend to 0..t (§8.1).

    Parameters
    ----------
    n : int
        Sequence length.

    Returns
    -------
    mask : ndarray of float64, shape (n, n)
    """
    _check_positive_int(n, "n")
    return np.tril(np.ones((n, n)))  # (n, n)


def create_padding_mask(tokens, pad_id=0):
    """Padding mask, 1 = real token (may be attended to), 0 = padding (§8.3).

    Parameters
    ----------
    tokens : array_like of int, shape (b, n)
    pad_id : int, default 0

    Returns
    -------
    mask : ndarray of float64, shape (b, 1, n)
        The lecture's (batch, 1, n): the length-1 middle axis broadcasts over the queries,
        padding masks keys (columns).
    """
    tokens = _check_tokens(tokens)
    mask = (tokens != pad_id).astype(np.float64)  # (b, n)
    return mask[:, np.newaxis, :]  # (b, 1, n)


# --- §8.2 decoder layer: masked self-attention, cross-attention, FFN; its parameters ---


def decoder_layer_forward(
    y, memory, params, n_heads, self_mask=None, memory_mask=None, norm_first=False
):
    """One decoder layer: masked self-attention, cross-attention, FFN (§8.2).

    Same computation as ``nn.TransformerDecoderLayer`` with dropout off; no final LayerNorm.

    Parameters
    ----------
    y : array_like, shape (b, n_tgt, d_model) or (n_tgt, d_model)
        The (shifted) target sequence.
    memory : array_like, shape (b, n_src, d_model) or (n_src, d_model)
        The encoder's output; cross-attention takes K and V from it, Q from the decoder.
    params : dict
        ``{"self_attn", "cross_attn": mha params, "ffn": ffn params, "norm1", "norm2",
        "norm3": {"gamma", "beta"}}``; PyTorch's order: norm1 after self-attention, norm2
        after cross-attention, norm3 after the FFN.
    n_heads : int
    self_mask : array_like, optional
        1 = may attend, (b, n_tgt, n_tgt) or (b, h, n_tgt, n_tgt) or broadcasting to
        it, as in :func:`multi_head_attention`: usually look-ahead * padding (§8.1).
    memory_mask : array_like, optional
        1 = may attend, (b, n_tgt, n_src) or (b, h, n_tgt, n_src) or broadcasting to it:
        usually the source padding mask (b, 1, n_src).
    norm_first : bool, default False
        False = Post-LN, True = Pre-LN.

    Returns
    -------
    ndarray, same shape as ``y``
        Or its broadcast with the masks' batch axis, as in :func:`encoder_layer_forward`.
    """
    y, memory = _check_decoder_layer_inputs(y, memory)
    unbatched = y.ndim == memory.ndim == 2

    def self_attention(h):
        return multi_head_attention(h, h, params["self_attn"], n_heads, self_mask)[0]

    def cross_attention(h):
        # §8.2: Q from the decoder, K and V from the encoder's output (never normalised here).
        # A batched self_mask makes an unbatched y batched (NumPy's rules): memory follows.
        kv = memory[np.newaxis] if unbatched and h.ndim == 3 else memory  # (1, n_src, d_model)
        return multi_head_attention(h, kv, params["cross_attn"], n_heads, memory_mask)[0]

    y = _residual(y, self_attention, params["norm1"], norm_first)  # (b, n_tgt, d_model)
    y = _residual(y, cross_attention, params["norm2"], norm_first)  # (b, n_tgt, d_model)
    return _residual(y, lambda h: feed_forward(h, params["ffn"]), params["norm3"], norm_first)


def count_decoder_layer_params(d_model, d_ff):
    """Self-attention + cross-attention + FFN + three LayerNorms (exercise 3(b))."""
    _check_positive_int(d_ff, "d_ff")
    return 2 * count_mha_params(d_model) + _count_ffn_params(d_model, d_ff) + 3 * 2 * d_model


def decoder_layer_params_from_torch(layer):
    """Copy an ``nn.TransformerDecoderLayer``'s parameters for :func:`decoder_layer_forward`.

    Parameters
    ----------
    layer : torch.nn.TransformerDecoderLayer
        activation='relu', bias=True, layer_norm_eps=1e-5.

    Returns
    -------
    dict
        ``{"self_attn", "cross_attn", "ffn", "norm1", "norm2", "norm3"}`` of float64 ndarrays
        (PyTorch's ``multihead_attn`` is our ``cross_attn``).
    """
    _check_torch_layer(layer, "TransformerDecoderLayer")
    d_model = layer.self_attn.embed_dim
    return {
        "self_attn": mha_params_from_torch(layer.self_attn),
        "cross_attn": mha_params_from_torch(layer.multihead_attn),
        "ffn": _ffn_params_from_torch(layer, d_model),
        "norm1": _norm_params_from_torch(layer.norm1, d_model, "norm1"),
        "norm2": _norm_params_from_torch(layer.norm2, d_model, "norm2"),
        "norm3": _norm_params_from_torch(layer.norm3, d_model, "norm3"),
    }


# --- beyond the lecture: §10.4 attention without the n×n matrix (tiles, online softmax) ---


def _attend_query_block(q, K, V, mask, block_size, batch, dtype):
    """softmax(q K^T + mask term) V for one block of queries, one block of keys at a time.

    ``q`` is already scaled; ``mask`` (or None) is this block's rows, shape (..., b_q, n_k).
    """
    b_q = q.shape[-2]
    m = np.full((*batch, b_q, 1), -np.inf, dtype)  # running max of each row's scores
    l = np.zeros((*batch, b_q, 1), dtype)  # running denominator, sum of exp(s - m)
    acc = np.zeros((*batch, b_q, V.shape[-1]), dtype)  # running numerator, sum of exp(s - m) v
    for start in range(0, K.shape[-2], block_size):
        keys = slice(start, start + block_size)
        scores = q @ np.swapaxes(K[..., keys, :], -1, -2)  # (..., b_q, b_k)
        if mask is not None:
            # §8.1, exactly as in scaled_dot_product_attention: -1e9 where mask == 0.
            scores = scores + (1 - mask[..., keys]) * dtype.type(-1e9)  # (..., b_q, b_k)
        m_new = np.maximum(m, scores.max(axis=-1, keepdims=True))  # (..., b_q, 1)
        # Everything summed so far was exponentiated against the old max: rescale it.
        # At the first block m = -inf and exp(-inf) = 0, so the zeros stay zeros.
        rescale = np.exp(m - m_new)  # (..., b_q, 1)
        p = np.exp(scores - m_new)  # (..., b_q, b_k), unnormalised weights of this tile
        l = rescale * l + p.sum(axis=-1, keepdims=True)  # (..., b_q, 1)
        acc = rescale * acc + p @ V[..., keys, :]  # (..., b_q, d_v)
        m = m_new
    return acc / l  # (..., b_q, d_v): the softmax's division, once per row at the end


# Long on purpose: 15 lines of code under its docstring, which derives the online softmax
# (§10.4) the loop computes; split, the derivation and the loop would part.
def tiled_attention(Q, K, V, mask=None, block_size=64, *, scale=True):
    """The output of :func:`scaled_dot_product_attention`, computed tile by tile (§10.4).

    FlashAttention's idea (Dao et al. 2022) in plain numpy, written for reading, not speed:
    loop over blocks of queries and, inside, over blocks of keys; never build the (n_q, n_k)
    scores or weights. Same checks, mask convention and result (up to rounding) as the plain
    version; it returns no weights, because it never has them all at once.

    Parameters
    ----------
    Q : array_like, shape (..., n_q, d_k)
    K : array_like, shape (..., n_k, d_k)
    V : array_like, shape (..., n_k, d_v)
        Leading (batch, head) axes must broadcast against each other.
    mask : array_like, optional, broadcastable to (..., n_q, n_k)
        1 = may attend, 0 = must not; applied as ``(1 - mask) * -1e9`` tile by tile.
    block_size : int, default 64
        Rows of Q and of K per tile; need not divide n_q or n_k (the last tile is shorter).
    scale : bool, default True
        Divide the scores by sqrt(d_k), as in :func:`scaled_dot_product_attention`.

    Returns
    -------
    output : ndarray, shape (..., n_q, d_v)

    Notes
    -----
    The online softmax, per query row. Keys arrive a block at a time. Keep the running max m,
    the running denominator l = sum_j exp(s_j - m) and the running numerator
    acc = sum_j exp(s_j - m) v_j over the keys seen so far. A new block of scores s moves the
    max to m' = max(m, max(s)); what was summed against the old m is rescaled by exp(m - m'):
    l' = exp(m - m') l + sum exp(s - m'),  acc' = exp(m - m') acc + exp(s - m') V_block.
    After the last block acc / l = softmax(s) V, the same numbers in another order.
    Memory: one (block, block) tile and O(n_q · d_v) running state, instead of the (n_q, n_k)
    matrix that §3.4 prices at 33.6 MB (float64, n = 2048) per head and per layer.

    References: Dao et al. (2022), "FlashAttention", NeurIPS, arXiv:2205.14135;
    Milakov & Gimelshein (2018), "Online normalizer calculation for softmax", arXiv:1805.02867.
    """
    Q, K, V, mask, batch, dtype = _check_tiled_attention_inputs(Q, K, V, mask, block_size)
    n_q, n_k = Q.shape[-2], K.shape[-2]
    if mask is not None:
        # A read-only view of the full (..., n_q, n_k) shape: slicing it copies one tile at most.
        mask = np.broadcast_to(mask, (*batch, n_q, n_k))
    output = np.empty((*batch, n_q, V.shape[-1]), dtype)  # (..., n_q, d_v)
    for start in range(0, n_q, block_size):
        rows = slice(start, start + block_size)
        q = Q[..., rows, :]  # (..., b_q, d_k)
        if scale:
            q = q / np.sqrt(dtype.type(Q.shape[-1]))  # §4.2, as in the plain version
        block_mask = None if mask is None else mask[..., rows, :]  # (..., b_q, n_k), a view
        output[..., rows, :] = _attend_query_block(q, K, V, block_mask, block_size, batch, dtype)
    return output


# --- beyond the lecture: §6.5 positions in the scores, not the inputs (RoPE, ALiBi) ---


def rope_rotate(x, positions, *, layout="interleaved", base=10000.0):
    """RoPE (Su et al. 2021): rotate each pair of x's features by position × θ_i (§6.5).

    The rotation is §6.3's: for interleaved pairs, ``rope_rotate(x, m) = x @ M_{-m}`` with
    M_k = :func:`relative_shift_matrix` (k, d) and θ_i = base^(-2i/d), the same frequencies as
    the sinusoidal PE. Rotating q by m and k by n gives q M_{-m} (k M_{-n})^T = q M_{n-m} k^T:
    the score depends on the two positions only through n - m, and the norms do not change.

    Parameters
    ----------
    x : array_like, shape (..., n, d)
        d even: queries or keys of one head (or of every head, on leading axes).
    positions : array_like of int, shape (n,)
        The position of each row.
    layout : {"interleaved", "halves"}
        Which features make a pair. "interleaved": (2i, 2i + 1), the paper's equation (34) and
        RoFormer's code; "halves": (i, i + d/2), GPT-NeoX's ``rotate_half`` (Hugging Face's
        LLaMA). The two are one rotation up to a fixed permutation of the features
        (:func:`rope_layout_permutation`), so a model trained in one layout can be loaded in
        the other only with its W^Q, W^K columns permuted.
    base : float, default 10000
        θ_i = base^(-2i/d).

    Returns
    -------
    ndarray, shape (..., n, d)
    """
    x, positions = _check_rope_inputs(x, positions, layout, base)
    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)  # (d/2,)
    angle = positions[:, np.newaxis] * theta  # (n, d/2)
    cos, sin = np.cos(angle).astype(x.dtype), np.sin(angle).astype(x.dtype)
    if layout == "interleaved":
        first, second = x[..., 0::2], x[..., 1::2]  # (..., n, d/2) each
    else:
        first, second = x[..., : d // 2], x[..., d // 2 :]
    rotated_first = first * cos - second * sin
    rotated_second = first * sin + second * cos
    out = np.empty_like(x)
    if layout == "interleaved":
        out[..., 0::2], out[..., 1::2] = rotated_first, rotated_second
    else:
        out[..., : d // 2], out[..., d // 2 :] = rotated_first, rotated_second
    return out


def rope_layout_permutation(d):
    """The features' order that turns RoPE's interleaved layout into its split-halves one.

    ``rope_rotate(x[..., perm], m, layout="halves") == rope_rotate(x, m)[..., perm]``:
    pair (2i, 2i + 1) moves to (i, i + d/2). Returns an int ndarray of shape (d,).
    """
    _check_even_d_model(d)
    return np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])


def alibi_slopes(n_heads):
    """ALiBi's head-specific slopes m_h (Press et al. 2022, §3 and their code).

    n_heads a power of 2: the geometric sequence that starts at 2^(-8/n) with that ratio
    (4 heads: 1/4, 1/16, 1/64, 1/256; 8 heads: 1/2, 1/4, …, 1/256). Otherwise the paper's
    rule: the slopes of the largest power of 2 below n, then every other slope of twice that
    power, until there are n. Returns float64, shape (n_heads,).
    """
    _check_positive_int(n_heads, "n_heads")
    power = 2 ** int(np.floor(np.log2(n_heads)))
    slopes = 2.0 ** (-8.0 * np.arange(1, power + 1) / power)  # start = ratio = 2^(-8/power)
    if power == n_heads:
        return slopes
    return np.concatenate([slopes, alibi_slopes(2 * power)[0::2][: n_heads - power]])


def alibi_bias(n_heads, n_q, n_k, q_offset=0):
    """ALiBi's additive score bias, -m_h |i - j|, shape (h, n_q, n_k) (Press et al. 2022).

    Query i sits at position q_offset + i, key j at position j. The paper adds -m (i - j) to
    a causal decoder's scores (j ≤ i, where |i - j| = i - j); |i - j| also covers an encoder's
    keys after the query and a cross-attention's source positions (chosen, beyond the paper).
    No position gets a vector, so no length is out of range.
    """
    _check_positive_int(n_q, "n_q")
    _check_positive_int(n_k, "n_k")
    if isinstance(q_offset, bool) or not isinstance(q_offset, int | np.integer) or q_offset < 0:
        raise ValueError(f"q_offset must be an integer >= 0, got {q_offset!r}")
    distance = np.abs(q_offset + np.arange(n_q)[:, np.newaxis] - np.arange(n_k))  # (n_q, n_k)
    return -alibi_slopes(n_heads)[:, np.newaxis, np.newaxis] * distance  # (h, n_q, n_k)
