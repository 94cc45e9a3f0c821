"""代码 01 · 自注意力 Self-attention (lecture §1–§3).

The five demos of the lecture's script 01:

    01.1  jane_example              §2.3  Jane visite l'Afrique en septembre, by hand
    01.2  loop_vs_matrix            §3.1  word-by-word loop = matrix form = PyTorch's SDPA
    01.3  permutation_equivariance  §3.2  "Jane visite Marie" vs "Marie visite Jane";
                                          Attn(PX) = P Attn(X)
    01.4  path_length               §1.2  how much the last output feels input j: RNN vs attention
    01.5  complexity                §3.3–§3.4  multiply-adds n²d vs nd² (formula and counted),
                                               the (n, n) matrix, timing

References: Vaswani et al. (2017), "Attention is all you need", §3.2.1 (scaled dot-product
attention) and Table 1 (complexity, sequential operations, path length).

Every function follows the demo contract (docs/ARCHITECTURE.md): keyword-only settings from
config/config.yaml, a `seed`, and a tidy DataFrame (label columns, `quantity`, `value`).
A label that does not apply to a row is left empty (None).

Long on purpose: one module per lecture script (the registry maps the lecture's "代码 0x" to it),
each demo's function beside its helpers; a job depends only on the lines its function runs
(pipeline.deps.code_parts), so the module's length costs no reruns.
"""

from functools import partial

import numpy as np
import pandas as pd

from lecture17.attention_numpy import positional_encoding, scaled_dot_product_attention, softmax
from lecture17.experiments.jane import JANE_DIMS, JANE_WORDS, jane_embeddings, jane_query_matrix
from lecture17.experiments.tidy import row, tidy
from lecture17.timing import best_ms

# -------------------------------------------------------------------------------------------
# 01.1 Jane visite l'Afrique en septembre (§2.3)


def jane_example(*, strength: float, seed: int) -> pd.DataFrame:
    """Self-attention by hand on the Jane sentence.

    Rows: (`query`, `key`) → `weight`, the full 5×5 weight matrix; (query l'Afrique, `key`) →
    `scaled_score`, its row of Q K^T / sqrt(4); (query l'Afrique, `dim`) → `query_vector`
    (q⟨3⟩) and `output` (A⟨3⟩). Deterministic: `seed` unused.
    """
    del seed  # deterministic
    X = jane_embeddings()  # (5, 4)
    Q = X @ jane_query_matrix(strength)  # (5, 4)
    K = V = X @ np.eye(4)  # (5, 4): §2.3, W^K = W^V = I
    output, weights = scaled_dot_product_attention(Q, K, V)  # (5, 4), (5, 5)
    afrique = JANE_WORDS.index("l'Afrique")
    scaled_scores = Q[afrique] @ K.T / np.sqrt(K.shape[-1])  # (5,)

    records = [
        row("weight", weights[i, j], query=q, key=k)
        for i, q in enumerate(JANE_WORDS)
        for j, k in enumerate(JANE_WORDS)
    ]
    records += [
        row("scaled_score", s, query="l'Afrique", key=k)
        for k, s in zip(JANE_WORDS, scaled_scores, strict=True)
    ]
    for name, vector in (("query_vector", Q[afrique]), ("output", output[afrique])):
        records += [
            row(name, v, query="l'Afrique", dim=d) for d, v in zip(JANE_DIMS, vector, strict=True)
        ]
    return tidy(records, ["query", "key", "dim"])


# -------------------------------------------------------------------------------------------
# 01.2 per-word loop vs matrix form vs PyTorch (§3.1)


