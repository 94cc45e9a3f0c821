"""代码 06 · 讲义之外 Beyond the lecture: its "at scale" remarks made concrete (§10.4).

    06.1  memory_light_attention  §10.4, §3.4  attention that never stores the n×n matrix
    06.2  kv_cache_decoding       §8.4         greedy decoding with a key/value cache
    06.3  gpu_step_time           §9.5         ms per training step on a GPU as L grows to 2048:
                                               where the Transformer overtakes the GRU
    06.4  layer_gradients         §7.5         each layer's gradient at initialisation (Xiong)
    06.5  hand_built_reversal     §9.6         one hand-built attention layer that reverses
    06.6  beam_search_study       §8.4         beam search and exposure bias on 05.1's models
    06.7  length_extrapolation    §6.5         train on L ≤ 16, test longer: sinusoidal, learned,
                                               RoPE, ALiBi on copy and reversal
    06.8  head_study              §9.4, §5.2   1 to 64 heads at d_model 64; the 4-head model's
                                               cross-attention heads knocked out

References: Dao et al. (2022), "FlashAttention: Fast and Memory-Efficient Exact Attention with
IO-Awareness", NeurIPS, arXiv:2205.14135 (tiling and the online softmax);
Milakov & Gimelshein (2018), "Online normalizer calculation for softmax", arXiv:1805.02867;
Pope et al. (2023), "Efficiently Scaling Transformer Inference", MLSys, arXiv:2211.05102
(the KV cache and its memory); Su et al. (2021), "RoFormer", arXiv:2104.09864 (RoPE);
Press, Smith & Lewis (2022), "Train Short, Test Long", ICLR, arXiv:2108.12409 (ALiBi);
Vaswani et al. (2017), "Attention is all you need", §4 and
Table 1 (sequential operations O(n) for a recurrent layer, O(1) for self-attention).

Every function follows the demo contract (docs/ARCHITECTURE.md): keyword-only settings from
config/config.yaml, a `seed`, and a tidy DataFrame (label columns, `quantity`, `value`).
Quantities named `ms…` are wall-clock timings (declared as such in the registry,
experiments.DEMOS): they differ on every run.

Long on purpose: one module per lecture script (the registry maps the lecture's "代码 0x" to it),
each demo's function beside its helpers; a job depends only on the lines its function runs
(pipeline.deps.code_parts), so the module's length costs no reruns.
"""

import contextlib
import tracemalloc

import numpy as np
import pandas as pd

from lecture17.attention_numpy import (
    positional_encoding,
    scaled_dot_product_attention,
    tiled_attention,
)
from lecture17.experiments.tidy import row, rows, tidy
from lecture17.timing import interleaved_ms, median_ms
from lecture17.train_settings import TrainSettings

# -------------------------------------------------------------------------------------------
# helpers


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
            ms = median_ms(call, repeats)  # first, so the traced call finds everything warm
            outputs[method], peak = _traced_peak_bytes(call)  # (n, d)
            records += [
                row("peak_mb", peak / 1e6, method=method, n=n),
                row("ms", ms, method=method, n=n),
            ]
        matrix_bytes = n * n * np.dtype(np.float64).itemsize
        max_abs_diff = np.max(np.abs(outputs["plain"] - outputs["tiled"]))
        records += [
            row("matrix_mb", matrix_bytes / 1e6, method="plain", n=n),
            row("max_abs_diff", max_abs_diff, method="tiled", n=n),
        ]
    return tidy(records, ["method", "n"])


# -------------------------------------------------------------------------------------------
# 06.2 greedy decoding with a key/value cache (§8.4)


def _decode_calls(model, src, length, bos_id):
    """The same greedy decoding of `length` tokens, without and with the KV cache."""
    return {
        "uncached": lambda: model.greedy_decode(src, length, bos_id),
        "cached": lambda: model.greedy_decode(src, length, bos_id, use_cache=True),
    }


def _compare_decoding(model, src, length, bos_id, repeats):
    """§8.4 at one length: `positions` and `ms` per method, then `same_tokens` and the ratio."""
    import torch

    from lecture17.decoding import count_positions

    records, tokens, ms = [], {}, {}
    for method, decode in _decode_calls(model, src, length, bos_id).items():
        with count_positions(model.decoder.norm) as counted:  # rows out of the decoder stack
            tokens[method] = decode()  # (b, L)
        ms[method] = median_ms(decode, repeats)
        records += [
            row("positions", counted["positions"], method=method, length=length),
            row("ms", ms[method], method=method, length=length),
        ]
    same = torch.equal(tokens["uncached"], tokens["cached"])
    ratio = ms["uncached"] / ms["cached"]
    return records + [
        row("same_tokens", float(same), method="cached", length=length),
        row("ms_ratio_uncached_over_cached", ratio, method="cached", length=length),
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
            tt.TransformerConfig(
                VOCAB_SIZE, VOCAB_SIZE, n_enc_layers=n_layers, n_dec_layers=n_layers, **sizes
            )
        ).eval()
        sources = torch.Generator().manual_seed(seed)
        for length in lengths:
            src = random_symbols(sources, batch_size, length)  # (b, L)
            records += _compare_decoding(model, src, length, BOS, repeats)
    return tidy(records, ["method", "length"])


