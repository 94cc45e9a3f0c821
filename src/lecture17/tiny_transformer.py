"""A small Transformer from scratch in PyTorch, and §4.4's one-layer look-up model
(LookupAttention, demo 02.3). The GRU seq2seq baselines of §9 are in gru_seq2seq.py (their
class importable from here too); build_model builds any of the three models.

References:
1) Vaswani et al., "Attention Is All You Need", NeurIPS 2017 — scaled dot-product and
   multi-head attention, sinusoidal positional encoding, the encoder-decoder (§3–§8).
2) Xiong et al., "On Layer Normalization in the Transformer Architecture", ICML 2020 —
   Post-LN vs Pre-LN (§7.5).
3) Su et al., "RoFormer: Enhanced Transformer with Rotary Position Embedding", 2021, and
   Press, Smith & Lewis, "Train Short, Test Long: Attention with Linear Biases Enables Input
   Length Extrapolation", ICLR 2022 — RoPE and ALiBi (§6.5 names them; pe="rope" / "alibi").

Shapes, one notation for the whole module: batch first, rows are
tokens (§0.4), e.g. x (b, n, d_model), per-head weights (b, h, n_q, n_k).
    b           batch size
    n           sequence length; n_src / n_tgt for the source and the shifted target,
                n_q / n_k for the queries and the keys of one attention block
    t           positions decoded so far (greedy decoding, §8.4)
    d_model     width of every token's vector, the residual stream
    h, d_k      heads, and the width of each: d_k = d_model / h (§5.2)
    d_ff        hidden width of the position-wise feed-forward network (§7.2)
    src_vocab, tgt_vocab    token ids on each side (logits: (b, n_tgt, tgt_vocab))

Conventions (the lecture's, §5.4, §12 pitfall 7):
- a mask holds 1/True where a query MAY attend, 0/False where it must not, and broadcasts to
  (b, h, n_q, n_k). This is F.scaled_dot_product_attention's boolean convention and the
  OPPOSITE of nn.MultiheadAttention's boolean masks (True = ignore there);
- no dropout anywhere: the small experiments of §6.6, §7.5 and §9 are deterministic.

A Transformer is built from one frozen TransformerConfig (as nanoGPT's GPTConfig):
    model = Transformer(TransformerConfig(src_vocab=13, tgt_vocab=13, norm_first=True))
Every sequence model here shares one interface, so the experiments can loop over them:
    logits = model(src, tgt_in)                 # (b, n_tgt, tgt_vocab), teacher forcing
    tokens = model.greedy_decode(src, max_len)  # (b, max_len), step by step from BOS
    weights = model.attention_weights(src, tgt_in)  # {name: per-head weights} for §9.4
Any module's attention weights, by a switch rather than an argument (§9.4):
    with collect_attention(model) as weights:
        model(src, tgt_in)
    weights["decoder.0.cross_attn"]  # (b, h, n_tgt, n_src)

The lecture's main line comes first, in its order: §5 attention, §6 embedding and positional
encoding, §7 encoder layer, §8 decoder layer, §8.5/§9 the models. Then, beyond it, greedy
decoding with a KV cache (§8.4 names it): Transformer.greedy_decode(use_cache=True) keeps each
decoder layer's keys and values (KVCache) and every step computes only the newest position.
The cache's section holds KVCache and the attention steps it needs; the few methods the cache
needs on the lecture's classes (DecoderLayer.step, Decoder.step) stay on them, each in a block
marked "beyond the main line (§8.4)", after the class's lecture part. Last, the input checks
and helpers (the token checks shared with the GRU: _torch_checks.py). Beam search and the
positions counter live in lecture17/decoding.py, above this module: they use only the models'
public interface.

Long on purpose: the lecture's whole PyTorch model in one file, read top to bottom in the
lecture's order (nanoGPT's model.py habit); what goes beyond the main line (the KV cache) and
the input checks are marked sections after it.
"""

import math
from contextlib import contextmanager
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from lecture17._torch_checks import check_decoding, check_tokens
from lecture17.gru_seq2seq import GRUSeq2Seq

# §6.2, §6.5, §6.6's ablation; then, beyond the lecture (§6.5 names them), two schemes that put
# positions into every attention block's scores instead of adding a vector to the input
SCORE_PE = ("rope", "alibi")
PE_KINDS = ("sinusoidal", "learned", "none", *SCORE_PE)
MODEL_KINDS = ("gru", "gru_attention", "transformer")

# -----------------------------------------------------------------------------
# §3–§5 attention: scaled dot-product (§3.1, §4), the look-ahead mask (§8.1), multi-head (§5)


def causal_mask(n_q: int, n_k: int, device=None) -> torch.Tensor:
    """Look-ahead mask (§8.1): True on and below the diagonal (query t may see keys 0..t)."""
    return torch.ones(n_q, n_k, dtype=torch.bool, device=device).tril()  # (n_q, n_k)


