"""代码 03 · 位置编码 Positional encoding (lecture §6).

Demos of the lecture's script 03 (demo 5, the reversal ablation, trains with torch):

    03.1  wavelengths          §6.2  wavelength 2π/ω_i of each pair, ‖PE(pos)‖, the PE matrix
    03.2  relative_shift       §6.3  PE(p + k) = PE(p) M_k, M_k orthogonal, M_3 M_7 = M_10
    03.3  pe_dot_products      §6.3  PE(p)·PE(p + k) depends only on the distance k (Ex6)
    03.4  previous_token_head  §6.4  W^Q = β M_{-1}, W^K = I attends to the previous position
    03.5  pe_ablation          §6.6  reversal without / with PE, and the √d_model pitfall

References: Vaswani et al. (2017), "Attention is all you need", §3.5 (sinusoidal encoding);
Olsson et al. (2022), "In-context learning and induction heads" (previous-token heads).

Every function follows the demo contract (docs/ARCHITECTURE.md): keyword-only settings from
config/config.yaml, a `seed`, and a tidy DataFrame (label columns, `quantity`, `value`).

Long on purpose: one module per lecture script (the registry maps the lecture's "代码 0x" to it),
each demo's function beside its helpers; a job depends only on the lines its function runs
(pipeline.deps.code_parts), so the module's length costs no reruns.
"""

import numpy as np
import pandas as pd

from lecture17.attention_numpy import (
    positional_encoding,
    relative_shift_matrix,
    scaled_dot_product_attention,
)
from lecture17.experiments.tidy import row, rows, tidy
from lecture17.train_settings import TrainSettings

# -------------------------------------------------------------------------------------------
# helpers


def _pair_frequencies(pe: np.ndarray) -> np.ndarray:
    """ω_i read off the encoding itself: the angle pair i turns between positions 0 and 1.

    §6.2: dims (2i, 2i+1) are (sin ω_i·pos, cos ω_i·pos), a pointer turning by ω_i per position;
    every ω_i ≤ 1 < π, so atan2 recovers it without wrapping. Reading ω from PE (rather than
    retyping the formula) makes the table describe the encoding the rest of the code uses.
    """
    return np.arctan2(pe[1, 0::2], pe[1, 1::2])  # (d_model/2,)


# -------------------------------------------------------------------------------------------
# 03.1 wavelengths, norms, heat map (§6.2)


def wavelengths(
    *, d_model: int, n_norm_positions: int, n_heatmap_positions: int, seed: int
) -> pd.DataFrame:
    """Wavelength 2π/ω_i of every pair, ‖PE(pos)‖ and the value range; the PE matrix itself.

    Rows: `pair` i → `omega`, `wavelength`; no label → `norm_min`, `norm_max` (over
    `n_norm_positions` positions), `value_min`, `value_max`; (`pos`, `dim`) → `pe`, the
    (n_heatmap_positions, d_model) matrix for the heat-map figure. Deterministic: `seed` unused.
    """
    del seed  # deterministic
    pe = positional_encoding(max(n_norm_positions, n_heatmap_positions), d_model)  # (n, d_model)
    omega = _pair_frequencies(pe)  # (d_model/2,)
    records = []
    for i, w in enumerate(omega):
        records += rows({"omega": w, "wavelength": 2 * np.pi / w}, pair=i)  # in positions
    # §6.2: every position vector has the same length sqrt(d_model/2); every entry in [-1, 1]
    norms = np.linalg.norm(pe[:n_norm_positions], axis=-1)  # (n_norm_positions,)
    extremes = {"value_min": pe[:n_norm_positions].min(), "value_max": pe[:n_norm_positions].max()}
    records += rows({"norm_min": norms.min(), "norm_max": norms.max(), **extremes})
    records += [
        row("pe", pe[pos, dim], pos=pos, dim=dim)
        for pos in range(n_heatmap_positions)
        for dim in range(d_model)
    ]
    return tidy(records, ["pair", "pos", "dim"])


# -------------------------------------------------------------------------------------------
# 03.2 PE(p + k) = PE(p) M_k (§6.3)


