"""A correct student file in Coursera's C5W4 style: get_angles, (1, max_len, d) encodings
cut to the lecture's shape, TensorFlow's (b, 1, 1, n) padding mask, masks as 1 = keep."""

import numpy as np


def get_angles(pos, k, d):
    i = k // 2
    return pos / np.power(10000, 2 * i / np.float64(d))


def positional_encoding(max_len, d_model):
    angle_rads = get_angles(
        np.arange(max_len)[:, np.newaxis], np.arange(d_model)[np.newaxis, :], d_model
    )
    angle_rads[:, 0::2] = np.sin(angle_rads[:, 0::2])
    angle_rads[:, 1::2] = np.cos(angle_rads[:, 1::2])
    pos_encoding = angle_rads[np.newaxis, ...]
    return pos_encoding[0]


def create_padding_mask(decoder_token_ids, pad_id=0):
    seq = 1 - np.equal(decoder_token_ids, pad_id).astype(np.float64)
    return seq[:, np.newaxis, np.newaxis, :]


def create_look_ahead_mask(sequence_length):
    return np.tril(np.ones((sequence_length, sequence_length)))


def scaled_dot_product_attention(q, k, v, mask=None):
    matmul_qk = np.matmul(q, np.swapaxes(k, -1, -2))
    dk = np.float64(k.shape[-1])
    scaled_attention_logits = matmul_qk / np.sqrt(dk)
    if mask is not None:
        scaled_attention_logits += (1.0 - mask) * -1e9
    logits = scaled_attention_logits - scaled_attention_logits.max(axis=-1, keepdims=True)
    attention_weights = np.exp(logits) / np.exp(logits).sum(axis=-1, keepdims=True)
    output = np.matmul(attention_weights, v)
    return output, attention_weights
