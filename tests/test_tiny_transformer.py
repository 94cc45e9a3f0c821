"""tiny_transformer against PyTorch's modules and attention_numpy (float64), its properties, and
greedy decoding with a key/value cache (§8.4).

Parameters are randomised (biases and LayerNorm weights too: PyTorch initialises them to 0
and 1, which would hide a bias bug) and copied with load_from_torch / the numpy converters.
"""

import contextlib
import copy
import dataclasses
import math

import pytest
import torch
from conftest import ATOL, ATOL_FLOAT32, requires_cuda
from torch import nn

from lecture17 import attention_numpy as an
from lecture17 import decoding
from lecture17 import tiny_transformer as tt
from lecture17.training import (
    BOS,
    VOCAB_SIZE,
    ReversalTask,
    TrainSettings,
    evaluation_set,
    lookup_batch,
    train,
)

torch.set_num_threads(1)  # §0.5: single-threaded, like the lecture

SEEDS = [0, 1, 2]
D_MODEL, N_HEADS, D_FF = 16, 4, 32


def assert_close(actual, expected, atol=ATOL):
    torch.testing.assert_close(actual, expected, rtol=0.0, atol=atol)


def randomise_(module, seed, scale=0.5):
    """Overwrite every parameter with uniform(-scale, scale) noise from a seeded generator."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_((torch.rand(p.shape, generator=gen, dtype=p.dtype) * 2 - 1) * scale)
    return module


def randn(seed, *shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def padding_mask(seed, b, n):
    """(b, n) True = real token; every row keeps its first token (a fully masked row is nan)."""
    lengths = torch.randint(1, n + 1, (b,), generator=torch.Generator().manual_seed(seed))
    return torch.arange(n) < lengths[:, None]


def torch_mha(seed):
    mha = nn.MultiheadAttention(D_MODEL, N_HEADS, batch_first=True, dtype=torch.float64)
    return randomise_(mha, seed).eval()


def our_mha(theirs, scale=True):
    ours = tt.MultiHeadAttention(D_MODEL, N_HEADS, scale=scale).double()
    ours.load_from_torch(theirs)
    return ours


def torch_layer(kind, seed, norm_first):
    cls = nn.TransformerEncoderLayer if kind == "encoder" else nn.TransformerDecoderLayer
    layer = cls(
        D_MODEL,
        N_HEADS,
        D_FF,
        dropout=0.0,
        batch_first=True,
        norm_first=norm_first,
        dtype=torch.float64,
    )
    return randomise_(layer, seed).eval()


def our_layer(kind, theirs, norm_first):
    cls = tt.EncoderLayer if kind == "encoder" else tt.DecoderLayer
    ours = cls(D_MODEL, N_HEADS, D_FF, norm_first=norm_first).double()
    ours.load_from_torch(theirs)
    return ours


# -----------------------------------------------------------------------------
# MultiHeadAttention vs nn.MultiheadAttention (§5.4, demo 02.4)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("need_weights", [False, True])
def test_self_attention_matches_nn_multihead_attention(seed, need_weights):
    theirs = torch_mha(seed)
    ours = our_mha(theirs)
    x = randn(seed, 3, 7, D_MODEL)
    keep = padding_mask(seed, 3, 7)  # our convention: True = may attend
    out, weights = ours(x, x, x, mask=keep[:, None, None, :], need_weights=need_weights)
    # nn.MultiheadAttention's boolean mask is the opposite: True = ignore (§12 pitfall 7)
    expected, expected_weights = theirs(x, x, x, key_padding_mask=~keep, average_attn_weights=False)
    assert out.shape == (3, 7, D_MODEL)
    assert_close(out, expected)
    if need_weights:
        assert weights.shape == (3, N_HEADS, 7, 7)
        assert_close(weights, expected_weights)
    else:
        assert weights is None


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("need_weights", [False, True])
def test_cross_attention_matches_nn_multihead_attention(seed, need_weights):
    """Q from another sequence (demo 02.4's cross-attention case); K and V from memory."""
    theirs = torch_mha(seed)
    ours = our_mha(theirs)
    x, memory = randn(seed, 2, 5, D_MODEL), randn(seed + 100, 2, 9, D_MODEL)
    out, weights = ours(x, memory, memory, need_weights=need_weights)
    expected, expected_weights = theirs(x, memory, memory, average_attn_weights=False)
    assert_close(out, expected)
    if need_weights:
        assert_close(weights, expected_weights)


def test_distinct_key_and_value_inputs_match_torch():
    theirs = torch_mha(0)
    ours = our_mha(theirs)
    q, k, v = randn(1, 2, 4, D_MODEL), randn(2, 2, 6, D_MODEL), randn(3, 2, 6, D_MODEL)
    assert_close(ours(q, k, v)[0], theirs(q, k, v)[0])


@pytest.mark.parametrize("need_weights", [False, True])
def test_causal_attention_matches_torch_look_ahead_mask(need_weights):
    theirs = torch_mha(3)
    ours = our_mha(theirs)
    x = randn(3, 2, 6, D_MODEL)
    future = torch.ones(6, 6, dtype=torch.bool).triu(1)  # PyTorch: True = ignore
    out, weights = ours(x, x, x, is_causal=True, need_weights=need_weights)
    assert_close(out, theirs(x, x, x, attn_mask=future)[0])
    if need_weights:  # §8.1: weights above the diagonal are exactly 0
        assert torch.all(weights[..., future] == 0)


@pytest.mark.parametrize("scale", [True, False])
@pytest.mark.parametrize("seed", SEEDS)
def test_fast_and_explicit_paths_agree(scale, seed):
    """SDPA (need_weights=False) and the written-out softmax compute the same thing."""
    ours = randomise_(tt.MultiHeadAttention(D_MODEL, N_HEADS, scale=scale).double(), seed)
    x = randn(seed, 3, 6, D_MODEL)
    keep = padding_mask(seed, 3, 6)[:, None, None, :] & tt.causal_mask(6, 6)
    for kwargs in ({}, {"mask": keep}, {"is_causal": True}, {"mask": keep, "is_causal": True}):
        fast, _ = ours(x, x, x, need_weights=False, **kwargs)
        explicit, weights = ours(x, x, x, need_weights=True, **kwargs)
        assert_close(fast, explicit)
        assert_close(weights.sum(-1), torch.ones(3, N_HEADS, 6, dtype=torch.float64))


@pytest.mark.parametrize("need_weights", [False, True])
def test_scale_false_divides_by_nothing(need_weights):
    """Exercise 9: scale=False must drop 1/sqrt(d_k) on every path; checked by hand."""
    ours = randomise_(tt.MultiHeadAttention(D_MODEL, N_HEADS, scale=False).double(), 4)
    x = randn(4, 2, 5, D_MODEL)
    d_k = D_MODEL // N_HEADS
    q, k, v = (
        x @ w.T + b
        for w, b in zip(ours.in_proj.weight.chunk(3), ours.in_proj.bias.chunk(3), strict=True)
    )
    split = lambda t: t.view(2, 5, N_HEADS, d_k).transpose(1, 2)  # noqa: E731
    weights = (split(q) @ split(k).transpose(-2, -1)).softmax(-1)  # no / sqrt(d_k)
    context = (weights @ split(v)).transpose(1, 2).reshape(2, 5, D_MODEL)
    expected = context @ ours.out_proj.weight.T + ours.out_proj.bias
    out, _ = ours(x, x, x, need_weights=need_weights)
    assert_close(out, expected)
    ours.scale = True  # and the flag matters: the scaled output is different
    assert (ours(x, x, x)[0] - expected).abs().max() > 1e-3


def test_integer_mask_means_the_same_as_boolean():
    ours = randomise_(tt.MultiHeadAttention(D_MODEL, N_HEADS).double(), 5)
    x = randn(5, 2, 6, D_MODEL)
    keep = padding_mask(5, 2, 6)[:, None, None, :]
    assert_close(ours(x, x, x, mask=keep.long())[0], ours(x, x, x, mask=keep)[0])


def test_inverted_mask_puts_all_weight_on_padding():
    """§5.4: the mask passed with the wrong convention -> every query reads only the pads."""
    ours = randomise_(tt.MultiHeadAttention(D_MODEL, N_HEADS).double(), 6)
    x = randn(6, 1, 6, D_MODEL)
    keep = torch.tensor([[True] * 4 + [False] * 2])  # two padding positions at the end
    _, weights = ours(x, x, x, mask=~keep[:, None, None, :], need_weights=True)
    assert_close(weights[..., 4:].sum(-1), torch.ones(1, N_HEADS, 6, dtype=torch.float64))


# -----------------------------------------------------------------------------
# layers vs nn.TransformerEncoderLayer / nn.TransformerDecoderLayer (§7.4, §8.2)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_matches_torch(seed, norm_first):
    theirs = torch_layer("encoder", seed, norm_first)
    ours = our_layer("encoder", theirs, norm_first)
    x = randn(seed, 3, 7, D_MODEL)
    keep = padding_mask(seed, 3, 7)
    out = ours(x, mask=keep[:, None, None, :])
    assert_close(out, theirs(x, src_key_padding_mask=~keep))
    with tt.collect_attention(ours) as weights:  # the written-out path, the same output
        assert_close(ours(x, mask=keep[:, None, None, :]), out)
    assert weights["self_attn"].shape == (3, N_HEADS, 7, 7)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_matches_torch(seed, norm_first):
    theirs = torch_layer("decoder", seed, norm_first)
    ours = our_layer("decoder", theirs, norm_first)
    y, memory = randn(seed, 2, 6, D_MODEL), randn(seed + 100, 2, 8, D_MODEL)
    keep_src = padding_mask(seed, 2, 8)
    out = ours(y, memory, memory_mask=keep_src[:, None, None, :])
    future = nn.Transformer.generate_square_subsequent_mask(6, dtype=torch.float64)  # -inf above
    expected = theirs(
        y, memory, tgt_mask=future, memory_key_padding_mask=~keep_src, tgt_is_causal=True
    )
    assert_close(out, expected)


def test_decoder_self_mask_is_anded_with_look_ahead():
    """§8.3: decoder self-attention uses look-ahead AND padding."""
    theirs = torch_layer("decoder", 7, False)
    ours = our_layer("decoder", theirs, False)
    y, memory = randn(7, 2, 6, D_MODEL), randn(8, 2, 4, D_MODEL)
    keep = padding_mask(7, 2, 6)
    out = ours(y, memory, self_mask=keep[:, None, None, :])
    future = torch.ones(6, 6, dtype=torch.bool).triu(1)
    assert_close(out, theirs(y, memory, tgt_mask=future, tgt_key_padding_mask=~keep))


# -----------------------------------------------------------------------------
# against attention_numpy (demo 02.4's third column, demos 04.1 and 04.5)


@pytest.mark.parametrize("seed", SEEDS)
def test_mha_matches_numpy(seed):
    theirs = torch_mha(seed)
    ours = our_mha(theirs)
    params = an.mha_params_from_torch(theirs)
    x, memory = randn(seed, 2, 5, D_MODEL), randn(seed + 100, 2, 7, D_MODEL)
    keep = padding_mask(seed, 2, 7)
    out, weights = ours(x, memory, memory, mask=keep[:, None, None, :], need_weights=True)
    expected, expected_weights = an.multi_head_attention(
        x.numpy(), memory.numpy(), params, N_HEADS, mask=keep[:, None, :].numpy()
    )
    assert_close(out, torch.from_numpy(expected))
    assert_close(weights, torch.from_numpy(expected_weights))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("norm_first", [False, True])
def test_layers_match_numpy(seed, norm_first):
    enc = torch_layer("encoder", seed, norm_first)
    dec = torch_layer("decoder", seed + 10, norm_first)
    x, y = randn(seed, 2, 7, D_MODEL), randn(seed + 1, 2, 5, D_MODEL)
    memory = our_layer("encoder", enc, norm_first)(x)
    expected_memory = an.encoder_layer_forward(
        x.numpy(), an.encoder_layer_params_from_torch(enc), N_HEADS, norm_first=norm_first
    )
    assert_close(memory, torch.from_numpy(expected_memory))
    out = our_layer("decoder", dec, norm_first)(y, memory)
    expected = an.decoder_layer_forward(
        y.numpy(),
        expected_memory,
        an.decoder_layer_params_from_torch(dec),
        N_HEADS,
        self_mask=an.create_look_ahead_mask(5),
        norm_first=norm_first,
    )
    assert_close(out, torch.from_numpy(expected))


def test_sinusoidal_encoding_matches_numpy():
    pe = tt.sinusoidal_encoding(50, D_MODEL, dtype=torch.float64)
    assert_close(pe, torch.from_numpy(an.positional_encoding(50, D_MODEL)))
    # §6.2: every position has norm sqrt(d_model / 2)
    assert_close(pe.norm(dim=1), torch.full((50,), math.sqrt(D_MODEL / 2), dtype=torch.float64))


# -----------------------------------------------------------------------------
# §4.4 the look-up model


@pytest.mark.parametrize("scale", [True, False])
def test_lookup_attention_reads_out_the_weighted_one_hot_value(scale):
    torch.manual_seed(0)
    model = tt.LookupAttention(8, 4, scale=scale).double()
    query, keys, values, _ = lookup_batch(torch.Generator().manual_seed(0), 3, 5, 8)
    query, keys = query.double(), keys.double()
    scores = (keys @ model.W_k) @ (query @ model.W_q)[:, :, None]  # (b, n, 1)
    weights = (scores[:, :, 0] / (2.0 if scale else 1.0)).softmax(-1)  # sqrt(d_k) = 2
    expected = torch.zeros(3, 5, dtype=torch.float64)
    for b in range(3):
        for j in range(5):
            expected[b, values[b, j]] += weights[b, j]
    torch.testing.assert_close(model(query, keys, values), expected, rtol=0, atol=ATOL)


def test_lookup_projections_have_unit_variance_outputs():
    """§4.4: W^Q, W^K ~ N(0, 1/d_model), so q = x W^Q has components of variance ~1."""
    torch.manual_seed(0)
    model = tt.LookupAttention(256, 256)
    x = torch.randn(2000, 256, generator=torch.Generator().manual_seed(1))
    q = x @ model.W_q.detach()
    assert abs(q.var().item() - 1.0) < 0.1


# -----------------------------------------------------------------------------
# models: teacher forcing = step by step, causality, attention weights


def tiny_transformer(seed, norm_first=False, pe="sinusoidal", **kwargs):
    torch.manual_seed(seed)
    config = tt.TransformerConfig(
        13,
        13,
        d_model=D_MODEL,
        n_heads=N_HEADS,
        d_ff=D_FF,
        n_enc_layers=2,
        n_dec_layers=2,
        pe=pe,
        norm_first=norm_first,
        max_len=32,
        **kwargs,
    )
    return tt.Transformer(config).double()


def random_src(seed, b=3, n=6):
    return torch.randint(3, 13, (b, n), generator=torch.Generator().manual_seed(seed))


def decoded_prefix(tokens):
    """[BOS, y_1, ..., y_{T-1}]: the decoder's inputs while greedy decoding produced tokens."""
    return torch.cat([torch.full((tokens.shape[0], 1), BOS), tokens[:, :-1]], dim=1)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("norm_first", [False, True])
def test_greedy_decoding_equals_parallel_pass(seed, norm_first):
    """§8.4: under the look-ahead mask, the logits of each prefix are the parallel pass's."""
    model = tiny_transformer(seed, norm_first)
    src = random_src(seed)
    tokens = model.greedy_decode(src, 7)
    assert tokens.shape == (3, 7)
    tgt_in = decoded_prefix(tokens)
    with torch.no_grad():
        parallel = model(src, tgt_in)  # (b, 7, vocab)
        memory = model.encoder(src)
        for t in range(7):
            step = model.out(model.decoder(tgt_in[:, : t + 1], memory)[:, -1])
            assert_close(step, parallel[:, t])
    assert torch.equal(parallel.argmax(-1), tokens)


@pytest.mark.parametrize("seed", SEEDS)
def test_decoder_is_causal(seed):
    """Changing target tokens after position t leaves the logits at 0..t unchanged (§8.1)."""
    model = tiny_transformer(seed)
    src, tgt = random_src(seed), random_src(seed + 1, n=7)
    changed = tgt.clone()
    changed[:, 4:] = (changed[:, 4:] + 1 - 3) % 10 + 3
    with torch.no_grad():
        a, b = model(src, tgt), model(src, changed)
    assert_close(a[:, :4], b[:, :4])
    assert (a[:, 4:] - b[:, 4:]).abs().max() > 1e-6


def test_transformer_attention_weights():
    model = tiny_transformer(0)
    src, tgt = random_src(0, b=2, n=5), random_src(1, b=2, n=4)
    weights = model.attention_weights(src, tgt)
    assert sorted(weights) == sorted(
        [f"encoder.{i}.self_attn" for i in (0, 1)]
        + [f"decoder.{i}.{kind}" for i in (0, 1) for kind in ("self_attn", "cross_attn")]
    )
    assert weights["encoder.1.self_attn"].shape == (2, N_HEADS, 5, 5)
    assert weights["decoder.0.self_attn"].shape == (2, N_HEADS, 4, 4)
    assert weights["decoder.1.cross_attn"].shape == (2, N_HEADS, 4, 5)
    for w in weights.values():
        assert_close(w.sum(-1), torch.ones(w.shape[:-1], dtype=torch.float64))
    assert torch.all(weights["decoder.1.self_attn"][..., torch.ones(4, 4).triu(1).bool()] == 0)


LUONG_READINGS = [  # (attention, score, input_feeding): no attention, and Luong's four readings
    (False, "general", False),
    (True, "general", False),
    (True, "dot", False),
    (True, "general", True),
    (True, "dot", True),
]


@pytest.mark.parametrize("attention, score, input_feeding", LUONG_READINGS)
@pytest.mark.parametrize("seed", SEEDS)
def test_gru_greedy_decoding_equals_parallel_pass(attention, score, input_feeding, seed):
    torch.manual_seed(seed)
    model = tt.GRUSeq2Seq(
        13, 13, emb_dim=8, hidden=12, attention=attention, score=score, input_feeding=input_feeding
    ).double()
    src = random_src(seed)
    tokens = model.greedy_decode(src, 7)
    assert tokens.shape == (3, 7)
    with torch.no_grad():
        logits = model(src, decoded_prefix(tokens))
    assert logits.shape == (3, 7, 13)
    assert torch.equal(logits.argmax(-1), tokens)


def test_gru_attention_weights():
    torch.manual_seed(0)
    model = tt.GRUSeq2Seq(13, 13, emb_dim=8, hidden=12, attention=True).double()
    src, tgt = random_src(0, b=2, n=5), random_src(1, b=2, n=6)
    weights = model.attention_weights(src, tgt)["cross_attn"]
    assert weights.shape == (2, 6, 5)
    assert_close(weights.sum(-1), torch.ones(2, 6, dtype=torch.float64))
    assert tt.GRUSeq2Seq(13, 13, emb_dim=8, hidden=12).attention_weights(src, tgt) == {}


def test_gru_attention_is_luongs_general_score_written_out():
    """Luong et al. (2015) eq. 7 and 5: score(h_t, h_s) = h_t^T W_a h_s, a_t = softmax over the
    source, c_t = Σ_s a_ts h_s (the encoder states themselves, not W_a h_s), h~_t = tanh(W_c
    [c_t; h_t]) — the module's attend against the formula, in float64."""
    torch.manual_seed(0)
    model = tt.GRUSeq2Seq(13, 13, emb_dim=8, hidden=12, attention=True).double()
    dec = torch.randn(2, 6, 12, dtype=torch.float64)  # (b, n_tgt, hidden)
    enc = torch.randn(2, 5, 12, dtype=torch.float64)  # (b, n_src, hidden)
    with torch.no_grad():
        keys = model.score(enc)  # (b, n_src, hidden): W_a h_s
        out, weights = model.attend(dec, enc, keys)
        alpha = torch.softmax(torch.einsum("btd,bsd->bts", dec, keys), dim=-1)  # over the source
        context = torch.einsum("bts,bsd->btd", alpha, enc)  # the states, not W_a h_s
        expected = torch.tanh(model.combine(torch.cat([context, dec], dim=-1)))
    assert_close(weights, alpha)
    assert_close(out, expected)


def test_luong_readings_differ_where_the_paper_says():
    """ "dot" has no W_a; input feeding widens the decoder's input by h~ (Luong §3.3) and
    changes what the decoder computes (the teacher-forced logits differ from no feeding's)."""
    kw = dict(emb_dim=8, hidden=12, attention=True)
    general, dot = tt.GRUSeq2Seq(13, 13, **kw), tt.GRUSeq2Seq(13, 13, score="dot", **kw)
    assert "score.weight" in dict(general.named_parameters())
    assert "score.weight" not in dict(dot.named_parameters())
    fed = tt.GRUSeq2Seq(13, 13, input_feeding=True, **kw).double()
    assert fed.decoder.input_size == 8 + 12 and general.decoder.input_size == 8
    src, tgt = random_src(0, b=2, n=5), random_src(1, b=2, n=6)
    with torch.no_grad():
        weights = fed.attention_weights(src, tgt)["cross_attn"]
        # the first step sees h~_0 = 0: zeroing the h~ columns of W_ih changes no logit there
        # but every later one
        logits = fed(src, tgt)
        fed.decoder.weight_ih_l0[:, 8:] = 0
        blind = fed(src, tgt)
    assert weights.shape == (2, 6, 5)
    assert_close(weights.sum(-1), torch.ones(2, 6, dtype=torch.float64))
    assert torch.equal(logits[:, 0], blind[:, 0]) and not torch.allclose(
        logits[:, 1:], blind[:, 1:]
    )


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"attention": True, "score": "concat"}, "unknown score 'concat'"),
        ({"attention": False, "score": "dot"}, "attention=True"),
        ({"attention": False, "input_feeding": True}, "attention=True"),
    ],
)
def test_a_luong_reading_without_attention_or_unknown_is_refused(kw, match):
    with pytest.raises(ValueError, match=match):
        tt.GRUSeq2Seq(13, 13, **kw)


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_classifier_shape_and_final_norm(norm_first):
    config = tt.TransformerConfig(
        13, 13, n_enc_layers=2, d_model=D_MODEL, n_heads=N_HEADS, d_ff=D_FF, norm_first=norm_first
    )
    model = tt.EncoderClassifier(config)
    assert model(random_src(0)).shape == (3, 6, 13)
    # §7.5: Pre-LN adds one LayerNorm after the last layer; Post-LN already ends on one
    assert isinstance(model.encoder.norm, nn.LayerNorm if norm_first else nn.Identity)


