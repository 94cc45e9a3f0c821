"""The lecture's demos, one module per lecture script, each registered once in `DEMOS` below.

Contract of a demo function (see pipeline/job.py, which calls them):

    def path_length(*, seq_len: int, hidden: int, n_sequences: int, seed: int) -> pd.DataFrame

- keyword-only arguments, no defaults: every setting comes from config/config.yaml, where it
  carries its § reference; `seed` is always passed (deterministic demos ignore it); a nested
  block of settings is annotated with a frozen dataclass (`train: TrainSettings`);
- it returns a tidy (long) DataFrame: zero or more label columns (model, distance, d_k, …),
  then `quantity` (str) and `value` (float); one row per measured number;
- it never writes files or prints; it seeds its own generators from `seed`;
- torch and tiny_transformer are imported inside the functions that need them, so the
  numpy-only demos run without paying for `import torch` (~3 s per job).

Everything that only repeats a demo's id is derived from its entry here: the Snakemake rule
that runs it (workflow/rules/experiments.smk), which of its quantities are timings (they go to
`.timing.csv`, never compared across machines), the tests that run every demo, and the
README's demo map. docs/ARCHITECTURE.md says what else a new demo needs.

Long on purpose: the registry is the one list of demos, one entry each, with the checks that
keep every entry consistent.
"""

from dataclasses import dataclass

KINDS = ("analytic", "training", "gpu", "recorded", "view")


@dataclass(frozen=True)
class Demo:
    """One demo of the lecture ("代码 01 演示 4" = "01.4").

    kind: analytic (one job per seed, no training), training (one job per grid point and seed,
    on the build's `device`), gpu (as training, but only in a `device=cuda` build), recorded
    (as training, but run only by the `robustness` target, `make robustness`: more seeds,
    other readings, the exercises' runs; recorded under report/measured/ with record.json,
    which the default build aggregates without rerunning), view (no runs of its own: its
    report view reads the table of the demo in `reads`).
    extends: a recorded demo's lecture demo (the protocol whose seeds or readings it adds).
    rule: the Snakemake rule that runs its jobs (`--forcerun <rule>`, benchmarks/<rule>/, the
    SLURM profile's per-rule resources); by default its module for an analytic demo, its
    function for a training one.
    timings: the quantities that are machine-dependent (milliseconds and their ratios).
    measured: (quantity, relative tolerance) pairs for a measurement of the running process that is
    not a timing but not a pure function of the code either (06.1's `peak_mb` counts the
    interpreter's own small allocations beside numpy's arrays: a few hundred bytes that move
    with what else the process ran); `diff` compares it within the tolerance, not by digits.
    keeps_models: its jobs write the models they train (`kept_models.keep`) to
    `<out stem>.models.pt` beside their CSV, for a demo that reads them (05.1, read by 06.6).
    reads_models: the demo whose kept models this one reads, job by job (the same grid point
    and seed): its function takes them as `trained` (None: it trains them again, the same way).
    study: a training demo too long for the default build (its jobs alone would outweigh
    the build's budget: 06.7, 06.8):
    the default build runs none of its jobs; its seeds are those of the recorded demos that
    extend it (07.9, 09.1), run by `make robustness`. Its entry holds the protocol (the
    config's settings and grid), the § its claims stand under, and `python -m lecture17 run`.
    seed_free: its numbers, timings aside, do not depend on the seed (the lecture's own inputs,
    formulas, fixed inputs): the report names no seed for its tables and values (tested: seeds
    0 and 1 give the same rows).
    alone: a timing is what the demo is for (01.5, 05.4, 06.1, 06.2): its jobs take every core
    of the build (Snakemake `threads`; each still computes on one thread), so no other job
    shares the machine while it is timed. A training demo that also records its step time
    (05.1) is not alone: that timing is shown, never decides a counted verdict.
    """

    id: str
    function: str  # "<module>.<function>" in lecture17.experiments ("" for a view)
    section: str  # where the lecture shows it: "§3.3"
    title: str  # the README's and the report's short name, in the lecture's words
    kind: str = "analytic"
    rule: str = ""
    timings: tuple[str, ...] = ()
    measured: tuple[tuple[str, float], ...] = ()  # ((quantity, relative tolerance), ...)
    reads: str = ""  # a view's demo: whose table it shows
    extends: str = ""  # a recorded demo's lecture demo
    alone: bool = False  # a timing is its purpose: its job runs with no other job beside it
    keeps_models: bool = False  # its jobs write <out stem>.models.pt (kept_models)
    reads_models: str = ""  # the demo whose kept models it reads, job by job
    study: bool = False  # not in the default build: its recorded demos carry its seeds
    seed_free: bool = False  # its numbers (timings aside) are the same for every seed

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"demo {self.id}: kind {self.kind!r}, expected one of {KINDS}")
        if (self.kind == "recorded") != bool(self.extends):
            raise ValueError(
                f"demo {self.id}: a recorded demo, and only one, names what it extends"
            )
        if (self.kind == "view") != bool(self.reads):
            raise ValueError(f"demo {self.id}: a view, and only a view, names the demo it reads")
        if self.study and self.kind != "training":
            raise ValueError(f"demo {self.id}: only a training demo can be a study")
        if not self.rule and self.kind != "view":
            default = self.module if self.kind == "analytic" else self.function_name
            object.__setattr__(self, "rule", default)

    @property
    def module(self) -> str:
        return self.function.split(".")[0] if self.function else ""

    @property
    def function_name(self) -> str:
        return self.function.split(".")[1] if self.function else ""

    @property
    def script(self) -> str:
        return self.id.split(".")[0]


