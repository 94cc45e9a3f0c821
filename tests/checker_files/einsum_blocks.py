"""A correct student file in another style: einsum everywhere, no helper of the reference."""

import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x, dtype=np.float64)
    shifted = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / np.sum(e, axis=axis, keepdims=True)


def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    d_k = Q.shape[-1]
    scores = np.einsum("...qd,...kd->...qk", Q, K) / np.sqrt(d_k)
    if mask is not None:
        scores = scores + (1.0 - np.asarray(mask, dtype=np.float64)) * -1e9
    weights = softmax(scores, axis=-1)
    return np.einsum("...qk,...kd->...qd", weights, V), weights


def split_heads(x, n_heads):
    b, n, d = x.shape
    return np.einsum("bnhk->bhnk", x.reshape(b, n, n_heads, d // n_heads))


def combine_heads(x):
    b, h, n, d_k = x.shape
    return np.einsum("bhnk->bnhk", x).reshape(b, n, h * d_k)


def multi_head_attention(x_q, x_kv, params, n_heads, mask=None):
    x_q, x_kv = np.asarray(x_q, dtype=np.float64), np.asarray(x_kv, dtype=np.float64)
    unbatched = x_q.ndim == 2 and (mask is None or np.ndim(mask) <= 2)
    if x_q.ndim == 2:
        x_q, x_kv = x_q[None], x_kv[None]
    Q = split_heads(np.einsum("bnd,de->bne", x_q, params["W_q"]) + params["b_q"], n_heads)
    K = split_heads(np.einsum("bnd,de->bne", x_kv, params["W_k"]) + params["b_k"], n_heads)
    V = split_heads(np.einsum("bnd,de->bne", x_kv, params["W_v"]) + params["b_v"], n_heads)
    if mask is not None:
        mask = np.asarray(mask, dtype=np.float64)
        if mask.ndim < 4:  # (b, n_q, n_k) for every head
            mask = mask.reshape((1,) * (3 - mask.ndim) + mask.shape)[:, None]
    context, weights = scaled_dot_product_attention(Q, K, V, mask)
    out = np.einsum("bne,ed->bnd", combine_heads(context), params["W_o"]) + params["b_o"]
    if unbatched:
        return out[0], weights[0]
    return out, weights


def count_mha_params(d_model):
    return 4 * (d_model * d_model + d_model)


def positional_encoding(max_len, d_model):
    pos = np.arange(max_len, dtype=np.float64)
    omega = np.exp(-np.log(10000.0) * np.arange(0, d_model, 2) / d_model)
    angles = np.einsum("p,i->pi", pos, omega)
    return np.stack([np.sin(angles), np.cos(angles)], axis=-1).reshape(max_len, d_model)


def relative_shift_matrix(k, d_model):
    omega = np.exp(-np.log(10000.0) * np.arange(0, d_model, 2) / d_model)
    M = np.zeros((d_model, d_model))
    for i, w in enumerate(omega):
        c, s = np.cos(w * k), np.sin(w * k)
        M[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [[c, -s], [s, c]]
    return M


def feed_forward(x, params):
    hidden = np.einsum("...d,df->...f", x, params["W_1"]) + params["b_1"]
    return (
        np.einsum("...f,fd->...d", np.where(hidden > 0, hidden, 0.0), params["W_2"]) + params["b_2"]
    )


def layer_norm(x, gamma, beta, eps=1e-5):
    mu = np.mean(x, axis=-1, keepdims=True)
    sigma2 = np.var(x, axis=-1, keepdims=True)
    return gamma * (x - mu) / np.sqrt(sigma2 + eps) + beta


def encoder_layer_forward(x, params, n_heads, mask=None, norm_first=False):
    def attend(h):
        return multi_head_attention(h, h, params["self_attn"], n_heads, mask)[0]

    n1, n2 = params["norm1"], params["norm2"]
    if norm_first:
        x = x + attend(layer_norm(x, n1["gamma"], n1["beta"]))
        return x + feed_forward(layer_norm(x, n2["gamma"], n2["beta"]), params["ffn"])
    x = layer_norm(x + attend(x), n1["gamma"], n1["beta"])
    return layer_norm(x + feed_forward(x, params["ffn"]), n2["gamma"], n2["beta"])


def create_look_ahead_mask(n):
    return (np.arange(n)[:, None] >= np.arange(n)[None, :]).astype(np.float64)


def create_padding_mask(tokens, pad_id=0):
    tokens = np.asarray(tokens)
    return (tokens != pad_id).astype(np.float64)[:, None, :]


def decoder_layer_forward(
    y, memory, params, n_heads, self_mask=None, memory_mask=None, norm_first=False
):
    y, memory = np.asarray(y, dtype=np.float64), np.asarray(memory, dtype=np.float64)

    def self_attend(h):
        return multi_head_attention(h, h, params["self_attn"], n_heads, self_mask)[0]

    def cross_attend(h):
        kv = memory[None] if memory.ndim == 2 and h.ndim == 3 else memory
        return multi_head_attention(h, kv, params["cross_attn"], n_heads, memory_mask)[0]

    for sub, norm in (
        (self_attend, "norm1"),
        (cross_attend, "norm2"),
        (lambda h: feed_forward(h, params["ffn"]), "norm3"),
    ):
        g, b = params[norm]["gamma"], params[norm]["beta"]
        y = y + sub(layer_norm(y, g, b)) if norm_first else layer_norm(y + sub(y), g, b)
    return y
