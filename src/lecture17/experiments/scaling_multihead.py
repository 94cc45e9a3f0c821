"""代码 02 · 缩放与多头注意力 Scaling and multi-head attention (lecture §4–§5).

Demos of the lecture's script 02:

    02.1  dot_product_variance  §4.2  Var(q·k) = d_k; dividing by sqrt(d_k) brings it back to 1
    02.2  softmax_saturation    §4.3  unscaled scores saturate the softmax; ‖J‖_F collapses
    02.3  lookup_task           §4.4  training a look-up with and without 1/sqrt(d_k) (torch)
    07.2  lookup_sensitivity    §4.4  the same under other readings of its set-up
    02.4  multihead_vs_torch    §5.2–§5.4  parameter count, numpy = ours = nn.MultiheadAttention,
                                      the inverted-mask pitfall
    02.5  one_head_vs_three     §5.1  one head averages; three heads each ask one question

References: Vaswani et al. (2017), "Attention is all you need", §3.2.1 and footnote 4 (why
1/sqrt(d_k)), §3.2.2 (multi-head attention).

Every function follows the demo contract (docs/ARCHITECTURE.md): keyword-only settings from
config/config.yaml, a `seed`, and a tidy DataFrame (label columns, `quantity`, `value`).
A label that does not apply to a row is left empty (None).

Long on purpose: one module per lecture script (the registry maps the lecture's "代码 0x" to it),
each demo's function beside its helpers; a job depends only on the lines its function runs
(pipeline.deps.code_parts), so the module's length costs no reruns.
"""

from dataclasses import replace

import numpy as np
import pandas as pd

from lecture17.attention_numpy import (
    combine_heads,
    count_mha_params,
    create_padding_mask,
    mha_params_from_torch,
    multi_head_attention,
    scaled_dot_product_attention,
    softmax,
    split_heads,
)

# 02.5 reuses the sentence of 01.1 (§5.1 "回到 Jane 的句子"); that module is numpy-only too.
from lecture17.experiments.jane import JANE_DIMS, JANE_WORDS, jane_embeddings
from lecture17.experiments.tidy import row, rows, tidy
from lecture17.train_settings import TrainSettings

# -------------------------------------------------------------------------------------------
# helpers


# Random vectors are drawn this many rows at a time, so that 2000 × 16 keys × 1024 dims never sit
# in memory at once. Changing it changes which random numbers land where (not the statistics).
_CHUNK_ROWS = 500


def _random_scores(rng, n_rows: int, n_keys: int, d_k: int) -> np.ndarray:
    """Unscaled scores q·k_j for `n_rows` queries, each against its own `n_keys` keys.

    Every component of q and k is drawn i.i.d. N(0, 1), the assumption of §4.2.

    Returns
    -------
    scores : ndarray, shape (n_rows, n_keys)
    """
    chunks = []
    for start in range(0, n_rows, _CHUNK_ROWS):
        rows = min(_CHUNK_ROWS, n_rows - start)
        q = rng.standard_normal((rows, 1, d_k))  # (rows, 1, d_k)
        K = rng.standard_normal((rows, n_keys, d_k))  # (rows, n_keys, d_k)
        chunks.append(np.sum(q * K, axis=-1))  # (rows, n_keys)
    return np.concatenate(chunks)  # (n_rows, n_keys)


# -------------------------------------------------------------------------------------------
# 02.1 Var(q·k) grows like d_k (§4.2)


def dot_product_variance(*, d_k_values: list[int], n_pairs: int, seed: int) -> pd.DataFrame:
    """Sample variance and std of q·k for random q, k, and the variance of q·k / sqrt(d_k).

    Rows: `d_k` → `var`, `std`, `var_scaled`.
    """
    rng = np.random.default_rng(seed)
    records = []
    for d_k in d_k_values:
        dots = _random_scores(rng, n_pairs, 1, d_k)[:, 0]  # (n_pairs,)
        scaled = dots / np.sqrt(d_k)
        stats = {"var": np.var(dots, ddof=1), "std": np.std(dots, ddof=1)}
        records += rows(stats | {"var_scaled": np.var(scaled, ddof=1)}, d_k=d_k)
    return tidy(records, ["d_k"])


