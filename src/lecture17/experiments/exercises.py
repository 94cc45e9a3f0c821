"""Lecture 17 §13 exercises: the answers computed with attention_numpy, for the report.

The tests assert the same answers (tests/test_attention_numpy.py); here they become a table so
the report can put each answer beside the lecture's. Ex1's Q and K are lost from the lecture's
copy (flag F09): the config holds a reconstruction that reproduces every printed answer.
"""

import numpy as np

from lecture17.attention_numpy import (
    count_decoder_layer_params,
    count_encoder_layer_params,
    count_mha_params,
    create_look_ahead_mask,
    create_padding_mask,
    scaled_dot_product_attention,
    softmax,
)
from lecture17.experiments.tidy import row, tidy


def _matrix_rows(quantity: str, matrix: np.ndarray, exercise: str) -> list[dict]:
    """One row per entry of a matrix, labelled by its `row` and `col` (0-based)."""
    return [
        row(quantity, float(v), exercise=exercise, row=i, col=j)
        for (i, j), v in np.ndenumerate(matrix)
    ]


# -----------------------------------------------------------------------------


def exercise_1(queries, keys, values) -> list[dict]:
    """Ex1: three words, d_k = 4, by hand — and by scaled_dot_product_attention."""
    Q, K, V = (np.array(m, dtype=np.float64) for m in (queries, keys, values))
    scores = Q @ K.T / np.sqrt(Q.shape[-1])  # (3, 3)
    output, weights = scaled_dot_product_attention(Q, K, V)
    return (
        _matrix_rows("scaled_score", scores, "Ex1(a)")
        + _matrix_rows("weight", weights, "Ex1(b)")
        + _matrix_rows("output", output, "Ex1(c)")
    )


def exercise_3(d_model: int, d_ff: int) -> list[dict]:
    """Ex3: parameters of the big model's layers (the head count does not enter)."""
    encoder = count_encoder_layer_params(d_model, d_ff)
    parts = {
        "mha": count_mha_params(d_model),
        "ffn": encoder - count_mha_params(d_model) - 4 * d_model,
        "two_norms": 4 * d_model,  # two LayerNorms, gamma and beta each
        "encoder_layer": encoder,
        "decoder_layer": count_decoder_layer_params(d_model, d_ff),
    }
    return [row("params", v, exercise="Ex3", part=k) for k, v in parts.items()]


def exercise_4(tokens: list[int], n_keys: int, seed: int) -> list[dict]:
    """Ex4: the decoder's combined mask, and what a fully masked row really becomes (flag F02)."""
    n = len(tokens)
    combined = create_look_ahead_mask(n) * create_padding_mask(np.array([tokens]))[0]  # (n, n)
    rows = _matrix_rows("combined_mask", combined, "Ex4(b)")
    scores = np.random.default_rng(seed).standard_normal((1, n_keys))
    nothing = np.zeros((1, n_keys))  # every key masked
    for dtype in (np.float64, np.float32):
        s, mask = scores.astype(dtype), nothing.astype(dtype)
        weights = softmax(s + (1 - mask) * dtype(-1e9))  # §8.1's additive mask, in this dtype
        deviation = float(np.abs(weights - 1 / n_keys).max())
        rows.append(
            row("max_dev_from_uniform", deviation, exercise="Ex4(c)", dtype=np.dtype(dtype).name)
        )
    with np.errstate(invalid="ignore"):
        inf_weights = softmax(np.where(nothing == 1, scores, -np.inf))
    nan = float(np.isnan(inf_weights).all())
    rows.append(row("nan_with_minus_inf", nan, exercise="Ex4(c)", dtype="float64"))
    return rows


def exercise_7(n: int, d_model: int, ff_mult: int, bytes_per_value: int) -> list[dict]:
    """Ex7: multiply-adds of one layer at long context, and one head's n×n matrix in fp16."""
    counts = {
        "attention": 2 * n**2 * d_model,  # QKᵀ and weights·V
        "projections": 4 * n * d_model**2,  # W_q, W_k, W_v, W_o
        "ffn": 2 * n * d_model * ff_mult * d_model,
    }
    counts["projections_and_ffn"] = counts["projections"] + counts["ffn"]
    rows = [row("multiply_adds", float(v), exercise="Ex7", part=k) for k, v in counts.items()]
    ratio = counts["attention"] / counts["projections_and_ffn"]
    return rows + [
        row("attention_over_rest", ratio, exercise="Ex7"),
        # 2 n² d = (4 + 2·ff_mult) n d²  ⇒  n = (2 + ff_mult) d
        row("break_even_n", float((2 + ff_mult) * d_model), exercise="Ex7"),
        row("matrix_gb", n**2 * bytes_per_value / 1e9, exercise="Ex7"),
    ]


def exercise_answers(
    *,
    ex1_queries,
    ex1_keys,
    ex1_values,
    ex3_d_model,
    ex3_d_ff,
    ex4_tokens,
    ex4_n_keys,
    ex7_n,
    ex7_d_model,
    ex7_ff_mult,
    ex7_bytes_per_value,
    seed,
):
    rows = (
        exercise_1(ex1_queries, ex1_keys, ex1_values)
        + exercise_3(ex3_d_model, ex3_d_ff)
        + exercise_4(ex4_tokens, ex4_n_keys, seed)
        + exercise_7(ex7_n, ex7_d_model, ex7_ff_mult, ex7_bytes_per_value)
    )
    return tidy(rows, ["exercise", "part", "dtype", "row", "col"])