# -------------------------------------------------------------------------------------------
# 06.3 ms per training step on a GPU (§9.5 "Transformer 的速度优势要在 GPU 上才显现")

# our three models (05.x) and PyTorch's own two (torch_models), timed side by side
TIMED_MODELS = ("transformer", "gru", "gru_attention", "nn.Transformer", "nn.GRU")
PRECISIONS = ("fp32", "bf16")  # fp32, or bf16 autocast (matmuls in bf16, weights in fp32)
SIZE_KEYS = {"d_model", "n_heads", "d_ff", "precision"}
# (ratio quantity, numerator model, denominator model); on the `model` = numerator rows
RATIOS = (
    ("ms_ratio_transformer_over_gru", "transformer", "gru"),  # < 1: the Transformer is faster
    ("ms_ratio_transformer_over_gru_attention", "transformer", "gru_attention"),
    ("ms_ratio_transformer_over_nn_transformer", "transformer", "nn.Transformer"),  # ours/PyTorch's
    ("ms_ratio_gru_over_nn_gru", "gru", "nn.GRU"),
)


def _check_step_time_settings(size, sizes, models, seq_lens, timing: dict, device):
    """Refuse bad settings before any model is built, naming what is allowed (timing: the
    settings _length_rows reads)."""
    from lecture17.training import check_device

    if size not in sizes:
        raise ValueError(f"unknown size {size!r}; sizes has {sorted(sizes)}")
    spec = sizes[size]
    if set(spec) != SIZE_KEYS:
        raise ValueError(
            f"sizes[{size!r}] must have exactly the keys {sorted(SIZE_KEYS)}; got {sorted(spec)}"
        )
    if spec["precision"] not in PRECISIONS:
        raise ValueError(f"unknown precision {spec['precision']!r}; expected one of {PRECISIONS}")
    if spec["d_model"] % spec["n_heads"] != 0:
        raise ValueError(
            f"d_model ({spec['d_model']}) must be divisible by n_heads ({spec['n_heads']})"
        )
    unknown = [m for m in models if m not in TIMED_MODELS]
    if unknown or not models:
        raise ValueError(f"unknown models {unknown}; expected a non-empty list of {TIMED_MODELS}")
    batch_size, rounds = timing["batch_size"], timing["rounds"]
    if not seq_lens or min(seq_lens) < 1 or batch_size < 1 or rounds < 1:
        raise ValueError(
            f"need seq_lens >= 1, batch_size >= 1 and rounds >= 1; "
            f"got {seq_lens}, {batch_size}, {rounds}"
        )
    check_device(device)


def _timed_model(name: str, spec: dict, max_len: int):
    """One of TIMED_MODELS at the sizes `spec` (GRUs: embedding and hidden state d_model wide)."""
    from lecture17 import tiny_transformer as tt
    from lecture17.torch_models import PlainGRU, TorchTransformer
    from lecture17.training import VOCAB_SIZE

    d_model, n_heads, d_ff = spec["d_model"], spec["n_heads"], spec["d_ff"]
    config = tt.TransformerConfig(
        VOCAB_SIZE, VOCAB_SIZE, d_model=d_model, n_heads=n_heads, d_ff=d_ff, max_len=max_len
    )
    if name == "transformer":
        return tt.Transformer(config)
    if name == "nn.Transformer":
        return TorchTransformer(config)
    if name == "nn.GRU":
        return PlainGRU(VOCAB_SIZE, emb_dim=d_model, hidden=d_model)
    sizes = dict(emb_dim=d_model, hidden=d_model)
    return tt.build_model(name, src_vocab=VOCAB_SIZE, tgt_vocab=VOCAB_SIZE, **sizes)


