"""What each of the lecture's blocks must satisfy, tried on growing inputs, smallest first.

A property is a sentence of the lecture about a block (rows of the softmax sum to 1, §2.2;
attention is permutation equivariant, §3.2; PE(p + k) = PE(p) M_k, §6.3; row t of the decoder
never sees t + 1, §8.1) or its equality with the reference at float64 (the reference equals
PyTorch to ~1e-16: demos 02.4, 04.1, 04.5). Each is tried on inputs of growing size, and the
first that breaks it is reported: the smallest input that shows the mistake.

A tolerance follows the conditioning: these inputs are O(1) and every block is a few products
and sums, so a correct float64 implementation in any style (einsum, loops) is within ~1e-14 of
the reference; TOL = 1e-9 leaves five orders of magnitude and catches any real slip (1e-3 and
up). The conventions (checker/conventions.py) are not mistakes of the maths: a block in
TensorFlow's "1 = masked" convention, or an attention that returns only its output, gets its
own message and an adapter, so the claims are judged on its maths.

The properties live by lecture section, each module with its checks and their entries:
attention_properties (§2.2, §3, §5), positional_properties (§6), layer_properties (§7, §8),
on what property_base shares (Property, TOL, the seeded inputs, the sizes). This module puts
them together in the lecture's order (PROPERTIES: the order the checker reports them in),
holds the probes; none of the modules it imports imports it.
"""

import numpy as np

from lecture17 import attention_numpy as ref
from lecture17.checker import attention_properties, layer_properties, positional_properties
from lecture17.checker import blocks as blocks_mod
from lecture17.checker.property_base import (
    Property,
    close,
    ffn_params,
    gap,
    layer_params,
    mha_params,
    norm_params,
    prop,
    qkv,
    rng_for,
)

# -----------------------------------------------------------------------------
# the shapes the demos use, and inputs left as they were: every block with array inputs


def _batched_cases(block, size):
    """(args, kwargs) pairs of `block` at batch b: the 3-D (b, n, d) and, for the attention,
    4-D (b, h, n, d) shapes the demos call it with, padding masks included."""
    b, n, d = size
    rng = rng_for((block, *size))
    x = rng.normal(0, 1, (b, n, d))
    keys = np.ones((b, 1, n + 1))
    keys[:, :, -1] = 0  # the last key is padding in every sequence
    if block == "softmax":
        return [(2 * rng.normal(0, 1, (b, n, n)),), (2 * rng.normal(0, 1, (b, 2, n, n)),)]
    if block == "scaled_dot_product_attention":
        kv = rng.normal(0, 1, (b, n + 1, d))
        four = [rng.normal(0, 1, (b, 2, m, d)) for m in (n, n + 1, n + 1)]
        return [(x, kv, kv), (x, kv, kv, keys), (*four, keys[:, np.newaxis])]
    if block == "feed_forward":
        return [(x, ffn_params(d, 2 * d, rng))]
    if block == "layer_norm":
        return [(2 * x, *norm_params(d, rng).values())]
    if block == "encoder_layer_forward":
        own = np.ones((b, 1, n))
        own[:, :, -1] = 0 if n > 1 else 1
        return [(x, layer_params(d, rng), 2, own, f) for f in (False, True)]
    if block == "decoder_layer_forward":
        memory, params = rng.normal(0, 1, (b, n + 1, d)), layer_params(d, rng, decoder=True)
        causal = np.tril(np.ones((n, n)))
        return [(x, memory, params, 2, causal, keys, f) for f in (False, True)]
    return []


BATCHED = ("softmax", "scaled_dot_product_attention", "feed_forward", "layer_norm")
BATCHED += ("encoder_layer_forward", "decoder_layer_forward")


def _batched(block):
    def check(fn, size):
        for args in _batched_cases(block, size):
            got, want = fn(*args), getattr(ref, block)(*args)
            pairs = zip(got, want, strict=True) if isinstance(want, tuple) else [(got, want)]
            for g, w in pairs:
                if not close(g, w):
                    return f"输入形状 input shape {np.shape(args[0])}：" + gap(g, w)
        return ""

    return check


def _keeps_input(block):
    def check(fn, _size):
        swap = getattr(fn, "swap", fn)  # the checker's strict wrapper carries its Swap
        if not hasattr(swap, "mutated"):
            raise TypeError("keeps_input reads a blocks.Swap")
        before = dict(swap.mutated)
        for args in _probe_inputs(block):
            try:
                fn(*args)
            except blocks_mod.WrongShape:  # the shape is another property's; the inputs
                pass  # were compared before the result's shape was
        changed = [k for k, v in swap.mutated.items() if v > before.get(k, 0)]
        if not changed:
            return ""
        at, was, now = swap.first_change.get(changed[0], ((), "…", "…"))
        where = f"[{', '.join(map(str, at))}] " if at else ""
        return (
            f"调用之后，传给它的 {'、'.join(changed)} 变了：{changed[0]}{where}"
            f"调用前 {was:.6g}，调用后 {now:.6g}"
            if at
            else f"调用之后，传给它的 {'、'.join(changed)} 变了"
        )

    return check