def test_collect_attention_keeps_the_weights_only_inside_the_block():
    """The switch (§9.4): the weights of the written-out path, in build order, then off."""
    model = tiny_transformer(1)
    src, tgt = random_src(2, b=2, n=5), random_src(3, b=2, n=4)
    with torch.no_grad():
        plain = model(src, tgt)
        with tt.collect_attention(model) as weights:
            kept = model(src, tgt)
        assert_close(kept, plain)  # the same model, only the weights are kept
        memory = model.encoder(src)
    assert list(weights) == list(model.attention_weights(src, tgt))  # same keys, same order
    layer = model.decoder.layers[1]
    x = model.decoder.layers[0](model.decoder.embed(tgt), memory)
    _, expected = layer.cross_attn(
        layer.norm1(x + layer.self_attn(x, x, x, is_causal=True)[0]),
        memory,
        memory,
        need_weights=True,
    )
    assert_close(weights["decoder.1.cross_attn"], expected)
    blocks = [m for m in model.modules() if isinstance(m, tt.MultiHeadAttention)]
    assert not any(b.keep_weights or b.last_weights is not None for b in blocks)
    x = randn(0, 2, 4, D_MODEL)
    assert blocks[0](x, x, x)[1] is None  # back on the fused path


# -----------------------------------------------------------------------------
# the config (as nanoGPT's GPTConfig) and the parameters it builds


