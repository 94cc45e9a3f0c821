"""The input checks of attention_numpy's blocks: not in the lecture, kept apart from its maths.

Each turns array_likes into float arrays and raises ValueError saying what was expected (a
shape, a mask that does not broadcast, a dict of parameters with a key missing); none of them
computes anything the lecture describes. attention_numpy imports the ones its blocks call.

Long on purpose: one check per public block, then the shared pieces they are built from;
their messages are what a student reads when a call is wrong.
"""

import numpy as np

ROPE_LAYOUTS = ("interleaved", "halves")  # rope_rotate's layouts (§6.5, beyond the lecture)


# The per-function checks first, in the order of attention_numpy's sections, then the
# shared pieces they are built from.


def _check_attention_inputs(Q, K, V, mask):
    """Check Q, K, V and the mask of an attention call (shared by the plain and tiled versions).

    Returns ``Q, K, V`` as float arrays, the mask as floats of their dtype (or None), the
    batch shape of the result (Q's, K's, V's and the mask's leading axes, broadcast), and the
    dtype the attention is computed in.
    """
    Q, K, V = _as_float(Q, "Q"), _as_float(K, "K"), _as_float(V, "V")
    for name, arr, shape_text in (("Q", Q, "n_q, d_k"), ("K", K, "n_k, d_k"), ("V", V, "n_k, d_v")):
        if arr.ndim < 2:
            raise ValueError(f"{name} must have shape (..., {shape_text}), got shape {arr.shape}")
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K need the same depth d_k, got Q {Q.shape} and K {K.shape}")
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V need the same length n_k, got K {K.shape} and V {V.shape}")
    try:
        batch = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    except ValueError as err:
        raise ValueError(
            f"leading axes of Q {Q.shape}, K {K.shape}, V {V.shape} do not broadcast"
        ) from err
    dtype = np.result_type(Q, K, V)
    if mask is not None:
        mask, scores_shape = _broadcast_mask(mask, (*batch, Q.shape[-2], K.shape[-2]))
        mask = mask.astype(dtype, copy=False)
        batch = scores_shape[:-2]  # the mask may add batch axes: (1, n_q, n_k) with 2-D Q, K, V
    return Q, K, V, mask, batch, dtype


def _check_split_heads_inputs(x, n_heads):
    x = _check_float_array(x, "x", (3,), "(b, n, d_model)")
    _check_divisible(x.shape[-1], n_heads)
    return x


def _check_mha_inputs(x_q, x_kv, params, n_heads, mask):
    """Check the arguments of :func:`multi_head_attention` and bring them to its shapes.

    Returns x_q (b, n_q, d_model) and x_kv (b, n_k, d_model) as float arrays (unbatched inputs
    get b = 1), the parameters as float arrays, the mask shaped for the heads' scores by
    :func:`_head_mask` (or None), and whether the output drops the batch axis again.
    """
    x_q, x_kv = _as_float(x_q, "x_q"), _as_float(x_kv, "x_kv")
    _check_ndim(x_q, "x_q", (2, 3), "(b, n_q, d_model) or (n_q, d_model)")
    if x_kv.ndim != x_q.ndim:
        raise ValueError(f"x_q {x_q.shape} and x_kv {x_kv.shape} must both be batched or not")
    unbatched = x_q.ndim == 2 and (mask is None or np.ndim(mask) <= 2)
    if x_q.ndim == 2:
        x_q, x_kv = x_q[np.newaxis], x_kv[np.newaxis]  # (1, n, d_model)
    (b, n_q, d_model), (b_kv, n_k, d_kv) = x_q.shape, x_kv.shape
    if d_kv != d_model or (b != b_kv and 1 not in (b, b_kv)):
        raise ValueError(
            f"x_q {x_q.shape} and x_kv {x_kv.shape} need the same d_model and the same b "
            f"(or b = 1 for one of them)"
        )
    _check_divisible(d_model, n_heads)
    p = _get_params(params, _mha_shapes(d_model), "multi_head_attention")
    if mask is not None:
        mask = _head_mask(mask, max(b, b_kv), n_heads, n_q, n_k)  # (b, h | 1, n_q, n_k)
    return x_q, x_kv, p, mask, unbatched


def _mha_shapes(d_model):
    matrices = {f"W_{p}": (d_model, d_model) for p in "qkvo"}
    biases = {f"b_{p}": (d_model,) for p in "qkvo"}
    return matrices | biases


def _head_mask(mask, b, n_heads, n_q, n_k):
    """The mask of :func:`multi_head_attention`, shaped for its heads' (b, h, n_q, n_k) scores.

    Up to 3 axes, a mask means (b, n_q, n_k) and every head shares it: the head axis goes in
    at -3, as Keras' ``MultiHeadAttention`` does with its (B, T, S) ``attention_mask``. (NumPy
    would align a (b, 1, n_k) mask with the scores from the right, as (1, b, 1, n_k): batch
    against heads.) 4 axes mean (b, h, n_q, n_k), e.g. the TensorFlow tutorial's (b, 1, 1, n_k)
    padding mask. Either way the mask may add or stretch the batch axis (NumPy's rules).
    """
    mask = _as_float(mask, "mask")
    if mask.ndim > 4:
        raise ValueError(
            f"mask must have at most 4 axes, (b, n_heads, n_q, n_k), got shape {mask.shape}"
        )
    if mask.ndim == 4:
        return _broadcast_mask(mask, (b, n_heads, n_q, n_k))[0]  # (b | 1, h | 1, n_q | 1, ..)
    mask, shape = _broadcast_mask(mask, (b, n_q, n_k))
    return np.broadcast_to(mask, shape)[:, np.newaxis]  # (b, 1, n_q, n_k)