class MultiHeadAttention(nn.Module):
    """MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O, head_i = Attention(Q W_i^Q,
    K W_i^K, V W_i^V) (§5.2). W^Q, W^K, W^V are stacked in one in_proj (3 d_model, d_model) and
    W^O is out_proj, laid out as nn.MultiheadAttention's (§5.4). scale=False drops 1/sqrt(d_k)
    (exercise 9 edits the default below: every layer built without a scale of its own follows
    it, through attention_block). positions="rope" / "alibi" put positions into the scores
    (beyond the lecture, §6.5). While keep_weights is on (collect_attention), forward keeps
    the per-head weights in last_weights. Decoding with a KV cache: memory_keys_values,
    self_attend_step, cross_attend_step (end of module)."""

    def __init__(self, d_model: int, n_heads: int, scale: bool = True, positions=None):
        super().__init__()
        check_heads(d_model, n_heads, positions)
        self.d_model, self.n_heads, self.d_k = d_model, n_heads, d_model // n_heads
        self.scale, self.positions = scale, positions
        self.in_proj = nn.Linear(d_model, 3 * d_model)  # W^Q, W^K, W^V
        self.out_proj = nn.Linear(d_model, d_model)  # W^O
        nn.init.xavier_uniform_(self.in_proj.weight)  # nn.MultiheadAttention's initialisation
        nn.init.zeros_(self.in_proj.bias)
        nn.init.zeros_(self.out_proj.bias)
        self.keep_weights, self.last_weights = False, None  # (b, h, n_q, n_k) when kept

    def forward(self, query, key, value, mask=None, need_weights=False, is_causal=False):
        """query (b, n_q, d_model), key/value (b, n_k, d_model) -> (output, weights).

        mask: 1/True = may attend, broadcastable to (b, h, n_q, n_k); every query must keep at
        least one key. is_causal adds the look-ahead mask (§8.1), not built on the fast path.
        weights: (b, h, n_q, n_k) when need_weights (or keep_weights), else None.
        """
        need_weights = need_weights or self.keep_weights
        n_q, n_k = query.shape[1], key.shape[1]
        q, k, v = (split_heads(x, self.n_heads) for x in project(self.in_proj, query, key, value))
        if mask is not None:  # q (b, h, n_q, d_k); k, v (b, h, n_k, d_k)
            mask = mask.bool()
            if is_causal:
                mask = mask & causal_mask(n_q, n_k, query.device)
        elif is_causal and (need_weights or self.positions == "alibi"):
            mask = causal_mask(n_q, n_k, query.device)
        if self.positions is not None:  # §6.5, beyond the lecture: RoPE, ALiBi
            q, k, mask = positions_in_scores(q, k, mask, self.positions)
        if need_weights:  # written out (§3.1): (b, h, n_q, d_k), (b, h, n_q, n_k)
            context, weights = attend(q, k, v, mask, self.scale)
        else:  # fused kernel, same maths; is_causal=True lets it skip the masked blocks
            context, weights = (
                F.scaled_dot_product_attention(
                    q,
                    k,
                    v,
                    attn_mask=mask,
                    is_causal=is_causal and mask is None,
                    scale=None if self.scale else 1.0,  # None = SDPA's default 1/sqrt(d_k)
                ),
                None,
            )
        if self.keep_weights:
            self.last_weights = weights
        return self.out_proj(combine_heads(context)), weights  # (b, n_q, d_model)

    def load_from_torch(self, mha: nn.MultiheadAttention) -> None:
        """Copy an nn.MultiheadAttention's parameters (same layout, so no transpose)."""
        with torch.no_grad():
            self.in_proj.weight.copy_(mha.in_proj_weight)  # (3 d_model, d_model)
            self.in_proj.bias.copy_(mha.in_proj_bias)
            self.out_proj.weight.copy_(mha.out_proj.weight)  # (d_model, d_model)
            self.out_proj.bias.copy_(mha.out_proj.bias)


def project(in_proj: nn.Linear, query, key, value):
    """Q = X W^Q, K = X W^K, V = X W^V (§5.2), each (b, n, d_model)."""
    if query is key and key is value:  # self-attention: one matmul (as nn.MultiheadAttention)
        return in_proj(query).chunk(3, dim=-1)
    d_model = in_proj.in_features
    w_q, w_kv = in_proj.weight.split([d_model, 2 * d_model])
    b_q, b_kv = in_proj.bias.split([d_model, 2 * d_model])
    q = F.linear(query, w_q, b_q)
    if key is value:  # cross-attention: K and V both read the encoder memory (§8.2)
        return (q, *F.linear(key, w_kv, b_kv).chunk(2, dim=-1))
    w_k, w_v = w_kv.chunk(2)
    b_k, b_v = b_kv.chunk(2)
    return q, F.linear(key, w_k, b_k), F.linear(value, w_v, b_v)


