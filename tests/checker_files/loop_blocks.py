"""A correct student file with explicit loops: one query, one head, one position at a time."""

import math

import numpy as np


def softmax(x, axis=-1):
    x = np.moveaxis(np.array(x, dtype=np.float64), axis, -1)
    out = np.empty_like(x)
    for index in np.ndindex(x.shape[:-1]):
        row = x[index]
        top = max(row)
        exps = [math.exp(v - top) for v in row]
        total = sum(exps)
        out[index] = [e / total for e in exps]
    return np.moveaxis(out, -1, axis)


def scaled_dot_product_attention(q, k, v, mask=None):
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(k.shape[-1])
    if mask is not None:
        scores = scores + (1 - np.asarray(mask, dtype=np.float64)) * -1e9
    weights = softmax(scores)
    return weights @ v, weights


def split_heads(x, n_heads):
    b, n, d = x.shape
    d_k = d // n_heads
    out = np.empty((b, n_heads, n, d_k))
    for head in range(n_heads):
        out[:, head] = x[:, :, head * d_k : (head + 1) * d_k]
    return out


def combine_heads(x):
    return np.concatenate([x[:, head] for head in range(x.shape[1])], axis=-1)


def positional_encoding(max_len, d_model):
    pe = np.zeros((max_len, d_model))
    for pos in range(max_len):
        for i in range(0, d_model, 2):
            angle = pos / (10000 ** (i / d_model))
            pe[pos, i] = math.sin(angle)
            pe[pos, i + 1] = math.cos(angle)
    return pe


def create_look_ahead_mask(n):
    mask = np.zeros((n, n))
    for t in range(n):
        mask[t, : t + 1] = 1
    return mask


def create_padding_mask(tokens, pad_id=0):
    tokens = np.asarray(tokens)
    mask = np.zeros((tokens.shape[0], 1, tokens.shape[1]))
    for i, row in enumerate(tokens):
        for j, token in enumerate(row):
            mask[i, 0, j] = 0.0 if token == pad_id else 1.0
    return mask


def layer_norm(x, gamma, beta, eps=1e-5):
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    for index in np.ndindex(x.shape[:-1]):
        row = x[index]
        mean = row.sum() / len(row)
        var = ((row - mean) ** 2).sum() / len(row)
        out[index] = (row - mean) / math.sqrt(var + eps) * gamma + beta
    return out


def feed_forward(x, params):
    return np.maximum(0, x @ params["W_1"] + params["b_1"]) @ params["W_2"] + params["b_2"]


def count_mha_params(d_model):
    per_projection = d_model * d_model + d_model
    return sum(per_projection for _ in ("q", "k", "v", "o"))
