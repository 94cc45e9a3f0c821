"""Why a flagged block is wrong, said only when it is shown by behaviour.

The claims and the properties detect; this module only explains a block already flagged. A
cause is named when the student's block computes, on the block's probe inputs
(properties.probe: a few fixed inputs, large scores and masks among them), the same numbers
as a known variant of the lecture's block: NaN where it has NaN, ±inf where it has ±inf, the
rest within TOL. The message says exactly that ("在这些输入上……逐数相同"), never more. With no
match, the page shows what was observed (the smallest input, the student's numbers and the
lecture's) and names no cause.

The variants are edits of attention_numpy.py (checker/patch.py), of two kinds:
- the catalogue's student-facing mistakes (mutants/fingerprints.csv, `load_fingerprints`),
  each with its question in the lecture's terms;
- the simple variants below (VARIANTS): one change of the lecture's block each (no ReLU, a
  ReLU added, γ and β swapped, d_k for √d_k, a transpose dropped, an axis swapped…).
A variant that computes the reference's numbers on the probe inputs explains nothing and is
never named; two variants that compute the same numbers are both named.
"""

import csv
import functools
import types
from dataclasses import dataclass
from pathlib import Path

from lecture17.checker import properties as props
from lecture17.checker.patch import mutate_source
from lecture17.pipeline.deps import SRC

FINGERPRINTS = SRC.parent / "mutants" / "fingerprints.csv"


@dataclass(frozen=True)
class Mistake:
    name: str
    block: str  # the student blocks it changes, space-separated
    hint: str  # what it computes, in the lecture's terms (the catalogue's: a question)
    marks: frozenset = frozenset()  # the catalogue's: the claims and properties it breaks
    marks_block: frozenset = frozenset()  # the same, for a file with its blocks alone
    function: str = ""  # the edit (checker.patch) of attention_numpy that makes it
    old: str = ""
    new: str = ""


@dataclass(frozen=True)
class Cause:
    """A variant the student's blocks compute, on the probe inputs, number for number."""

    mistake: Mistake
    blocks: tuple  # the student's blocks that compute the mistake's numbers
    inputs: int  # how many probe inputs they were compared on

    @property
    def words(self) -> str:
        mine = "、".join(self.blocks)
        return (
            f"在 {self.inputs} 组探针输入 probe inputs 上，你的 {mine} 和下面这个错误算出的"
            f"逐数相同：{self.mistake.hint}"
        )


def load_fingerprints(path: Path = FINGERPRINTS) -> list[Mistake]:
    if not Path(path).is_file():
        return []
    with open(path, encoding="utf-8", newline="") as f:
        return [
            Mistake(
                r["mutant"],
                r["block"],
                r["hint"],
                frozenset(r["marks"].split()),
                frozenset(r["marks_block"].split()),
                r["function"],
                r["old"],
                r["new"],
            )
            for r in csv.DictReader(f)
        ]


def _variant(name, block, function, old, new, hint) -> Mistake:
    return Mistake(name, block, hint, function=function, old=old, new=new)


_FFN_HIDDEN = 'hidden = np.maximum(x @ p["W_1"] + p["b_1"], 0)'
_FFN_OUT = 'return hidden @ p["W_2"] + p["b_2"]'
_LN_STATS = (
    "mean = x.mean(axis=-1, keepdims=True)  # (..., 1)\n"
    "    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)"
)
_PE_SLOTS = "pe[:, 0::2] = np.sin(angles)\n    pe[:, 1::2] = np.cos(angles)"
_SHIFT_SIN = "M[even, even + 1] = -np.sin(angle)\n    M[even + 1, even] = np.sin(angle)"