def split_heads(x, n_heads: int):
    """(b, n, d_model) -> (b, h, n, d_k) (§5.3): head i takes columns i d_k .. (i + 1) d_k - 1."""
    b, n, d_model = x.shape
    return x.view(b, n, n_heads, d_model // n_heads).transpose(1, 2)  # (b, h, n, d_k)


def combine_heads(x):
    """(b, h, n, d_k) -> (b, n, h d_k): the heads side by side again, Concat(head_1..head_h)."""
    b, h, n, d_k = x.shape
    return x.transpose(1, 2).reshape(b, n, h * d_k)  # (b, n, d_model)


def attention_block(d_model: int, n_heads: int, scale=None, positions=None):
    """A layer's MultiHeadAttention. scale None passes no scale, so MultiHeadAttention's own
    default decides: exercise 9's edit of that default reaches every model built without an
    explicit scale (TransformerConfig.scale None, as 03.5's §6.6 model)."""
    if scale is None:
        return MultiHeadAttention(d_model, n_heads, positions=positions)
    return MultiHeadAttention(d_model, n_heads, scale, positions)


def attend(q, k, v, mask, scale: bool = True):
    """softmax(Q K^T / sqrt(d_k)) V written out, for when the weights are wanted (§3.1):
    q (b, h, n_q, d_k), k, v (b, h, n_k, d_k) -> (b, h, n_q, d_k), weights (b, h, n_q, n_k).

    mask: boolean (1 = may attend), or a float one (ALiBi's bias, -inf where masked).
    """
    scores = q @ k.transpose(-2, -1)  # (b, h, n_q, n_k)
    if scale:  # §4: keeps the scores' variance ~1 whatever d_k is
        scores = scores / math.sqrt(q.shape[-1])
    if mask is not None and mask.dtype != torch.bool:  # ALiBi: added, as SDPA adds it
        scores = scores + mask
    elif mask is not None:  # masked before the softmax (§8.1), so its weights are exactly 0
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(dim=-1)  # (b, h, n_q, n_k), rows sum to 1
    return weights @ v, weights  # (b, h, n_q, d_k)


def positions_in_scores(q, k, mask, positions: str, q_start: int = 0):
    """Beyond the lecture (§6.5): queries at positions q_start .. q_start + n_q - 1, keys at
    0 .. n_k - 1 -> q, k, mask. RoPE rotates q and k (rope_rotate); ALiBi turns the mask into a
    float one that adds -m_h |i - j| to head h's scores and -inf where the boolean mask said no
    (alibi_bias)."""
    n_heads, n_q, n_k = q.shape[1], q.shape[2], k.shape[2]
    if positions == "rope":
        q = rope_rotate(q, torch.arange(q_start, q_start + n_q, device=q.device))
        k = rope_rotate(k, torch.arange(n_k, device=k.device))
        return q, k, mask
    bias = alibi_bias(n_heads, n_q, n_k, q_start, q.device).to(q.dtype)  # (h, n_q, n_k)
    if mask is not None:
        bias = bias.masked_fill(~mask, float("-inf"))  # broadcast: (b | 1, h, n_q, n_k)
    return q, k, bias


@contextmanager
def collect_attention(model: nn.Module):
    """Keep the per-head weights of every MultiHeadAttention in `model` while the block runs.

    Yields a dict that is filled when the block ends, with each block's weights from its last
    forward, (b, h, n_q, n_k), in the order the blocks were built and named by their path
    without "layers.": "encoder.0.self_attn", "decoder.0.cross_attn", ... (§9.4). While on,
    the blocks compute the weights on the written-out path (attend) instead of the fused one.
    """
    blocks = {
        name.replace("layers.", ""): module
        for name, module in model.named_modules()
        if isinstance(module, MultiHeadAttention)
    }
    for block in blocks.values():
        block.keep_weights = True
    weights = {}
    try:
        yield weights
    finally:
        for name, block in blocks.items():
            if block.last_weights is not None:  # blocks that did not run are left out
                weights[name] = block.last_weights
            block.keep_weights, block.last_weights = False, None


# -----------------------------------------------------------------------------
# §4.4 the look-up model: one layer of single-head attention (demo 02.3)


LOOKUP_READOUTS = ("onehot", "layer")
LOOKUP_KEYS = ("random", "embedded")


class LookupAttention(nn.Module):
    """One layer of single-head attention that looks a value up by its key (§4.4, demo 02.3).

    scores_j = (x_q W^Q) . (k_j W^K) [/ sqrt(d_k)], a = softmax(scores). Two readouts:
    - readout="onehot" (§4.4 "取匹配那一对的 value"): o = sum_j a_j onehot(v_j), the answer's
      logits, right exactly when the matching pair gets the most weight. The loss reaches the
      scores through the softmax Jacobian diag(a) - a a^T, the path that saturation closes
      (§4.3). (Taking log o instead would cancel the softmax and hide the effect of the scale.)
    - readout="layer": an ordinary attention layer: values embedded (nn.Embedding, N(0, 1)),
      projected by W^V, averaged by a, then an output projection W^O to the n_pairs logits.
    Keys: keys="random" takes the key vectors as given (fresh N(0, 1) vectors per sample);
    keys="embedded" takes symbol ids and embeds them (nn.Embedding(vocab, d_model), N(0, 1)).
    W^Q, W^K ~ N(0, 1/d_model), so q and k components have variance ~1, as §4.2 assumes; they
    are also independent only when d_k <= d_model (at d_k > d_model, q lies in a d_model-dim
    subspace of R^{d_k}).
    """

    def __init__(
        self,
        d_model: int,
        d_k: int,
        scale: bool = True,
        *,
        readout: str = "onehot",
        keys: str = "random",
        n_pairs: int = 16,
        vocab: int = 64,
    ):
        super().__init__()
        if readout not in LOOKUP_READOUTS:
            raise ValueError(f"unknown readout {readout!r}; expected one of {LOOKUP_READOUTS}")
        if keys not in LOOKUP_KEYS:
            raise ValueError(f"unknown keys {keys!r}; expected one of {LOOKUP_KEYS}")
        self.d_k, self.scale, self.readout = d_k, scale, readout
        self.W_q = nn.Parameter(torch.randn(d_model, d_k) / math.sqrt(d_model))  # rows = tokens
        self.W_k = nn.Parameter(torch.randn(d_model, d_k) / math.sqrt(d_model))
        self.key_embed = nn.Embedding(vocab, d_model) if keys == "embedded" else None
        if readout == "layer":
            self.value_embed = nn.Embedding(n_pairs, d_model)  # N(0, 1)
            self.W_v = nn.Parameter(torch.randn(d_model, d_k) / math.sqrt(d_model))
            self.W_o = nn.Linear(d_k, n_pairs)

    def forward(self, query, keys, values):
        """query (b, d_model), keys (b, n, d_model), values (b, n) -> logits (b, n values);
        with keys="embedded", query (b,) and keys (b, n) are symbol ids."""
        if self.key_embed is not None:
            query, keys = self.key_embed(query), self.key_embed(keys)
        q = query @ self.W_q  # (b, d_k)
        k = keys @ self.W_k  # (b, n, d_k)
        scores = (k @ q[:, :, None])[:, :, 0]  # (b, n)
        if self.scale:  # §4.3: without it the softmax saturates as d_k grows
            scores = scores / math.sqrt(self.d_k)
        weights = scores.softmax(dim=-1)  # (b, n)
        if self.readout == "layer":
            v = self.value_embed(values) @ self.W_v  # (b, n, d_k)
            return self.W_o((weights[:, None, :] @ v)[:, 0])  # (b, n values)
        return torch.zeros_like(weights).scatter_(1, values, weights)  # (b, n values)


# -----------------------------------------------------------------------------
# beyond the lecture (§6.5 names them): positions in the scores, RoPE and ALiBi


def rope_rotate(x: torch.Tensor, positions: torch.Tensor, base: float = 10000.0):
    """RoPE (Su et al. 2021): rotate each feature pair (2i, 2i + 1) of x by position × θ_i,
    θ_i = base^(-2i/d_k), §6.3's rotation (the sinusoidal PE's frequencies).

    x (..., n, d_k), positions (n,) -> (..., n, d_k). A query rotated by m and a key by n score
    q M_{n-m} k^T: only n - m matters (attention_numpy.rope_rotate, both layouts, is the
    float64 reference). Angles in float64, then cast to x's dtype.
    """
    d_k = x.shape[-1]
    theta = base ** (-torch.arange(0, d_k, 2, dtype=torch.float64, device=x.device) / d_k)
    angle = positions.to(torch.float64)[:, None] * theta  # (n, d_k / 2)
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    first, second = x[..., 0::2], x[..., 1::2]  # (..., n, d_k / 2) each
    rotated = torch.stack([first * cos - second * sin, first * sin + second * cos], dim=-1)
    return rotated.flatten(-2)  # pairs back in place: (..., n, d_k)


def alibi_slopes(n_heads: int) -> torch.Tensor:
    """ALiBi's slopes (Press et al. 2022): 2^(-8/n), 2^(-16/n), … for n a power of 2 (4 heads:
    1/4 … 1/256), else the paper's rule (attention_numpy.alibi_slopes, the reference)."""
    power = 2 ** int(math.floor(math.log2(n_heads)))
    slopes = [2.0 ** (-8.0 * i / power) for i in range(1, power + 1)]
    if power < n_heads:
        slopes += alibi_slopes(2 * power).tolist()[0::2][: n_heads - power]
    return torch.tensor(slopes, dtype=torch.float64)


def alibi_bias(n_heads: int, n_q: int, n_k: int, q_start: int = 0, device=None):
    """-m_h |i - j| for queries at q_start .. q_start + n_q - 1 and keys at 0 .. n_k - 1:
    (h, n_q, n_k), float64. |i - j|: the paper's i - j under a causal mask, and the same
    penalty for an encoder's later keys and a cross-attention's source positions (chosen)."""
    i = torch.arange(q_start, q_start + n_q, device=device)[:, None]
    j = torch.arange(n_k, device=device)
    distance = (i - j).abs().to(torch.float64)  # (n_q, n_k)
    return -alibi_slopes(n_heads).to(device)[:, None, None] * distance


# -----------------------------------------------------------------------------
# §6 token embedding and positional encoding


def sinusoidal_encoding(max_len: int, d_model: int, dtype=None) -> torch.Tensor:
    """PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(...) (§6.2), (max_len, d_model).

    Computed in float64, returned in `dtype` (default: torch's default dtype).
    """
    if d_model % 2 != 0:
        raise ValueError(f"sinusoidal PE needs an even d_model (sin/cos pairs), got {d_model}")
    position = torch.arange(max_len, dtype=torch.float64)[:, None]  # (max_len, 1)
    omega = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)  # (d/2,)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(position * omega)
    pe[:, 1::2] = torch.cos(position * omega)
    return pe.to(dtype or torch.get_default_dtype())