def test_config_is_frozen_and_kept_by_the_model():
    config = tt.TransformerConfig(13, 13)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.d_model = 32
    assert tt.Transformer(config).config is config
    assert tt.build_model("transformer", src_vocab=13, tgt_vocab=13).config == config


def layer_keys(prefix, blocks, norms, d=8, d_ff=12):
    """state_dict keys of one layer of ours, in order, with their shapes."""
    keys = []
    for block in blocks:
        keys += [
            (f"{prefix}.{block}.in_proj.weight", (3 * d, d)),
            (f"{prefix}.{block}.in_proj.bias", (3 * d,)),
            (f"{prefix}.{block}.out_proj.weight", (d, d)),
            (f"{prefix}.{block}.out_proj.bias", (d,)),
        ]
    keys += [
        (f"{prefix}.ffn.linear1.weight", (d_ff, d)),
        (f"{prefix}.ffn.linear1.bias", (d_ff,)),
        (f"{prefix}.ffn.linear2.weight", (d, d_ff)),
        (f"{prefix}.ffn.linear2.bias", (d,)),
    ]
    for norm in norms:
        keys += [(f"{prefix}.{norm}.weight", (d,)), (f"{prefix}.{norm}.bias", (d,))]
    return keys


# state_dict keys and shapes of TransformerConfig(7, 5, d_model=8, n_heads=2, d_ff=12,
# max_len=10), as the code before the config built them: checkpoints keep loading
POST_LN_KEYS = [
    ("encoder.embed.token.weight", (7, 8)),
    *layer_keys("encoder.layers.0", ["self_attn"], ["norm1", "norm2"]),
    ("decoder.embed.token.weight", (5, 8)),
    *layer_keys("decoder.layers.0", ["self_attn", "cross_attn"], ["norm1", "norm2", "norm3"]),
    ("out.weight", (5, 8)),
    ("out.bias", (5,)),
]