# -------------------------------------------------------------------------------------------
# 02.2 softmax saturation and its vanishing Jacobian (§4.3)


def _softmax_statistics(scores: np.ndarray, threshold: float) -> dict[str, float]:
    """Means over rows of: max weight, entropy, ‖J‖_F with J = diag(p) − p pᵀ, share saturated;
    and each one's standard deviation over the rows (`<name>_trial_sd`, ddof 1).

    scores : ndarray, shape (n_rows, n_keys)
    """
    p = softmax(scores, axis=-1)  # (n_rows, n_keys)
    # Entropy from the scores, -Σ p log p = logsumexp(s) - Σ p s: no log(0) for saturated rows.
    top = scores.max(axis=-1, keepdims=True)  # (n_rows, 1)
    logsumexp = top[:, 0] + np.log(np.sum(np.exp(scores - top), axis=-1))  # (n_rows,)
    entropy = logsumexp - np.sum(p * scores, axis=-1)  # (n_rows,)
    # §4.3: the softmax Jacobian ∂p/∂s; near one-hot p makes every entry near 0.
    J = p[:, :, None] * np.eye(p.shape[-1]) - p[:, :, None] * p[:, None, :]  # (n_rows, n, n)
    max_weight = p.max(axis=-1)  # (n_rows,)
    per_row = {
        "max_weight": max_weight,
        "entropy": entropy,
        "jacobian_norm": np.linalg.norm(J, axis=(1, 2)),
        "fraction_saturated": (max_weight > threshold).astype(float),
    }
    means = {name: values.mean() for name, values in per_row.items()}
    # each mean's per-row standard deviation: the Monte Carlo standard error is sd / sqrt(n_rows)
    spreads = {f"{name}_trial_sd": v.std(ddof=1) for name, v in per_row.items() if len(v) > 1}
    return means | spreads


def softmax_saturation(
    *, d_k_values: list[int], n_keys: int, n_trials: int, saturation_threshold: float, seed: int
) -> pd.DataFrame:
    """One query against `n_keys` random keys, `n_trials` times, with and without 1/sqrt(d_k).

    The same random scores are used both ways (a paired comparison).
    Rows: (`d_k`, `scaled` = "scaled" | "unscaled") → `max_weight`, `entropy`,
    `jacobian_norm` (mean ‖diag(p) − p pᵀ‖_F), `fraction_saturated` (share of queries whose
    largest weight exceeds `saturation_threshold`), and `<each>_trial_sd`, its standard
    deviation over the trials (the Monte Carlo standard error is that / √n_trials); no label
    → `measured_uniform_entropy`, the same entropy code on `n_keys` equal scores (a uniform
    row): §4.3's ln 16 = 2.77,
    measured by the function that measures the table's entropies.
    """
    rng = np.random.default_rng(seed)
    records = []
    for d_k in d_k_values:
        scores = _random_scores(rng, n_trials, n_keys, d_k)  # (n_trials, n_keys)
        for scaled, s in (("scaled", scores / np.sqrt(d_k)), ("unscaled", scores)):
            stats = _softmax_statistics(s, saturation_threshold)
            records += rows(stats, d_k=d_k, scaled=scaled)
    uniform = _softmax_statistics(np.zeros((1, n_keys)), saturation_threshold)["entropy"]
    records.append(row("measured_uniform_entropy", uniform))
    return tidy(records, ["d_k", "scaled"])


# -------------------------------------------------------------------------------------------
# 02.3 the look-up task: training with and without 1/sqrt(d_k) (§4.4, Ex2(c), Ex9)


def _steps_to(evaluations: list[dict], threshold: float) -> int | None:
    """The first evaluated step whose accuracy is ≥ threshold (§4.4), None if none is."""
    return next((e["step"] for e in evaluations if e["accuracy"] >= threshold), None)