# One change of the lecture's block each, in the page's words (a statement, not a question).
VARIANTS = [
    _variant(
        "sdpa_not_scaled",
        "scaled_dot_product_attention",
        "scaled_dot_product_attention",
        "Q = Q / np.sqrt(dtype.type(Q.shape[-1]))",
        "Q = Q",
        "分数没有除以 √d_k（§4.2）",
    ),
    _variant(
        "ffn_without_relu",
        "feed_forward",
        "feed_forward",
        _FFN_HIDDEN,
        'hidden = x @ p["W_1"] + p["b_1"]',
        "隐藏层没有 ReLU（§7.2）",
    ),
    _variant(
        "ffn_relu_after_second_layer",
        "feed_forward",
        "feed_forward",
        _FFN_OUT,
        'return np.maximum(hidden @ p["W_2"] + p["b_2"], 0)',
        "第二层之后也加了 ReLU；讲义的 FFN 只在隐藏层用 ReLU（§7.2）",
    ),
    _variant(
        "ffn_relu_before_b_1",
        "feed_forward",
        "feed_forward",
        _FFN_HIDDEN,
        'hidden = np.maximum(x @ p["W_1"], 0) + p["b_1"]',
        "ReLU 放在了加 b₁ 之前（§7.2）",
    ),
    _variant(
        "ffn_without_b_2",
        "feed_forward",
        "feed_forward",
        _FFN_OUT,
        'return hidden @ p["W_2"]',
        "少了第二个偏置 b₂（§7.2）",
    ),
    _variant(
        "layer_norm_gamma_beta_swapped",
        "layer_norm",
        "layer_norm",
        "* gamma + beta",
        "* beta + gamma",
        "γ 和 β 对调了：x̂·β + γ（§7.3）",
    ),
    _variant(
        "layer_norm_eps_outside_sqrt",
        "layer_norm",
        "layer_norm",
        "np.sqrt(var + eps)",
        "(np.sqrt(var) + eps)",
        "ε 加在了根号外面：√var + ε（§7.3）",
    ),
    _variant(
        "layer_norm_over_axis_1",
        "layer_norm",
        "layer_norm",
        _LN_STATS,
        _LN_STATS.replace("axis=-1", "axis=1"),
        "均值和方差沿 axis = 1 算，讲义沿最后一维（§7.3）",
    ),
    _variant(
        "softmax_not_normalised",
        "softmax",
        "softmax",
        "e /= e.sum(axis=axis, keepdims=True)  # each row sums to 1",
        "pass",
        "只有 exp，没有除以每行的和（§2.2）",
    ),
    _variant(
        "look_ahead_hides_itself",
        "create_look_ahead_mask",
        "create_look_ahead_mask",
        "np.tril(np.ones((n, n)))",
        "np.tril(np.ones((n, n)), k=-1)",
        "对角线也是 0：位置 t 看不见它自己（§8.1）",
    ),
    _variant(
        "pe_sin_cos_swapped",
        "positional_encoding",
        "positional_encoding",
        _PE_SLOTS,
        "pe[:, 0::2] = np.cos(angles)\n    pe[:, 1::2] = np.sin(angles)",
        "偶数维放了 cos、奇数维放了 sin，和讲义对调（§6.2）",
    ),
    _variant(
        "pe_base_1000",
        "positional_encoding relative_shift_matrix",
        "_frequencies",
        "return 1.0 / 10000.0 ** (two_i / d_model)",
        "return 1.0 / 1000.0 ** (two_i / d_model)",
        "频率的底数是 1000，讲义是 10000（§6.2）",
    ),
    _variant(
        "shift_matrix_transposed",
        "relative_shift_matrix",
        "relative_shift_matrix",
        _SHIFT_SIN,
        "M[even, even + 1] = np.sin(angle)\n    M[even + 1, even] = -np.sin(angle)",
        "M_k 转置了：那是平移 −k 的矩阵（§6.3）",
    ),
    _variant(
        "combine_heads_reshape_only",
        "combine_heads",
        "combine_heads",
        "return x.transpose(0, 2, 1, 3).reshape(b, n, h * d_k)",
        "return x.reshape(b, n, h * d_k)",
        "拼回去时只 reshape，少了一次转置（§5.3）",
    ),
    _variant(
        "mha_without_w_o",
        "multi_head_attention",
        "multi_head_attention",
        'output = combine_heads(context) @ p["W_o"] + p["b_o"]',
        'output = combine_heads(context) + p["b_o"]',
        "拼回去之后没有乘输出投影 W^O（§5.2）",
    ),
    _variant(
        "post_ln_norms_the_sublayer_only",
        "encoder_layer_forward decoder_layer_forward",
        "_residual",
        'return layer_norm(x + sublayer(x), norm["gamma"], norm["beta"])',
        'return x + layer_norm(sublayer(x), norm["gamma"], norm["beta"])',
        "Post-LN 只归一了子层的输出，没有归一 x + 子层（§7.1）",
    ),
    _variant(
        "pre_post_ln_swapped",
        "encoder_layer_forward decoder_layer_forward",
        "_residual",
        "if norm_first:",
        "if not norm_first:",
        "Pre-LN 和 Post-LN 对调了：norm_first=True 时算的是 Post-LN（§7.5）",
    ),
]


def known(fingerprints: list[Mistake] | None = None) -> list[Mistake]:
    """Every variant a cause can be: the catalogue's mistakes, then the simple ones."""
    catalogue = load_fingerprints() if fingerprints is None else fingerprints
    names = {m.name for m in catalogue}
    return [*catalogue, *(v for v in VARIANTS if v.name not in names)]


@functools.lru_cache(maxsize=128)
def mistake_module(mistake: Mistake):
    """attention_numpy with the mistake in it, as a module of its own (never on sys.path)."""
    source = (SRC / "lecture17" / "attention_numpy.py").read_text(encoding="utf-8")
    module = types.ModuleType(f"mistake_{mistake.name}")
    code = mutate_source(source, mistake.function, mistake.old, mistake.new, mistake.name)
    exec(compile(code, module.__name__, "exec"), module.__dict__)  # noqa: S102 - our own code
    return module


@functools.lru_cache(maxsize=256)
def _variant_probe(mistake: Mistake, block: str):
    return props.probe(block, getattr(mistake_module(mistake), block))


@functools.lru_cache(maxsize=32)
def _reference_probe(block: str):
    from lecture17 import attention_numpy

    return props.probe(block, getattr(attention_numpy, block))


def cause(mistake: Mistake, probes: dict) -> Cause | None:
    """`mistake` as a Cause of the student's blocks that compute its numbers on every probe
    input where it computes something else than the lecture; every other block of the
    student's that it edits computes either its numbers or the lecture's (pe_base_1000
    edits positional_encoding and relative_shift_matrix; a student may have slipped in one)."""
    if not mistake.function:
        return None
    mine = [b for b in mistake.block.split() if probes.get(b) is not None]
    shown = []
    for b in mine:
        theirs, lecture = _variant_probe(mistake, b), _reference_probe(b)
        if props.same_probe(probes[b], theirs) and not props.same_probe(theirs, lecture):
            shown.append(b)
        elif not props.same_probe(probes[b], lecture):
            return None  # this block computes something else again
    if not shown:
        return None
    return Cause(mistake, tuple(shown), sum(props.probe_count(b) for b in shown))


def explain(flagged, probes: dict, fingerprints: list[Mistake] | None = None) -> list[Cause]:
    """The known variants that the student's flagged blocks compute (see the module doc)."""
    flagged = set(flagged)
    found = []
    for mistake in known(fingerprints):
        if flagged & set(mistake.block.split()) and (c := cause(mistake, probes)):
            found.append(c)
    return found
