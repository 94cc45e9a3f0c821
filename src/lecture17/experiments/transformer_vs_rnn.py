"""代码 05 · 一个小 Transformer vs GRU seq2seq Transformer vs GRU seq2seq (lecture §9).

Three models learn to reverse L random symbols (§9.1) with the same training budget: a GRU
encoder-decoder without attention, the same with Luong attention, and a tiny Transformer.

    05.1  reversal_comparison  §9.1–§9.2, §9.5  one model, one L, one seed: parameters,
                                                accuracy by greedy decoding, ms per step
    05.2  (no function)        §9.3  accuracy by output position at L = 32: the report
                                     reads 05.1's `position_accuracy` rows
    05.3  attention_analysis   §9.4  the same training, then what the attention looks at
    07.5  luong_reading        §9.2  05.1's GRU + attention under each reading of "Luong"
    05.4  step_time            §9.5  ms per training step as L grows to 128
    05.5  decoded_examples     §9.2, §9.4  05.1's kept models on the first few test
                                     sequences: each output token, and the cross-attention

References: Vaswani et al. (2017), "Attention is all you need"; Cho et al. (2014), "Learning
phrase representations using RNN encoder-decoder"; Luong, Pham & Manning (2015), "Effective
approaches to attention-based neural machine translation"; Clark et al. (2019), "What does
BERT look at?" (heads that park on a fixed token, §9.4).

Every function follows the demo contract (docs/ARCHITECTURE.md). The training itself is
lecture17.training.train (Adam with linear warmup, fresh batches from a seeded generator,
evaluation by greedy decoding on a fixed test set, §8.4, on the cpu or cuda `device`); this
module picks the model and turns the results into a tidy table. torch, tiny_transformer and
training are imported inside the functions (a numpy-only job must not pay for torch).

Devices: batches are always drawn on the CPU from the seeded generator, then moved, so a cuda
run trains on the same data from the same initialisation (its float results may still differ
in the last bits: other kernels). Timings on cuda synchronise before the clock stops.

Long on purpose: one module per lecture script (the registry maps the lecture's "代码 0x" to it),
each demo's function beside its helpers; a job depends only on the lines its function runs
(pipeline.deps.code_parts), so the module's length costs no reruns.
"""

import dataclasses

import numpy as np
import pandas as pd

from lecture17.experiments.kept_models import keep, the_one
from lecture17.experiments.tidy import row, rows, tidy
from lecture17.timing import timed
from lecture17.train_settings import TrainSettings

# §9.4's per-head statistics, in the order the report shows them
STATISTICS = (
    "mirror_weight",
    "neighbour_weight",
    "bos_weight",
    "entropy",
    "uniform_entropy",
    "argmax_at_mirror-1",
    "argmax_at_mirror+0",
    "argmax_at_mirror+1",
)

# -------------------------------------------------------------------------------------------
# settings


def _check(*, model: str, seq_len: int, sizes: dict, device: str) -> None:
    """Refuse bad settings before any work, naming what is allowed."""
    from lecture17.tiny_transformer import MODEL_KINDS
    from lecture17.training import check_device

    if model not in MODEL_KINDS:
        raise ValueError(f"unknown model {model!r}; expected one of {MODEL_KINDS}")
    if model not in sizes:
        raise ValueError(f"sizes has no entry for model {model!r}; it has {sorted(sizes)}")
    if not isinstance(seq_len, int) or seq_len <= 0:
        raise ValueError(f"seq_len must be a positive integer, got {seq_len!r}")
    check_device(device)


# -------------------------------------------------------------------------------------------
# training


def builder(model: str, sizes: dict):
    """What train() calls under torch.manual_seed(seed), on the CPU: the same init on every
    device (train() moves the model afterwards)."""
    from lecture17.tiny_transformer import build_model
    from lecture17.training import VOCAB_SIZE

    def make():
        return build_model(model, src_vocab=VOCAB_SIZE, tgt_vocab=VOCAB_SIZE, **sizes[model])

    return make