def _fastest(per_lr: dict) -> float:
    """The lr that reaches the threshold first (ties: the first in the swept order); when none
    reaches it, the lr with the highest final accuracy."""
    reached = {lr: r["steps"] for lr, r in per_lr.items() if r["steps"] is not None}
    if reached:
        return min(reached, key=reached.get)
    return max(per_lr, key=lambda lr: per_lr[lr]["final"])


def _learning_rate_rows(evaluations: list[dict], lr: float, outcome: dict) -> list[dict]:
    """§4.4, one swept lr (label `lr`, text as "%g"): `accuracy` at every evaluated `step`;
    `steps_to_90`, the first step on the claims' grid (every claim_every steps) with accuracy ≥
    threshold, and `steps_to_90_fine`, the first on the diagnostic grid (every eval_every
    steps), each only where there is one (never NaN); `reached` (1 or 0, on the claims' grid);
    `final_accuracy`. outcome: {"steps", "fine": first steps or None, "final": accuracy}."""
    label = format(lr, "g")  # text: a float label would print as 0.00029999999999999997
    first = outcome["steps"]
    records = [row("accuracy", e["accuracy"], lr=label, step=e["step"]) for e in evaluations]
    if first is not None:  # a lr that never reaches the threshold has no step count
        records.append(row("steps_to_90", first, lr=label))
    if outcome["fine"] is not None:
        records.append(row("steps_to_90_fine", outcome["fine"], lr=label))
    return records + [
        row("reached", float(first is not None), lr=label),
        row("final_accuracy", outcome["final"], lr=label),
    ]


def _sweep_rows(per_lr: dict, n_pairs: int) -> list[dict]:
    """§4.4's table, one cell: `best_steps_to_90` (the fastest lr's on the claims' grid, only if
    one reached), `best_steps_to_90_fine` (the same on the diagnostic grid), `n_lrs_reached`,
    `n_lrs`, `best_lr` (the fastest lr, or the best final accuracy if none reached) and
    `chance` (1 / n_pairs)."""
    reached = [r["steps"] for r in per_lr.values() if r["steps"] is not None]
    fine = [r["fine"] for r in per_lr.values() if r["fine"] is not None]
    records = [row("best_steps_to_90", min(reached))] if reached else []
    records += [row("best_steps_to_90_fine", min(fine))] if fine else []
    return records + [
        row("n_lrs_reached", len(reached)),
        row("n_lrs", len(per_lr)),
        row("best_lr", _fastest(per_lr)),
        row("chance", 1 / n_pairs),
    ]


def _check_grids(train: TrainSettings, claim_every: int) -> None:
    """The claims read the evaluations every claim_every steps: a subset of the evaluations
    (train.eval_every, the diagnostic grid), so claim_every must be a multiple of it."""
    if train.eval_every is None or claim_every % train.eval_every:
        raise ValueError(
            f"claim_every ({claim_every}) must be a multiple of train.eval_every "
            f"({train.eval_every}): the claims read a subset of the evaluations"
        )


def _outcome(trained, claim_every: int, threshold: float) -> dict:
    """One lr's run: the first step ≥ threshold on the claims' grid (every claim_every
    steps, as the lecture quotes) and on the diagnostic grid (every evaluation), each None
    if never, and the final accuracy."""
    on_grid = [e for e in trained.evaluations if e["step"] % claim_every == 0]
    return {
        "steps": _steps_to(on_grid, threshold),
        "fine": _steps_to(trained.evaluations, threshold),
        "final": trained.final["accuracy"],
    }