def shapes(model):
    return [(key, tuple(value.shape)) for key, value in model.state_dict().items()]


def test_state_dict_keys_and_shapes_are_pinned():
    config = tt.TransformerConfig(7, 5, d_model=8, n_heads=2, d_ff=12, max_len=10)
    assert shapes(tt.Transformer(config)) == POST_LN_KEYS
    # Pre-LN adds a final LayerNorm per stack (§7.5); a learned PE is a parameter (§6.5)
    pre_ln = shapes(tt.Transformer(dataclasses.replace(config, norm_first=True, pe="learned")))
    assert set(pre_ln) - set(POST_LN_KEYS) == {
        ("encoder.embed.pe", (10, 8)),
        ("decoder.embed.pe", (10, 8)),
        ("encoder.norm.weight", (8,)),
        ("encoder.norm.bias", (8,)),
        ("decoder.norm.weight", (8,)),
        ("decoder.norm.bias", (8,)),
    }
    assert set(POST_LN_KEYS) <= set(pre_ln)
    classifier = tt.EncoderClassifier(dataclasses.replace(config, n_enc_layers=2))
    assert shapes(classifier) == [
        ("encoder.embed.token.weight", (7, 8)),
        *layer_keys("encoder.layers.0", ["self_attn"], ["norm1", "norm2"]),
        *layer_keys("encoder.layers.1", ["self_attn"], ["norm1", "norm2"]),
        ("out.weight", (5, 8)),
        ("out.bias", (5,)),
    ]