def training_step(model, batch, lr, device, precision):
    """A closure: one training step (forward, loss, backward, Adam) on a fixed batch.

    bf16: the forward pass runs under torch.autocast (matmuls and attention in bfloat16,
    parameters and the optimizer in float32); the loss is taken in float32.
    """
    import torch
    import torch.nn.functional as F

    from lecture17.training import make_optimizer

    opt = make_optimizer("adam", model.parameters(), lr)
    src, tgt_in, tgt_out = batch
    autocast = (
        torch.autocast(device_type=device, dtype=torch.bfloat16)
        if precision == "bf16"
        else contextlib.nullcontext()
    )

    def step():
        with autocast:
            logits = model(src, tgt_in)  # (b, L+1, vocab)
        loss = F.cross_entropy(logits.float().flatten(0, 1), tgt_out.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return step


def _length_rows(models: list[str], spec: dict, L: int, settings: dict, device: str, seed: int):
    """§9.5 at one length L: every model's `ms_per_step` (median over interleaved rounds, so a
    drift of the machine hits all models alike) and the ratios of RATIOS from the same run.
    settings: batch_size, lr, warmup_steps (untimed steps per model first), rounds."""
    import torch

    from lecture17.training import ReversalTask, to_device

    task = ReversalTask(L)
    generator = torch.Generator().manual_seed(seed)
    batch = to_device(task.sample(generator, settings["batch_size"]), device)
    steps = {}
    for name in models:
        torch.manual_seed(seed)
        model = _timed_model(name, spec, max_len=L + 1).to(device)  # tgt_in: L + 1
        steps[name] = training_step(model, batch, settings["lr"], device, spec["precision"])
        for _ in range(settings["warmup_steps"]):
            steps[name]()
    ms = interleaved_ms(steps, settings["rounds"], device)
    records = [row("ms_per_step", ms[name], model=name, seq_len=L) for name in models]
    return records + [
        row(quantity, ms[top] / ms[bottom], model=top, seq_len=L)
        for quantity, top, bottom in RATIOS
        if top in ms and bottom in ms
    ]  # this length's models and optimizer state are freed before the next L


def gpu_step_time(
    *,
    size: str,
    sizes: dict,
    models: list[str],
    seq_lens: list[int],
    batch_size: int,
    lr: float,
    warmup_steps: int,
    rounds: int,
    device: str,
    seed: int,
) -> pd.DataFrame:
    """ms per training step of our models and PyTorch's, for each L (§9.5 at scale).

    `sizes[size]` gives d_model, n_heads, d_ff (the Transformers, 1 + 1 layers) and precision
    (fp32, or bf16 autocast); the GRUs' embedding and hidden state are d_model wide. A step is
    forward, cross-entropy, backward and a fused Adam step on one fixed reversal batch
    (§9.1; batch_size sequences of L symbols), as 05.4 times it. For each L, every model
    (built from torch.manual_seed(seed) on the CPU, then moved) runs `warmup_steps` untimed
    steps, then `rounds` interleaved rounds of one step each, so a drift of the machine hits
    all models alike; on cuda the clock stops after torch.cuda.synchronize(). One thread.

    Rows (`device_name`: the GPU's name, or cpu; `d_model`, `precision`, `model`, `seq_len`):
    `ms_per_step`, the median over rounds,
    and on the numerator's rows the ratios of RATIOS measured in this same run (all timings:
    they differ on every run). Built for `device: cuda`; on the CPU it runs (tests use tiny
    sizes) but says nothing about a GPU.
    """
    timing = dict(batch_size=batch_size, lr=lr, warmup_steps=warmup_steps, rounds=rounds)
    _check_step_time_settings(size, sizes, models, seq_lens, timing, device)
    import torch

    from lecture17.training import single_thread

    spec, records = sizes[size], []
    with single_thread():
        for L in seq_lens:
            records += _length_rows(models, spec, L, timing, device, seed)
    name = torch.cuda.get_device_name() if device == "cuda" else "cpu"
    labels = {"device_name": name, "d_model": spec["d_model"], "precision": spec["precision"]}
    return tidy([labels | r for r in records], [*labels, "model", "seq_len"])


# -------------------------------------------------------------------------------------------
# 06.4 gradients at initialisation, layer by layer: Post-LN vs Pre-LN (§7.5, Xiong et al. 2020)


def _layer_gradient_norms(model, task, batch) -> list[float]:
    """‖∂loss/∂θ‖₂ over all parameters of each encoder layer (its attention, FFN and norms),
    first layer first: one backward pass of the task's loss on `batch`."""
    model.zero_grad()
    task.loss(model, batch).backward()
    return [
        float(sum(p.grad.double().pow(2).sum() for p in layer.parameters()).sqrt())
        for layer in model.encoder.layers
    ]


def layer_gradients(
    *, length: int, n_layers: int, d_model: int, n_heads: int, d_ff: int, batch_size: int, seed: int
) -> pd.DataFrame:
    """§7.5 measured instead of cited: "Post-LN 在初始化时靠近输出的那几层参数梯度很大 ……
    Pre-LN 的梯度在各层之间更均匀" (Xiong et al. 2020), on 04.3's model and task.

    For each placement, 04.3's n_layers encoder classifier is built as 04.3's run of this seed
    builds it (torch.manual_seed(seed), layers._classifier_builder) and its first training
    batch drawn as train() draws it (torch.Generator().manual_seed(seed)); one backward pass of
    the task's loss, no optimiser step. Rows: (`placement` post_ln / pre_ln, `layer` 1..n, 1
    nearest the input) → `grad_norm`, the gradient norm of that layer's parameters;
    (`placement`) → `grad_ratio_top_bottom`, the mean of the two layers nearest the output over
    the mean of the two nearest the input, and `grad_spread`, the largest layer's norm over the
    smallest's. The float32 init is computed in float64 (exactly the same weights), so that
    the printed digits are the same on every CPU: a deterministic demo (one thread).
    """
    import torch

    from lecture17 import training
    from lecture17.experiments.layers import PLACEMENTS, _classifier_builder

    task = training.InplaceReversalTask(length)
    records = []
    with training.single_thread():
        for placement, norm_first in PLACEMENTS.items():
            make_model = _classifier_builder(n_layers, d_model, n_heads, d_ff, norm_first)
            torch.manual_seed(seed)  # the model's initialisation, as train() does it
            model = make_model().double()  # float64: the same digits on every CPU (diff)
            batch = task.sample(torch.Generator().manual_seed(seed), batch_size)
            norms = _layer_gradient_norms(model, task, batch)
            records += [
                row("grad_norm", g, placement=placement, layer=i)
                for i, g in enumerate(norms, start=1)
            ]
            top, bottom = np.mean(norms[-2:]), np.mean(norms[:2])
            records.append(row("grad_ratio_top_bottom", top / bottom, placement=placement))
            records.append(row("grad_spread", max(norms) / min(norms), placement=placement))
    return tidy(records, ["placement", "layer"])


# -------------------------------------------------------------------------------------------
# 06.5 reversal by one hand-built layer of encoder-decoder attention (§9.6)


def mirror_map(length: int, d_model: int) -> np.ndarray:
    """R with PE(L − 1 − t) = PE(t) @ R for every position t (§9.6, as M_k of §6.3 for a
    shift): pair by pair, with a = ω(L − 1), the angle-difference formulas give
    [sin ω(L−1−t), cos ω(L−1−t)] = [sin ωt, cos ωt] @ [[−cos a, sin a], [sin a, cos a]].
    ω is read off the encoding itself, as 03.1 reads it. (d, d) float64."""
    from lecture17.experiments.positional_encoding import _pair_frequencies

    a = (length - 1) * _pair_frequencies(positional_encoding(2, d_model))  # (d_model/2,)
    even = np.arange(0, d_model, 2)
    R = np.zeros((d_model, d_model))
    R[even, even], R[even, even + 1] = -np.cos(a), np.sin(a)
    R[even + 1, even], R[even + 1, even + 1] = np.sin(a), np.cos(a)
    return R


def _sharpness(length: int, d_model: int, leak: float) -> float:
    """β so that the weight off the mirror position totals at most `leak`: the scores are
    β/√d · PE(m)·PE(s), largest (d/2) at s = m and at least `gap` below it elsewhere."""
    pe = positional_encoding(length, d_model)  # (L, d)
    dots = pe @ pe[0]  # PE(0)·PE(k), k = 0..L−1: the dot product depends on |k| only (§6.3)
    gap = dots[0] - dots[1:].max()
    return np.sqrt(d_model) * np.log((length - 1) / leak) / gap


def hand_built_reversal_layer(built_for: int, d_model: int, vocab: int, leak: float) -> dict:
    """W^Q, W^K, W^V of one cross-attention layer that reverses a sequence of length
    `built_for`: inputs are [one-hot token (vocab); PE(position) (d_model)]; the query reads
    the decoder position's PE turned into the mirror's (β R), the key the encoder position's
    PE, the value the encoder token's one-hot. No training."""
    d = vocab + d_model
    W_q, W_k, W_v = np.zeros((d, d)), np.zeros((d, d)), np.zeros((d, vocab))
    W_q[vocab:, vocab:] = _sharpness(built_for, d_model, leak) * mirror_map(built_for, d_model)
    W_k[vocab:, vocab:] = np.eye(d_model)
    W_v[:vocab] = np.eye(vocab)
    return {"W_q": W_q, "W_k": W_k, "W_v": W_v}


def _hand_built_layer_on(W: dict, src, d_model: int, vocab: int):
    """The layer W on sources src (n, L): inputs [one-hot token; PE(position)] on the encoder
    side, [0; PE(position)] on the decoder's -> (output (n, L, vocab), weights (n, L, L))."""
    n, L = src.shape
    pe = positional_encoding(L, d_model)  # (L, d_model)
    enc = np.concatenate([np.eye(vocab)[src], np.broadcast_to(pe, (n, L, d_model))], -1)
    dec = np.concatenate([np.zeros((n, L, vocab)), enc[..., vocab:]], -1)
    return scaled_dot_product_attention(dec @ W["W_q"], enc @ W["W_k"], enc @ W["W_v"])


def hand_built_reversal(
    *, lengths: list[int], d_model: int, n_sources: int, leak: float, explore_length: int, seed: int
) -> pd.DataFrame:
    """§9.6 "位置编码 + 一层编码器-解码器注意力就够了", by construction: no training, one layer
    of encoder-decoder attention (attention_numpy.scaled_dot_product_attention) with weights
    set from PE(L − 1 − t) = PE(t) R_L, on n_sources random sources of each length (the
    reversal task's 10 symbols, one-hot), decoding step t reading source position L − 1 − t.

    Rows: (`built_for`, `length`) → `sequence_accuracy`, `token_accuracy` (output t equals
    source L − 1 − t; the stop rule is the known length: L outputs, no EOS), for weights built
    for every length of `lengths` and tested at every length; (`built_for` = `length`) →
    `min_mirror_weight`, the smallest weight any decoding step puts on its mirror position;
    at `length` = explore_length, the `weight` of each (query, key) on its first source, for
    the layer built for every length (the page's explorer), rounded to 6 decimals (a weight
    of 1e-9 is 0 there, and no ulp of another CPU's exp moves a printed digit).
    Deterministic (float64): `seed` draws the sources.
    """
    if explore_length not in lengths:
        raise ValueError(f"explore_length {explore_length} must be one of lengths {lengths}")
    from lecture17.training import FIRST_SYMBOL, N_SYMBOLS, VOCAB_SIZE

    rng = np.random.default_rng(seed)
    records = []
    sources = {
        L: rng.integers(FIRST_SYMBOL, FIRST_SYMBOL + N_SYMBOLS, (n_sources, L)) for L in lengths
    }
    for built in lengths:
        W = hand_built_reversal_layer(built, d_model, VOCAB_SIZE, leak)
        for L, src in sources.items():
            out, weights = _hand_built_layer_on(W, src, d_model, VOCAB_SIZE)
            right = out.argmax(-1) == src[:, ::-1]  # (n, L): output t = source L − 1 − t
            cell = {"built_for": built, "length": L}
            records += rows(
                {"sequence_accuracy": right.all(-1).mean(), "token_accuracy": right.mean()}, **cell
            )
            if built == L:
                mirror = weights[:, np.arange(L), np.arange(L)[::-1]]  # (n, L)
                records.append(row("min_mirror_weight", mirror.min(), **cell))
            if L == explore_length:
                records += [
                    row("weight", float(w), **cell, query=q, key=k)
                    for (q, k), w in np.ndenumerate(np.round(weights[0], 6))
                ]
    return tidy(records, ["built_for", "length", "query", "key"])


# -------------------------------------------------------------------------------------------
# 06.6 §8.4 beam search on 05.1's trained models, and exposure bias as a number

# A top-2 logit gap at or below this is a near-tie: stepwise greedy decoding and the batched
# beam round the same logits along different paths, and at a gap of a few ulps (1e-6 at a
# logit of 1.8, seen on a GRU at L = 32 after 200 steps) either may pick either word. 100×
# that gap; a bug that changes the search differs where the gap is wide.
NEAR_TIE = 1e-4


def _greedy_mismatch(net, src, tokens, greedy) -> tuple[float, float]:
    """The shares of sources whose beam-of-width-1 `tokens` differ from `greedy` (b, n): at a
    step where greedy's top-2 logit gap is wider than NEAR_TIE, and at a near-tie. The gap is
    read at each source's first differing step (after it the two prefixes differ), from the
    model run teacher-forced on greedy's own prefix."""
    import torch

    from lecture17.training import BOS

    differs = tokens != greedy  # (b, n)
    prefix = torch.cat([torch.full_like(greedy[:, :1], BOS), greedy[:, :-1]], dim=1)
    top2 = net(src, prefix).topk(2, dim=-1).values  # (b, n, 2)
    gap = top2[..., 0] - top2[..., 1]
    first = differs.int().argmax(dim=1)  # (b,): 0 where none differs (masked below)
    tie = gap[torch.arange(len(first)), first] <= NEAR_TIE
    mismatch = differs.any(dim=1)
    return (mismatch & ~tie).double().mean().item(), (mismatch & tie).double().mean().item()


def _beam_rows(net, src, tgt_out, widths: list[int], uncached_sources: int) -> list[dict]:
    """Per width: accuracies, and every wrong answer a search error (the right answer scores
    higher than what the search returned) or a model error (it scores no higher); 1-based.
    The Transformer's widest beam without the KV cache runs on the first uncached_sources
    sources, beside the cached beam on the same batch (a batch of another size may round a
    near tie the other way)."""
    from lecture17 import tiny_transformer as tt
    from lecture17.decoding import beam_search, sequence_log_prob
    from lecture17.training import BOS

    n = tgt_out.shape[1]  # L + 1: the known length, EOS included (no early stop)
    right_score = sequence_log_prob(net, src, tgt_out, bos_id=BOS)  # (b,)
    greedy = net.greedy_decode(src, n, bos_id=BOS)
    records, previous = [], None
    for width in widths:
        tokens, _ = beam_search(net, src, width, n, bos_id=BOS)
        score = sequence_log_prob(net, src, tokens, bos_id=BOS)  # as right_score is scored
        correct = tokens == tgt_out  # (b, L + 1)
        wrong = ~correct.all(dim=1)
        search = wrong & (right_score > score)
        found = {
            "sequence_accuracy": (~wrong).double().mean().item(),
            "symbol_accuracy": correct[:, :-1].double().mean().item(),
            "search_errors": search.double().mean().item(),
            "model_errors": (wrong & ~search).double().mean().item(),
            "mean_log_prob": score.double().mean().item(),
        }
        if width == 1:  # beam_search at width 1 against greedy_decode: the same tokens
            mismatch, ties = _greedy_mismatch(net, src, tokens, greedy)
            found["greedy_mismatch"], found["greedy_near_ties"] = mismatch, ties
        if previous is not None:  # a wider beam is not guaranteed a higher score
            found["lower_than_narrower"] = (score < previous).double().mean().item()
        records += rows(found, width=width)
        previous = score
    if isinstance(net, tt.Transformer):  # the widest beam without the KV cache: same tokens
        few = src[:uncached_sources]
        cached = beam_search(net, few, widths[-1], n, bos_id=BOS)[0]
        uncached = beam_search(net, few, widths[-1], n, bos_id=BOS, use_cache=False)[0]
        mismatch = (uncached != cached).any(dim=1).double().mean().item()
        records.append(row("cache_mismatch", mismatch, width=widths[-1]))
    return records


def _exposure_rows(net, src, tgt_in, tgt_out) -> list[dict]:
    """§8.4 exposure bias: the same outputs scored teacher-forced (the right prefix in) and
    free-running (greedy: the model's own prefix in), per 1-based output position t = 1..L and
    overall; and on the positions after a sequence's first free-running error, both again."""
    import torch

    from lecture17.training import BOS

    free = net.greedy_decode(src, tgt_out.shape[1], bos_id=BOS) == tgt_out  # (b, L + 1)
    forced = net(src, tgt_in).argmax(-1) == tgt_out
    free, forced = free[:, :-1], forced[:, :-1]  # the L symbols (EOS apart, as 05.2)
    records = []
    for name, correct in (("teacher_forced", forced), ("free_running", free)):
        records.append(row(f"{name}_symbol_accuracy", correct.double().mean().item()))
        per_position = correct.double().mean(dim=0).tolist()
        records += [
            row(f"{name}_position_accuracy", acc, position=t)
            for t, acc in enumerate(per_position, start=1)
        ]
    # after the first error: every later position of a sequence that went wrong once
    first = (~free).int().argmax(dim=1)  # (b,): the first wrong position (0 if none)
    went_wrong = ~free.all(dim=1)  # (b,)
    later = (torch.arange(free.shape[1]) > first[:, None]) & went_wrong[:, None]  # (b, L)
    records.append(row("positions_after_first_error", later.double().sum().item()))
    if later.any():
        records.append(row("free_running_after_first_error", free[later].double().mean().item()))
        records.append(
            row("teacher_forced_after_first_error", forced[later].double().mean().item())
        )
    return records


def _check_beams(widths: list[int], uncached_sources: int, n_test: int) -> None:
    """Refuse widths that do not start at greedy (1) and increase, and an uncached check on
    more sources than the test set has (or none)."""
    if not widths or widths[0] != 1 or widths != sorted(set(widths)):
        raise ValueError(f"widths must start at 1 (greedy) and increase, got {widths}")
    if not 1 <= uncached_sources <= n_test:
        raise ValueError(f"uncached_sources must be 1..n_test ({n_test}), got {uncached_sources}")


def beam_search_study(
    *,
    model: str,
    seq_len: int,
    sizes: dict,
    train: TrainSettings,
    widths: list[int],
    uncached_sources: int,
    device: str,
    seed: int,
    trained,
) -> pd.DataFrame:
    """§8.4 "（或用第 16 讲的 beam search）" and "这叫 exposure bias", on 05.1's trained model of
    this grid point and seed (`trained`: the models its job kept; None: trained again, the same
    way), scored on 05.1's test set (train.n_test sequences, training.evaluation_set).

    Rows: per `width` (the first is 1: greedy) sequence_accuracy, symbol_accuracy,
    search_errors and model_errors (fractions of the test set; they add up to 1 −
    sequence_accuracy), mean_log_prob of what the search returned; greedy_mismatch (width 1
    against greedy_decode: 0, a near-tie apart) and greedy_near_ties (shown),
    lower_than_narrower (the share of sources a wider beam scores below the previous width),
    cache_mismatch (Transformer: the widest beam with and without
    the KV cache, on the first `uncached_sources` sources: 0; without the cache every step
    runs the whole prefix again, O(L²), three quarters of a job on all 500). Exposure bias:
    teacher_forced_* and free_running_* symbol accuracy, overall and per `position`;
    positions_after_first_error and both accuracies on them.
    """
    from lecture17.experiments.transformer_vs_rnn import _check, trained_model
    from lecture17.training import ReversalTask, evaluation_set, single_thread

    _check(model=model, seq_len=seq_len, sizes=sizes, device=device)
    _check_beams(widths, uncached_sources, train.n_test)
    import torch

    net = trained_model(
        trained, model=model, seq_len=seq_len, sizes=sizes, train=train, device=device, seed=seed
    )
    src, tgt_in, tgt_out = evaluation_set(ReversalTask(seq_len), seed, train.n_test)
    with single_thread(), torch.no_grad():  # read on the CPU, whatever trained the model
        records = _beam_rows(net, src, tgt_out, widths, uncached_sources)
        records += _exposure_rows(net, src, tgt_in, tgt_out)
    return tidy(records, ["width", "position"])


# -------------------------------------------------------------------------------------------
# 06.7 §6.5 "'写得出'不等于模型能泛化到比训练时更长的序列": length extrapolation

EXTRAPOLATION_PE = ("sinusoidal", "learned", "rope", "alibi")
TRANSFORMER_SIZE_KEYS = {"d_model", "n_heads", "d_ff", "n_enc_layers", "n_dec_layers"}


def _check_transformer_keys(transformer: dict) -> None:
    if set(transformer) != TRANSFORMER_SIZE_KEYS:
        raise ValueError(
            f"transformer must have exactly the keys {sorted(TRANSFORMER_SIZE_KEYS)}; "
            f"got {sorted(transformer)}"
        )


def _check_extrapolation(task, pe, train_lengths, test_lengths, transformer, device):
    """Refuse bad settings before any model is built, naming what is allowed."""
    from lecture17.training import KNOWN_LENGTH_TASKS, check_device

    if task not in KNOWN_LENGTH_TASKS:
        raise ValueError(f"unknown task {task!r}; expected one of {KNOWN_LENGTH_TASKS}")
    if pe not in EXTRAPOLATION_PE:
        raise ValueError(f"unknown pe {pe!r}; expected one of {EXTRAPOLATION_PE}")
    if len(train_lengths) != 2 or not 1 <= train_lengths[0] <= train_lengths[1]:
        raise ValueError(f"train_lengths must be [shortest, longest], got {train_lengths}")
    if not test_lengths or test_lengths != sorted(set(test_lengths)) or test_lengths[0] < 1:
        raise ValueError(f"test_lengths must be increasing lengths >= 1, got {test_lengths}")
    _check_transformer_keys(transformer)
    check_device(device)


def _pe_row_changes(model, initial: dict, seen: int) -> dict:
    """Learned PE: how far training moved each table row. Rows at positions >= seen never got
    a gradient (no training input reaches them), so Adam never moved them: exactly 0."""
    unseen, seen_min = 0.0, float("inf")
    for name, table in initial.items():
        change = (model.get_parameter(name).detach() - table).abs().amax(dim=1)  # (max_len,)
        unseen = max(unseen, change[seen:].max().item())
        seen_min = min(seen_min, change[:seen].min().item())
    return {"pe_unseen_rows_max_change": unseen, "pe_seen_rows_min_change": seen_min}


def _learned_tables(model) -> dict:
    """The learned PE tables of a freshly built model, copied (on the CPU, before training)."""
    return {
        name: p.detach().clone()
        for name, p in model.named_parameters()
        if name.endswith("embed.pe")
    }


def _extrapolation_rows(net, task: str, length: int, train: TrainSettings, device, seed) -> list:
    """Accuracies of `net` on train.n_test fresh sequences of one length (seed + 10 000)."""
    from lecture17.training import KnownLengthTask, evaluation_set, to_device

    at = KnownLengthTask(task, length, length)
    scores = at.evaluate(net, to_device(evaluation_set(at, seed, train.n_test), device))
    records = rows({k: scores[k] for k in ("symbol_accuracy", "sequence_accuracy")}, length=length)
    return records + [
        row("position_accuracy", acc, length=length, position=t)
        for t, acc in enumerate(scores["position_accuracy"])
    ]


def length_extrapolation(
    *,
    task: str,
    pe: str,
    train_lengths: list[int],
    test_lengths: list[int],
    transformer: dict,
    train: TrainSettings,
    device: str,
    seed: int,
) -> pd.DataFrame:
    """Train §6.6's small Transformer with one positional scheme on L ≤ 16, test longer.

    `task` "copy" (output t reads input t) or "reversal" (input L − 1 − t), KnownLengthTask:
    one L per batch, decoded for exactly L tokens (no EOS: a wrong output is a wrong place
    read). `pe`: sinusoidal or learned (added to the input; tables of max(test_lengths) rows),
    rope or alibi (in every attention block's scores, cross-attention too). Rows per `length`:
    symbol_, sequence_ and position_accuracy (0-based `position`); learned only:
    pe_unseen_rows_max_change (0: unseen rows keep their init) and pe_seen_rows_min_change.
    """
    _check_extrapolation(task, pe, train_lengths, test_lengths, transformer, device)
    import torch

    from lecture17 import tiny_transformer as tt
    from lecture17.training import VOCAB_SIZE, KnownLengthTask, single_thread
    from lecture17.training import train as train_model

    size = dict(pe=pe, max_len=max(test_lengths), **transformer)
    config, initial = tt.TransformerConfig(VOCAB_SIZE, VOCAB_SIZE, **size), {}

    def make_model():
        model = tt.Transformer(config)
        initial.update(_learned_tables(model))
        return model

    lengths = KnownLengthTask(task, *train_lengths)
    result = train_model(make_model, lengths, train, seed=seed, device=device)
    records = []
    with single_thread(), torch.no_grad():
        net = result.model.eval()
        for length in test_lengths:
            records += _extrapolation_rows(net, task, length, train, device, seed)
        if pe == "learned":
            records += rows(_pe_row_changes(net.cpu(), initial, train_lengths[1]))
    return tidy(records, ["length", "position"])


# -------------------------------------------------------------------------------------------
# 06.8 §9.4 / §5.2 / §12 do the heads matter? A head-count sweep, and the 4-head model's
# cross-attention heads knocked out


@contextlib.contextmanager
def heads_zeroed(attention, heads):
    """Inside, `attention` (a tiny_transformer.MultiHeadAttention) runs with the listed heads'
    outputs set to 0 before W^O: head h's slice h d_k .. (h + 1) d_k of the concatenation
    (§5.2), on every path (the full forward and the cached steps both end in out_proj)."""
    d_k = attention.d_k
    keep = np.ones(attention.d_model)
    for h in heads:
        keep[h * d_k : (h + 1) * d_k] = 0.0

    def zero(module, inputs):
        (context,) = inputs
        return (context * context.new_tensor(keep),)

    handle = attention.out_proj.register_forward_pre_hook(zero)
    try:
        yield
    finally:
        handle.remove()


def _check_heads(transformer, n_heads, ablate, seq_len, device):
    from lecture17.training import check_device

    _check_transformer_keys(transformer)
    if isinstance(n_heads, bool) or not isinstance(n_heads, int) or n_heads < 1:
        raise ValueError(f"n_heads must be an integer >= 1, got {n_heads!r}")
    if transformer["d_model"] % n_heads != 0:
        raise ValueError(f"d_model ({transformer['d_model']}) must be divisible by {n_heads} heads")
    if not isinstance(ablate, list) or not all(isinstance(a, int) and a >= 1 for a in ablate):
        raise ValueError(f"ablate must be a list of head counts, got {ablate!r}")
    if isinstance(seq_len, bool) or not isinstance(seq_len, int) or seq_len < 1:
        raise ValueError(f"seq_len must be an integer >= 1, got {seq_len!r}")
    check_device(device)


def _ablation_rows(net, seq_len: int, train: TrainSettings, device, seed) -> list:
    """Symbol accuracy on the model's test set with each decoder cross-attention head knocked
    out (`without_head_…`) and with every other head knocked out (`only_head_…`), per head."""
    import torch

    from lecture17.training import ReversalTask, evaluation_set, single_thread, to_device

    task = ReversalTask(seq_len)
    test = to_device(evaluation_set(task, seed, train.n_test), device)
    crosses = [layer.cross_attn for layer in net.decoder.layers]
    n_heads, records = crosses[0].n_heads, []
    with single_thread(), torch.no_grad():
        for h in range(n_heads):
            for out, heads in (("without", [h]), ("only", [g for g in range(n_heads) if g != h])):
                with contextlib.ExitStack() as zeroed:
                    for attention in crosses:
                        zeroed.enter_context(heads_zeroed(attention, heads))
                    score = task.evaluate(net, test)["symbol_accuracy"]
                records.append(row(f"{out}_head_symbol_accuracy", score, head=h))
    return records


def head_study(
    *,
    n_heads: int,
    transformer: dict,
    seq_len: int,
    ablate: list[int],
    train: TrainSettings,
    device: str,
    seed: int,
) -> pd.DataFrame:
    """Train 05.1's Transformer with `n_heads` heads (d_model fixed, d_k = d_model / n_heads;
    the parameter count does not change, §5.2) on §9.1's reversal of length seq_len.

    Rows: d_k; token_, symbol_ and sequence_accuracy by greedy decoding on 05.1's test set.
    Where n_heads is in `ablate` (the lecture's 4), the decoder's cross-attention heads
    (the ones §9.4 draws) are knocked out — zeroed before W^O, in every decoder layer — and
    the model decoded again: per 0-based `head`, without_head_symbol_accuracy (that head out)
    and only_head_symbol_accuracy (every other head out). With n_heads = 4 and the same seed
    the model is 05.1's (and 05.3's): the same builder, task and training.
    """
    _check_heads(transformer, n_heads, ablate, seq_len, device)
    from lecture17.experiments.transformer_vs_rnn import train_reversal

    sizes = {"transformer": transformer | {"n_heads": n_heads}}
    result, _ = train_reversal(
        model="transformer", seq_len=seq_len, sizes=sizes, train=train, device=device, seed=seed
    )
    names = ("token_accuracy", "symbol_accuracy", "sequence_accuracy")
    records = rows({"d_k": transformer["d_model"] // n_heads})
    records += rows({q: result.final[q] for q in names})
    if n_heads in ablate:
        records += _ablation_rows(result.model.eval(), seq_len, train, device, seed)
    return tidy(records, ["head"])