def lookup_task(
    *,
    n_pairs: int,
    d_model: int,
    d_k: int,
    scaled: bool,
    optimizer: str,
    adam_lrs: list[float],
    sgd_lrs: list[float],
    train: TrainSettings,
    threshold: float,
    claim_every: int,
    readout: str,
    keys: str,
    device: str,
    seed: int,
) -> pd.DataFrame:
    """One (d_k, scaled, optimizer) cell of §4.4's table: train LookupAttention (readout and
    keys: its readings) at every swept lr (adam_lrs or sgd_lrs) from the same init and the
    same batches. Rows per lr (`_learning_rate_rows`), per job (`_sweep_rows`), then
    `simulated_chance`: a guesser answering one of the n_pairs values at random
    (training.ValueGuesser, ≥ training.CHANCE_DRAWS guesses: standard error 0.00077 at 1/16).
    """
    from lecture17 import tiny_transformer, training

    training.check_device(device)
    _check_grids(train, claim_every)
    task = training.LookupTask(n_pairs, d_model, keys=keys)

    def make_model():
        return tiny_transformer.LookupAttention(
            d_model, d_k, scale=scaled, readout=readout, keys=keys, n_pairs=n_pairs
        )

    make_model()  # an unknown readout or keys fails here, before any training
    records, per_lr = [], {}
    for lr in adam_lrs if optimizer == "adam" else sgd_lrs:
        settings = replace(train, optimizer=optimizer, lr=lr)  # unknown optimizer: train refuses
        trained = training.train(make_model, task, settings, seed=seed, device=device)
        per_lr[lr] = _outcome(trained, claim_every, threshold)
        records += _learning_rate_rows(trained.evaluations, lr, per_lr[lr])
    records += _sweep_rows(per_lr, n_pairs)
    guessed = training.guessed_chance(task, training.ValueGuesser, seed, train.n_test)
    records.append(row("simulated_chance", guessed["accuracy"]))
    return tidy(records, ["lr", "step"])


def lookup_sensitivity(
    *,
    reading: str,
    readings: dict,
    n_pairs: int,
    d_model: int,
    d_k: int,
    scaled: bool,
    optimizer: str,
    adam_lrs: list[float],
    sgd_lrs: list[float],
    train: TrainSettings,
    threshold: float,
    claim_every: int,
    readout: str,
    keys: str,
    device: str,
    seed: int,
) -> pd.DataFrame:
    """§4.4 under another reading of its set-up (the pre-registered sensitivity study, demo
    07.2): 02.3's settings with readings[reading] put in their place (e.g. {"readout": "layer"}
    for an ordinary attention layer, {"d_model": 64}), then lookup_task."""
    settings = {k: v for k, v in locals().items() if k not in ("reading", "readings")}
    if reading not in readings:
        raise ValueError(f"unknown reading {reading!r}; expected one of {sorted(readings)}")
    if unknown := set(readings[reading]) - {"d_model", "readout", "keys"}:
        raise ValueError(
            f"reading {reading!r} changes {sorted(unknown)}; a reading changes d_model, readout "
            "or keys"
        )
    return lookup_task(**{**settings, **readings[reading]})


# -------------------------------------------------------------------------------------------
# 02.4 multi-head attention: parameters, numpy = ours = PyTorch, the mask pitfall (§5.2–§5.4)


def _random_torch_mha(d_model: int, n_heads: int, generator):
    """nn.MultiheadAttention in float64, EVERY parameter ~ U(−1/√d, 1/√d) from `generator`.

    PyTorch's own init sets the biases to 0, which would hide a bias copied to the wrong place.
    """
    import torch
    from torch import nn

    mha = nn.MultiheadAttention(d_model, n_heads, batch_first=True, dtype=torch.float64)
    bound = 1 / np.sqrt(d_model)
    with torch.no_grad():
        for p in mha.parameters():
            nn.init.uniform_(p, -bound, bound, generator=generator)
    return mha.eval()