class Embedding(nn.Module):
    """Token embedding times emb_scale, plus a positional encoding (§6).

    pe: "sinusoidal" (a fixed table, §6.2), "learned" (a (max_len, d_model) parameter, §6.5)
    or "none" (the §6.6 ablation); "rope" and "alibi" add nothing here either: their positions
    enter the attention scores (MultiHeadAttention's `positions`), so no length is too long.
    emb_scale defaults to 1.0: the paper's sqrt(d_model) on
    nn.Embedding's N(0, 1) init drowns the PE (norms 65.7 vs 5.66, §6.6).
    """

    def __init__(self, vocab_size, d_model, pe="sinusoidal", max_len=256, emb_scale=1.0):
        super().__init__()
        if pe not in PE_KINDS:
            raise ValueError(f"unknown positional encoding {pe!r}; expected one of {PE_KINDS}")
        self.token = nn.Embedding(vocab_size, d_model)  # N(0, 1) init, PyTorch's default
        self.pe_kind, self.max_len, self.emb_scale = pe, max_len, emb_scale
        if pe == "sinusoidal":  # a buffer: moves with .to(), is not trained, not saved
            self.register_buffer("pe", sinusoidal_encoding(max_len, d_model), persistent=False)
        elif pe == "learned":  # initialised like nn.Embedding: distinct random codes at start
            self.pe = nn.Parameter(torch.randn(max_len, d_model))
        else:  # none, rope, alibi
            self.pe = None

    def forward(self, tokens, start=0):
        """tokens (b, n) at positions start .. start + n - 1 -> (b, n, d_model).

        start > 0 embeds the newest token of a decoder that caches the earlier ones (§8.4).
        """
        n = tokens.shape[1]
        x = self.token(tokens)  # (b, n, d_model)
        if self.emb_scale != 1.0:
            x = x * self.emb_scale
        if self.pe is None:
            return x
        self.check_length(start + n)
        return x + self.pe[start : start + n]  # (b, n, d_model) + (n, d_model)

    def check_length(self, n: int) -> None:
        """Positions 0 .. n - 1 must be in the positional-encoding table (no limit without PE)."""
        if self.pe is not None and n > self.max_len:
            raise ValueError(
                f"sequence length {n} exceeds max_len {self.max_len} "
                "of the positional-encoding table"
            )