# -----------------------------------------------------------------------------
# embeddings and positional encodings (§6)


def test_positional_encoding_kinds():
    learned = tt.Embedding(13, D_MODEL, pe="learned", max_len=20)
    assert learned.pe.shape == (20, D_MODEL) and learned.pe.requires_grad
    sinusoidal = tt.Embedding(13, D_MODEL, pe="sinusoidal", max_len=20)
    assert "pe" not in dict(sinusoidal.named_parameters())
    tokens = random_src(0)
    none = tt.Embedding(13, D_MODEL, pe="none")
    assert torch.equal(none(tokens), none.token(tokens))  # nothing added: permutation-blind
    expected = sinusoidal.token(tokens) + sinusoidal.pe[:6]  # (b, n, d) + (n, d)
    assert torch.equal(sinusoidal(tokens), expected)


def test_emb_scale_multiplies_the_token_embedding_only():
    """§6.6: emb_scale = sqrt(d_model) scales the token part; the PE keeps its norm."""
    torch.manual_seed(0)
    scaled = tt.Embedding(13, D_MODEL, emb_scale=math.sqrt(D_MODEL), max_len=20)
    tokens = random_src(0)
    expected = scaled.token(tokens) * math.sqrt(D_MODEL) + scaled.pe[:6]
    torch.testing.assert_close(scaled(tokens), expected)


