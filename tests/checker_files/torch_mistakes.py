"""Student torch layers with one slip each, chosen with `MISTAKE` (tests/test_checker_trained.py
sets it before loading): "peek" (the decoder's look-ahead mask shows the next token too),
"no_scale" (no 1/sqrt(d_k)), "tf_mask" (masks the keys the lecture keeps),
"cross_reads_decoder" (cross-attention takes K, V from the decoder, not the memory)."""

import math
import os

import torch
from torch import nn

MISTAKE = os.environ.get("LECTURE17_TORCH_MISTAKE", "peek")


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.h, self.d_k = n_heads, d_model // n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        b, n_q, d = query.shape
        w = self.qkv.weight.chunk(3)
        bias = self.qkv.bias.chunk(3)
        q = (
            nn.functional.linear(query, w[0], bias[0])
            .view(b, n_q, self.h, self.d_k)
            .transpose(1, 2)
        )
        k = nn.functional.linear(key, w[1], bias[1]).view(b, -1, self.h, self.d_k).transpose(1, 2)
        v = nn.functional.linear(value, w[2], bias[2]).view(b, -1, self.h, self.d_k).transpose(1, 2)
        scores = q @ k.transpose(-2, -1)
        if MISTAKE != "no_scale":
            scores = scores / math.sqrt(self.d_k)
        if mask is not None:
            keep = mask.bool() if MISTAKE != "tf_mask" else ~mask.bool()
            scores = scores.masked_fill(~keep, -1e9)
        weights = scores.softmax(-1)
        return self.out((weights @ v).transpose(1, 2).reshape(b, n_q, d)), weights


class DecoderLayer(nn.Module):
    def __init__(self, d_model, n_heads, d_ff, norm_first=False):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, n_heads)
        self.cross_attn = MultiHeadAttention(d_model, n_heads)
        self.ffn = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))
        self.n1, self.n2, self.n3 = (nn.LayerNorm(d_model) for _ in range(3))
        self.norm_first = norm_first

    def forward(self, x, memory, self_mask=None, memory_mask=None):
        n = x.shape[1]
        causal = torch.ones(n, n, dtype=torch.bool).tril(1 if MISTAKE == "peek" else 0)
        if self_mask is not None:
            causal = causal & self_mask.bool()
        if self.norm_first:
            h = self.n1(x)
            x = x + self.self_attn(h, h, h, causal)[0]
            h = self.n2(x)
            x = x + self.cross_attn(h, memory, memory, memory_mask)[0]
            return x + self.ffn(self.n3(x))
        x = self.n1(x + self.self_attn(x, x, x, causal)[0])
        kv = x if MISTAKE == "cross_reads_decoder" else memory
        x = self.n2(x + self.cross_attn(x, kv, kv, None if kv is x else memory_mask)[0])
        return self.n3(x + self.ffn(x))