# -----------------------------------------------------------------------------
# §7 encoder layer: residual + LayerNorm around each sublayer (§7.1, §7.5), the FFN (§7.2)


def residual(x, sublayer, norm, norm_first):
    """One sublayer with its residual connection and LayerNorm, x (b, n, d_model) -> same.

    Post-LN (norm_first=False, the paper's and PyTorch's default, §7.1): LN(x + Sublayer(x)).
    Pre-LN (norm_first=True, §7.5): x + Sublayer(LN(x)), nothing normalises the residual path.
    """
    if norm_first:
        return x + sublayer(norm(x))
    return norm(x + sublayer(x))


class FeedForward(nn.Module):
    """FFN(x) = max(0, x W_1 + b_1) W_2 + b_2, the same MLP at every position (§7.2)."""

    def __init__(self, d_model: int, d_ff: int):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.linear2(F.relu(self.linear1(x)))  # (b, n, d_ff) -> (b, n, d_model)


class EncoderLayer(nn.Module):
    """Self-attention and FFN sublayers, each with a residual and a LayerNorm (§7.1).

    Arguments as nn.TransformerEncoderLayer's (d_model, nhead, dim_feedforward, norm_first),
    so the two stand side by side in the tests and demos.
    """

    def __init__(self, d_model, n_heads, d_ff, norm_first=False, scale=None, positions=None):
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = attention_block(d_model, n_heads, scale, positions)
        self.ffn = FeedForward(d_model, d_ff)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)

    def forward(self, x, mask=None):
        """x (b, n, d_model) -> (b, n, d_model); mask as MultiHeadAttention's."""
        x = residual(x, lambda h: self.self_attn(h, h, h, mask)[0], self.norm1, self.norm_first)
        return residual(x, self.ffn, self.norm2, self.norm_first)

    def load_from_torch(self, layer: nn.TransformerEncoderLayer) -> None:
        """Copy an nn.TransformerEncoderLayer (same parameter names apart from self_attn)."""
        self.self_attn.load_from_torch(layer.self_attn)
        copy_ffn_and_norms(self, layer, ("norm1", "norm2"))


# -----------------------------------------------------------------------------
# §8 decoder layer: masked self-attention (§8.1), cross-attention on the memory (§8.2), FFN