# -----------------------------------------------------------------------------
# parameter counts (§5.2, §9.1)


def test_mha_parameter_count_is_independent_of_heads():
    """§5.2: 4 d^2 + 4 d for any number of heads (1,050,624 at d = 512)."""
    for n_heads in (1, 8, 16):
        assert tt.count_parameters(tt.MultiHeadAttention(512, n_heads)) == 1_050_624


def test_section9_parameter_counts():
    """§9.1: the Transformer has the fewest parameters of the three (sizes: build_model's)."""
    d, d_ff, h, vocab, emb = 64, 256, 128, 13, 64
    mha, ffn, ln = 4 * d * d + 4 * d, 2 * d * d_ff + d_ff + d, 2 * d
    transformer = (
        (mha + ffn + 2 * ln) + (2 * mha + ffn + 3 * ln) + 2 * vocab * d + d * vocab + vocab
    )
    gru_layer = 3 * (emb * h + h * h + 2 * h)
    gru = 2 * vocab * emb + 2 * gru_layer + h * vocab + vocab
    gru_attention = gru + h * h + (2 * h * h + h)
    counts = {
        kind: tt.count_parameters(tt.build_model(kind, src_vocab=vocab, tgt_vocab=vocab))
        for kind in tt.MODEL_KINDS
    }
    assert counts == {"transformer": transformer, "gru": gru, "gru_attention": gru_attention}
    assert counts["transformer"] == 119_245
    assert counts["transformer"] < counts["gru"] < counts["gru_attention"]


# -----------------------------------------------------------------------------
# bad settings say what was expected


def test_bad_settings_raise_clear_errors():
    with pytest.raises(ValueError, match="unknown positional encoding 'rotary'"):
        tt.Transformer(tt.TransformerConfig(13, 13, pe="rotary"))
    with pytest.raises(ValueError, match=r"d_model \(64\) must be divisible by n_heads \(5\)"):
        tt.Transformer(tt.TransformerConfig(13, 13, d_model=64, n_heads=5))
    with pytest.raises(ValueError, match="unknown model kind 'lstm'"):
        tt.build_model("lstm", src_vocab=13, tgt_vocab=13)
    with pytest.raises(ValueError, match="even d_model"):
        tt.sinusoidal_encoding(10, 7)
    model = tt.Transformer(tt.TransformerConfig(13, 13, max_len=8))
    with pytest.raises(ValueError, match=r"non-empty .* got shape \(0, 5\)"):
        model(torch.zeros(0, 5, dtype=torch.long), torch.zeros(0, 3, dtype=torch.long))
    with pytest.raises(ValueError, match="non-empty"):
        tt.GRUSeq2Seq(13, 13).greedy_decode(torch.zeros(0, 5, dtype=torch.long), 4)


@pytest.mark.parametrize("pe", ["sinusoidal", "learned"])
def test_sequence_longer_than_the_pe_table_is_refused(pe):
    model = tt.Transformer(tt.TransformerConfig(13, 13, pe=pe, max_len=8))
    src = torch.full((2, 9), 3)
    with pytest.raises(ValueError, match="sequence length 9 exceeds max_len 8"):
        model(src, src[:, :4])
    model(src[:, :8], src[:, :8])  # the longest allowed


# -----------------------------------------------------------------------------
# greedy decoding with a key/value cache (§8.4): same tokens, same logits, fewer positions
#
# Without the cache, step t runs the whole prefix through the decoder again (1 + 2 + ... + L
# positions for L tokens); with it, each decoder layer keeps its K, V and a step computes the
# newest position only (L positions). Both must decode the same tokens, for random models and
# for briefly trained ones, Post-LN and Pre-LN. (Demo 06.2 is tested in
# tests/experiments/test_beyond.py.)

# The two paths do the same arithmetic on matrices of different heights, so only the rounding
# differs: ~1e-16 relative at float64, ~1e-7 at float32 (logits of order 1-10).
DECODING_ATOL = {torch.float64: ATOL, torch.float32: ATOL_FLOAT32}
LENGTHS = [1, 5, 12]


def random_model(seed, norm_first, dtype=torch.float64, **sizes):
    torch.manual_seed(seed)
    sizes = dict(d_model=16, n_heads=4, d_ff=32, n_enc_layers=2, n_dec_layers=2) | sizes
    config = tt.TransformerConfig(
        VOCAB_SIZE, VOCAB_SIZE, norm_first=norm_first, max_len=32, **sizes
    )
    model = tt.Transformer(config)
    return model.to(dtype).eval()


def random_source(seed, b=3, n=7):
    return torch.randint(3, VOCAB_SIZE, (b, n), generator=torch.Generator().manual_seed(seed))


def decoder_inputs(tokens):
    """[BOS, y_1, ..., y_{L-1}]: what the decoder read while greedy decoding gave tokens."""
    return torch.cat([torch.full((tokens.shape[0], 1), BOS), tokens[:, :-1]], dim=1)


@torch.no_grad()
def cached_logits(model, src, tgt_in):
    """Step through tgt_in with the caches, as greedy_decode(use_cache=True) does: (b, n, vocab)."""
    caches = model.decoder.start_caches(model.encoder(src))
    steps = [
        model.out(model.decoder.step(tgt_in[:, t : t + 1], t, caches)[:, -1])  # (b, vocab)
        for t in range(tgt_in.shape[1])
    ]
    return torch.stack(steps, dim=1)