# The lecture's scripts: id -> its title in the lecture's words (the README's demo map).
SCRIPTS = {
    "01": "自注意力 self-attention",
    "02": "缩放与多头 scaling, multi-head",
    "03": "位置编码 positional encoding",
    "04": "编码器 / 解码器层 layers",
    "05": "Transformer vs GRU",
    "06": "超出讲义 beyond",
    "07": "稳健性与读法 robustness, readings（记录的运行 recorded）",
    "08": "练习的运行 exercise runs（记录的运行 recorded）",
    "09": "超出讲义：更多种子 beyond, more seeds（记录的运行 recorded）",
    "13": "练习 exercises",
}

_STEP_TIMES = ("ms_per_step",)
_REGISTRY = [
    # 01 self-attention (§1–§3)
    Demo("01.1", "self_attention.jane_example", "§2.3", "Jane", seed_free=True),
    Demo("01.2", "self_attention.loop_vs_matrix", "§3.1", "循环 vs 矩阵"),
    Demo("01.3", "self_attention.permutation_equivariance", "§3.2", "置换等变"),
    Demo("01.4", "self_attention.path_length", "§1.2", "路径长度"),
    Demo(
        "01.5",
        "self_attention.complexity",
        "§3.4",
        "计算量",
        timings=("ms_per_layer", "ms_growth_per_doubling"),
        alone=True,
        seed_free=True,
    ),
    # 02 scaling and multi-head attention (§4–§5)
    Demo("02.1", "scaling_multihead.dot_product_variance", "§4.2", "方差"),
    Demo("02.2", "scaling_multihead.softmax_saturation", "§4.3", "饱和"),
    Demo(
        "02.3",
        "scaling_multihead.lookup_task",
        "§4.4",
        "查字典",
        kind="training",
        rule="lookup_task",
    ),
    Demo("02.4", "scaling_multihead.multihead_vs_torch", "§5.4", "多头 = PyTorch"),
    Demo("02.5", "scaling_multihead.one_head_vs_three", "§5.1", "一个头 vs 三个头"),
    # 03 positional encoding (§6)
    Demo("03.1", "positional_encoding.wavelengths", "§6.2", "波长", seed_free=True),
    Demo("03.2", "positional_encoding.relative_shift", "§6.3", "M_k", seed_free=True),
    Demo("03.3", "positional_encoding.pe_dot_products", "§6.3", "点积", seed_free=True),
    Demo("03.4", "positional_encoding.previous_token_head", "§6.4", "前一个词", seed_free=True),
    Demo(
        "03.5",
        "positional_encoding.pe_ablation",
        "§6.6",
        "消融",
        kind="training",
        rule="pe_ablation",
    ),
    # 04 encoder and decoder layers (§7–§8)
    Demo("04.1", "layers.encoder_vs_torch", "§7.4", "编码器层"),
    Demo("04.2", "layers.layernorm_vs_batchnorm", "§7.3", "LN vs BN"),
    Demo(
        "04.3",
        "layers.post_vs_pre_ln",
        "§7.5",
        "Post-LN vs Pre-LN",
        kind="training",
        rule="post_vs_pre_ln",
    ),
    Demo("04.4", "layers.look_ahead_mask", "§8.1", "look-ahead"),
    Demo("04.5", "layers.decoder_vs_torch", "§8.2", "解码器层"),
    Demo("04.6", "layers.padding_mask", "§8.3", "padding"),
    # 05 tiny Transformer vs GRU seq2seq (§9); 05.2 (accuracy by output position) is read from
    # the 05.1 runs: same models, same seeds (report/views/05.yaml)
    Demo(
        "05.1",
        "transformer_vs_rnn.reversal_comparison",
        "§9.2",
        "结果",
        kind="training",
        rule="reversal_comparison",
        timings=("ms_per_step", "ms_train_total"),
        keeps_models=True,  # read by 06.6 (its own rule: 05.3 and 05.4 keep none)
    ),
    Demo("05.2", "", "§9.3", "按位置", kind="view", reads="05.1"),
    Demo(
        "05.3",
        "transformer_vs_rnn.attention_analysis",
        "§9.4",
        "注意力",
        kind="training",
        rule="transformer_vs_rnn",
    ),
    Demo(
        "05.4",
        "transformer_vs_rnn.step_time",
        "§9.5",
        "速度",
        kind="training",
        rule="transformer_vs_rnn",
        timings=(*_STEP_TIMES, "ms_per_step_q1", "ms_per_step_q3"),
        alone=True,
    ),
    Demo(
        "05.5",
        "transformer_vs_rnn.decoded_examples",
        "§9.2",
        "一个解码的例子 a decoded example（和逐条序列的注意力）",
        kind="training",
        rule="decoded_examples",
        reads_models="05.1",
    ),
    # 06 beyond the lecture: its "at scale" claims made concrete (§8.4, §9.5, §10.4)
    Demo(
        "06.1",
        "beyond.memory_light_attention",
        "§10.4",
        "不存 n×n 矩阵的注意力",
        timings=("ms",),
        # the interpreter's allocations during one call: 0.5-0.9 kB more under a trace
        # function (measured), against a smallest peak of 0.36 MB: 1 % is ~4x that
        measured=(("peak_mb", 0.01),),
        alone=True,
    ),
    Demo(
        "06.2",
        "beyond.kv_cache_decoding",
        "§8.4",
        "KV cache",
        timings=("ms", "ms_ratio_uncached_over_cached"),
        alone=True,
        seed_free=True,
    ),
    Demo(
        "06.3",
        "beyond.gpu_step_time",
        "§9.5",
        "GPU 上的训练速度（只在 GPU 构建里跑）",
        kind="gpu",
        rule="gpu_step_time",
        timings=(
            *_STEP_TIMES,
            "ms_ratio_transformer_over_gru",
            "ms_ratio_transformer_over_gru_attention",
            "ms_ratio_transformer_over_nn_transformer",
            "ms_ratio_gru_over_nn_gru",
        ),
    ),
    Demo("06.4", "beyond.layer_gradients", "§7.5", "初始化时每层的梯度 Post-LN vs Pre-LN"),
    Demo("06.5", "beyond.hand_built_reversal", "§9.6", "手搭一层注意力反转 reversal by hand"),
    Demo(
        "06.6",
        "beyond.beam_search_study",
        "§8.4",
        "beam search 与 exposure bias",
        kind="training",
        rule="beam_search_study",
        reads_models="05.1",
    ),
    Demo(
        "06.7",
        "beyond.length_extrapolation",
        "§6.5",
        "比训练时更长的序列 length extrapolation（不在默认构建里：种子见 07.9）",
        kind="training",
        rule="length_extrapolation",
        study=True,
    ),
    Demo(
        "06.8",
        "beyond.head_study",
        "§9.4",
        "头数与去掉一个头 heads: how many, and knocked out（不在默认构建里：种子见 09.1）",
        kind="training",
        rule="head_study",
        study=True,
    ),
    # 07 robustness seeds and readings, 08 the exercises' runs: recorded (`make robustness`,
    # report/measured/), seeds disjoint from the protocol's, every list fixed in the config
    Demo(
        "07.1",
        "scaling_multihead.lookup_task",
        "§4.4",
        "查字典：更多种子",
        kind="recorded",
        rule="robustness_lookup",
        extends="02.3",
    ),
    Demo(
        "07.2",
        "scaling_multihead.lookup_sensitivity",
        "§4.4",
        "查字典：其他读法",
        kind="recorded",
        rule="robustness_lookup",
        extends="02.3",
    ),
    Demo(
        "07.3",
        "positional_encoding.pe_ablation",
        "§6.6",
        "消融：更多种子",
        kind="recorded",
        rule="robustness_pe",
        extends="03.5",
    ),
    Demo(
        "07.4",
        "layers.post_vs_pre_ln",
        "§7.5",
        "Post-LN vs Pre-LN：更多种子",
        kind="recorded",
        rule="robustness_layers",
        extends="04.3",
    ),
    Demo(
        "07.5",
        "transformer_vs_rnn.luong_reading",
        "§9.2",
        "GRU + 注意力：Luong 的四种读法",
        kind="recorded",
        rule="robustness_seq2seq",
        timings=("ms_per_step", "ms_train_total"),
        extends="05.1",
    ),
    Demo(
        "07.6",
        "transformer_vs_rnn.attention_analysis",
        "§9.2",
        "Transformer：更多种子",
        kind="recorded",
        rule="robustness_seq2seq",
        extends="05.3",
    ),
    Demo(
        "07.7",
        "transformer_vs_rnn.attention_analysis",
        "§9.4",
        "GRU + 注意力的注意力：更多种子",
        kind="recorded",
        rule="robustness_seq2seq",
        extends="05.3",
    ),
    Demo(
        "07.8",
        "transformer_vs_rnn.reversal_comparison",
        "§9.2",
        "Transformer vs GRU：更多种子",
        kind="recorded",
        rule="robustness_seq2seq",
        timings=("ms_per_step", "ms_train_total"),
        extends="05.1",
    ),
    Demo(
        "07.9",
        "beyond.length_extrapolation",
        "§6.5",
        "比训练时更长的序列：10 个种子",
        kind="recorded",
        rule="robustness_extrapolation",
        extends="06.7",
    ),
    Demo(
        "08.1",
        "transformer_vs_rnn.reversal_comparison",
        "§13",
        "练习 8：1500 步",
        kind="recorded",
        rule="exercise_runs_seq2seq",
        timings=("ms_per_step", "ms_train_total"),
        extends="05.1",
    ),
    Demo(
        "08.2",
        "positional_encoding.pe_ablation",
        "§13",
        "练习 9：去掉缩放",
        kind="recorded",
        rule="exercise_runs_pe",
        extends="03.5",
    ),
    Demo(
        "08.3",
        "positional_encoding.pe_ablation",
        "§13",
        "练习 9：d_model 256、1 个头",
        kind="recorded",
        rule="exercise_runs_pe",
        extends="03.5",
    ),
    # 09 beyond the lecture on more seeds: recorded, for the rate claims of a beyond demo
    Demo(
        "09.1",
        "beyond.head_study",
        "§9.4",
        "头数与去掉一个头：10 个种子",
        kind="recorded",
        rule="robustness_heads",
        extends="06.8",
    ),
    # §13 exercises whose answers are numbers
    Demo("13.1", "exercises.exercise_answers", "§13", "练习 1、3、4、7 的数字答案"),
]

