"""A student's torch layers, written apart from the reference: three projections of their
own, einsum, a boolean mask filled with -inf (the lecture's convention, 1 = may attend)."""

import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, scale=True):
        super().__init__()
        self.h, self.d_k, self.scale = n_heads, d_model // n_heads, scale
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        b, n_q, _ = query.shape
        n_k = key.shape[1]
        q = self.w_q(query).view(b, n_q, self.h, self.d_k)
        k = self.w_k(key).view(b, n_k, self.h, self.d_k)
        v = self.w_v(value).view(b, n_k, self.h, self.d_k)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k)
        if self.scale:
            scores = scores / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(~mask.bool(), float("-inf"))
        weights = scores.softmax(dim=-1)
        context = torch.einsum("bhqk,bkhd->bqhd", weights, v).reshape(b, n_q, -1)
        return self.w_o(context), weights


class EncoderLayer(nn.Module):
    def __init__(self, d_model, n_heads, d_ff, norm_first=False):
        super().__init__()
        self.attn = MultiHeadAttention(d_model, n_heads)
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.pre = norm_first

    def forward(self, x, mask=None):
        if self.pre:
            h = self.ln1(x)
            x = x + self.attn(h, h, h, mask)[0]
            return x + self.ff(self.ln2(x))
        x = self.ln1(x + self.attn(x, x, x, mask)[0])
        return self.ln2(x + self.ff(x))


class DecoderLayer(nn.Module):
    def __init__(self, d_model, n_heads, d_ff, norm_first=False):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, n_heads)
        self.cross = MultiHeadAttention(d_model, n_heads)
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))
        self.norms = nn.ModuleList(nn.LayerNorm(d_model) for _ in range(3))
        self.pre = norm_first

    def forward(self, x, memory, self_mask=None, memory_mask=None):
        n = x.shape[1]
        causal = torch.ones(n, n, dtype=torch.bool, device=x.device).tril()
        causal = causal if self_mask is None else causal & self_mask.bool()
        subs = (
            lambda h: self.self_attn(h, h, h, causal)[0],
            lambda h: self.cross(h, memory, memory, memory_mask)[0],
            self.ff,
        )
        for sub, norm in zip(subs, self.norms, strict=True):
            x = x + sub(norm(x)) if self.pre else norm(x + sub(x))
        return x
