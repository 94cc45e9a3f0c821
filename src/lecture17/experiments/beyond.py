"""代码 06 · 讲义之外 Beyond the lecture: its "at scale" remarks made concrete (§10.4).

    06.1  memory_light_attention  §10.4, §3.4  attention that never stores the n×n matrix
    06.2  kv_cache_decoding       §8.4         greedy decoding with a key/value cache

References: Dao et al. (2022), "FlashAttention: Fast and Memory-Efficient Exact Attention with
IO-Awareness", NeurIPS, arXiv:2205.14135 (tiling and the online softmax);
Milakov & Gimelshein (2018), "Online normalizer calculation for softmax", arXiv:1805.02867;
Pope et al. (2023), "Efficiently Scaling Transformer Inference", MLSys, arXiv:2211.05102
(the KV cache and its memory).

Every function follows the demo contract (docs/CONTRACTS.md): keyword-only settings from
config/config.yaml, a `seed`, and a tidy DataFrame (label columns, `quantity`, `value`).
Quantities whose names start with `ms` are wall-clock timings: they differ on every run.
"""

import statistics
import time
import tracemalloc

import numpy as np
import pandas as pd

from lecture17.attention_numpy import scaled_dot_product_attention, tiled_attention

# -------------------------------------------------------------------------------------------
# helpers


def _median_ms(fn, repeats):
    """Median wall-clock time of ``repeats`` calls of fn(), in milliseconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def _traced_peak_bytes(fn):
    """fn()'s result and the peak memory allocated while it ran (numpy reports to tracemalloc).

    Counts only what fn() allocates on top of what was held before: the inputs are not in it,
    the returned arrays are.
    """
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        held_before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        result = fn()
        peak = tracemalloc.get_traced_memory()[1] - held_before
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return result, peak


# -------------------------------------------------------------------------------------------
# 06.1 attention without the n×n matrix (§10.4, §3.4)


def _attention_calls(Q, K, V, block_size):
    """The same output two ways; the plain version also builds (and returns) the n×n weights."""
    return {
        "plain": lambda: scaled_dot_product_attention(Q, K, V)[0],
        "tiled": lambda: tiled_attention(Q, K, V, block_size=block_size),
    }


def memory_light_attention(
    *, sizes: list[int], d: int, block_size: int, repeats: int, seed: int
) -> pd.DataFrame:
    """Plain vs tiled attention (FlashAttention's idea in numpy): memory, time, same output.

    For each n in ``sizes``: random float64 Q, K, V of shape (n, d). Rows:
    (`method` plain / tiled, `n`) → `peak_mb`, the peak memory traced during one call in decimal
    MB (deterministic for the same code and sizes) and `ms`, the median of ``repeats`` calls
    (differs on every run); (plain, `n`) → `matrix_mb`, the bytes of one (n, n) float64 matrix,
    which the plain version must hold and the tiled one never does (§3.4);
    (tiled, `n`) → `max_abs_diff`, max |plain − tiled| over the outputs (the computation is
    the same, only its order differs, §10.4).
    """
    rng = np.random.default_rng(seed)
    records = []
    for n in sizes:
        Q, K, V = rng.standard_normal((3, n, d))  # (n, d) each
        outputs = {}
        for method, call in _attention_calls(Q, K, V, block_size).items():
            ms = _median_ms(call, repeats)  # first, so the traced call finds everything warm
            outputs[method], peak = _traced_peak_bytes(call)  # (n, d)
            records += [
                {"method": method, "n": n, "quantity": "peak_mb", "value": peak / 1e6},
                {"method": method, "n": n, "quantity": "ms", "value": ms},
            ]
        matrix_bytes = n * n * np.dtype(np.float64).itemsize
        max_abs_diff = np.max(np.abs(outputs["plain"] - outputs["tiled"]))
        records += [
            {"method": "plain", "n": n, "quantity": "matrix_mb", "value": matrix_bytes / 1e6},
            {"method": "tiled", "n": n, "quantity": "max_abs_diff", "value": max_abs_diff},
        ]
    table = pd.DataFrame.from_records(records, columns=["method", "n", "quantity", "value"])
    return table.astype({"n": np.int64, "value": np.float64})


# -------------------------------------------------------------------------------------------
# 06.2 greedy decoding with a key/value cache (§8.4)


def _decode_calls(model, src, length, bos_id):
    """The same greedy decoding of `length` tokens, without and with the KV cache."""
    return {
        "uncached": lambda: model.greedy_decode(src, length, bos_id),
        "cached": lambda: model.greedy_decode(src, length, bos_id, use_cache=True),
    }


def _compare_decoding(model, src, length, bos_id, repeats):
    """Rows (method, length, quantity, value) of one length: positions, ms, same tokens."""
    import torch

    from lecture17.tiny_transformer import count_positions

    records, tokens, ms = [], {}, {}
    for method, decode in _decode_calls(model, src, length, bos_id).items():
        with count_positions(model.decoder.norm) as counted:  # rows out of the decoder stack
            tokens[method] = decode()  # (b, L)
        ms[method] = _median_ms(decode, repeats)
        records += [
            (method, length, "positions", counted["positions"]),
            (method, length, "ms", ms[method]),
        ]
    same = torch.equal(tokens["uncached"], tokens["cached"])
    return records + [
        ("cached", length, "same_tokens", float(same)),
        ("cached", length, "ms_ratio_uncached_over_cached", ms["uncached"] / ms["cached"]),
    ]


def kv_cache_decoding(
    *,
    lengths: list[int],
    batch_size: int,
    d_model: int,
    n_heads: int,
    d_ff: int,
    n_layers: int,
    repeats: int,
    seed: int,
) -> pd.DataFrame:
    """Greedy decoding without and with a KV cache (§8.4): positions computed, time, tokens.

    A randomly initialised Transformer (torch.manual_seed(seed); n_layers encoder and n_layers
    decoder layers) on the CPU, one thread (no `device` setting: this demo is about the
    arithmetic a step saves, not about an accelerator). For each L in ``lengths``, a batch of
    ``batch_size`` random sources of L symbols (the reversal task's, §9.1) is decoded greedily
    for L tokens. Rows: (`method` uncached / cached, `length`) → `positions`, the positions the
    decoder computed, counted by a hook on its output (deterministic), and `ms`, the median of
    ``repeats`` decodes of the batch (differs on every run); (cached, `length`) → `same_tokens`,
    1 if both decodes give the same tokens, and `ms_ratio_uncached_over_cached`, the speed-up
    (a ratio of timings: it differs on every run too).
    """
    import torch

    from lecture17 import tiny_transformer as tt
    from lecture17.training import BOS, VOCAB_SIZE, random_symbols, single_thread

    sizes = dict(d_model=d_model, n_heads=n_heads, d_ff=d_ff, max_len=max(lengths))
    records = []
    with single_thread():
        torch.manual_seed(seed)  # the model's initialisation
        model = tt.Transformer(
            VOCAB_SIZE, VOCAB_SIZE, n_enc_layers=n_layers, n_dec_layers=n_layers, **sizes
        ).eval()
        sources = torch.Generator().manual_seed(seed)
        for length in lengths:
            src = random_symbols(sources, batch_size, length)  # (b, L)
            records += _compare_decoding(model, src, length, BOS, repeats)
    table = pd.DataFrame.from_records(records, columns=["method", "length", "quantity", "value"])
    return table.astype({"length": np.int64, "value": np.float64})
