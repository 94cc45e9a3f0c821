"""The lecture's demos, one module per lecture script.

Contract of a demo function (see run.py, which calls them):

    def path_length(*, seq_len: int, hidden: int, n_sequences: int, seed: int) -> pd.DataFrame

- keyword-only arguments, no defaults: every setting comes from config/config.yaml, where it
  carries its § reference; `seed` is always passed (deterministic demos ignore it);
- it returns a tidy (long) DataFrame: zero or more label columns (model, distance, d_k, …),
  then `quantity` (str) and `value` (float); one row per measured number;
- it never writes files or prints; it seeds its own generators from `seed`;
- torch and tiny_transformer are imported inside the functions that need them, so the
  numpy-only demos run without paying for `import torch` (~3 s per job).
"""

# demo id -> (module, function). The ids are the lecture's ("代码 01 演示 4" = "01.4").
DEMOS: dict[str, tuple[str, str]] = {
    # 01 self-attention (§1–§3)
    "01.1": ("self_attention", "jane_example"),
    "01.2": ("self_attention", "loop_vs_matrix"),
    "01.3": ("self_attention", "permutation_equivariance"),
    "01.4": ("self_attention", "path_length"),
    "01.5": ("self_attention", "complexity"),
    # 02 scaling and multi-head attention (§4–§5)
    "02.1": ("scaling_multihead", "dot_product_variance"),
    "02.2": ("scaling_multihead", "softmax_saturation"),
    "02.3": ("scaling_multihead", "lookup_task"),
    "02.4": ("scaling_multihead", "multihead_vs_torch"),
    "02.5": ("scaling_multihead", "one_head_vs_three"),
    # 03 positional encoding (§6)
    "03.1": ("positional_encoding", "wavelengths"),
    "03.2": ("positional_encoding", "relative_shift"),
    "03.3": ("positional_encoding", "pe_dot_products"),
    "03.4": ("positional_encoding", "previous_token_head"),
    "03.5": ("positional_encoding", "pe_ablation"),
    # 04 encoder and decoder layers (§7–§8)
    "04.1": ("layers", "encoder_vs_torch"),
    "04.2": ("layers", "layernorm_vs_batchnorm"),
    "04.3": ("layers", "post_vs_pre_ln"),
    "04.4": ("layers", "look_ahead_mask"),
    "04.5": ("layers", "decoder_vs_torch"),
    "04.6": ("layers", "padding_mask"),
    # 05 tiny Transformer vs GRU seq2seq (§9)
    "05.1": ("transformer_vs_rnn", "reversal_comparison"),
    "05.3": ("transformer_vs_rnn", "attention_analysis"),
    "05.4": ("transformer_vs_rnn", "step_time"),
    # 06 beyond the lecture: its "at scale" claims made concrete (§8.4, §9.5, §10.4)
    "06.1": ("beyond", "memory_light_attention"),
    "06.2": ("beyond", "kv_cache_decoding"),
    "06.3": ("beyond", "gpu_step_time"),
    # §13 exercises whose answers are numbers
    "13.1": ("exercises", "exercise_answers"),
}
# 05.2 (accuracy by output position) is read from the 05.1 runs: same models, same seeds.
