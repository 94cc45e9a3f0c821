"""What the properties of the lecture's blocks share: the Property record, the float64
comparison at TOL, the seeded inputs and parameters they are tried on, and the growing sizes.

Imported by the property modules (attention_properties, positional_properties,
layer_properties), by conventions and by properties; it imports none of them.
"""

import zlib
from dataclasses import dataclass

import numpy as np

TOL = 1e-9


@dataclass(frozen=True)
class Property:
    block: str
    id: str  # "<block>.<name>", what the catalogue's fingerprints list
    text: str  # the lecture's sentence, in the page's words
    check: object  # (fn, size) -> "" when it holds, else what was seen
    sizes: tuple
    names: tuple = ()  # what each number of a size is ("n", "d_k")

    def size_text(self, size) -> str:
        values = size if isinstance(size, tuple) else (size,)
        return ", ".join(f"{n} = {v}" for n, v in zip(self.names, values, strict=False)) or str(
            size
        )


def close(a, b) -> bool:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return False
    return bool(np.all(np.abs(a - b) <= TOL * (1 + np.abs(b).max(initial=0))))


def gap(a, b, names=("你的", "讲义的")) -> str:
    """What was seen, in numbers: the element where `a` (the student's) is farthest from `b`
    (the lecture's; `names` when they are two of the student's own), both values, whether the
    gap is beyond float64's rounding, and the dtype when it is not float64. Names no cause."""
    kind = np.asarray(a).dtype
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return f"形状 shape {a.shape}，讲义的是 {b.shape}"
    diff = np.where(np.isnan(a) != np.isnan(b), np.inf, np.abs(np.nan_to_num(a - b)))
    at = np.unravel_index(int(np.argmax(diff)), a.shape) if a.size else ()
    where = f"[{', '.join(str(int(i)) for i in at)}]" if at else ""
    mine, lecture = _distinct(a[at], b[at]) if a.size else ("", "")
    worst = float(diff.max()) if a.size else 0.0
    small = worst <= 1e-6 and kind == np.float64  # beyond TOL: not float64's rounding
    scale = "，远大于 float64 的舍入 ~1e-16" if small else ""
    pair = f"{names[0]} {mine}，{names[1]} {lecture}"
    text = (
        f"在 {where} {pair}（最大差 max |差| = {worst:.3g}{scale}）" if a.size else "空数组 empty"
    )
    if kind.kind == "f" and kind != np.float64:
        text += f"；你的结果是 {kind}（讲义的积木用 float64）"
    return text


def _distinct(x: float, y: float) -> tuple[str, str]:
    """Two numbers printed with as many digits as it takes to tell them apart (up to 17)."""
    for digits in (6, 9, 12, 17):
        a, b = f"{x:.{digits}g}", f"{y:.{digits}g}"
        if a != b:
            break
    return a, b


def rng_for(size) -> np.random.Generator:
    """The inputs of one size, the same in every process (hash() of a str is salted per
    process: PYTHONHASHSEED), so a counterexample is the same on every run."""
    return np.random.default_rng(zlib.crc32(repr(size).encode()))


def mha_params(d_model, rng):
    p = {f"W_{k}": rng.normal(0, 0.5, (d_model, d_model)) for k in "qkvo"}
    return p | {f"b_{k}": rng.normal(0, 0.1, d_model) for k in "qkvo"}


def ffn_params(d_model, d_ff, rng):
    return {
        "W_1": rng.normal(0, 0.5, (d_model, d_ff)),
        "b_1": rng.normal(0, 0.1, d_ff),
        "W_2": rng.normal(0, 0.5, (d_ff, d_model)),
        "b_2": rng.normal(0, 0.1, d_model),
    }


def norm_params(d_model, rng):
    return {"gamma": 1 + rng.normal(0, 0.1, d_model), "beta": rng.normal(0, 0.1, d_model)}


def layer_params(d_model, rng, decoder=False):
    p = {"self_attn": mha_params(d_model, rng), "ffn": ffn_params(d_model, 2 * d_model, rng)}
    p |= {"norm1": norm_params(d_model, rng), "norm2": norm_params(d_model, rng)}
    if decoder:
        p |= {"cross_attn": mha_params(d_model, rng), "norm3": norm_params(d_model, rng)}
    return p


def first(result):
    return result[0] if isinstance(result, tuple | list) else result


def qkv(size):
    n, d = size
    rng = rng_for(size)
    return rng.normal(0, 1, (n, d)), rng.normal(0, 1, (n + 1, d)), rng.normal(0, 1, (n + 1, d))


SIZE_NAMES = {  # what the numbers of each kind of size are, for "the smallest input"
    "softmax": ("n",),
    "scaled_dot_product_attention": ("n_q", "d_k"),
    "split_heads": ("b", "n", "h", "d_k"),
    "combine_heads": ("b", "n", "h", "d_k"),
    "multi_head_attention": ("b", "n", "h", "d_k"),
    "count_mha_params": ("d_model",),
    "positional_encoding": ("max_len", "d_model"),
    "relative_shift_matrix": ("k", "d_model"),
    "feed_forward": ("n", "d_model"),
    "layer_norm": ("n", "d_model"),
    "encoder_layer_forward": ("n", "d_model", "h"),
    "create_look_ahead_mask": ("n",),
    "create_padding_mask": ("b", "n"),
    "decoder_layer_forward": ("n", "d_model", "h"),
}


def prop(block, name, text, check, sizes):
    return Property(block, f"{block}.{name}", text, check, tuple(sizes), SIZE_NAMES[block])


SIZES_N = (1, 2, 3, 5, 8)
SIZES_QKV = ((1, 1), (2, 2), (3, 4), (5, 8))
SIZES_HEADS = ((1, 1, 1, 1), (1, 2, 2, 1), (2, 3, 2, 2), (2, 5, 4, 3))
SIZES_PE = ((1, 2), (2, 2), (3, 4), (8, 8), (16, 16))
SIZES_ROWS = ((1, 2), (2, 2), (3, 4), (5, 8))
SIZES_LAYER = ((1, 2, 1), (2, 2, 1), (3, 4, 2), (5, 8, 2))
