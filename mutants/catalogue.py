"""The catalogue: plausible bugs in the lecture's code, one small named patch each.

Each mutant is a mistake a student writing this code makes, written from the code (where the
lecture's pitfalls and the usual slips live), not from what the ledger happens to check. It
names its file and its function ("warmup_lr", "MultiHeadAttention.forward"); `old` must occur
exactly once in that function's source and becomes `new` (mutants/patch.py finds the function
with `ast`, so a moved function still patches and a renamed one fails, naming the mutant).
`code` says whose code it edits: "analytic" (attention_numpy.py, the numpy blocks that no demo
trains, and the analytic demos' own code in experiments/: the Jane sentence and the
sensitivity of 01.1-01.4, the Monte Carlo of 02.1-02.2, the counts of 01.5 and 04.5, the random
draws and norms of 04.1-04.6, the control of 03.4, the exercises of 13.1) or "trained"
(tiny_transformer.py and training.py, the models (§4.4's LookupAttention among them) and the
loop the trained demos run, and a trained demo's own code: 03.5's norms at initialisation; a
few of their functions also feed analytic demos, e.g. the KV cache and the position count of
06.2).

Only bugs that can reach a number this project computes are here: its tasks have no padding
and its models no dropout, so no padding-only or dropout bug is listed.
"""

from dataclasses import dataclass

NUMPY = "src/lecture17/attention_numpy.py"
# the analytic demos' own code (the lecture's code 01-04 around the numpy blocks)
SELF_ATTENTION = "src/lecture17/experiments/self_attention.py"
SCALING = "src/lecture17/experiments/scaling_multihead.py"
LAYERS = "src/lecture17/experiments/layers.py"
POSITIONS = "src/lecture17/experiments/positional_encoding.py"
EXERCISES = "src/lecture17/experiments/exercises.py"
TORCH = "src/lecture17/tiny_transformer.py"
DECODING = "src/lecture17/decoding.py"  # beam search, count_positions
GRU = "src/lecture17/gru_seq2seq.py"  # the GRU baselines of §9.1
TRAINING = "src/lecture17/training.py"
TASKS = "src/lecture17/tasks.py"  # the tasks, their data and evaluation
CODES = ("analytic", "trained")


@dataclass(frozen=True)
class Mutant:
    name: str
    file: str  # relative to the repository root
    function: str  # "function" or "Class.method", located with ast
    old: str  # occurs exactly once in that function's source
    new: str
    mistake: str  # the student's mistake, one line
    code: str  # "analytic" or "trained"

    @property
    def hint(self) -> str:
        """The question `python -m lecture17 check` asks a student whose file looks like this
        mistake, in the lecture's terms (never the reference's code); "" where none is set."""
        return HINTS.get(self.name, "")

    def __post_init__(self):
        if self.code not in CODES:
            raise ValueError(f"mutant {self.name}: code {self.code!r}, expected one of {CODES}")
        if self.old == self.new:
            raise ValueError(f"mutant {self.name}: old and new are the same")


