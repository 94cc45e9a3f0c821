"""Lecture 17 作业：Transformer 的 numpy 积木 (my numpy blocks for lecture 17).

每个积木都自己写了一遍，对着讲义的公式。
"""

import numpy as np


def _to_float(x):
    # 整数 → float64；float32 保持 float32（模板的说明）
    x = np.asarray(x)
    if x.dtype.kind != "f":
        return x.astype(np.float64)
    if x.dtype.itemsize < 4:
        return x.astype(np.float32)
    return x


def softmax(x, axis=-1):
    """softmax（讲义 §2.2），减去最大值防止 exp 溢出。"""
    x = _to_float(x)
    z = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, axis=axis, keepdims=True)


def scaled_dot_product_attention(Q, K, V, mask=None, *, scale=True):
    """softmax(Q K^T / sqrt(d_k) + (1 - mask) * -1e9) V（讲义 §3.1, §8.1）。"""
    Q, K, V = _to_float(Q), _to_float(K), _to_float(V)
    dtype = np.result_type(Q, K, V)
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2)  # (..., n_q, n_k)
    if scale:
        scores = scores / d_k**0.5
    if mask is not None:
        mask = np.asarray(mask, dtype=dtype)
        scores = scores + (1 - mask) * -1e9  # 1 = 可以看, 0 = 不许看
    weights = softmax(scores, axis=-1)
    output = weights @ V
    return output, weights


def split_heads(x, n_heads):
    """(b, n, d_model) → (b, h, n, d_k)（讲义 §5.3）。"""
    x = _to_float(x)
    b, n, d_model = x.shape
    if d_model % n_heads != 0:
        raise ValueError("d_model 必须能被 n_heads 整除")
    d_k = d_model // n_heads
    return x.reshape(b, n, n_heads, d_k).transpose(0, 2, 1, 3)


def combine_heads(x):
    """(b, h, n, d_k) → (b, n, h * d_k)（讲义 §5.3）。"""
    x = _to_float(x)
    b, h, n, d_k = x.shape
    return x.transpose(0, 2, 1, 3).reshape(b, n, h * d_k)


def multi_head_attention(x_q, x_kv, params, n_heads, mask=None):
    """投影 → 切成多个头 → 注意力 → 拼接 → 投影（讲义 §5.2）。"""
    x_q, x_kv = _to_float(x_q), _to_float(x_kv)
    unbatched = x_q.ndim == 2 and x_kv.ndim == 2 and (mask is None or np.ndim(mask) <= 2)
    if x_q.ndim == 2:
        x_q = x_q[np.newaxis]
    if x_kv.ndim == 2:
        x_kv = x_kv[np.newaxis]
    p = params
    Q = split_heads(x_q @ p["W_q"] + p["b_q"], n_heads)  # (b, h, n_q, d_k)
    K = split_heads(x_kv @ p["W_k"] + p["b_k"], n_heads)  # (b, h, n_k, d_k)
    V = split_heads(x_kv @ p["W_v"] + p["b_v"], n_heads)  # (b, h, n_k, d_k)
    if mask is not None:
        mask = np.asarray(mask)
        if mask.ndim <= 3:
            # (b, n_q, n_k)：每个头用同一个 mask，在 -3 处插入头的维度
            mask = mask.reshape((1,) * (3 - mask.ndim) + mask.shape)
            mask = mask[:, np.newaxis]  # (b, 1, n_q, n_k)
    context, weights = scaled_dot_product_attention(Q, K, V, mask)
    output = combine_heads(context) @ p["W_o"] + p["b_o"]  # (b, n_q, d_model)
    if unbatched:
        return output[0], weights[0]
    return output, weights


def count_mha_params(d_model):
    """4 个 (d_model, d_model) 矩阵 + 4 个偏置（讲义 §5.2）。"""
    return 4 * d_model * d_model + 4 * d_model