def train_reversal(*, model: str, seq_len: int, sizes: dict, train: TrainSettings, device, seed):
    """§9.1: Adam, linear warmup, fresh batches, teacher forcing; greedy evaluation on
    train.n_test new sequences at the end. Returns (TrainResult, wall ms of the whole call)."""
    from lecture17 import training

    make_model, task = builder(model, sizes), training.ReversalTask(seq_len)

    def run():
        return training.train(make_model, task, train, seed=seed, device=device)

    result, seconds = timed(run, device=device)  # evaluation included
    return result, 1e3 * seconds


def model_description(model: str, seq_len: int, sizes: dict, train: TrainSettings, seed: int):
    """How a kept model was trained (kept_models): what a demo reading it checks first."""
    return {
        "model": model,
        "seq_len": seq_len,
        "sizes": sizes[model],
        "train": dataclasses.asdict(train),
        "seed": seed,
    }


def trained_model(trained, *, model: str, seq_len: int, sizes: dict, train, device, seed):
    """05.1's model for these settings: rebuilt from its kept weights (`trained`, the list a
    05.1 job kept), or, with trained=None, trained again (the same settings and seed)."""
    if trained is None:
        return train_reversal(
            model=model, seq_len=seq_len, sizes=sizes, train=train, device=device, seed=seed
        )[0].model.cpu()
    kept = the_one(trained, **model_description(model, seq_len, sizes, train, seed))
    net = builder(model, sizes)()
    net.load_state_dict(kept["state_dict"])
    return net.eval()


# -------------------------------------------------------------------------------------------
# what goes into the tables


def structure(net) -> dict[str, int]:
    """§9.1's model table, read from the built model: parameters, layers, widths, heads."""
    from lecture17.tiny_transformer import Transformer, count_parameters

    sizes = {"n_params": count_parameters(net)}  # first: the report's first column
    if isinstance(net, Transformer):  # its config: a layer of another style need not say
        c = net.config
        sizes |= {
            "encoder_layers": len(net.encoder.layers),
            "decoder_layers": len(net.decoder.layers),
            "d_model": c.d_model,
            "n_heads": c.n_heads,
            "d_ff": c.d_ff,
        }
    else:  # GRUSeq2Seq: one GRU layer each side
        sizes |= {
            "encoder_layers": net.encoder.num_layers,
            "decoder_layers": net.decoder.num_layers,
            "emb_dim": net.encoder.input_size,
            "hidden": net.encoder.hidden_size,
        }
    return sizes


def accuracy_records(final: dict, seq_len: int) -> list[dict]:
    """Greedy-decoding accuracies. position_accuracy gets 1-based output positions t = 1..L
    (§9.3, flag F07: t copies input L + 1 - t); the EOS position L + 1 is left out."""
    names = ("token_accuracy", "symbol_accuracy", "sequence_accuracy")
    records = rows({q: final[q] for q in names})
    per_position = final["position_accuracy"][:seq_len]  # drop the EOS position
    records += [
        row("position_accuracy", acc, position=t) for t, acc in enumerate(per_position, start=1)
    ]
    return records


# -------------------------------------------------------------------------------------------
# 05.1 §9.1–§9.2: the comparison


def reversal_comparison(
    *,
    model: str,
    seq_len: int,
    sizes: dict,
    train: TrainSettings,
    device: str,
    seed: int,
) -> pd.DataFrame:
    """Train one model on reversal of length seq_len and score it by greedy decoding.

    Quantities: the model's structure and n_params (§9.1); token_accuracy (the L symbols and
    EOS, flag F01), symbol_accuracy (the L symbols), sequence_accuracy (all L + 1 right),
    position_accuracy by 1-based output position (§9.3); ms_per_step (median training step,
    train()'s clock) and ms_train_total (the whole run, evaluation included), both
    machine-dependent (§9.5).
    """
    _check(model=model, seq_len=seq_len, sizes=sizes, device=device)
    result, ms_total = train_reversal(
        model=model, seq_len=seq_len, sizes=sizes, train=train, device=device, seed=seed
    )
    keep(result.model, **model_description(model, seq_len, sizes, train, seed))  # for 06.6
    records = rows(structure(result.model))
    records += accuracy_records(result.final, seq_len)
    records += rows({"ms_per_step": result.ms_per_step, "ms_train_total": ms_total})
    return tidy(records, ["position"])