class DecoderLayer(nn.Module):
    """Masked self-attention, cross-attention on the encoder memory, FFN (§8.2).

    Q of the cross-attention comes from the decoder, K and V from the memory. Same Post-LN /
    Pre-LN placement as EncoderLayer, arguments as nn.TransformerDecoderLayer's.
    """

    def __init__(self, d_model, n_heads, d_ff, norm_first=False, scale=None, positions=None):
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = attention_block(d_model, n_heads, scale, positions)
        self.cross_attn = attention_block(d_model, n_heads, scale, positions)
        self.ffn = FeedForward(d_model, d_ff)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm3 = nn.LayerNorm(d_model)

    def forward(self, x, memory, self_mask=None, memory_mask=None, is_causal=True):
        """x (b, n_tgt, d_model), memory (b, n_src, d_model) -> (b, n_tgt, d_model).

        is_causal applies the look-ahead mask (§8.1), ANDed with self_mask if given (§8.3).
        """

        def self_attend(h):  # h (b, n_tgt, d_model): queries, keys and values
            return self.self_attn(h, h, h, self_mask, is_causal=is_causal)[0]

        def cross_attend(h):  # queries from the decoder, keys and values from the memory
            return self.cross_attn(h, memory, memory, memory_mask)[0]

        x = residual(x, self_attend, self.norm1, self.norm_first)
        x = residual(x, cross_attend, self.norm2, self.norm_first)
        return residual(x, self.ffn, self.norm3, self.norm_first)

    def load_from_torch(self, layer: nn.TransformerDecoderLayer) -> None:
        """Copy an nn.TransformerDecoderLayer (its multihead_attn is our cross_attn)."""
        self.self_attn.load_from_torch(layer.self_attn)
        self.cross_attn.load_from_torch(layer.multihead_attn)
        copy_ffn_and_norms(self, layer, ("norm1", "norm2", "norm3"))

    # beyond the main line (§8.4)

    def step(self, x, cache: "KVCache"):
        """forward() for the newest position only (§8.4): x (b, 1, d_model) -> (b, 1, d_model).

        The earlier positions enter through their cached K, V (this position's join them), and
        the memory through its cached K, V; same sublayers and LayerNorm placement as forward.
        """

        def self_attend(h):  # h (b, 1, d_model): its k, v join the cache
            return self_attend_step(self.self_attn, h, cache)

        def cross_attend(h):
            return cross_attend_step(self.cross_attn, h, cache)

        x = residual(x, self_attend, self.norm1, self.norm_first)
        x = residual(x, cross_attend, self.norm2, self.norm_first)
        return residual(x, self.ffn, self.norm3, self.norm_first)


# -----------------------------------------------------------------------------
# §8.5, §9 the tiny Transformer: one config, the two stacks, the encoder-decoder


@dataclass(frozen=True)
class TransformerConfig:
    """Sizes and switches of a Transformer or an EncoderClassifier (as nanoGPT's GPTConfig).

    Frozen, so a built model's settings cannot drift; the defaults are §9's model.
    """

    src_vocab: int  # token ids read by the encoder
    tgt_vocab: int  # token ids of the decoder and the output layer (EncoderClassifier: classes)
    d_model: int = 64
    n_heads: int = 4  # h; each head is d_k = d_model / h wide (§5.2)
    d_ff: int = 256  # 4 d_model, the paper's ratio (§7.2)
    n_enc_layers: int = 1
    n_dec_layers: int = 1  # not used by EncoderClassifier, which has no decoder
    pe: str = "sinusoidal"  # one of PE_KINDS (§6.2, §6.5, §6.6's ablation; rope, alibi)
    emb_scale: float = 1.0  # the paper's sqrt(d_model) would drown the PE (§6.6)
    max_len: int = 256  # positions in the positional-encoding table
    norm_first: bool = False  # Post-LN (the paper's) or Pre-LN (§7.5)
    # the 1/sqrt(d_k) of every attention block (§4): None leaves it to MultiHeadAttention's
    # default (scale=True), which exercise 9 edits; True / False set it here
    scale: bool | None = None


def score_pe(config: TransformerConfig):
    """The attention blocks' `positions`: "rope" or "alibi" in every block, else None."""
    return config.pe if config.pe in SCORE_PE else None


class Encoder(nn.Module):
    """Embedding + PE, n_enc_layers encoder layers, and a final LayerNorm when norm_first.

    Pre-LN leaves the residual stream un-normalised, hence the final norm (§7.5, as GPT-2).
    Post-LN already ends on a LayerNorm, so we add none (nn.Transformer always adds one).
    """

    def __init__(self, config: TransformerConfig):
        super().__init__()
        c = config
        self.embed = Embedding(c.src_vocab, c.d_model, c.pe, c.max_len, c.emb_scale)
        self.layers = nn.ModuleList(
            EncoderLayer(c.d_model, c.n_heads, c.d_ff, c.norm_first, c.scale, score_pe(c))
            for _ in range(c.n_enc_layers)
        )
        self.norm = nn.LayerNorm(c.d_model) if c.norm_first else nn.Identity()

    def forward(self, tokens):
        """tokens (b, n) -> (b, n, d_model)."""
        x = self.embed(tokens)  # (b, n, d_model)
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)


class Decoder(nn.Module):
    """Embedding + PE, n_dec_layers decoder layers, final LayerNorm when norm_first (as Encoder)."""

    def __init__(self, config: TransformerConfig):
        super().__init__()
        c = config
        self.embed = Embedding(c.tgt_vocab, c.d_model, c.pe, c.max_len, c.emb_scale)
        self.layers = nn.ModuleList(
            DecoderLayer(c.d_model, c.n_heads, c.d_ff, c.norm_first, c.scale, score_pe(c))
            for _ in range(c.n_dec_layers)
        )
        self.norm = nn.LayerNorm(c.d_model) if c.norm_first else nn.Identity()

    def forward(self, tokens, memory):
        """tokens (b, n_tgt), memory (b, n_src, d_model) -> (b, n_tgt, d_model)."""
        x = self.embed(tokens)  # (b, n_tgt, d_model)
        for layer in self.layers:
            x = layer(x, memory)
        return self.norm(x)

    # beyond the main line (§8.4)

    def start_caches(self, memory) -> list["KVCache"]:
        """One empty KVCache per layer, holding the memory's cross-attention K, V (§8.4)."""
        return [KVCache(*memory_keys_values(layer.cross_attn, memory)) for layer in self.layers]

    def step(self, token, position, caches):
        """token (b, 1) at `position` (0 = BOS) -> (b, 1, d_model); each cache grows by a row."""
        x = self.embed(token, start=position)  # (b, 1, d_model)
        for layer, cache in zip(self.layers, caches, strict=True):
            x = layer.step(x, cache)
        return self.norm(x)