def assert_same_decoding(model, src, length):
    """Same tokens both ways, and the cached logits are the parallel pass's (§8.4)."""
    uncached = model.greedy_decode(src, length, bos_id=BOS)
    cached = model.greedy_decode(src, length, bos_id=BOS, use_cache=True)
    assert cached.shape == (src.shape[0], length)
    assert torch.equal(cached, uncached)
    tgt_in = decoder_inputs(cached)
    with torch.no_grad():
        parallel = model(src, tgt_in)  # (b, L, vocab): the logits every step of either path saw
    atol = DECODING_ATOL[parallel.dtype]
    torch.testing.assert_close(cached_logits(model, src, tgt_in), parallel, rtol=0.0, atol=atol)
    assert torch.equal(parallel.argmax(-1), cached)


# -----------------------------------------------------------------------------
# same tokens, same logits


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("length", LENGTHS)
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("seed", SEEDS)
def test_cached_decoding_equals_uncached_random_model(seed, norm_first, length, dtype):
    assert_same_decoding(random_model(seed, norm_first, dtype), random_source(seed), length)


@pytest.mark.parametrize("pe", ["learned", "none", "rope", "alibi"])
@pytest.mark.parametrize("scale", [True, False])
def test_cached_decoding_other_settings(pe, scale):
    """Learned, no, or in-the-scores (§6.5) positions, no 1/sqrt(d_k), one layer, one head."""
    model = random_model(0, False, pe=pe, scale=scale, n_dec_layers=1, n_heads=1)
    assert_same_decoding(model, random_source(1, b=2, n=4), 9)


@pytest.fixture(scope="module", params=[False, True], ids=["post_ln", "pre_ln"])
def trained(request):
    """A model trained briefly on §9.1's reversal task (L = 6): about half its tokens right."""
    task = ReversalTask(length=6)

    def make_model():
        return tt.Transformer(
            tt.TransformerConfig(
                VOCAB_SIZE, VOCAB_SIZE, d_model=32, n_heads=4, d_ff=64, norm_first=request.param
            )
        )

    settings = TrainSettings(steps=60, lr=3e-3, warmup=20, n_test=50)
    result = train(make_model, task, settings, seed=0)
    return result.model.eval(), evaluation_set(task, seed=0, n_test=50)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_cached_decoding_equals_uncached_trained_model(trained, dtype):
    model, (src, _, tgt_out) = trained
    model = copy.deepcopy(model).to(dtype)  # the fixture is shared
    assert_same_decoding(model, src, tgt_out.shape[1])  # L + 1 = 7 tokens, with EOS