# The student-facing blocks' mistakes as a student is asked about them (checker, judge.py)
HINTS = {
    "softmax_no_max_shift": "softmax 有没有先减去每一行的最大值？分数一大，exp 就溢出了（§2.2）",
    "sdpa_divides_by_d_k": "是不是除以了 d_k，而不是 √d_k？（§4.2）",
    "sdpa_mask_inverted": (
        "mask 的约定是不是弄反了？讲义是 1 = 可以看，加的是 (1 − mask)·(−1e9)（§8.1，§12 误区 7）"
    ),
    "split_heads_reshape_only": (
        "切头时是不是只 reshape 成 (b, h, n, d_k)，少了一次转置？那样每个头混进了别的词（§5.3）"
    ),
    "mha_param_count_no_biases": "数参数时是不是漏了四个偏置 b_q、b_k、b_v、b_o？（§5.2）",
    "mha_param_count_without_w_o": "数参数时是不是只数了 W^Q、W^K、W^V，忘了输出投影 W^O？（§5.2）",
    "pe_frequency_uses_i": (
        "频率是不是写成了 1/10000^(i/d)？讲义是 1/10000^(2i/d)，i 是维度对的编号（§6.2）"
    ),
    "pe_positions_from_one": (
        "位置是不是从 1 开始数的？讲义的 pos 从 0 开始，PE(0) = (0, 1, 0, 1, …)（§6.2）"
    ),
    "shift_matrix_sign": "M_k 的 2×2 旋转块里是不是有一个 sin 的符号反了？（§6.3）",
    "layer_norm_unbiased_variance": (
        "LayerNorm 是不是用了无偏方差（除以 d − 1）？nn.LayerNorm 除以 d（§7.3）"
    ),
    "pre_ln_drops_residual": "Pre-LN 的子层是不是漏了残差 x + …？（§7.5）",
    "look_ahead_sees_next": "look-ahead mask 是不是差了一格，让位置 t 也看见了 t + 1？（§8.1）",
    "cross_attention_reads_decoder": (
        "编码器-解码器注意力的 K、V 是不是取自解码器，而不是编码器的输出？（§8.2）"
    ),
    "sdpa_softmax_over_queries": (
        "softmax 是不是沿着 query 的方向（axis = −2）做的？应该对每个 query 在 key 上归一（§3.1）"
    ),
    "pe_cos_slot_gets_sin": "奇数维是不是也放了 sin？讲义是偶数维 sin、奇数维 cos（§6.2）",
    "layer_norm_over_batch": (
        "LayerNorm 的均值和方差是不是沿着 batch 算的（那是 BatchNorm）？应该沿每个词的特征（§7.3）"
    ),
    "pe_sin_slot_gets_cos": "偶数维是不是也放了 cos？讲义是偶数维 sin、奇数维 cos（§6.2）",
    "pe_exponent_without_d_model": (
        "频率的指数里是不是漏了 /d_model？讲义是 1/10000^(2i/d_model)（§6.2）"
    ),
    "pe_scaled_by_sqrt_d_model": "是不是把 √d_model 乘在了位置编码上？论文乘的是词嵌入（§6.6）",
}


def _numpy(name, function, old, new, mistake):
    return Mutant(name, NUMPY, function, old, new, mistake, "analytic")


def _demo(name, file, function, old, new, mistake):
    return Mutant(name, file, function, old, new, mistake, "analytic")


def _torch(name, function, old, new, mistake, file=TORCH):
    return Mutant(name, file, function, old, new, mistake, "trained")


def _training(name, function, old, new, mistake):
    return _torch(name, function, old, new, mistake, file=TRAINING)