class Transformer(nn.Module):
    """The encoder-decoder of §8.5, small: source and target embeddings are not shared, and
    the output layer is not tied to them (the paper ties all three)."""

    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.config = config
        self.encoder = Encoder(config)
        self.decoder = Decoder(config)
        self.out = nn.Linear(config.d_model, config.tgt_vocab)

    def forward(self, src, tgt_in):
        """src (b, n_src), tgt_in (b, n_tgt) = [BOS, y_1, ...] -> logits (b, n_tgt, tgt_vocab).

        Teacher forcing: all target positions at once under the look-ahead mask (§8.4).
        """
        check_tokens(src=src, tgt_in=tgt_in)
        return self.out(self.decoder(tgt_in, self.encoder(src)))

    def attention_weights(self, src, tgt_in) -> dict[str, torch.Tensor]:
        """Per-head weights (b, h, n_q, n_k) of every attention block, keyed like
        "encoder.0.self_attn", "decoder.0.self_attn", "decoder.0.cross_attn" (§9.4)."""
        check_tokens(src=src, tgt_in=tgt_in)
        with torch.no_grad(), collect_attention(self) as weights:
            self.decoder(tgt_in, self.encoder(src))
        return weights

    @torch.no_grad()
    def greedy_decode(self, src, max_len, bos_id=1, use_cache=False):
        """Autoregressive greedy decoding from BOS (§8.4): the prefix grows by the argmax
        token, max_len steps, no early stop at EOS -> (b, max_len) tokens.

        Without the cache, step t runs the whole prefix (t + 1 positions) through the decoder
        again: 1 + 2 + ... + max_len positions in all. With use_cache=True, each decoder layer
        keeps its K, V (KVCache) and step t computes position t only: max_len positions in
        all, the same tokens.
        """
        check_decoding(src, max_len, self.decoder.embed)
        memory = self.encoder(src)  # (b, n_src, d_model), computed once
        tokens = src.new_full((src.shape[0], 1), bos_id)  # (b, 1)
        caches = self.decoder.start_caches(memory) if use_cache else None
        for t in range(max_len):
            if use_cache:  # the newest token only; the earlier positions live in the caches
                hidden = self.decoder.step(tokens[:, -1:], t, caches)  # (b, 1, d_model)
            else:  # the whole prefix again
                hidden = self.decoder(tokens, memory)  # (b, t + 1, d_model)
            logits = self.out(hidden[:, -1])  # (b, tgt_vocab)
            tokens = torch.cat([tokens, logits.argmax(-1, keepdim=True)], dim=1)  # (b, t + 2)
        return tokens[:, 1:]  # (b, max_len)


class EncoderClassifier(nn.Module):
    """An encoder-only stack with a per-position classifier head (§7.5 in-place reversal).

    config.src_vocab token ids in, config.tgt_vocab classes out at every position; the encoder
    has config.n_enc_layers layers (§7.5 trains six).
    """

    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.config = config
        self.encoder = Encoder(config)
        self.out = nn.Linear(config.d_model, config.tgt_vocab)

    def forward(self, tokens):
        """tokens (b, n) -> logits (b, n, tgt_vocab)."""
        check_tokens(tokens=tokens)
        return self.out(self.encoder(tokens))


# -----------------------------------------------------------------------------
# §9.1 the factory the experiments loop over (the GRU seq2seq baselines: gru_seq2seq.py)


def build_model(kind: str, *, src_vocab: int, tgt_vocab: int, **sizes) -> nn.Module:
    """ "gru" | "gru_attention" -> GRUSeq2Seq, "transformer" -> Transformer; sizes go through
    (for the Transformer, into its TransformerConfig)."""
    if kind == "gru":
        return GRUSeq2Seq(src_vocab, tgt_vocab, attention=False, **sizes)
    if kind == "gru_attention":
        return GRUSeq2Seq(src_vocab, tgt_vocab, attention=True, **sizes)
    if kind == "transformer":
        return Transformer(TransformerConfig(src_vocab, tgt_vocab, **sizes))
    raise ValueError(f"unknown model kind {kind!r}; expected one of {MODEL_KINDS}")