DEMOS: dict[str, Demo] = {demo.id: demo for demo in _REGISTRY}
if len(DEMOS) != len(_REGISTRY) or list(DEMOS) != sorted(DEMOS):
    raise ValueError("each demo is registered once, in id order")
if unknown := [d.id for d in _REGISTRY if d.reads and d.reads not in DEMOS]:
    raise ValueError(f"views of {unknown} read a demo that is not registered")
if unkept := [
    d.id
    for d in _REGISTRY
    if d.reads_models and not getattr(DEMOS.get(d.reads_models), "keeps_models", False)
]:
    raise ValueError(f"{unkept} read the models of a demo that keeps none (keeps_models)")
if unrecorded := [
    d.id for d in _REGISTRY if d.study and not any(r.extends == d.id for r in _REGISTRY)
]:
    raise ValueError(f"studies {unrecorded}: no recorded demo extends them (their seeds)")


def runnable() -> dict[str, Demo]:
    """The demos that have runs of their own (every kind but a view)."""
    return {id_: demo for id_, demo in DEMOS.items() if demo.kind != "view"}


def rules(demos=None) -> dict[str, list[Demo]]:
    """Snakemake rule name -> the demos it runs, in id order; `demos` defaults to the registry's
    runnable demos. A rule runs demos of one module and one kind (analytic demos share their
    module's rule; a training demo has its own unless it names a shared one, as 05.x do)."""
    grouped: dict[str, list[Demo]] = {}
    for demo in runnable().values() if demos is None else demos:
        grouped.setdefault(demo.rule, []).append(demo)
    for name, demos in grouped.items():
        if len({(d.module, d.kind, d.keeps_models, d.reads_models) for d in demos}) != 1:
            raise ValueError(
                f"rule {name}: its demos mix modules, kinds, or kept / read models: {demos}"
            )
    return grouped