CATALOGUE = [
    # --- attention_numpy.py: the numpy blocks (§2–§8, §10.4) ---------------------------------
    _numpy(
        "softmax_no_max_shift",
        "softmax",
        "e = np.subtract(x, x.max(axis=axis, keepdims=True), out=out)",
        "e = np.subtract(x, 0, out=out)",
        "softmax without subtracting the row max: exp overflows on large scores",
    ),
    _numpy(
        "sdpa_divides_by_d_k",
        "scaled_dot_product_attention",
        "Q = Q / np.sqrt(dtype.type(Q.shape[-1]))",
        "Q = Q / dtype.type(Q.shape[-1])",
        "scores divided by d_k instead of sqrt(d_k)",
    ),
    _numpy(
        "sdpa_mask_inverted",
        "scaled_dot_product_attention",
        "scores = scores + (1 - mask) * dtype.type(-1e9)",
        "scores = scores + mask * dtype.type(-1e9)",
        "mask convention flipped (§12 pitfall 7): -1e9 where the mask says 'may attend'",
    ),
    _numpy(
        "split_heads_reshape_only",
        "split_heads",
        "x = x.reshape(b, n, n_heads, d_model // n_heads)  # (b, n, h, d_k)\n"
        "    return x.transpose(0, 2, 1, 3)",
        "return x.reshape(b, n_heads, n, d_model // n_heads)",
        "heads split by a reshape to (b, h, n, d_k) without the transpose: heads mix tokens",
    ),
    _numpy(
        "mha_params_not_transposed",
        "mha_params_from_torch",
        'params[f"W_{p}"] = in_weight[i * d : (i + 1) * d].T',
        'params[f"W_{p}"] = in_weight[i * d : (i + 1) * d]',
        "PyTorch's (out, in) in_proj weights copied without the transpose",
    ),
    _numpy(
        "mha_param_count_no_biases",
        "count_mha_params",
        "return 4 * d_model**2 + 4 * d_model",
        "return 4 * d_model**2",
        "multi-head attention's parameters counted without the four biases",
    ),
    _numpy(
        "pe_frequency_uses_i",
        "_frequencies",
        "two_i = np.arange(0, d_model, 2, dtype=np.float64)",
        "two_i = np.arange(0, d_model // 2, dtype=np.float64)",
        "PE frequencies 1/10000^(i/d) instead of 1/10000^(2i/d)",
    ),
    _numpy(
        "pe_positions_from_one",
        "positional_encoding",
        "angles = np.arange(max_len)[:, np.newaxis]",
        "angles = np.arange(1, max_len + 1)[:, np.newaxis]",
        "positions counted from 1 instead of 0",
    ),
    _numpy(
        "shift_matrix_sign",
        "relative_shift_matrix",
        "M[even, even + 1] = -np.sin(angle)",
        "M[even, even + 1] = np.sin(angle)",
        "sign slip in the rotation block of M_k",
    ),
    _numpy(
        "layer_norm_unbiased_variance",
        "layer_norm",
        "var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)",
        "var = x.var(axis=-1, ddof=1, keepdims=True)",
        "LayerNorm with the unbiased variance (ddof=1) of some teaching code",
    ),
    _numpy(
        "pre_ln_drops_residual",
        "_residual",
        'return x + sublayer(layer_norm(x, norm["gamma"], norm["beta"]))',
        'return sublayer(layer_norm(x, norm["gamma"], norm["beta"]))',
        "Pre-LN sublayer without its residual connection",
    ),
    _numpy(
        "look_ahead_sees_next",
        "create_look_ahead_mask",
        "np.tril(np.ones((n, n)))",
        "np.tril(np.ones((n, n)), k=1)",
        "look-ahead mask off by one: position t also sees t + 1",
    ),
    _numpy(
        "cross_attention_reads_decoder",
        "decoder_layer_forward",
        'multi_head_attention(h, kv, params["cross_attn"], n_heads, memory_mask)',
        'multi_head_attention(h, h, params["cross_attn"], n_heads, memory_mask)',
        "cross-attention takes K and V from the decoder instead of the encoder memory",
    ),
    _numpy(
        "tiled_no_rescale",
        "_attend_query_block",
        "acc = rescale * acc + p @ V[..., keys, :]",
        "acc = acc + p @ V[..., keys, :]",
        "online softmax that rescales the denominator but not the running numerator",
    ),
    _numpy(
        "sdpa_softmax_over_queries",
        "scaled_dot_product_attention",
        "weights = softmax(scores, axis=-1, out=scores)",
        "weights = softmax(scores, axis=-2, out=scores)",
        "softmax normalised over the queries (axis -2) instead of the keys",
    ),
    _numpy(
        "pe_cos_slot_gets_sin",
        "positional_encoding",
        "pe[:, 1::2] = np.cos(angles)",
        "pe[:, 1::2] = np.sin(angles)",
        "copy-paste slip: the odd dimensions get sin too, no cos",
    ),
    _numpy(
        "layer_norm_over_batch",
        "layer_norm",
        "mean = x.mean(axis=-1, keepdims=True)  # (..., 1)\n"
        "    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)",
        "mean = x.mean(axis=0, keepdims=True)\n"
        "    var = ((x - mean) ** 2).mean(axis=0, keepdims=True)",
        "LayerNorm's statistics over the batch axis (BatchNorm's) instead of the features",
    ),
    _numpy(
        "pe_sin_slot_gets_cos",
        "positional_encoding",
        "pe[:, 0::2] = np.sin(angles)",
        "pe[:, 0::2] = np.cos(angles)",
        "copy-paste slip the other way: the even dimensions get cos too, no sin",
    ),
    _numpy(
        "pe_exponent_without_d_model",
        "_frequencies",
        "return 1.0 / 10000.0 ** (two_i / d_model)",
        "return 1.0 / 10000.0**two_i",
        "PE frequencies 1/10000^(2i) with the exponent's /d_model left out",
    ),
    # for C056 (every PE value in [-1, 1]), which no sin/cos slip can leave: the
    # paper's "multiply by sqrt(d_model)" (§6.6, §12 pitfall 10) put on the other term
    _numpy(
        "pe_scaled_by_sqrt_d_model",
        "positional_encoding",
        "return pe",
        "return pe * np.sqrt(d_model)",
        "the paper's √d_model put on the positional encoding instead of the embeddings (§6.6)",
    ),
    _numpy(
        "mha_param_count_without_w_o",
        "count_mha_params",
        "return 4 * d_model**2 + 4 * d_model",
        "return 3 * d_model**2 + 3 * d_model",
        "multi-head attention's parameters counted as W^Q, W^K, W^V only: W^O forgotten",
    ),
    # --- the analytic demos' own code (experiments/) ------------------------------------------
    _demo(
        "jane_query_transposed",
        SELF_ATTENTION,
        "jane_example",
        "Q = X @ jane_query_matrix(strength)",
        "Q = X @ jane_query_matrix(strength).T",
        "q = x W^Q written as x W^Q^T (the weight's layout confused)",
    ),
    _demo(
        "visite_without_pe",
        SELF_ATTENTION,
        "_visite_rows",
        "X = np.stack([embed[w] for w in words]) + pe[:3]",
        "X = np.stack([embed[w] for w in words])",
        "the positional encoding computed but never added to the embeddings",
    ),
    _demo(
        "rnn_without_tanh",
        SELF_ATTENTION,
        "_rnn_last",
        'h = torch.tanh(x_t @ rnn["W_xh"] + rnn["b_xh"] + h @ rnn["W_hh"] + rnn["b_hh"])',
        'h = x_t @ rnn["W_xh"] + rnn["b_xh"] + h @ rnn["W_hh"] + rnn["b_hh"]',
        "the RNN's tanh left out: a linear recurrence",
    ),
    _demo(
        "sensitivity_softmax_over_queries",
        SELF_ATTENTION,
        "_attention_last",
        "weights = torch.softmax(Q @ K.T / np.sqrt(x.shape[-1]), dim=-1)",
        "weights = torch.softmax(Q @ K.T / np.sqrt(x.shape[-1]), dim=0)",
        "torch.softmax over dim 0 (the queries) instead of the keys",
    ),
    _demo(
        "ratio_inverted",
        SELF_ATTENTION,
        "_formula_rows",
        'row("ratio", attention / rnn, n=n)',
        'row("ratio", rnn / attention, n=n)',
        "the multiply-add ratio written d/n instead of n/d",
    ),
    _demo(
        "query_uniform_not_normal",
        SCALING,
        "_random_scores",
        "q = rng.standard_normal((rows, 1, d_k))",
        "q = rng.random((rows, 1, d_k))",
        "rand for randn: the queries' components U(0, 1) instead of N(0, 1)",
    ),
    _demo(
        "variance_scaled_by_d_k",
        SCALING,
        "dot_product_variance",
        "scaled = dots / np.sqrt(d_k)",
        "scaled = dots / d_k",
        "the scores divided by d_k instead of sqrt(d_k) (§4.2's variance)",
    ),
    _demo(
        "saturation_scaled_by_d_k",
        SCALING,
        "softmax_saturation",
        '("scaled", scores / np.sqrt(d_k))',
        '("scaled", scores / d_k)',
        "the scores divided by d_k instead of sqrt(d_k) (§4.3's saturation)",
    ),
    _demo(
        "jacobian_diagonal_only",
        SCALING,
        "_softmax_statistics",
        "J = p[:, :, None] * np.eye(p.shape[-1]) - p[:, :, None] * p[:, None, :]",
        "J = (p * (1 - p))[:, :, None] * np.eye(p.shape[-1])",
        "the softmax Jacobian taken as the sigmoid's, diagonal p(1 - p) only",
    ),
    _demo(
        "uncached_decoding_feeds_newest",
        LAYERS,
        "_counted_decoding",
        "x = y[:, :t]  # (b, t, d_model): the whole prefix again",
        "x = y[:, t - 1 : t]",
        "decoding without a cache that feeds only the newest position (no cache to read from)",
    ),
    # written from the counted claims that no mutant had flipped
    _demo(
        "jane_afrique_one_based",
        SELF_ATTENTION,
        "jane_example",
        'afrique = JANE_WORDS.index("l\'Afrique")',
        "afrique = 3  # q⟨3⟩",
        "the lecture's 1-based q⟨3⟩ used as a 0-based index: the row of 'en' read as l'Afrique's",
    ),
    _demo(
        "self_attention_causal",
        SELF_ATTENTION,
        "_self_attention",
        'scaled_dot_product_attention(X @ W["q"], X @ W["k"], X @ W["v"])[0]',
        "scaled_dot_product_attention(\n"
        '        X @ W["q"], X @ W["k"], X @ W["v"], np.tril(np.ones((len(X), len(X))))\n'
        "    )[0]",
        "a decoder's look-ahead mask left in the encoder's self-attention of §3.2",
    ),
    _demo(
        "sensitivity_not_reversed",
        SELF_ATTENTION,
        "path_length",
        "np.mean(per_sequence, axis=0)[::-1]",
        "np.mean(per_sequence, axis=0)",
        "the sensitivities indexed by the position j, not by the distance n − 1 − j",
    ),
    _demo(
        "sensitivity_attention_init_unscaled",
        SELF_ATTENTION,
        "_random_attention",
        "torch.from_numpy(rng.standard_normal((d_model, d_model)) / np.sqrt(d_model))",
        "torch.from_numpy(rng.standard_normal((d_model, d_model)))",
        "W^Q, W^K, W^V drawn N(0, 1): the 1/√d_model of the variance-preserving init left out",
    ),
    _demo(
        "counted_flops_as_multiply_adds",
        SELF_ATTENTION,
        "_counted_multiply_adds",
        'counted["self_attention"] = counter.get_total_flops() // 2',
        'counted["self_attention"] = counter.get_total_flops()',
        "FlopCounterMode's FLOPs taken for multiply-adds (it counts 2 FLOPs per multiply-add)",
    ),
    _demo(
        "pad_weight_summed_over_queries",
        SCALING,
        "_mask_pitfall_rows",
        'np.einsum("bhqk,bk->bhq", w.numpy(), is_pad.astype(np.float64))',
        'np.einsum("bhqk,bq->bhq", w.numpy(), is_pad.astype(np.float64))',
        "the weight on the pads read along the padded queries instead of the padded keys",
    ),
    _demo(
        "control_uniform_over_predecessors",
        POSITIONS,
        "_control_rows",
        "np.abs(control - 1 / n_positions).max()",
        "np.abs(control - 1 / (n_positions - 1)).max()",
        "'uniform' taken as 1/(n − 1), over the positions with a predecessor, not all n keys",
    ),
    _demo(
        "batch_norm_eval_mode",
        LAYERS,
        "layernorm_vs_batchnorm",
        "bn = torch.nn.BatchNorm1d(d_model, dtype=torch.float64).train()",
        "bn = torch.nn.BatchNorm1d(d_model, dtype=torch.float64).eval()",
        "BatchNorm in eval mode: it normalises by its running statistics, not the batch's",
    ),
    _demo(
        "layer_norm_gain_named_gamma",
        LAYERS,
        "_randomize_",
        'name.endswith("weight")',
        'name.endswith("gamma")',
        "LayerNorm's gain looked up by TF's name 'gamma': drawn N(0, 0.1²), not 1 + N(0, 0.1²)",
    ),
    _demo(
        "look_ahead_init_variance_as_std",
        LAYERS,
        "look_ahead_mask",
        "rng.standard_normal((3, d_model, d_model)) / np.sqrt(d_model)",
        "rng.standard_normal((3, d_model, d_model)) / d_model",
        "W ~ N(0, 1/d_model) drawn with standard deviation 1/d_model (§8.1's numpy attention)",
    ),
    _demo(
        "padding_init_variance_as_std",
        LAYERS,
        "_padded_inputs",
        'f"W_{p}": rng.standard_normal((d_model, d_model)) / np.sqrt(d_model)',
        'f"W_{p}": rng.standard_normal((d_model, d_model)) / d_model',
        "W ~ N(0, 1/d_model) drawn with standard deviation 1/d_model (§8.3's attention)",
    ),
    _demo(
        "fully_masked_row_as_ones",
        EXERCISES,
        "exercise_4",
        "nothing = np.zeros((1, n_keys))  # every key masked",
        "nothing = np.ones((1, n_keys))  # every key masked",
        "a fully masked row written as ones: 1 read as 'masked', the opposite of 1 = may attend",
    ),
    # --- tiny_transformer.py: the PyTorch models (§5–§9, §8.4) --------------------------------
    _torch(
        "fused_scale_flag_inverted",
        "MultiHeadAttention.forward",
        "scale=None if self.scale else 1.0,",
        "scale=1.0 if self.scale else None,",
        "SDPA's `scale` misread (1.0 taken for 'scale on'): the model trains unscaled",
    ),
    _torch(
        "split_heads_view_only",
        "split_heads",
        "x.view(b, n, n_heads, d_model // n_heads).transpose(1, 2)",
        "x.view(b, n_heads, n, d_model // n_heads)",
        "heads split by a view to (b, h, n, d_k) without the transpose",
    ),
    _torch(
        "decoder_not_causal",
        "DecoderLayer.forward",
        "memory_mask=None, is_causal=True)",
        "memory_mask=None, is_causal=False)",
        "decoder self-attention without the look-ahead mask: teacher forcing sees the answer",
    ),
    _torch(
        "causal_mask_sees_next",
        "causal_mask",
        ".tril()",
        ".tril(1)",
        "look-ahead mask off by one: query t also sees key t + 1",
    ),
    _torch(
        "encoder_ignores_norm_first",
        "Encoder.__init__",
        "EncoderLayer(c.d_model, c.n_heads, c.d_ff, c.norm_first, c.scale, score_pe(c))",
        "EncoderLayer(c.d_model, c.n_heads, c.d_ff, scale=c.scale, positions=score_pe(c))",
        "the Pre-LN switch not passed to the encoder layers: they stay Post-LN",
    ),
    _torch(
        "learned_pe_frozen",
        "Embedding.__init__",
        "self.pe = nn.Parameter(torch.randn(max_len, d_model))",
        "self.pe = nn.Parameter(torch.randn(max_len, d_model), requires_grad=False)",
        "learned positional encoding left frozen (requires_grad=False): random codes, untrained",
    ),
    _torch(
        "cached_step_position_zero",
        "Decoder.step",
        "x = self.embed(token, start=position)",
        "x = self.embed(token)",
        "KV-cache decoding embeds every new token at position 0",
    ),
    _torch(
        "gru_softmax_over_targets",
        "GRUSeq2Seq.attend",
        "weights = scores.softmax(dim=-1)",
        "weights = scores.softmax(dim=1)",
        "Luong attention normalised over the decoder steps instead of the source positions",
        file=GRU,
    ),
    _torch(
        "gru_context_from_keys",
        "GRUSeq2Seq.attend",
        "context = weights @ enc_states",
        "context = weights @ keys",
        "attention averages the projected keys W_a h_s instead of the encoder states h_s",
        file=GRU,
    ),
    _torch(
        "lookup_scale_by_d_k",
        "LookupAttention.forward",
        "scores = scores / math.sqrt(self.d_k)",
        "scores = scores / self.d_k",
        "look-up scores divided by d_k instead of sqrt(d_k)",
    ),
    _torch(
        "count_positions_reads_batch_axis",
        "count_positions",
        'counted["positions"] += output.shape[1]',
        'counted["positions"] += output.shape[0]',
        "positions read off axis 0, as in PyTorch's default (n, b, d) layout: the batch counted",
        file=DECODING,
    ),
    _torch(  # a trained demo's own code (03.5): its claims are decided on the recorded 07.3
        "init_norms_over_vocabulary",
        "_init_norms",
        "embed.token.weight.detach().norm(dim=1).mean().item()",
        "embed.token.weight.detach().norm(dim=0).mean().item()",
        "the embeddings' mean length taken along dim 0: each dimension's norm over the vocabulary",
        file=POSITIONS,
    ),
    # --- training.py and tasks.py: the loop; the tasks, evaluation (§4.4, §7.5, §8.4, §9) ------
    _torch(
        "teacher_forcing_unshifted",
        "reversal_batch",
        "return src, torch.cat([bos, reversed_], 1), torch.cat([reversed_, eos], 1)",
        "return src, torch.cat([reversed_, eos], 1), torch.cat([reversed_, eos], 1)",
        "teacher forcing without the shift: the decoder's input is the target itself",
        file=TASKS,
    ),
    _training(
        "warmup_starts_at_zero",
        "warmup_lr",
        "min(1.0, (step + 1) / warmup)",
        "min(1.0, step / warmup)",
        "warmup off by one: the first step has learning rate 0",
    ),
    _training(
        "warmup_never_caps",
        "warmup_lr",
        "lr * min(1.0, (step + 1) / warmup)",
        "lr * (step + 1) / warmup",
        "warmup without the min(1, ·): the learning rate keeps growing after the warmup",
    ),
    _torch(
        "test_set_is_training_stream",
        "evaluation_set",
        "manual_seed(seed + TEST_SEED_OFFSET)",
        "manual_seed(seed)",
        "test set drawn from the training generator's seed: tested on the first training data",
        file=TASKS,
    ),
]

MUTANTS = {mutant.name: mutant for mutant in CATALOGUE}
if len(MUTANTS) != len(CATALOGUE):
    raise ValueError("each mutant is named once")


def select(names=None) -> list[Mutant]:
    """The mutants named (all by default), in catalogue order; an unknown name fails."""
    if not names:
        return list(CATALOGUE)
    if unknown := sorted(set(names) - set(MUTANTS)):
        raise ValueError(f"unknown mutants {unknown}; the catalogue has {sorted(MUTANTS)}")
    return [m for m in CATALOGUE if m.name in set(names)]