def luong_reading(
    *,
    score: str,
    input_feeding: bool,
    seq_len: int,
    sizes: dict,
    train: TrainSettings,
    device: str,
    seed: int,
) -> pd.DataFrame:
    """05.1's GRU + attention under one reading of "Luong 的写法" (demo 07.5): the "general"
    or "dot" score, with or without input feeding (Luong et al. 2015, §3.1 and §3.3), in
    place of sizes["gru_attention"]'s; then reversal_comparison's rows."""
    attention = {**sizes["gru_attention"], "score": score, "input_feeding": input_feeding}
    return reversal_comparison(
        model="gru_attention",
        seq_len=seq_len,
        sizes={**sizes, "gru_attention": attention},
        train=train,
        device=device,
        seed=seed,
    )


# -------------------------------------------------------------------------------------------
# 05.3 §9.4: what the attention learned


def decoding_weights(net, src) -> dict:
    """Per-head weights {block: (b, h, n_q, n_k)} seen while greedy-decoding src: those of the
    parallel pass over [BOS, decoded prefix], which equal the step-by-step ones under the
    look-ahead mask (§8.4). The GRU's single attention becomes one head."""
    import torch

    from lecture17.training import BOS

    L = src.shape[1]
    decoded = net.greedy_decode(src, L + 1, bos_id=BOS)  # (b, L+1)
    tgt_in = torch.cat([src.new_full((src.shape[0], 1), BOS), decoded[:, :-1]], dim=1)
    weights = net.attention_weights(src, tgt_in)
    return {block: w if w.dim() == 4 else w[:, None] for block, w in weights.items()}


def mirror_weight(weights):
    """Cross-attention (b, h, n_tgt, L): mean weight of output step t on source L-1-t, per head.

    Only the L steps that copy a symbol (t < L); the EOS step has no mirror position.
    """
    import torch

    L = weights.shape[-1]
    t = torch.arange(L, device=weights.device)
    return weights[:, :, t, L - 1 - t].mean(dim=(0, 2))  # (h,)


def neighbour_weight(weights):
    """Cross-attention (b, h, n_tgt, L): mean weight of output step t < L on the two
    neighbours of its mirror position L-1-t (0 outside the sequence), per head (§9.4)."""
    import torch
    import torch.nn.functional as F

    L = weights.shape[-1]
    padded = F.pad(weights[:, :, :L], (1, 1))  # (b, h, L, L+2): source j sits at column j+1
    t = torch.arange(L, device=weights.device)
    mirror = L - 1 - t
    return (padded[:, :, t, mirror] + padded[:, :, t, mirror + 2]).mean(dim=(0, 2))  # (h,)


def mirror_offset_share(weights, offset: int):
    """Share of output steps t < L whose argmax source position is mirror + offset, per head."""
    import torch

    L = weights.shape[-1]
    mirror = L - 1 - torch.arange(L, device=weights.device)  # (L,)
    argmax = weights[:, :, :L].argmax(dim=-1)  # (b, h, L)
    return (argmax == mirror + offset).double().mean(dim=(0, 2))  # (h,)


def attention_entropy(weights):
    """Mean entropy -sum_j w_j ln w_j of the rows of (b, h, n_q, n_k), per head (0 ln 0 = 0)."""
    import torch

    return torch.special.entr(weights).sum(dim=-1).mean(dim=(0, 2))  # (h,)