def relative_shift(
    *, d_model: int, n_positions: int, shifts: list[int], composition: list[int], seed: int
) -> pd.DataFrame:
    """Check the block rotation M_k: PE(p + k) = PE(p) M_k for p = 0..n_positions-1.

    Rows: `k` → `max_abs_err` = max_p |PE(p) M_k − PE(p + k)| and `orthogonality_err` =
    max |M_k M_k^T − I|; no label → `composition_err` = max |M_a M_b − M_{a+b}| for
    composition = [a, b]. A backwards shift (k < 0) is checked on the positions p with
    p + k ≥ 0, since PE is defined for pos ≥ 0 only. Deterministic: `seed` unused.
    """
    del seed  # deterministic
    max_shift = max(abs(k) for k in shifts)
    pe = positional_encoding(n_positions + max_shift, d_model)  # (n_positions + max|k|, d_model)
    records = []
    for k in shifts:
        shift = relative_shift_matrix(k, d_model)  # (d_model, d_model), one 2x2 rotation per pair
        p = np.arange(max(0, -k), n_positions)  # positions whose p + k exists
        err = np.abs(pe[p] @ shift - pe[p + k]).max()
        ortho = np.abs(shift @ shift.T - np.eye(d_model)).max()
        records += rows({"max_abs_err": err, "orthogonality_err": ortho}, k=k)
    # §6.3: rotations compose: shifting by a and then by b is shifting by a + b
    a, b = composition
    product = relative_shift_matrix(a, d_model) @ relative_shift_matrix(b, d_model)
    err = np.abs(product - relative_shift_matrix(a + b, d_model)).max()
    records.append(row("composition_err", err))
    return tidy(records, ["k"])


# -------------------------------------------------------------------------------------------
# 03.3 dot products depend only on the distance (§6.3, Ex6)


def pe_dot_products(
    *,
    d_model: int,
    starts: list[int],
    distances: list[int],
    max_rise_distance: int,
    seed: int,
) -> pd.DataFrame:
    """PE(p)·PE(p + k) for every start p and distance k; sum_i cos(ω_i k) has no p in it.

    Rows: (`p`, `k`) → `dot`; no label → `row_max_diff` (largest spread over the starts, for
    any k), `symmetry_max_diff` (max |PE(p)·PE(p+k) − PE(p)·PE(p−k)| over the starts with
    p ≥ k), `n_rises` (how many k in 1..max_rise_distance have dot(k) > dot(k − 1), measured
    from p = 0). Deterministic: `seed` unused.
    """
    del seed  # deterministic
    reach = max(max(starts) + max(distances), max_rise_distance)
    pe = positional_encoding(reach + 1, d_model)  # (reach + 1, d_model)
    dots = np.array([[pe[p] @ pe[p + k] for k in distances] for p in starts])  # (n_p, n_k)
    records = [
        row("dot", dots[i, j], p=p, k=k)
        for i, p in enumerate(starts)
        for j, k in enumerate(distances)
    ]
    # §6.3: the four rows are the same row; cos is even, so k and −k give the same dot product
    spread = (dots.max(axis=0) - dots.min(axis=0)).max()
    symmetry = max(
        abs(pe[p] @ pe[p + k] - pe[p] @ pe[p - k]) for p in starts for k in distances if p >= k
    )
    # §6.3: the dot product shrinks with the distance, but not monotonically
    curve = pe[: max_rise_distance + 1] @ pe[0]  # (max_rise_distance + 1,), dot(k) from p = 0
    rises = int(np.sum(curve[1:] > curve[:-1]))
    records += rows({"row_max_diff": spread, "symmetry_max_diff": symmetry, "n_rises": rises})
    return tidy(records, ["p", "k"])


# -------------------------------------------------------------------------------------------
# 03.4 a linear W^Q looks at the previous token (§6.4)


