"""Greedy decoding with a key/value cache (§8.4): same tokens, same logits, fewer positions.

Without the cache, step t runs the whole prefix through the decoder again (1 + 2 + ... + L
positions for L tokens); with it, each decoder layer keeps its K, V and a step computes the
newest position only (L positions). Both must decode the same tokens, for random models and
for briefly trained ones, Post-LN and Pre-LN.
"""

import contextlib
import copy

import pytest
import torch

from lecture17 import tiny_transformer as tt
from lecture17.experiments.beyond import kv_cache_decoding
from lecture17.training import (
    BOS,
    VOCAB_SIZE,
    ReversalTask,
    TrainSettings,
    evaluation_set,
    train,
)

torch.set_num_threads(1)  # §0.5: single-threaded, like the lecture

# The two paths do the same arithmetic on matrices of different heights, so only the rounding
# differs: ~1e-16 relative at float64, ~1e-7 at float32 (logits of order 1-10).
ATOL = {torch.float64: 1e-12, torch.float32: 1e-5}
SEEDS = [0, 1, 2]
LENGTHS = [1, 5, 12]


def random_model(seed, norm_first, dtype=torch.float64, **sizes):
    torch.manual_seed(seed)
    sizes = dict(d_model=16, n_heads=4, d_ff=32, n_enc_layers=2, n_dec_layers=2) | sizes
    config = tt.TransformerConfig(
        VOCAB_SIZE, VOCAB_SIZE, norm_first=norm_first, max_len=32, **sizes
    )
    model = tt.Transformer(config)
    return model.to(dtype).eval()


def random_src(seed, b=3, n=7):
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
    atol = ATOL[parallel.dtype]
    torch.testing.assert_close(cached_logits(model, src, tgt_in), parallel, rtol=0.0, atol=atol)
    assert torch.equal(parallel.argmax(-1), cached)


# -----------------------------------------------------------------------------
# same tokens, same logits


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("length", LENGTHS)
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("seed", SEEDS)
def test_cached_decoding_equals_uncached_random_model(seed, norm_first, length, dtype):
    assert_same_decoding(random_model(seed, norm_first, dtype), random_src(seed), length)


@pytest.mark.parametrize("pe", ["learned", "none"])
@pytest.mark.parametrize("scale", [True, False])
def test_cached_decoding_other_settings(pe, scale):
    """Learned or no positional encoding, no 1/sqrt(d_k), one layer, one head."""
    model = random_model(0, False, pe=pe, scale=scale, n_dec_layers=1, n_heads=1)
    assert_same_decoding(model, random_src(1, b=2, n=4), 9)


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
    src = random_src(0)
    modules = [model.decoder.norm, *(layer.ffn for layer in model.decoder.layers)]
    modules += [layer.self_attn.in_proj for layer in model.decoder.layers]  # rows given a K, V
    counts = {}
    for use_cache in (False, True):
        with torch.no_grad(), contextlib.ExitStack() as stack:
            counted = [stack.enter_context(tt.count_positions(m)) for m in modules]
            model.greedy_decode(src, length, bos_id=BOS, use_cache=use_cache)
        counts[use_cache] = {c["positions"] for c in counted}
    assert counts == {False: {length * (length + 1) // 2}, True: {length}}
    if length == 8:
        assert counts == {False: {36}, True: {8}}  # the lecture's numbers


def test_memory_keys_and_values_are_computed_once_per_layer(monkeypatch):
    """Cross-attention K, V of the memory: once per layer, not once per step."""
    model = random_model(0, False)
    calls = []
    for layer in model.decoder.layers:
        original = layer.cross_attn.memory_keys_values

        def counting(memory, original=original):
            calls.append(memory.shape)
            return original(memory)

        monkeypatch.setattr(layer.cross_attn, "memory_keys_values", counting)
    model.greedy_decode(random_src(0), 10, bos_id=BOS, use_cache=True)
    assert len(calls) == len(model.decoder.layers)


@pytest.mark.parametrize("norm_first", [False, True])
def test_each_layer_caches_one_row_per_step(norm_first):
    """After L steps every layer holds L rows of K and V, (b, h, L, d_k): linear in L (§10.4)."""
    model = random_model(2, norm_first)
    src, length = random_src(2), 6
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
    src = random_src(0, n=5)
    with pytest.raises(ValueError, match="sequence length 9 exceeds max_len 8"):
        model.greedy_decode(src, 9, use_cache=use_cache)
    assert model.greedy_decode(src, 8, use_cache=use_cache).shape == (3, 8)  # the longest allowed


@pytest.mark.parametrize("use_cache", [False, True])
def test_bad_lengths_and_sources_raise(use_cache):
    model = random_model(0, False)
    with pytest.raises(ValueError, match="max_len must be >= 0, got -1"):
        model.greedy_decode(random_src(0), -1, use_cache=use_cache)
    with pytest.raises(ValueError, match="non-empty"):
        model.greedy_decode(torch.zeros(0, 5, dtype=torch.long), 4, use_cache=use_cache)
    assert model.greedy_decode(random_src(0), 0, use_cache=use_cache).shape == (3, 0)


# -----------------------------------------------------------------------------
# demo 06.2


def test_demo_counts_the_lecture_positions_and_decodes_the_same_tokens():
    table = kv_cache_decoding(
        lengths=[8, 16],
        batch_size=2,
        d_model=16,
        n_heads=2,
        d_ff=32,
        n_layers=1,
        repeats=1,
        seed=0,
    )
    assert list(table.columns) == ["method", "length", "quantity", "value"]
    values = table.set_index(["method", "length", "quantity"])["value"]
    assert values["uncached", 8, "positions"] == 36  # §8.4 "36 而不是 8"
    assert values["cached", 8, "positions"] == 8
    assert values["uncached", 16, "positions"] == 136
    assert values["cached", 16, "positions"] == 16
    assert (table.loc[table["quantity"] == "same_tokens", "value"] == 1.0).all()
    assert (table.loc[table["quantity"] == "ms", "value"] > 0).all()
    ratio = values["cached", 16, "ms_ratio_uncached_over_cached"]
    assert ratio == pytest.approx(values["uncached", 16, "ms"] / values["cached", 16, "ms"])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("norm_first", [False, True])
def test_cached_decoding_on_cuda_gives_the_same_tokens(norm_first):
    """On a GPU (float64, so kernels' rounding cannot flip an argmax): same tokens both ways,
    and the same tokens as on the CPU."""
    model = random_model(0, norm_first)
    src = random_src(0)
    on_cpu = model.greedy_decode(src, 12, bos_id=BOS, use_cache=True)
    model, src = model.to("cuda"), src.to("cuda")
    assert_same_decoding(model, src, 12)
    assert torch.equal(model.greedy_decode(src, 12, bos_id=BOS, use_cache=True).cpu(), on_cpu)