def _check_encoder_layer_inputs(x, params):
    """x as a float array, and every block's parameters present (the blocks check their own)."""
    missing = sorted({"self_attn", "ffn", "norm1", "norm2"} - set(params))
    if missing:
        raise ValueError(
            f"encoder layer params lack {missing}; expected self_attn, ffn, norm1, norm2"
        )
    return _as_float(x, "x")


def _check_torch_layer(layer, name):
    """A converter's input: the PyTorch layer of that name (else ValueError, not AttributeError)."""
    import torch  # only here: the numpy blocks above never need it

    if not isinstance(layer, getattr(torch.nn, name)):
        raise ValueError(f"expected a torch.nn.{name}, got {type(layer).__name__}")


def _check_torch_mha(mha):
    if not mha._qkv_same_embed_dim:
        raise ValueError("expected kdim == vdim == embed_dim (one stacked in_proj_weight)")
    if mha.bias_k is not None or mha.add_zero_attn:
        raise ValueError("expected add_bias_kv=False and add_zero_attn=False")


def _check_positional_encoding_inputs(max_len, d_model):
    _check_positive_int(max_len, "max_len")
    _check_even_d_model(d_model)


def _check_relative_shift_inputs(k, d_model):
    if isinstance(k, bool) or not isinstance(k, int | float | np.integer | np.floating):
        raise ValueError(f"k must be a real number (the shift), got {k!r}")
    _check_even_d_model(d_model)


def _check_rope_inputs(x, positions, layout, base):
    """Return x as a float array (..., n, d), d even, and positions as float64 (n,)."""
    x = _as_float(x, "x")
    if x.ndim < 2 or x.shape[-1] % 2 != 0 or x.shape[-1] == 0:
        raise ValueError(f"x must have shape (..., n, d) with d even (pairs), got {x.shape}")
    if layout not in ROPE_LAYOUTS:
        raise ValueError(f"unknown RoPE layout {layout!r}; expected one of {ROPE_LAYOUTS}")
    if not (isinstance(base, int | float) and not isinstance(base, bool) and base > 1):
        raise ValueError(f"base must be a number > 1, got {base!r}")
    positions = np.asarray(positions)
    if positions.shape != (x.shape[-2],) or positions.dtype.kind not in "iu":
        raise ValueError(
            f"positions must be integers of shape ({x.shape[-2]},), one per row of x, "
            f"got {positions.dtype} of shape {positions.shape}"
        )
    return x, positions.astype(np.float64)


POSITIONS_IN_SCORES = (None, "rope", "alibi")


def _check_positions_kind(positions):
    if positions not in POSITIONS_IN_SCORES:
        raise ValueError(f"unknown positions {positions!r}; expected one of {POSITIONS_IN_SCORES}")


def _check_score_bias(bias, scores_shape, dtype):
    """Return bias as an array of the scores' dtype; it must broadcast without adding axes."""
    bias = _as_float(bias, "bias")
    try:
        shape = np.broadcast_shapes(bias.shape, tuple(scores_shape))
    except ValueError:
        shape = None
    if shape != tuple(scores_shape):
        raise ValueError(
            f"bias of shape {bias.shape} does not broadcast to the scores' shape "
            f"{tuple(scores_shape)} (..., n_q, n_k)"
        )
    return bias.astype(dtype, copy=False)


def _check_even_d_model(d_model):
    _check_positive_int(d_model, "d_model")
    if d_model % 2 != 0:
        raise ValueError(f"d_model must be even (sin/cos pairs, §6.2), got {d_model}")


def _check_feed_forward_inputs(x, params):
    """Return ``x`` and ``W_1, b_1, W_2, b_2`` as float arrays; d_ff is read off W_1."""
    x = _check_float_array(x, "x", range(1, 64), "(..., d_model)")
    d_model = x.shape[-1]
    if "W_1" not in params:
        raise ValueError("feed_forward params need key 'W_1' (expected W_1, b_1, W_2, b_2)")
    d_ff = np.shape(params["W_1"])[-1]
    shapes = {"W_1": (d_model, d_ff), "b_1": (d_ff,), "W_2": (d_ff, d_model), "b_2": (d_model,)}
    return x, _get_params(params, shapes, "feed_forward")


def _check_layer_norm_inputs(x, gamma, beta):
    """Return ``x``, ``gamma``, ``beta`` as float arrays, gamma and beta of shape (d_model,)."""
    x = _check_float_array(x, "x", range(1, 64), "(..., d_model)")
    d_model = x.shape[-1]
    shapes = {"gamma": (d_model,), "beta": (d_model,)}
    p = _get_params({"gamma": gamma, "beta": beta}, shapes, "layer_norm")
    return x, p["gamma"], p["beta"]