def bos_weight(weights):
    """Decoder self-attention (b, h, n, n): mean weight on BOS (key 0), per head."""
    return weights[..., 0].mean(dim=(0, 2))  # (h,)


def attention_statistics(weights: dict) -> list[dict]:
    """§9.4 on decoding weights (decoding_weights): rows per (block, quantity, head), 1-based.

    Cross-attention (the L steps t < L that copy a symbol): mirror_weight, entropy,
    argmax_at_mirror{-1,+0,+1}; decoder self-attention (queries t >= 1; query 0 can only see
    BOS): bos_weight, entropy; encoder self-attention: entropy.
    """
    records = []
    for block, w in weights.items():
        if block.endswith("cross_attn"):
            w = w[:, :, : w.shape[-1]]  # (b, h, L, L): the steps that copy a symbol
            stats = {"mirror_weight": mirror_weight(w), "entropy": attention_entropy(w)}
            for k in (-1, 0, 1):
                stats[f"argmax_at_mirror{k:+d}"] = mirror_offset_share(w, k)
        elif block.startswith("decoder"):
            w = w[:, :, 1:]  # (b, h, L, L+1)
            stats = {"bos_weight": bos_weight(w), "entropy": attention_entropy(w)}
        else:
            stats = {"entropy": attention_entropy(w)}
        for quantity, per_head in stats.items():
            for head, value in enumerate(per_head.tolist(), start=1):
                records.append(row(quantity, value, block=block, head=head))
    return records


def map_records(weights: dict) -> list[dict]:
    """Mean attention map of every block and head over the samples: query and key 0-based
    (query t = output step, key j = source position, or target prefix position in the
    decoder's self-attention, 0 = BOS)."""
    records = []
    for block, w in weights.items():
        mean = w.mean(dim=0).double().numpy()  # (h, n_q, n_k)
        records += [
            row("map", v, block=block, head=h + 1, query=q, key=k)
            for (h, q, k), v in np.ndenumerate(mean)
        ]
    return records


def measured_uniform_entropy(weights: dict) -> list[dict]:
    """§9.4 "均匀分布是 2.77", measured: attention_entropy, the function that gives
    the encoder's entropies, on uniform rows of the encoder's own shape (b, h, L, L), every
    weight 1/L: per head ln L (ln 16 = 2.77 at L = 16) from the same code path."""
    import torch

    records = []
    for block, w in weights.items():
        if block.startswith("encoder"):
            uniform = torch.full_like(w, 1 / w.shape[-1], dtype=torch.float64)  # (b, h, L, L)
            records += [
                row("measured_uniform_entropy", v, block=block, head=h)
                for h, v in enumerate(attention_entropy(uniform).tolist(), start=1)
            ]
    return records


def attention_records(net, src, maps: bool = True) -> list[dict]:
    """§9.4's statistics per block and head (attention_statistics), the neighbours' share of
    the cross-attention, the uniform entropy ln L beside the encoder's, and the maps (unless
    maps=False); last, the uniform entropy measured (measured_uniform_entropy). One greedy
    decoding of src gives every weight."""
    L = src.shape[1]
    weights = decoding_weights(net, src)
    records = attention_statistics(weights)
    for block, w in weights.items():
        heads = range(1, w.shape[1] + 1)
        if block.endswith("cross_attn"):
            records += [
                row("neighbour_weight", v, block=block, head=h)
                for h, v in zip(heads, neighbour_weight(w).tolist(), strict=True)
            ]
        elif block.startswith("encoder"):  # §9.4 "均匀分布是 …": ln L, computed
            records += [row("uniform_entropy", np.log(L), block=block, head=h) for h in heads]
    blocks = list(weights)  # block by block, each quantity's heads together, in STATISTICS order
    records.sort(key=lambda r: (blocks.index(r["block"]), STATISTICS.index(r["quantity"])))
    return records + (map_records(weights) if maps else []) + measured_uniform_entropy(weights)


