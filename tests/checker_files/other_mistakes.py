"""Mistakes that are NOT in the catalogue (mutants/catalogue.py), as patches of attention_numpy.py.

Each is a plausible slip a student makes in a block of the lecture. `python -m lecture17 check`
must flag every one of them (the claims and properties detect; the catalogue only explains),
and a cause it names must be one the file computes: each is also one of the simple variants
of checker/explain.py (VARIANTS), so the check names it as itself, shown on the probe inputs,
and never as another mistake. tests/test_checker.py runs them (all with CHECK_ALL=1).
"""

# (name, function, old, new, the mistake)
OTHER_MISTAKES = [
    (
        "sdpa_not_scaled",
        "scaled_dot_product_attention",
        "Q = Q / np.sqrt(dtype.type(Q.shape[-1]))",
        "Q = Q",
        "scores not scaled at all",
    ),
    (
        "ffn_without_relu",
        "feed_forward",
        'hidden = np.maximum(x @ p["W_1"] + p["b_1"], 0)',
        'hidden = x @ p["W_1"] + p["b_1"]',
        "the feed-forward network without its ReLU",
    ),
    (
        "ffn_without_b_2",
        "feed_forward",
        'return hidden @ p["W_2"] + p["b_2"]',
        'return hidden @ p["W_2"]',
        "the second bias forgotten",
    ),
    (
        "look_ahead_hides_itself",
        "create_look_ahead_mask",
        "np.tril(np.ones((n, n)))",
        "np.tril(np.ones((n, n)), k=-1)",
        "look-ahead mask that hides the position itself",
    ),
    (
        "pe_base_1000",
        "_frequencies",
        "return 1.0 / 10000.0 ** (two_i / d_model)",
        "return 1.0 / 1000.0 ** (two_i / d_model)",
        "positional encoding with base 1000",
    ),
    (
        "layer_norm_eps_outside_sqrt",
        "layer_norm",
        "return (x - mean) / np.sqrt(var + eps) * gamma + beta",
        "return (x - mean) / (np.sqrt(var) + eps) * gamma + beta",
        "eps added after the square root",
    ),
    (
        "combine_heads_reshape_only",
        "combine_heads",
        "return x.transpose(0, 2, 1, 3).reshape(b, n, h * d_k)",
        "return x.reshape(b, n, h * d_k)",
        "heads combined by a reshape without the transpose",
    ),
    (
        "mha_without_w_o",
        "multi_head_attention",
        'output = combine_heads(context) @ p["W_o"] + p["b_o"]',
        'output = combine_heads(context) + p["b_o"]',
        "the output projection W^O left out",
    ),
    (
        "post_ln_norms_the_sublayer_only",
        "_residual",
        'return layer_norm(x + sublayer(x), norm["gamma"], norm["beta"])',
        'return x + layer_norm(sublayer(x), norm["gamma"], norm["beta"])',
        "Post-LN that normalises the sublayer, not the sum",
    ),
    (
        "shift_matrix_transposed",
        "relative_shift_matrix",
        "M[even, even + 1] = -np.sin(angle)\n    M[even + 1, even] = np.sin(angle)",
        "M[even, even + 1] = np.sin(angle)\n    M[even + 1, even] = -np.sin(angle)",
        "M_k transposed: a shift by -k",
    ),
    (
        "softmax_not_normalised",
        "softmax",
        "e /= e.sum(axis=axis, keepdims=True)  # each row sums to 1",
        "pass",
        "exp without the division by the row's sum",
    ),
]