def _three_implementations(mha, tiny, params, n_heads, x_q, x_kv, mask=None):
    """Outputs and per-head weights of numpy, our PyTorch and nn.MultiheadAttention.

    mask : ndarray (b, 1, n_k), 1 = may attend (the lecture's convention), or None.
    """
    import torch

    out, weights = {}, {}
    out["numpy"], weights["numpy"] = multi_head_attention(x_q, x_kv, params, n_heads, mask)
    q, kv = torch.from_numpy(x_q), torch.from_numpy(x_kv)
    with torch.no_grad():
        tiny_mask = None if mask is None else torch.from_numpy(mask[:, None] == 1)  # (b,1,1,n_k)
        o, w = tiny(q, kv, kv, mask=tiny_mask, need_weights=True)
        out["tiny"], weights["tiny"] = o.numpy(), w.numpy()
        # §5.4: nn.MultiheadAttention's boolean masks mean True = IGNORE: flip ours.
        ignore = None if mask is None else torch.from_numpy(mask[:, 0] == 0)  # (b, n_k)
        o, w = mha(q, kv, kv, key_padding_mask=ignore, average_attn_weights=False)
        out["torch"], weights["torch"] = o.numpy(), w.numpy()  # (b, n_q, d), (b, h, n_q, n_k)
    return out, weights


def _parameter_count_rows(count_d_model: int, count_heads: list[int]) -> list[dict]:
    """§5.2: the heads split d_model, they do not add parameters. `n_heads` →
    `n_params_torch` (numel of nn.MultiheadAttention(count_d_model, h)), `n_params_formula`."""
    from torch import nn

    n_formula = count_mha_params(count_d_model)  # 4 d² + 4 d
    records = []
    for h in count_heads:
        n_torch = sum(p.numel() for p in nn.MultiheadAttention(count_d_model, h).parameters())
        records += [
            row("n_params_torch", n_torch, n_heads=h),
            row("n_params_formula", n_formula, n_heads=h),
        ]
    return records


def _random_inputs(rng, batch: int, seq_len: int, cross_len: int, d_model: int, n_pad: int):
    """§5.3–§5.4's inputs: x (b, n, d_model), another sequence (b, cross_len, d_model) for the
    queries of cross-attention, and the padding mask (b, 1, n) of tokens whose last n_pad
    positions are padding (1 = real token)."""
    x = rng.standard_normal((batch, seq_len, d_model))  # (b, n, d_model)
    x_other = rng.standard_normal((batch, cross_len, d_model))  # (b, n_q, d_model)
    tokens = rng.integers(1, 10, size=(batch, seq_len))  # (b, n); 0 is the padding id
    tokens[:, seq_len - n_pad :] = 0
    return x, x_other, create_padding_mask(tokens)  # ..., (b, 1, n)


# the three implementations compared pairwise, in the table's order
COMPARISONS = (("numpy", "torch"), ("tiny", "torch"), ("numpy", "tiny"))


def _agreement_rows(mha, tiny, params, n_heads: int, cases: dict) -> list[dict]:
    """§5.3: (`case`, `comparison`) → `max_abs_diff_output`, `max_abs_diff_weights` between
    each pair of the three implementations, for every case (x_q, x_kv, mask)."""
    records = []
    for case, (x_q, x_kv, mask) in cases.items():
        out, weights = _three_implementations(mha, tiny, params, n_heads, x_q, x_kv, mask)
        for a, b in COMPARISONS:
            for quantity, values in (("output", out), ("weights", weights)):
                diff = np.max(np.abs(values[a] - values[b]))
                records.append(
                    row(f"max_abs_diff_{quantity}", diff, case=case, comparison=f"{a}_vs_{b}")
                )
    return records


def _mask_pitfall_rows(mha, x: np.ndarray, pad_mask: np.ndarray) -> list[dict]:
    """§5.4 pitfall: our 1 = may attend handed to nn.MultiheadAttention, where True = ignore.
    `mask` (inverted | correct) → `pad_weight_mean`, `_min`, `_max` of the weight each (head,
    query) puts on the padding keys."""
    import torch

    is_pad = pad_mask[:, 0] == 0  # (b, n)
    records = []
    for name, ignore in (("inverted", ~is_pad), ("correct", is_pad)):
        with torch.no_grad():
            _, w = mha(
                *(torch.from_numpy(x),) * 3,
                key_padding_mask=torch.from_numpy(ignore),
                average_attn_weights=False,
            )  # (b, h, n, n)
        on_pads = np.einsum("bhqk,bk->bhq", w.numpy(), is_pad.astype(np.float64))  # (b, h, n)
        records += [
            row(f"pad_weight_{stat}", getattr(np, stat)(on_pads), mask=name)
            for stat in ("mean", "min", "max")
        ]
    return records