# -----------------------------------------------------------------------------
# how many positions the decoder computes


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("length", [1, 2, 8, 13])
def test_positions_computed_sum_t_without_cache_and_t_with_it(norm_first, length):
    """§8.4 "不缓存时总计算量是 Σt": 36 positions instead of 8 at L = 8, at every layer."""
    model = random_model(0, norm_first)
    src = random_source(0)
    modules = [model.decoder.norm, *(layer.ffn for layer in model.decoder.layers)]
    modules += [layer.self_attn.in_proj for layer in model.decoder.layers]  # rows given a K, V
    counts = {}
    for use_cache in (False, True):
        with torch.no_grad(), contextlib.ExitStack() as stack:
            counted = [stack.enter_context(decoding.count_positions(m)) for m in modules]
            model.greedy_decode(src, length, bos_id=BOS, use_cache=use_cache)
        counts[use_cache] = {c["positions"] for c in counted}
    assert counts == {False: {length * (length + 1) // 2}, True: {length}}
    if length == 8:
        assert counts == {False: {36}, True: {8}}  # the lecture's numbers


def test_memory_keys_and_values_are_computed_once_per_layer(monkeypatch):
    """Cross-attention K, V of the memory: once per layer, not once per step."""
    model = random_model(0, False)
    calls, original = [], tt.memory_keys_values

    def counting(attn, memory):
        calls.append(memory.shape)
        return original(attn, memory)

    monkeypatch.setattr(tt, "memory_keys_values", counting)
    model.greedy_decode(random_source(0), 10, bos_id=BOS, use_cache=True)
    assert len(calls) == len(model.decoder.layers)


@pytest.mark.parametrize("norm_first", [False, True])
def test_each_layer_caches_one_row_per_step(norm_first):
    """After L steps every layer holds L rows of K and V, (b, h, L, d_k): linear in L (§10.4)."""
    model = random_model(2, norm_first)
    src, length = random_source(2), 6
    with torch.no_grad():
        caches = model.decoder.start_caches(model.encoder(src))
        for t in range(length):
            model.decoder.step(torch.full((3, 1), BOS), t, caches)
    assert len(caches) == len(model.decoder.layers)
    for cache in caches:
        assert len(cache) == length
        assert cache.self_k.shape == cache.self_v.shape == (3, 4, length, 4)  # (b, h, t, d_k)
        assert cache.memory_k.shape == (3, 4, src.shape[1], 4)  # (b, h, n_src, d_k)


# -----------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize("use_cache", [False, True])
@pytest.mark.parametrize("pe", ["sinusoidal", "learned"])
def test_longer_than_the_pe_table_is_refused_before_decoding(pe, use_cache):
    model = tt.Transformer(tt.TransformerConfig(VOCAB_SIZE, VOCAB_SIZE, pe=pe, max_len=8))
    src = random_source(0, n=5)
    with pytest.raises(ValueError, match="sequence length 9 exceeds max_len 8"):
        model.greedy_decode(src, 9, use_cache=use_cache)
    assert model.greedy_decode(src, 8, use_cache=use_cache).shape == (3, 8)  # the longest allowed


@pytest.mark.parametrize("use_cache", [False, True])
def test_bad_lengths_and_sources_raise(use_cache):
    model = random_model(0, False)
    with pytest.raises(ValueError, match="max_len must be >= 0, got -1"):
        model.greedy_decode(random_source(0), -1, use_cache=use_cache)
    with pytest.raises(ValueError, match="non-empty"):
        model.greedy_decode(torch.zeros(0, 5, dtype=torch.long), 4, use_cache=use_cache)
    assert model.greedy_decode(random_source(0), 0, use_cache=use_cache).shape == (3, 0)


@requires_cuda
@pytest.mark.parametrize("norm_first", [False, True])
def test_cached_decoding_on_cuda_gives_the_same_tokens(norm_first):
    """On a GPU (float64, so kernels' rounding cannot flip an argmax): same tokens both ways,
    and the same tokens as on the CPU."""
    model = random_model(0, norm_first)
    src = random_source(0)
    on_cpu = model.greedy_decode(src, 12, bos_id=BOS, use_cache=True)
    model, src = model.to("cuda"), src.to("cuda")
    assert_same_decoding(model, src, 12)
    assert torch.equal(model.greedy_decode(src, 12, bos_id=BOS, use_cache=True).cpu(), on_cpu)


@pytest.mark.parametrize("norm_first", [False, True])
def test_the_pre_ln_switch_reaches_every_layer(norm_first):
    """§7.5's switch is the config's: every encoder and decoder layer of the model is Pre-LN
    when it says so (and each layer matches nn.Transformer's in that mode, tested above), and
    only then is there a final LayerNorm on each stack."""
    config = tt.TransformerConfig(13, 13, n_enc_layers=2, n_dec_layers=2, norm_first=norm_first)
    model = tt.Transformer(config)
    layers = [*model.encoder.layers, *model.decoder.layers]
    assert len(layers) == 4 and all(layer.norm_first is norm_first for layer in layers)
    for stack in (model.encoder, model.decoder):
        assert isinstance(stack.norm, nn.LayerNorm) is norm_first


# -----------------------------------------------------------------------------
# §6.5 beyond the lecture: RoPE and ALiBi in the scores, against attention_numpy (float64)


@pytest.mark.parametrize("positions", ["rope", "alibi"])
@pytest.mark.parametrize("need_weights", [False, True])
@pytest.mark.parametrize("seed", SEEDS)
def test_positions_in_the_scores_match_numpy(seed, need_weights, positions):
    """Cross-attention with a padding mask and causal self-attention, fused path and explicit."""
    theirs = torch_mha(seed)
    ours = tt.MultiHeadAttention(D_MODEL, N_HEADS, positions=positions).double()
    ours.load_from_torch(theirs)
    params = an.mha_params_from_torch(theirs)
    x, memory = randn(seed, 2, 5, D_MODEL), randn(seed + 100, 2, 7, D_MODEL)
    keep = padding_mask(seed, 2, 7)
    out, weights = ours(x, memory, memory, mask=keep[:, None, None, :], need_weights=need_weights)
    expected, expected_weights = an.multi_head_attention(
        x.numpy(), memory.numpy(), params, N_HEADS, keep[:, None, :].numpy(), positions=positions
    )
    assert_close(out, torch.from_numpy(expected))
    if need_weights:
        assert_close(weights, torch.from_numpy(expected_weights))
    causal, _ = ours(x, x, x, is_causal=True, need_weights=need_weights)
    expected, _ = an.multi_head_attention(
        x.numpy(), x.numpy(), params, N_HEADS, an.create_look_ahead_mask(5), positions=positions
    )
    assert_close(causal, torch.from_numpy(expected))


def test_rope_and_alibi_blocks_match_numpy():
    x = randn(0, 2, 3, 9, 8)
    positions = torch.arange(40, 49)
    assert_close(tt.rope_rotate(x, positions), torch.from_numpy(an.rope_rotate(x, positions)))
    for n in (1, 3, 4, 6, 8):
        assert_close(tt.alibi_slopes(n), torch.from_numpy(an.alibi_slopes(n)))
    assert_close(tt.alibi_bias(4, 3, 7, 2).double(), torch.from_numpy(an.alibi_bias(4, 3, 7, 2)))


@pytest.mark.parametrize("pe", ["rope", "alibi"])
def test_positions_in_the_scores_have_no_table_and_no_length_limit(pe):
    model = random_model(0, False, pe=pe)  # max_len 32: no table is built to that length
    assert not any(name.endswith("embed.pe") for name, _ in model.named_parameters())
    tokens = random_source(0)
    embed = model.encoder.embed
    assert torch.equal(embed(tokens), embed.token(tokens))  # nothing added
    src = random_source(1, b=2, n=40)
    assert model(src, src).shape == (2, 40, VOCAB_SIZE)  # longer than max_len
    assert_same_decoding(model, src, 36)
    for layer in (*model.encoder.layers, *model.decoder.layers):
        attentions = [m for m in layer.modules() if isinstance(m, tt.MultiHeadAttention)]
        assert attentions and all(m.positions == pe for m in attentions)


@pytest.mark.parametrize("pe", ["rope", "alibi"])
def test_beam_search_with_positions_in_the_scores_cached_equals_uncached(pe):
    model = random_model(1, True, pe=pe)
    src = random_source(2, b=4, n=6)
    cached = decoding.beam_search(model, src, 3, 8, bos_id=BOS, use_cache=True)
    uncached = decoding.beam_search(model, src, 3, 8, bos_id=BOS, use_cache=False)
    assert torch.equal(cached[0], uncached[0])
    torch.testing.assert_close(cached[1], uncached[1], rtol=0, atol=1e-12)


def test_bad_positions_in_the_scores_are_refused():
    with pytest.raises(ValueError, match="unknown positions 'relative'"):
        tt.MultiHeadAttention(16, 4, positions="relative")
    with pytest.raises(ValueError, match="d_k = 3 must be even"):
        tt.MultiHeadAttention(12, 4, positions="rope")
    tt.MultiHeadAttention(12, 4, positions="alibi")  # ALiBi has no pairs: any d_k