def _previous_token_rows(pe: np.ndarray, betas: list[float]) -> list[dict]:
    """§6.4: queries β·PE(i − 1) against keys PE(j). `beta` → `n_with_predecessor` (positions
    1..n−1), `n_argmax_previous` (of those, how many put their largest weight on i − 1),
    `mean_weight_previous`."""
    n_positions, d_model = pe.shape
    back_one = relative_shift_matrix(-1, d_model)  # PE(i) M_{-1} = PE(i - 1)
    rows_, previous = np.arange(1, n_positions), np.arange(n_positions - 1)  # i ≥ 1 and i − 1
    records = []
    for beta in betas:
        queries = pe @ (beta * back_one)  # (n, d_model), row i = β PE(i − 1)
        _, weights = scaled_dot_product_attention(queries, pe, pe)  # (n, n); W^K = I, V unused
        on_previous = weights[rows_, previous]  # (n − 1,)
        hits = np.sum(weights[rows_].argmax(axis=-1) == previous)
        counts = {"n_with_predecessor": len(rows_), "n_argmax_previous": hits}
        records += rows(counts | {"mean_weight_previous": on_previous.mean()}, beta=float(beta))
    return records


def _control_rows(rng, n_positions: int, d_model: int, n_control_queries: int) -> list[dict]:
    """§6.4's control: no PE, n identical random word vectors, `n_control_queries` random W^Q →
    `control_mean_weight_previous`, `control_max_dev_uniform` = max |w − 1/n|. Without PE
    identical words get identical keys, so every query scores them equally."""
    words = np.tile(rng.standard_normal(d_model), (n_positions, 1))  # (n, d_model), one word
    control = []
    for _ in range(n_control_queries):
        w_q = rng.standard_normal((d_model, d_model)) / np.sqrt(d_model)  # (d_model, d_model)
        _, weights = scaled_dot_product_attention(words @ w_q, words, words)  # (n, n)
        control.append(weights)
    control = np.stack(control)  # (n_control_queries, n, n)
    rows_, previous = np.arange(1, n_positions), np.arange(n_positions - 1)
    return rows(
        {
            "control_mean_weight_previous": control[:, rows_, previous].mean(),
            "control_max_dev_uniform": np.abs(control - 1 / n_positions).max(),
        }
    )


def previous_token_head(
    *, n_positions: int, d_model: int, betas: list[float], n_control_queries: int, seed: int
) -> pd.DataFrame:
    """Inputs = PE only; W^Q = β M_{-1}, W^K = I, so query i is β·PE(i − 1).

    Scores are divided by sqrt(d_k) = sqrt(d_model), as in every attention of the lecture
    (scaled_dot_product_attention). Rows: `beta` → `n_with_predecessor`, `n_argmax_previous`,
    `mean_weight_previous` (`_previous_token_rows`); then the control (§6.4, no label:
    `_control_rows`), whose word vector and W^Q the seed draws.
    """
    pe = positional_encoding(n_positions, d_model)  # (n, d_model)
    records = _previous_token_rows(pe, betas)
    records += _control_rows(np.random.default_rng(seed), n_positions, d_model, n_control_queries)
    return tidy(records, ["beta"])


# -------------------------------------------------------------------------------------------
# 03.5 does PE matter? Reversal with a tiny Transformer; the sqrt(d_model) pitfall (§6.6)

# variant -> the Embedding's positional encoding; sinusoidal_scaled also multiplies the token
# embeddings by sqrt(d_model), the paper's §3.4 factor, on nn.Embedding's N(0, 1) init (§6.6).
# Ex9 reads "the first row": keep sinusoidal first in the config (reading-aid flag F10).
PE_VARIANTS = {
    "sinusoidal": "sinusoidal",
    "none": "none",
    "learned": "learned",
    "sinusoidal_scaled": "sinusoidal",
}


def pe_ablation_model(*, variant: str, vocab_size: int, **sizes):
    """The §6.6 Transformer of one variant (sizes: d_model, n_heads, d_ff, layers, scale).

    Only sinusoidal_scaled passes emb_scale; the others keep tiny_transformer's default
    (and every variant its default max_len).
    """
    from lecture17 import tiny_transformer

    if variant not in PE_VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; expected one of {tuple(PE_VARIANTS)}")
    if variant == "sinusoidal_scaled":
        sizes["emb_scale"] = np.sqrt(sizes["d_model"])  # the paper's √d_model (8 in §6.6)
    return tiny_transformer.build_model(
        "transformer",
        src_vocab=vocab_size,
        tgt_vocab=vocab_size,
        pe=PE_VARIANTS[variant],
        **sizes,
    )