def positional_encoding(max_len, d_model):
    """正弦 / 余弦位置编码（讲义 §6.2）。"""
    if d_model % 2 != 0:
        raise ValueError("d_model 必须是偶数")
    pos = np.arange(max_len)[:, np.newaxis]  # (max_len, 1)
    i = np.arange(d_model // 2)[np.newaxis, :]  # (1, d_model/2)
    omega = 1.0 / np.power(10000.0, 2 * i / d_model)
    angles = pos * omega  # (max_len, d_model/2)
    pe = np.zeros((max_len, d_model))
    pe[:, 0::2] = np.cos(angles)
    pe[:, 1::2] = np.sin(angles)
    return pe


def relative_shift_matrix(k, d_model):
    """M_k：PE(p + k) = PE(p) @ M_k，对角线上是 2×2 旋转块（讲义 §6.3）。"""
    if d_model % 2 != 0:
        raise ValueError("d_model 必须是偶数")
    M = np.zeros((d_model, d_model))
    for i in range(d_model // 2):
        omega = 1.0 / np.power(10000.0, 2 * i / d_model)
        c, s = np.cos(k * omega), np.sin(k * omega)
        # [sin ω(p+k), cos ω(p+k)] = [sin ωp, cos ωp] @ [[c, -s], [s, c]]
        M[2 * i, 2 * i] = c
        M[2 * i, 2 * i + 1] = -s
        M[2 * i + 1, 2 * i] = s
        M[2 * i + 1, 2 * i + 1] = c
    return M


def feed_forward(x, params):
    """FFN(x) = ReLU(x W_1 + b_1) W_2 + b_2（讲义 §7.2）。"""
    x = _to_float(x)
    hidden = np.maximum(0, x @ params["W_1"] + params["b_1"])
    return hidden @ params["W_2"] + params["b_2"]


def layer_norm(x, gamma, beta, eps=1e-5):
    """沿最后一维归一化，有偏方差，和 nn.LayerNorm 一样（讲义 §7.3）。"""
    x = _to_float(x)
    mean = np.mean(x, axis=-1, keepdims=True)
    var = np.mean((x - mean) ** 2, axis=-1, keepdims=True)
    x_hat = (x - mean) / np.sqrt(var + eps)
    return gamma * x_hat + beta


def _sublayer(x, f, norm, norm_first):
    # Post-LN: LN(x + f(x))；Pre-LN: x + f(LN(x))（讲义 §7.1, §7.5）
    if norm_first:
        return x + f(layer_norm(x, norm["gamma"], norm["beta"]))
    return layer_norm(x + f(x), norm["gamma"], norm["beta"])


def encoder_layer_forward(x, params, n_heads, mask=None, norm_first=False):
    """自注意力 + FFN，各带残差和 LayerNorm（讲义 §7.1）。"""
    x = _to_float(x)

    def self_attn(h):
        return multi_head_attention(h, h, params["self_attn"], n_heads, mask)[0]

    def ffn(h):
        return feed_forward(h, params["ffn"])

    x = _sublayer(x, self_attn, params["norm1"], norm_first)
    x = _sublayer(x, ffn, params["norm2"], norm_first)
    return x


def create_look_ahead_mask(n):
    """下三角为 1：第 t 行只能看 0..t（讲义 §8.1）。"""
    return np.tril(np.ones((n, n)))


def create_padding_mask(tokens, pad_id=0):
    """1 = 真实的词，0 = 填充；形状 (b, 1, n)（讲义 §8.3）。"""
    tokens = np.asarray(tokens)
    mask = (tokens != pad_id).astype(np.float64)  # (b, n)
    return mask[:, np.newaxis, :]  # (b, 1, n)


def decoder_layer_forward(
    y, memory, params, n_heads, self_mask=None, memory_mask=None, norm_first=False
):
    """masked 自注意力 → 编码器-解码器注意力 → FFN（讲义 §8.2）。"""
    y, memory = _to_float(y), _to_float(memory)

    def self_attn(h):
        return multi_head_attention(h, h, params["self_attn"], n_heads, self_mask)[0]

    def cross_attn(h):
        # Q 来自解码器，K 和 V 来自编码器的输出 memory
        return multi_head_attention(h, memory, params["cross_attn"], n_heads, memory_mask)[0]

    def ffn(h):
        return feed_forward(h, params["ffn"])

    y = _sublayer(y, self_attn, params["norm1"], norm_first)
    y = _sublayer(y, cross_attn, params["norm2"], norm_first)
    y = _sublayer(y, ffn, params["norm3"], norm_first)
    return y