def attention_analysis(
    *,
    model: str,
    seq_len: int,
    sizes: dict,
    train: TrainSettings,
    n_samples: int,
    maps: bool,
    device: str,
    seed: int,
) -> pd.DataFrame:
    """Train as in 05.1 (same `train` settings, same seed: the same model), then read the
    attention weights on the first n_samples sequences of its test set (§9.4). maps=False
    leaves the per-(query, key) maps out (the robustness runs, 07.6–07.7, keep only the
    per-head statistics).

    Labels: block ("encoder.0.self_attn", "decoder.0.self_attn", "decoder.0.cross_attn"; the
    GRU's "cross_attn"), head (1-based), query and key (maps only). Quantities per head:
    mirror_weight, neighbour_weight, entropy, argmax_at_mirror{-1,+0,+1} (cross-attention);
    bos_weight, entropy (decoder self-attention); entropy, uniform_entropy (encoder, ln L);
    `map`, the mean weight of each (query, key); the model's token and sequence accuracy; and
    last, measured_uniform_entropy (encoder: the entropy code on uniform rows, ln L measured).
    """
    _check(model=model, seq_len=seq_len, sizes=sizes, device=device)
    if not 0 < n_samples <= train.n_test:
        raise ValueError(f"n_samples must be in 1..n_test ({train.n_test}), got {n_samples}")
    from lecture17.training import ReversalTask, evaluation_set, single_thread

    result, _ = train_reversal(
        model=model, seq_len=seq_len, sizes=sizes, train=train, device=device, seed=seed
    )
    records = rows({q: result.final[q] for q in ("token_accuracy", "sequence_accuracy")})
    src = evaluation_set(ReversalTask(seq_len), seed, n_samples)[0]  # (n_samples, L), CPU
    with single_thread():  # the analysis runs on the CPU, whatever trained the model
        records += attention_records(result.model.cpu(), src, maps=maps)
    return tidy(records, ["block", "head", "query", "key"])


# -------------------------------------------------------------------------------------------
# 05.4 §9.5: time per training step


def step_time(
    *,
    model: str,
    seq_len: int,
    sizes: dict,
    lr: float,
    batch_size: int,
    warmup_steps: int,
    timed_steps: int,
    device: str,
    seed: int,
) -> pd.DataFrame:
    """ms per training step (training.train_step, train()'s step: forward, loss, backward,
    Adam step; batch drawn outside the clock): median of timed_steps steps after warmup_steps
    untimed ones, with their quartiles (the spread a verdict on it must allow), single thread
    (§9.5); the job runs with no other job beside it (registry `alone`). Machine-dependent:
    timings differ on every run."""
    _check(model=model, seq_len=seq_len, sizes=sizes, device=device)
    if warmup_steps < 0 or timed_steps <= 0:
        raise ValueError(
            f"need warmup_steps >= 0 and timed_steps > 0, got {warmup_steps}, {timed_steps}"
        )
    import torch

    from lecture17 import training

    task = training.ReversalTask(seq_len)
    with training.single_thread():
        torch.manual_seed(seed)
        net = builder(model, sizes)().to(device)  # as train() does: built on the CPU, then moved
        opt = training.make_optimizer("adam", net.parameters(), lr)
        data = torch.Generator().manual_seed(seed)
        seconds = []
        for _ in range(warmup_steps + timed_steps):
            batch = training.to_device(task.sample(data, batch_size), device)  # outside the clock
            seconds.append(timed(training.train_step, task, net, batch, opt, device=device)[1])
    q1, median, q3 = (1e3 * float(q) for q in np.percentile(seconds[warmup_steps:], [25, 50, 75]))
    quantities = {"ms_per_step": median, "ms_per_step_q1": q1, "ms_per_step_q3": q3}
    return tidy([row(name, ms) for name, ms in quantities.items()], [])


# -------------------------------------------------------------------------------------------
# 05.5 §9.2 / §9.4: one example at a time, on 05.1's kept models