def _check_torch_norm(norm, name):
    if norm.eps != 1e-5:
        raise ValueError(
            f"{name}: expected layer_norm_eps=1e-5 (layer_norm's default), got {norm.eps}"
        )


def _check_torch_activation(layer):
    import torch  # only here: the numpy blocks above never need it

    activation = layer.activation
    if not (activation is torch.nn.functional.relu or isinstance(activation, torch.nn.ReLU)):
        raise ValueError(f"expected activation='relu' (feed_forward uses ReLU), got {activation}")


def _check_tokens(tokens):
    tokens = np.asarray(tokens)
    if tokens.dtype.kind not in "biu":
        raise ValueError(f"tokens must be integer token ids, got dtype {tokens.dtype}")
    _check_ndim(tokens, "tokens", (2,), "(batch, n)")
    return tokens


def _check_decoder_layer_inputs(y, memory):
    return _as_float(y, "y"), _as_float(memory, "memory")


def _check_tiled_attention_inputs(Q, K, V, mask, block_size):
    """:func:`_check_attention_inputs`, then the tile size."""
    Q, K, V, mask, batch, dtype = _check_attention_inputs(Q, K, V, mask)
    _check_positive_int(block_size, "block_size")
    return Q, K, V, mask, batch, dtype


# The shared pieces.


def _as_float(x, name):
    """Return ``x`` as a float ndarray; float inputs keep their dtype, ints/bools become float64.

    float16 is computed in float32: -1e9 does not fit in float16 (it would become -inf).
    """
    arr = np.asarray(x)
    if arr.dtype.kind == "f":
        return arr.astype(np.promote_types(arr.dtype, np.float32), copy=False)
    if arr.dtype.kind in "biu":
        return arr.astype(np.float64)
    raise ValueError(f"{name} must be a real numeric array, got dtype {arr.dtype}")


def _check_float_array(x, name, allowed, shape_text):
    """:func:`_as_float`, then a check that the array has one of the ``allowed`` ndims."""
    arr = _as_float(x, name)
    _check_ndim(arr, name, allowed, shape_text)
    return arr


def _check_ndim(arr, name, allowed, shape_text):
    if arr.ndim not in allowed:
        raise ValueError(f"{name} must have shape {shape_text}, got shape {arr.shape}")


def _check_positive_int(value, name):
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")


def _check_divisible(d_model, n_heads):
    _check_positive_int(n_heads, "n_heads")
    if d_model % n_heads != 0:
        raise ValueError(
            f"d_model must be divisible by n_heads (d_k = d_model / n_heads), "
            f"got d_model={d_model}, n_heads={n_heads}"
        )


def _get_params(params, shapes, name):
    """Fetch ``params[key]`` for each key of ``shapes`` as float arrays of exactly that shape."""
    out = {}
    for key, shape in shapes.items():
        if key not in params:
            raise ValueError(f"{name} params need key {key!r} (expected keys {list(shapes)})")
        out[key] = _as_float(params[key], f"{name}[{key!r}]")
        if out[key].shape != shape:
            raise ValueError(f"{name}[{key!r}] must have shape {shape}, got {out[key].shape}")
    return out


def _broadcast_mask(mask, scores_shape):
    """Return ``mask`` as floats and the shape of ``scores + mask`` (NumPy's broadcasting).

    The mask may add or stretch leading (batch, head) axes, as NumPy and TensorFlow allow: the
    Coursera graders pass a (1, n_q, n_k) mask with unbatched Q, K, V and expect (1, n_q, n_k)
    weights. Its last two axes must be 1 or (n_q, n_k): a mask never adds queries or keys.
    It must hold only 0 and 1.
    """
    mask = _as_float(mask, "mask")
    *batch, n_q, n_k = scores_shape
    try:
        shape = np.broadcast_shapes(mask.shape, tuple(scores_shape))
    except ValueError:
        shape = None
    if shape is None or shape[-2:] != (n_q, n_k):
        raise ValueError(
            f"mask of shape {mask.shape} does not broadcast with the scores' shape "
            f"{tuple(scores_shape)} (..., n_q, n_k): expected its last two axes to be 1 or "
            f"({n_q}, {n_k}) and its leading axes to broadcast with {tuple(batch)}"
        )
    if not np.all((mask == 0) | (mask == 1)):
        # §5.4: an additive -inf mask or a PyTorch-style mask passed here is a silent bug.
        raise ValueError("mask must contain only 1 (may attend) and 0 (must not attend)")
    return mask, shape


def _to_numpy(tensor, shape, name):
    """Copy a PyTorch parameter to a float64 ndarray, checking its shape on the way."""
    if tensor is None:
        raise ValueError(f"{name} is missing: build the PyTorch module with bias=True")
    arr = tensor.detach().cpu().double().numpy().copy()
    if arr.shape != shape:
        raise ValueError(f"{name} has shape {arr.shape}, expected {shape}")
    return arr
