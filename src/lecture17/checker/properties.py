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
holds the probes and re-exports the conventions; none of the modules it imports imports it.
"""

import numpy as np

from lecture17 import attention_numpy as ref
from lecture17.checker import attention_properties, layer_properties, positional_properties
from lecture17.checker.conventions import (  # noqa: F401 - re-exported: run.py, session.py
    ONLY_OUTPUT,
    PADDING_4D,
    TF_LOOK_AHEAD,
    TF_MASK,
    TF_PADDING,
    Convention,
    _flip_mask_adapter,
    _flip_result_adapter,
    _only_output_adapter,
    conventions,
)
from lecture17.checker.property_base import (  # noqa: F401 - TOL re-exported
    TOL,
    Property,
    close,
    ffn_params,
    layer_params,
    mha_params,
    norm_params,
    qkv,
)

PROPERTIES = (
    attention_properties.PROPERTIES + positional_properties.PROPERTIES + layer_properties.PROPERTIES
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
        "feed_forward": [(x, ffn_params(8, 16, rng))],
        "layer_norm": [(2 * x, *norm_params(8, rng).values())],
        "encoder_layer_forward": [(x, layer, 2, None, False), (x, layer, 2, None, True)],
        "create_look_ahead_mask": [(5,)],
        "create_padding_mask": [(np.array([[3, 4, 0, 0], [5, 0, 0, 0]]),)],
        "decoder_layer_forward": [
            (x, memory, decoder, 2, mask5, None, False),
            (x, memory, decoder, 2, mask5, None, True),
        ],
    }[block]


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
    if a is None or b is None or len(a) != len(b):
        return False
    return all(x.size == y.size and close(x.reshape(y.shape), y) for x, y in zip(a, b, strict=True))