def _init_norms(model, length: int) -> dict[str, float]:
    """§6.6 at initialisation: mean ‖row‖ of the source token embedding, before and after
    emb_scale, and mean ‖PE(pos)‖ over the positions 0..length−1 used (no PE: no row)."""
    embed = model.encoder.embed
    norm = embed.token.weight.detach().norm(dim=1).mean().item()  # over all vocabulary rows
    norms = {
        "emb_scale": float(embed.emb_scale),
        "embedding_norm": norm,
        "scaled_embedding_norm": norm * embed.emb_scale,
    }
    if embed.pe is not None:
        norms["pe_norm"] = embed.pe[:length].detach().norm(dim=1).mean().item()
    return norms


def _recording_builder(variant: str, length: int, sizes: dict, init: dict):
    """What train() calls under torch.manual_seed(seed): the §6.6 model of one variant, whose
    norms at initialisation (`_init_norms`) go into `init`. This IS the trained init."""
    from lecture17.training import VOCAB_SIZE

    def make_model():
        model = pe_ablation_model(variant=variant, vocab_size=VOCAB_SIZE, **sizes)
        init.update(_init_norms(model, length))
        return model

    return make_model


def pe_ablation(
    *,
    variant: str,
    length: int,
    train: TrainSettings,
    d_model: int,
    n_heads: int,
    d_ff: int,
    n_enc_layers: int,
    n_dec_layers: int,
    scale: bool | None,
    device: str,
    seed: int,
) -> pd.DataFrame:
    """Reverse `length` symbols (§9.1) with a 1 + 1 layer Transformer of one PE `variant`,
    trained as `train` says (Adam, linear warmup) and evaluated by greedy decoding from BOS
    on train.n_test new sequences. `scale` is MultiHeadAttention's 1/√d_k (None: that class's
    default, which exercise 9 edits; Ex9 as a setting: False).

    Rows (quantity, value): `token_accuracy` (the L symbols and the EOS, reading-aid flag F01),
    `symbol_accuracy` (the L symbols), `sequence_accuracy` (all L + 1 right), `chance` (token
    accuracy of uniform guessing with a right EOS: (L/10 + 1)/(L + 1)); at initialisation
    (`_init_norms`): `emb_scale`, `embedding_norm`, `scaled_embedding_norm`, `pe_norm`; then
    `simulated_chance` and `simulated_symbol_chance`: the token and symbol accuracy that
    ReversalTask.evaluate gives a random guesser (training.SymbolGuesser: L uniformly random
    symbols, then EOS, so the EOS is always right: F01's 0.153 = (16 · 0.1 + 1)/17) over at
    least training.CHANCE_DRAWS = 100,000 symbols (standard errors 0.00089 for the token
    accuracy at L = 16, (L/(L + 1)) · sqrt(0.1 · 0.9 / 100,000); 0.00095 for the symbols).
    """
    from lecture17 import training

    training.check_device(device)
    sizes = dict(d_model=d_model, n_heads=n_heads, d_ff=d_ff, scale=scale)
    sizes |= dict(n_enc_layers=n_enc_layers, n_dec_layers=n_dec_layers)
    init, task = {}, training.ReversalTask(length)
    make_model = _recording_builder(variant, length, sizes, init)
    final = training.train(make_model, task, train, seed=seed, device=device).final
    values = {q: final[q] for q in ("token_accuracy", "symbol_accuracy", "sequence_accuracy")}
    # F01: a uniform guess is right 1 time in N_SYMBOLS on each symbol; EOS counted as right
    values["chance"] = (length / training.N_SYMBOLS + 1) / (length + 1)
    guessed = training.guessed_chance(task, training.SymbolGuesser, seed, train.n_test)
    values |= init | {"simulated_chance": guessed["token_accuracy"]}
    values["simulated_symbol_chance"] = guessed["symbol_accuracy"]
    return tidy(rows(values), [])