def multihead_vs_torch(
    *,
    count_d_model: int,
    count_heads: list[int],
    d_model: int,
    n_heads: int,
    batch: int,
    seq_len: int,
    cross_len: int,
    n_pad: int,
    seed: int,
) -> pd.DataFrame:
    """Parameter counts; one set of parameters in three implementations; the mask pitfall.

    Rows: `n_heads` → `n_params_torch` (sum of numel of nn.MultiheadAttention(count_d_model, h))
    and `n_params_formula` (attention_numpy.count_mha_params); (`case`, `comparison`) →
    `max_abs_diff_output`, `max_abs_diff_weights` for case self (self-attention), cross (Q from
    another sequence of `cross_len` tokens) and padding (the last `n_pad` keys masked, each
    mask converted correctly) and comparison numpy_vs_torch, tiny_vs_torch, numpy_vs_tiny;
    `mask` (inverted | correct) → `pad_weight_mean`, `pad_weight_min`, `pad_weight_max`: the
    total weight each (head, query) of nn.MultiheadAttention puts on the padding keys when the
    1 = may-attend mask is passed as its key_padding_mask unchanged (inverted) or flipped.
    """
    import torch

    from lecture17.tiny_transformer import MultiHeadAttention

    torch.set_num_threads(1)
    records = _parameter_count_rows(count_d_model, count_heads)
    rng = np.random.default_rng(seed)
    mha = _random_torch_mha(d_model, n_heads, torch.Generator().manual_seed(seed))
    params = mha_params_from_torch(mha)  # (d_in, d_out) rows-are-tokens, for numpy
    tiny = MultiHeadAttention(d_model, n_heads).double().eval()
    tiny.load_from_torch(mha)  # same (out, in) layout as nn.MultiheadAttention
    x, x_other, pad_mask = _random_inputs(rng, batch, seq_len, cross_len, d_model, n_pad)
    cases = {"self": (x, x, None), "cross": (x_other, x, None), "padding": (x, x, pad_mask)}
    records += _agreement_rows(mha, tiny, params, n_heads, cases)
    records += _mask_pitfall_rows(mha, x, pad_mask)
    return tidy(records, ["n_heads", "case", "comparison", "mask"])


# -------------------------------------------------------------------------------------------
# 02.5 one head averages, three heads each ask one question (§5.1)

HEAD_QUESTIONS = {"who": "person", "where": "place", "when": "time"}


def _heads_together(X, W_q, W_k, W_v, n_heads: int) -> np.ndarray:
    """The heads computed together, as §5.3 implements them: one projection per Q, K, V for
    all heads, split into heads, attention for all heads at once, concatenated.

    X : ndarray, shape (n, d_in); W_q, W_k, W_v : ndarray, shape (d_in, h * d_k), head i in
    columns i d_k … (i + 1) d_k − 1. Returns the concatenation, shape (n, h * d_k) (no W^O:
    §5.1's 12 numbers are the heads' answers side by side).
    """
    Q, K, V = (split_heads((X @ W)[np.newaxis], n_heads) for W in (W_q, W_k, W_v))  # (1,h,n,d_k)
    context, _ = scaled_dot_product_attention(Q, K, V)  # (1, h, n, d_k)
    return combine_heads(context)[0]  # (n, h * d_k)