def token_names() -> dict[str, int]:
    """The reversal task's vocabulary as the page names it: the 10 symbols "0".."9", then
    PAD, BOS and EOS (a model that has not learned may decode any of them)."""
    from lecture17.tasks import BOS, EOS, FIRST_SYMBOL, N_SYMBOLS, PAD

    symbols = {str(s): FIRST_SYMBOL + s for s in range(N_SYMBOLS)}
    return {**symbols, "PAD": PAD, "BOS": BOS, "EOS": EOS}


def example_records(src, tgt_out, decoded) -> list[dict]:
    """Per example (0-based) and position (0-based): source, target and output token ids;
    per example, sequence_correct (all L + 1 outputs right)."""
    records = []
    for i in range(src.shape[0]):
        for name, tokens in (("source", src[i]), ("target", tgt_out[i]), ("output", decoded[i])):
            records += [row(name, int(t), example=i, position=p) for p, t in enumerate(tokens)]
        correct = bool((decoded[i] == tgt_out[i]).all())
        records.append(row("sequence_correct", float(correct), example=i))
    return records


def decoded_examples(
    *,
    model: str,
    seq_len: int,
    sizes: dict,
    train: TrainSettings,
    n_examples: int,
    attention_lengths: list[int],
    device: str,
    seed: int,
    trained,
) -> pd.DataFrame:
    """§9.2's results one sequence at a time: 05.1's trained model of this grid point and seed
    (`trained`: the models its job kept; None: trained again, the same way) greedy-decodes the
    first n_examples sequences of 05.1's test set (train.n_test, training.evaluation_set).

    Rows: token_id per `token` (the vocabulary: "0".."9", BOS, EOS); per `example` and
    `position` the source, target and output token ids (output: greedy, L + 1 steps, as 05.1
    scores); per example sequence_correct. A model with attention, at a seq_len in
    attention_lengths, adds `weight` per (block, head, query, key) of its cross-attention
    while decoding (decoding_weights: the weights greedy decoding used at each step; 05.3's
    `map` is their mean over 200 sequences), query t the output step (0-based, the last one
    EOS), key j the source position, rounded to 6 decimals (the page prints 3). Greedy tokens are
    argmaxes: at a near-tie another CPU may pick the other token (a single seed: `diff` lists
    such cells, never flags them).
    """
    _check(model=model, seq_len=seq_len, sizes=sizes, device=device)
    if not 0 < n_examples <= train.n_test:
        raise ValueError(f"n_examples must be in 1..n_test ({train.n_test}), got {n_examples}")
    import torch

    from lecture17.training import ReversalTask, evaluation_set, single_thread

    net = trained_model(
        trained, model=model, seq_len=seq_len, sizes=sizes, train=train, device=device, seed=seed
    )
    src, _, tgt_out = evaluation_set(ReversalTask(seq_len), seed, train.n_test)
    src, tgt_out = src[:n_examples], tgt_out[:n_examples]  # the first of 05.1's test set
    records = [row("token_id", i, token=name) for name, i in token_names().items()]
    with single_thread(), torch.no_grad():  # read on the CPU, whatever trained the model
        decoded = net.greedy_decode(src, seq_len + 1, bos_id=token_names()["BOS"])
        records += example_records(src, tgt_out, decoded)
        if seq_len in attention_lengths:
            records += cross_attention_records(decoding_weights(net, src))
    return tidy(records, ["token", "block", "example", "position", "head", "query", "key"])


def cross_attention_records(weights: dict) -> list[dict]:
    """`weight` per (block, example, head, query, key) of each cross-attention block of
    decoding_weights, rounded to 6 decimals (the page prints 3)."""
    return [
        row("weight", v, block=block, example=i, head=h + 1, query=q, key=k)
        for block, w in weights.items()
        if block.endswith("cross_attn")
        for (i, h, q, k), v in np.ndenumerate(np.round(w.double().numpy(), 6))
    ]