def _attention_loop(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> np.ndarray:
    """§2.2 written out word by word: score every key, softmax, add up the values."""
    d_k = K.shape[-1]
    rows = []
    for q in Q:  # one query (word) at a time
        scores = np.array([q @ k for k in K]) / np.sqrt(d_k)  # (n_k,)
        p = softmax(scores)  # (n_k,)
        rows.append(sum(p_j * v_j for p_j, v_j in zip(p, V, strict=True)))  # (d_v,)
    return np.stack(rows)  # (n_q, d_v)


def loop_vs_matrix(*, n_words: int, d_k: int, d_v: int, seed: int) -> pd.DataFrame:
    """Max |loop − matrix| and max |matrix − F.scaled_dot_product_attention| at float64.

    Rows: `comparison` (loop_vs_matrix, matrix_vs_torch) → `max_abs_diff`.
    """
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(1)
    rng = np.random.default_rng(seed)
    Q = rng.standard_normal((n_words, d_k))  # (n, d_k)
    K = rng.standard_normal((n_words, d_k))  # (n, d_k)
    V = rng.standard_normal((n_words, d_v))  # (n, d_v)

    loop = _attention_loop(Q, K, V)  # (n, d_v)
    matrix, _ = scaled_dot_product_attention(Q, K, V)  # (n, d_v)
    # PyTorch's fused kernel, float64 on the CPU; it scales by 1/sqrt(d_k) by default.
    torch_out = F.scaled_dot_product_attention(*(torch.from_numpy(a) for a in (Q, K, V)))
    diffs = {"loop_vs_matrix": loop - matrix, "matrix_vs_torch": matrix - torch_out.numpy()}
    records = [row("max_abs_diff", np.max(np.abs(d)), comparison=c) for c, d in diffs.items()]
    return tidy(records, ["comparison"])


# -------------------------------------------------------------------------------------------
# 01.3 permutation equivariance (§3.2, exercise 5)


def _self_attention(X: np.ndarray, W: dict) -> np.ndarray:
    """One single-head self-attention layer without output projection: (n, d) -> (n, d)."""
    return scaled_dot_product_attention(X @ W["q"], X @ W["k"], X @ W["v"])[0]


# §3.2's two sentences: the same three words, Jane and Marie swapped
SENTENCES = {
    "Jane visite Marie": ("Jane", "visite", "Marie"),
    "Marie visite Jane": ("Marie", "visite", "Jane"),
}


def _random_inputs(rng, d_model: int, n_random_words: int):
    """§3.2's random draws, in this order: the three words' embeddings, W^Q, W^K, W^V, the
    random words X (n, d_model) and a permutation matrix P (n, n) that is not the identity."""
    embed = dict(zip(("Jane", "visite", "Marie"), rng.standard_normal((3, d_model)), strict=True))
    # Random projections, variance 1/d_model (the variance-preserving init of §4.4).
    W = {p: rng.standard_normal((d_model, d_model)) / np.sqrt(d_model) for p in "qkv"}
    X_words = rng.standard_normal((n_random_words, d_model))  # (n, d_model)
    perm = rng.permutation(n_random_words)
    while np.array_equal(perm, np.arange(n_random_words)):  # the identity would prove nothing
        perm = rng.permutation(n_random_words)
    return embed, W, X_words, np.eye(n_random_words)[perm]  # P @ X reorders the rows of X


def _visite_rows(embed: dict, W: dict, pe: np.ndarray, pe_name: str, n_components: int):
    """§3.2: visite's output in both sentences (first n_components numbers), and how far apart."""
    visite, records = {}, []
    for text, words in SENTENCES.items():
        X = np.stack([embed[w] for w in words]) + pe[:3]  # (3, d_model)
        visite[text] = _self_attention(X, W)[words.index("visite")]  # (d_model,)
        records += [
            row("visite_output", visite[text][c], pe=pe_name, sentence=text, component=c)
            for c in range(n_components)
        ]
    diff = np.max(np.abs(visite["Jane visite Marie"] - visite["Marie visite Jane"]))
    return records + [row("visite_max_abs_diff", diff, pe=pe_name)]


def _permutation_error(X_words: np.ndarray, P: np.ndarray, W: dict, pe: np.ndarray) -> float:
    """§3.2, Ex5: max |Attn(PX) − P Attn(X)| with the encoding `pe` added to the inputs."""
    pe_n = pe[: len(X_words)]  # (n, d_model): added after the permutation (positions stay put)
    shuffled = _self_attention(P @ X_words + pe_n, W)  # Attn(PX)
    moved = P @ _self_attention(X_words + pe_n, W)  # P Attn(X)
    return np.max(np.abs(shuffled - moved))


def permutation_equivariance(
    *, d_model: int, n_random_words: int, n_components: int, seed: int
) -> pd.DataFrame:
    """Shuffle the words: without PE the outputs only move with them; with PE they change.

    Rows: (`pe`, `sentence`, `component`) → `visite_output` (the first `n_components` numbers of
    visite's output in "Jane visite Marie" / "Marie visite Jane"); `pe` → `visite_max_abs_diff`
    (visite's output, sentence 1 vs 2) and `perm_max_abs_diff` (max |Attn(PX) − P Attn(X)| for
    `n_random_words` random words and a random permutation P). `pe` is "none" or "sinusoidal".
    """
    embed, W, X_words, P = _random_inputs(np.random.default_rng(seed), d_model, n_random_words)
    n_max = max(3, n_random_words)
    encodings = {
        "none": np.zeros((n_max, d_model)),
        "sinusoidal": positional_encoding(n_max, d_model),  # (n_max, d_model), §6.2
    }
    records = []
    for pe_name, pe in encodings.items():
        records += _visite_rows(embed, W, pe, pe_name, n_components)
        records.append(row("perm_max_abs_diff", _permutation_error(X_words, P, W, pe), pe=pe_name))
    return tidy(records, ["pe", "sentence", "component"])


# -------------------------------------------------------------------------------------------
# 01.4 path length: how much does the last output feel input j? (§1.2)


def _random_rnn(rng, d_model: int, hidden: int) -> dict:
    """§1.2's RNN: every weight and bias ~ U(−1/√hidden, 1/√hidden), nn.RNN's default init."""
    import torch

    bound = 1 / np.sqrt(hidden)
    shapes = {
        "W_xh": (d_model, hidden),
        "W_hh": (hidden, hidden),
        "b_xh": (hidden,),
        "b_hh": (hidden,),
    }  # drawn in this order
    return {
        name: torch.from_numpy(rng.uniform(-bound, bound, size=shape))
        for name, shape in shapes.items()
    }


def _rnn_last(rnn: dict, x):
    """§1.2: h_t = tanh(x_t W_xh + b_xh + h_{t−1} W_hh + b_hh), h_0 = 0; (n, d_model) -> h_{n−1}."""
    import torch

    h = torch.zeros(rnn["W_hh"].shape[0], dtype=torch.float64)  # (hidden,)
    for x_t in x:  # §1.2: h_t waits for h_{t-1}
        h = torch.tanh(x_t @ rnn["W_xh"] + rnn["b_xh"] + h @ rnn["W_hh"] + rnn["b_hh"])
    return h


def _random_attention(rng, d_model: int) -> dict:
    """§1.2's attention: W^Q, W^K, W^V ~ N(0, 1/d_model), the variance-preserving init of §4.4."""
    import torch

    return {
        p: torch.from_numpy(rng.standard_normal((d_model, d_model)) / np.sqrt(d_model))
        for p in "qkv"
    }


def _attention_last(att: dict, x):
    """§1.2: the last row of softmax(Q K^T/√d) V; (n, d_model) -> (d_model,)."""
    import torch

    Q, K, V = x @ att["q"], x @ att["k"], x @ att["v"]  # (n, d_model) each
    weights = torch.softmax(Q @ K.T / np.sqrt(x.shape[-1]), dim=-1)  # (n, n)
    return (weights @ V)[-1]


def _sensitivity(last, x) -> np.ndarray:
    """§1.2: ‖∂ last(x) / ∂ x_j‖_F for every input position j, by torch.autograd; shape (n,)."""
    import torch
    from torch.autograd.functional import jacobian

    J = jacobian(last, x, vectorize=True)  # (d_out, n, d_model)
    return torch.linalg.vector_norm(J, dim=(0, 2)).numpy()  # (n,)


def _distance_rows(model: str, by_distance: np.ndarray) -> list[dict]:
    """§1.2's table: the sensitivity at every distance, and its means over 1..8 and 32..n−1."""
    records = [row("sensitivity", s, model=model, distance=d) for d, s in enumerate(by_distance)]
    for lo, hi in ((1, 8), (32, len(by_distance) - 1)):
        mean = by_distance[lo : hi + 1].mean()
        records.append(row(f"mean_sensitivity_{lo}_{hi}", mean, model=model))
    return records


def path_length(
    *, seq_len: int, d_model: int, hidden: int, n_sequences: int, seed: int
) -> pd.DataFrame:
    """Sensitivity ‖∂y_{n−1}/∂x_j‖_F of the last output to every input, by distance n−1−j.

    Two untrained models on the same random inputs x_j ~ N(0, I_{d_model}):
      - rnn: h_t = tanh(x_t W_xh + b_xh + h_{t−1} W_hh + b_hh), h_0 = 0, y = h_{n−1};
        every weight and bias ~ U(−1/√hidden, 1/√hidden), PyTorch's nn.RNN default init;
      - attention: one single-head self-attention layer y = softmax(Q K^T/√d) V with
        Q, K, V = X W^Q, X W^K, X W^V; W ~ N(0, 1/d_model), the variance-preserving init of §4.4;
        no output projection, no residual.
    The Jacobians come from torch.autograd (float64), one model draw, `n_sequences` input draws.

    Rows: (`model`, `distance`) → `sensitivity` (mean over sequences); `model` →
    `mean_sensitivity_1_8` and `mean_sensitivity_32_63` (means over those distances).
    """
    import torch

    torch.set_num_threads(1)
    rng = np.random.default_rng(seed)
    rnn = _random_rnn(rng, d_model, hidden)  # drawn first, then the attention's weights
    attention = _random_attention(rng, d_model)
    models = {"rnn": partial(_rnn_last, rnn), "attention": partial(_attention_last, attention)}
    norms = {model: [] for model in models}
    for _ in range(n_sequences):
        x = torch.from_numpy(rng.standard_normal((seq_len, d_model)))  # (n, d_model)
        for model, last in models.items():
            norms[model].append(_sensitivity(last, x))  # (n,)
    records = []
    for model, per_sequence in norms.items():
        records += _distance_rows(model, np.mean(per_sequence, axis=0)[::-1])  # index = distance
    return tidy(records, ["model", "distance"])


# -------------------------------------------------------------------------------------------
# 01.5 complexity: multiply-adds, memory, timings (§3.3–§3.4)


def _formula_rows(d_model: int, n_values: list[int], memory_n: int) -> list[dict]:
    """§3.4's table from its formulas: n²d vs nd² multiply-adds, their ratio n/d, and the MB
    of one (n, n) float64 weight matrix at n = memory_n."""
    records = []
    for n in n_values:
        attention, rnn = n * n * d_model, n * d_model * d_model
        records += [
            row("multiply_adds", attention, model="self_attention", n=n),
            row("multiply_adds", rnn, model="rnn", n=n),
            row("ratio", attention / rnn, n=n),
        ]
    weights_bytes = memory_n * memory_n * np.dtype(np.float64).itemsize
    return records + [row("weight_matrix_mb", weights_bytes / 1e6, n=memory_n)]


def _rnn_loop(X: np.ndarray, W_xh: np.ndarray, W_hh: np.ndarray) -> np.ndarray:
    """§3.3: an RNN layer as the loop it must be, h_t = tanh(x_t W_xh + h_{t−1} W_hh)."""
    h = np.zeros(W_hh.shape[0])
    for x_t in X:  # n steps that must run one after another
        h = np.tanh(x_t @ W_xh + h @ W_hh)
    return h


def _timing_rows(rng, timing_d: int, timing_n_values: list[int], repeats: int) -> list[dict]:
    """§3.4 "实测": best-of-`repeats` ms of numpy attention and of an RNN loop at each n, and
    the attention's growth per doubling of n (machine-dependent)."""
    W_q, W_k, W_v, W_xh, W_hh = rng.standard_normal((5, timing_d, timing_d)) / np.sqrt(timing_d)
    ms, records = {}, []
    for n in timing_n_values:
        X = rng.standard_normal((n, timing_d))  # (n, timing_d)
        Q, K, V = X @ W_q, X @ W_k, X @ W_v  # (n, timing_d) each
        ms[n] = best_ms(partial(scaled_dot_product_attention, Q, K, V), repeats)
        rnn_ms = best_ms(partial(_rnn_loop, X, W_xh, W_hh), repeats)
        records += [
            row("ms_per_layer", ms[n], model="self_attention", n=n),
            row("ms_per_layer", rnn_ms, model="rnn_loop", n=n),
        ]
        if n // 2 in ms:
            growth = ms[n] / ms[n // 2]
            records.append(row("ms_growth_per_doubling", growth, model="self_attention", n=n))
    return records


def _counted_multiply_adds(n: int, d: int) -> dict[str, int]:
    """Multiply-adds of the products §3.4 counts, counted by torch on meta tensors.

    torch.utils.flop_counter.FlopCounterMode counts each matmul as 2 FLOPs per multiply-add,
    so multiply-adds = FLOPs / 2. Meta tensors have shapes and no data: nothing is computed,
    which keeps n = 4096 free. Counted:
      - self_attention: Q K^T of an (n, d) Q and K, the product §3.4 calls "约 n²d_k 次乘加"
        (d_k = d). §3.4's table counts this product alone (its ratio is n/d); weights·V would
        add another n²d_v, which the table leaves out.
      - rnn: n steps, one after another, h ← tanh(h W_hh^T) with an nn.RNNCell's recurrent
        weight (a (1, d) state: one d×d matrix times a vector per step, as §3.4 counts). The
        cell's input product x W_ih^T, another d×d per step for a d-wide input, is left out,
        as §3.4 leaves it out; so are the biases (adds, not multiply-adds, and each op costs
        the counter time). A 1-D state would go through aten.mv, which FlopCounterMode does
        not count: hence (1, d).
    """
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    Q = torch.empty(n, d, device="meta")  # (n, d)
    K = torch.empty(n, d, device="meta")  # (n, d)
    W_hh = torch.nn.RNNCell(d, d, device="meta").weight_hh.detach().T  # (d, d), rows = tokens
    h = torch.zeros(1, d, device="meta")  # (1, d)
    counted = {}
    with FlopCounterMode(display=False) as counter:
        _scores = Q @ K.T  # (n, n)
    counted["self_attention"] = counter.get_total_flops() // 2
    with FlopCounterMode(display=False) as counter:
        for _ in range(n):  # step t waits for step t - 1 (§3.3)
            h = torch.tanh(h @ W_hh)  # (1, d)
    counted["rnn"] = counter.get_total_flops() // 2
    return counted


def complexity(
    *,
    d_model: int,
    n_values: list[int],
    memory_n: int,
    timing_d: int,
    timing_n_values: list[int],
    timing_repeats: int,
    seed: int,
) -> pd.DataFrame:
    """Multiply-add counts n²d (self-attention) vs nd² (RNN), memory, and wall-clock timings.

    Rows: (`model`, `n`) → `multiply_adds` (model self_attention: QK^T is n²d; rnn: n steps of
    a d×d matrix times a vector, nd²); (`n`) → `ratio` (= n/d); (`n` = memory_n) →
    `weight_matrix_mb`, the bytes of one (n, n) float64 matrix in decimal MB; timings, which
    differ on every run: (`model`, `n`) → `ms_per_layer` (self_attention: numpy attention on
    (n, timing_d) inputs; rnn_loop: a Python loop of n tanh steps) and (self_attention, `n`) →
    `ms_growth_per_doubling` (time at n / time at n/2). Then, counted rather than computed
    from the formula (`_counted_multiply_adds`: torch's FlopCounterMode on the products
    themselves): (`model`, `n`) → `counted_multiply_adds` (self_attention: Q K^T; rnn: n steps
    of the d×d recurrent product), and (`n`) → `counted_ratio` (self_attention / rnn).
    """
    records = _formula_rows(d_model, n_values, memory_n)
    records += _timing_rows(np.random.default_rng(seed), timing_d, timing_n_values, timing_repeats)
    for n in n_values:
        counted = _counted_multiply_adds(n, d_model)
        records += [row("counted_multiply_adds", c, model=m, n=n) for m, c in counted.items()]
        records.append(row("counted_ratio", counted["self_attention"] / counted["rnn"], n=n))
    return tidy(records, ["model", "n"])
