"""Decoding beyond greedy, on the models of tiny_transformer: beam search (§8.4 "或用第 16 讲的
beam search"; demo 06.6), the score it maximises (sequence_log_prob), and a hook that counts
the positions a decoder computes (count_positions; demo 06.2 reads it against §8.4's sums).

Greedy decoding and its KV cache stay on the models (Transformer.greedy_decode(use_cache=True),
DecoderLayer.step, KVCache in tiny_transformer): they are the lecture's §8.4 path, and the
cache needs the attention blocks' own projections. Everything here uses the models' public
interface only, so this module sits above tiny_transformer and nothing there imports it.
"""

import math
from contextlib import contextmanager

import torch
import torch.nn.functional as F
from torch import nn

from lecture17._torch_checks import check_decoding, check_tokens
from lecture17.gru_seq2seq import GRUSeq2Seq
from lecture17.tiny_transformer import Transformer


@contextmanager
def count_positions(module: nn.Module):
    """Count the positions that come out of `module` while the block runs (§8.4).

    A forward hook adds the length n of every (b, n, ...) output; the batch shares the count.
    E.g. on model.decoder.norm, which both decoding paths end with:
        with count_positions(model.decoder.norm) as counted:
            model.greedy_decode(src, 8)
        counted["positions"]  # 36 = 1 + 2 + ... + 8; 8 with use_cache=True
    """
    counted = {"positions": 0}

    def hook(_module, _inputs, output):
        counted["positions"] += output.shape[1]

    handle = module.register_forward_hook(hook)
    try:
        yield counted
    finally:
        handle.remove()


# -----------------------------------------------------------------------------
# beyond the lecture's main line: beam search (§8.4 "或用第 16 讲的 beam search")


@torch.no_grad()
def beam_search(model, src, width: int, max_len: int, bos_id: int = 1, use_cache: bool = True):
    """Beam search for every model here: src (b, n_src) -> tokens (b, max_len), scores (b,).

    Each source keeps `width` prefixes (beams); a step extends every beam by every token and
    keeps the `width` highest sums of log-probabilities. Like greedy_decode there is no early
    stop at EOS: every hypothesis has max_len tokens (the reversal task's known length L + 1),
    so the sums compare like with like and need no length penalty. scores: the returned
    sequence's sum of log-probabilities. width=1 is greedy decoding; a beam as wide as the
    search space (vocab ** (max_len - 1)) is exhaustive. A wider beam is not guaranteed a
    higher score: it may drop the prefix a narrower one would have completed best.
    use_cache (Transformer only): each decoder layer keeps its K, V (KVCache), reordered with
    the beams; without it every step runs the whole prefix again. Same tokens either way.
    """
    check_tokens(src=src)
    if not isinstance(width, int) or width < 1:
        raise ValueError(f"width must be a positive integer, got {width!r}")
    if isinstance(model, Transformer):
        check_decoding(src, max_len, model.decoder.embed)
        beams = _TransformerBeams(model, src, width, use_cache)
    elif isinstance(model, GRUSeq2Seq):
        beams = _GRUBeams(model, src, width)
    else:
        raise TypeError(f"beam_search needs a Transformer or a GRUSeq2Seq, got {type(model)}")
    b, k = src.shape[0], width
    tokens = src.new_full((b * k, 1), bos_id)  # (b*k, 1): beam j of source i is row i*k + j
    dtype = next(model.parameters()).dtype  # float64 models score in float64
    scores = torch.full((b, k), -math.inf, dtype=dtype, device=src.device)
    scores[:, 0] = 0.0  # one live beam at the start (the others would only repeat it)
    rows = torch.arange(b, device=src.device)[:, None] * k  # (b, 1)
    for t in range(max_len):
        log_probs = beams.step(tokens, t)  # (b*k, vocab)
        vocab = log_probs.shape[-1]
        candidates = scores[:, :, None] + log_probs.view(b, k, vocab)  # (b, k, vocab)
        scores, flat = candidates.view(b, k * vocab).topk(k, dim=1)  # (b, k), best first
        parent = (rows + torch.div(flat, vocab, rounding_mode="floor")).view(-1)  # (b*k,)
        tokens = torch.cat([tokens[parent], (flat % vocab).view(-1, 1)], dim=1)
        beams.reorder(parent)
    best = tokens.view(b, k, -1)[:, 0, 1:]  # (b, max_len): topk puts the best first
    return best, scores[:, 0]


class _TransformerBeams:
    """The Transformer's side of beam_search: the memory once per source, repeated per beam."""

    def __init__(self, model, src, width, use_cache):
        self.model, self.use_cache = model, use_cache
        self.memory = model.encoder(src).repeat_interleave(width, dim=0)  # (b*k, n_src, d)
        self.caches = model.decoder.start_caches(self.memory) if use_cache else None

    def step(self, tokens, t):
        if self.use_cache:  # the newest token only
            hidden = self.model.decoder.step(tokens[:, -1:], t, self.caches)
        else:  # the whole prefix again
            hidden = self.model.decoder(tokens, self.memory)
        return F.log_softmax(self.model.out(hidden[:, -1]), dim=-1)  # (b*k, vocab)

    def reorder(self, parent):
        for cache in self.caches or ():  # a beam's source never changes: the memory stays
            cache.self_k, cache.self_v = cache.self_k[parent], cache.self_v[parent]


class _GRUBeams:
    """GRUSeq2Seq's side of beam_search: its state and h~ follow the beams."""

    def __init__(self, model, src, width):
        self.model = model
        enc_states, keys, state = model.encode(src)
        self.enc_states = enc_states.repeat_interleave(width, dim=0)  # (b*k, n_src, hidden)
        self.keys = None if keys is None else keys.repeat_interleave(width, dim=0)
        self.state = state.repeat_interleave(width, dim=1)  # (1, b*k, hidden)
        self.attended = self.enc_states.new_zeros(self.enc_states.shape[0], 1, state.shape[2])

    def step(self, tokens, t):
        logits, self.state, self.attended = self.model.decode_step(
            tokens[:, -1:], self.state, self.attended, self.enc_states, self.keys
        )
        return F.log_softmax(logits[:, 0], dim=-1)  # (b*k, vocab)

    def reorder(self, parent):
        self.state, self.attended = self.state[:, parent], self.attended[parent]


@torch.no_grad()
def sequence_log_prob(model, src, tgt, bos_id: int = 1):
    """Sum of log-probabilities the model gives the whole target tgt (b, n) after src, teacher
    forced ([BOS, y_1, …, y_{n-1}] in): (b,). What beam_search maximises; it tells a search
    error (the right answer scores higher than what the search returned) from a model error."""
    check_tokens(src=src, tgt=tgt)
    tgt_in = torch.cat([tgt.new_full((tgt.shape[0], 1), bos_id), tgt[:, :-1]], dim=1)
    log_probs = F.log_softmax(model(src, tgt_in), dim=-1)  # (b, n, vocab)
    return log_probs.gather(-1, tgt[..., None])[..., 0].sum(dim=1)