def _head_independence(X: np.ndarray, W_qs: list[np.ndarray], rng) -> list[dict]:
    """§5.1 "互不干扰": each head's slice of the three-head output, measured three ways.

    `head_alone_vs_slice`: max |head i computed alone (single-head attention with only its
    W^Q_i, W^K_i = W^V_i = I) − its slice of the three-head output|, over all 5 words;
    `cross_head_change`: max change of head i's slice when the other heads' W^Q, W^K, W^V
    (their columns of the stacked matrices) get N(0, 1) noise: 0 if the heads do not interfere;
    `own_head_change`: the same noise on head i's own columns, the control that must move it.
    """
    n_heads, d_k = len(W_qs), X.shape[1]
    W_q = np.concatenate(W_qs, axis=1)  # (4, 12) = [W^Q_who | W^Q_where | W^Q_when]
    W_k = W_v = np.tile(np.eye(d_k), n_heads)  # (4, 12): W^K_i = W^V_i = I in every head
    together = _heads_together(X, W_q, W_k, W_v, n_heads)  # (5, 12)
    records = []
    for i, (head, W_qi) in enumerate(zip(HEAD_QUESTIONS, W_qs, strict=True)):
        own = np.arange(n_heads * d_k) // d_k == i  # (12,): head i's columns
        alone, _ = scaled_dot_product_attention(X @ W_qi, X, X)  # (5, 4)
        changes = {}
        for name, columns in (("cross_head_change", ~own), ("own_head_change", own)):
            noisy = [W + rng.standard_normal(W.shape) * columns for W in (W_q, W_k, W_v)]
            moved = _heads_together(X, *noisy, n_heads)[:, own] - together[:, own]  # (5, 4)
            changes[name] = np.abs(moved).max()
        alone_vs_slice = np.abs(alone - together[:, own]).max()
        records += rows({"head_alone_vs_slice": alone_vs_slice, **changes}, head=head)
    return records


def one_head_vs_three(*, strength: float, seed: int) -> pd.DataFrame:
    """visite asks who / where / when: with one query (one head) or one query per head.

    Every head uses W^K = W^V = I on the 4 meaning dims of §2.3 (d_k = 4). Only visite's
    query row of W^Q is set: `strength` on the dims it asks about (reading-aid flag F03: the
    lecture's digits need strength 6 here, see config/config.yaml).
    Rows: (`head`, `key`) → `weight`, visite's weights (head "single" or who / where / when);
    (head single, `dim`) → `output`, visite's output in the single head; (`head`, `dim`) →
    `concat_output`, the 12 numbers of [who | where | when], each head's 4 dims in turn;
    then (`head` who / where / when) → `head_alone_vs_slice`, `cross_head_change`,
    `own_head_change` (`_head_independence`: the three heads computed together, §5.3, and
    perturbed with N(0, 1) noise from np.random.default_rng(seed)).
    """
    rng = np.random.default_rng(seed)  # only the perturbations of _head_independence
    X = jane_embeddings()  # (5, 4)
    dims, visite = list(JANE_DIMS), JANE_WORDS.index("visite")
    asks = {"single": list(HEAD_QUESTIONS.values())} | {h: [d] for h, d in HEAD_QUESTIONS.items()}
    records, outputs, queries = [], {}, {}
    for head, asked in asks.items():
        W_q = np.zeros((4, 4))
        W_q[dims.index("action"), [dims.index(d) for d in asked]] = strength
        queries[head] = W_q
        output, weights = scaled_dot_product_attention(X @ W_q, X, X)  # (5, 4), (5, 5)
        outputs[head] = output[visite]  # (4,)
        records += [
            row("weight", w, head=head, key=k)
            for k, w in zip(JANE_WORDS, weights[visite], strict=True)
        ]
    records += [
        row("output", v, head="single", dim=d)
        for d, v in zip(JANE_DIMS, outputs["single"], strict=True)
    ]
    # §5.1: the three answers side by side, each in its own slice of a 12-dim vector.
    concat = np.concatenate([outputs[h] for h in HEAD_QUESTIONS])  # (12,)
    slices = [(h, d) for h in HEAD_QUESTIONS for d in JANE_DIMS]  # (12,) labels, same order
    records += [
        row("concat_output", v, head=h, dim=d) for (h, d), v in zip(slices, concat, strict=True)
    ]
    records += _head_independence(X, [queries[h] for h in HEAD_QUESTIONS], rng)
    return tidy(records, ["head", "key", "dim"])