ARRAY_INPUTS = [b for b in blocks_mod.BLOCKS if b not in blocks_mod.SCALAR_INPUTS]


def _extra():
    found = [
        prop(
            block,
            "batched",
            "批量的输入（演示用的 3 维、4 维形状）也和参考实现逐数一致",
            _batched(block),
            ((2, 2, 2), (2, 3, 4), (3, 5, 8)),
        )
        for block in BATCHED
    ]
    found += [
        Property(
            block,
            f"{block}.keeps_input",
            "不改动传给它的数组：调用者手里的输入保持原样",
            _keeps_input(block),
            ("探针输入 probe inputs",),
        )
        for block in ARRAY_INPUTS
    ]
    return found


def _in_lecture_order(found):
    order = {b: i for i, b in enumerate(blocks_mod.BLOCKS)}
    return tuple(sorted(found, key=lambda p: order[p.block]))  # stable: each block's own order


PROPERTIES = _in_lecture_order(
    attention_properties.PROPERTIES
    + positional_properties.PROPERTIES
    + layer_properties.PROPERTIES
    + _extra()
)


def of(block: str) -> list[Property]:
    return [p for p in PROPERTIES if p.block == block]


# -----------------------------------------------------------------------------
# probes: a block's outputs on fixed inputs, to compare a flagged block with a known mistake's


def _probe_inputs(block):
    rng = np.random.default_rng(17)
    x = rng.normal(0, 1, (2, 5, 8))
    Q, K, V = qkv((4, 8))
    causal = np.tril(np.ones((4, 5)))
    layer, decoder = layer_params(8, rng), layer_params(8, rng, decoder=True)
    memory, mask5 = rng.normal(0, 1, (2, 6, 8)), np.tril(np.ones((5, 5)))
    return {
        "softmax": [(3 * x[0],), (1000 + x[0],)],
        "scaled_dot_product_attention": [(Q, K, V), (Q, K, V, causal)],
        "split_heads": [(x, 2), (x, 4)],
        "combine_heads": [(ref.split_heads(x, 2),)],
        "multi_head_attention": [
            (x, memory, mha_params(8, rng), 2),
            (x, x, mha_params(8, rng), 4, mask5),
        ],
        "count_mha_params": [(1,), (8,), (512,)],
        "positional_encoding": [(9, 8), (5, 4)],
        "relative_shift_matrix": [(1, 8), (3, 4)],
        "feed_forward": [(x, ffn := ffn_params(8, 16, rng)), (x[0], ffn)],
        "layer_norm": [(2 * x, *(norm := norm_params(8, rng).values())), (2 * x[0], *norm)],
        "encoder_layer_forward": [
            (x, layer, 2, None, False),
            (x, layer, 2, None, True),
            (x[0], layer, 2, None, False),
        ],
        "create_look_ahead_mask": [(5,)],
        "create_padding_mask": [(np.array([[3, 4, 0, 0], [5, 0, 0, 0]]),)],
        "decoder_layer_forward": [
            (x, memory, decoder, 2, mask5, None, False),
            (x, memory, decoder, 2, mask5, None, True),
            (x[0], memory[0], decoder, 2, mask5, None, False),
        ],
    }[block]


def probe_dtypes(block: str, fn) -> list[str]:
    """The float dtypes fn returns on the block's probe inputs (all float64 in the lecture)."""
    try:
        found = set()
        for args in _probe_inputs(block):
            result = fn(*args)
            for r in result if isinstance(result, tuple | list) else (result,):
                kind = np.asarray(r).dtype
                if kind.kind == "f":
                    found.add(str(kind))
        return sorted(found)
    except Exception:  # noqa: BLE001 - a block that fails on its probe shows it elsewhere
        return []


def probe_count(block: str) -> int:
    """How many inputs a block's probe calls it on."""
    return len(_probe_inputs(block))


def probe(block: str, fn) -> list | None:
    """fn's outputs on the block's probe inputs, as float arrays (None if it fails on them)."""
    try:
        out = []
        for args in _probe_inputs(block):
            result = fn(*args)
            for r in result if isinstance(result, tuple | list) else (result,):
                out.append(np.asarray(r, dtype=np.float64))
        return out
    except Exception:  # noqa: BLE001 - a block that fails on its probe matches no mistake
        return None


def same_probe(a, b) -> bool:
    """Whether two blocks' probe outputs are the same numbers: shapes that broadcast alike,
    NaN where the other has NaN, ±inf where the other has it, the rest within TOL."""
    if a is None or b is None or len(a) != len(b):
        return False
    return all(_same_numbers(x, y) for x, y in zip(a, b, strict=True))


def _same_numbers(x, y) -> bool:
    if x.shape != y.shape:
        if not blocks_mod.broadcasts_alike(x.shape, y.shape):
            return False
        x = x.reshape(y.shape)
    finite = np.isfinite(x) & np.isfinite(y)
    if not np.array_equal(np.isnan(x), np.isnan(y)) or not np.array_equal(
        np.where(np.isinf(x), x, 0), np.where(np.isinf(y), y, 0)
    ):
        return False
    return close(np.where(finite, x, 0), np.where(finite, y, 0))