def count_parameters(model: nn.Module) -> int:
    """Trainable parameters (the sinusoidal PE is a buffer, so it does not count)."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


# -----------------------------------------------------------------------------
# beyond the lecture's main line: greedy decoding with a KV cache (§8.4 names it; §10.4)


class KVCache:
    """One decoder layer's keys and values, kept between greedy-decoding steps (§8.4).

    self_k, self_v (b, h, t, d_k): the masked self-attention's K, V of the t positions decoded
    so far; every step appends one row, so the cache grows linearly with the length (§10.4).
    memory_k, memory_v (b, h, n_src, d_k): the cross-attention's K, V of the encoder memory,
    computed once per source batch. Used by memory_keys_values, self_attend_step and
    cross_attend_step (below), DecoderLayer.step and Decoder.start_caches / step.
    """

    def __init__(self, memory_k: torch.Tensor, memory_v: torch.Tensor):
        b, h, _, d_k = memory_k.shape
        self.memory_k, self.memory_v = memory_k, memory_v  # (b, h, n_src, d_k)
        self.self_k = memory_k.new_empty(b, h, 0, d_k)  # (b, h, 0, d_k): nothing decoded yet
        self.self_v = memory_v.new_empty(b, h, 0, d_k)

    def append(self, k: torch.Tensor, v: torch.Tensor):
        """Add the newest position's k, v (b, h, 1, d_k); return every position's (b, h, t, d_k).

        torch.cat copies the cache each step, which keeps this short; serving systems write
        into a buffer preallocated for the longest sequence instead.
        """
        self.self_k = torch.cat([self.self_k, k], dim=2)  # (b, h, t, d_k)
        self.self_v = torch.cat([self.self_v, v], dim=2)  # (b, h, t, d_k)
        return self.self_k, self.self_v

    def __len__(self) -> int:
        return self.self_k.shape[2]  # positions cached so far


def memory_keys_values(attn: MultiHeadAttention, memory):
    """K = memory W^K, V = memory W^V, split into heads: computed once, then cached (§8.4).

    memory (b, n_src, d_model) -> k, v (b, h, n_src, d_k) each.
    """
    d_model = attn.d_model
    w_kv, b_kv = attn.in_proj.weight[d_model:], attn.in_proj.bias[d_model:]
    k, v = F.linear(memory, w_kv, b_kv).chunk(2, dim=-1)  # (b, n_src, d_model) each
    k, v = split_heads(k, attn.n_heads), split_heads(v, attn.n_heads)
    if attn.positions == "rope":  # the source's positions 0 .. n_src - 1, rotated once
        k = rope_rotate(k, torch.arange(k.shape[2], device=k.device))
    return k, v


def self_attend_step(attn: MultiHeadAttention, x, cache: KVCache):
    """Self-attention of the newest position x (b, 1, d_model) -> (b, 1, d_model).

    Its k, v join the cache; its query reads every cached position, itself included. Its
    position is the number of positions cached before it (RoPE rotates its q and k there).
    """
    q, k, v = (split_heads(p, attn.n_heads) for p in attn.in_proj(x).chunk(3, dim=-1))
    position = len(cache)  # q, k, v (b, h, 1, d_k)
    if attn.positions == "rope":
        at = torch.tensor([position], device=x.device)
        q, k = rope_rotate(q, at), rope_rotate(k, at)
    return _read(attn, q, *cache.append(k, v), position)


def cross_attend_step(attn: MultiHeadAttention, x, cache: KVCache):
    """Cross-attention of the newest position x (b, 1, d_model) on the cached memory K, V.

    Runs after the self-attention step, which has cached x's position: it sits at
    len(cache) - 1 (where RoPE rotates its q; the memory's keys were rotated once).
    """
    w_q, b_q = attn.in_proj.weight[: attn.d_model], attn.in_proj.bias[: attn.d_model]
    q = split_heads(F.linear(x, w_q, b_q), attn.n_heads)  # (b, h, 1, d_k)
    position = len(cache) - 1
    if attn.positions == "rope":
        q = rope_rotate(q, torch.tensor([position], device=x.device))
    return _read(attn, q, cache.memory_k, cache.memory_v, position)


def _read(attn: MultiHeadAttention, q, k, v, position=0):
    """One query row per sequence over t keys: q (b, h, 1, d_k), k, v (b, h, t, d_k)
    -> (b, 1, d_model). `position`: the query's (ALiBi's distances are counted from it).

    No look-ahead mask: every cached key is at or before the newest position (§8.1).
    """
    scale = None if attn.scale else 1.0  # None = SDPA's default 1/sqrt(d_k)
    bias = None
    if attn.positions == "alibi":
        bias = alibi_bias(attn.n_heads, 1, k.shape[2], position, q.device).to(q.dtype)
    context = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, scale=scale)
    return attn.out_proj(combine_heads(context))  # (b, 1, d_model)


# -----------------------------------------------------------------------------
# input checks (one call per public entry point) and helpers


def check_heads(d_model: int, n_heads: int, positions) -> None:
    """MultiHeadAttention's sizes: d_model splits into n_heads, a known positions scheme, and
    pairs to rotate for RoPE."""
    if d_model % n_heads != 0:
        raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")
    if positions not in (None, *SCORE_PE):
        raise ValueError(f"unknown positions {positions!r}; expected None or one of {SCORE_PE}")
    if positions == "rope" and (d_model // n_heads) % 2 != 0:
        raise ValueError(f"RoPE rotates pairs: d_k = {d_model // n_heads} must be even")


def copy_ffn_and_norms(ours: nn.Module, theirs: nn.Module, norms) -> None:
    """PyTorch's layers keep linear1/linear2 on the layer; ours keep them in .ffn."""
    with torch.no_grad():
        for name in ("linear1", "linear2"):
            getattr(ours.ffn, name).weight.copy_(getattr(theirs, name).weight)  # (out, in)
            getattr(ours.ffn, name).bias.copy_(getattr(theirs, name).bias)
        for name in norms:
            getattr(ours, name).weight.copy_(getattr(theirs, name).weight)
            getattr(ours, name).bias.copy_(getattr(theirs, name).bias)
