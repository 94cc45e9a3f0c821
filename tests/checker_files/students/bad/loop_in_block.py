"""Lecture 17 作业：softmax 用循环把每一项加起来。"""

import numpy as np


def softmax(x, axis=-1):
    """softmax（讲义 §2.2）：分母一项一项地加。"""
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    total = np.zeros_like(np.sum(e, axis=axis, keepdims=True))
    i = 0
    while i < e.shape[axis]:
        total = total + np.take(e, [i], axis=axis)
    return e / total


def positional_encoding(max_len, d_model):
    """PE(pos, 2i) = sin(pos ω_i), PE(pos, 2i+1) = cos(pos ω_i)（讲义 §6.2）。"""
    pos = np.arange(max_len)[:, np.newaxis]
    i = np.arange(d_model // 2)[np.newaxis, :]
    angles = pos / np.power(10000.0, 2 * i / d_model)
    pe = np.zeros((max_len, d_model))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles)
    return pe


def layer_norm(x, gamma, beta, eps=1e-5):
    """沿最后一维归一化，有偏方差（讲义 §7.3）。"""
    x = np.asarray(x, dtype=np.float64)
    mean = np.mean(x, axis=-1, keepdims=True)
    var = np.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return gamma * (x - mean) / np.sqrt(var + eps) + beta
