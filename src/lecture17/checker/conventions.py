"""Conventions: a block written to another (known) convention than the lecture's gets one
message and an adapter, so the claims are judged on its maths — a block in TensorFlow's
"1 = masked" convention, an attention that returns only its output, a (b, 1, 1, n) padding
mask (accepted, and given to the lecture's code as (b, 1, n)). Nothing else is adapted: every
other difference is the student's, judged as written (checker/blocks.py, `check_shape`).
"""

from dataclasses import dataclass

import numpy as np

from lecture17 import attention_numpy as ref
from lecture17.checker.property_base import close, first, qkv, rng_for


@dataclass(frozen=True)
class Convention:
    block: str
    id: str
    text: str  # what the student's block does, and what the lecture does
    accepted: bool  # True: the lecture's code works with it as it is (no claim, no property)


def _returns_only_output(fn):
    Q, K, V = qkv((3, 4))
    return not isinstance(fn(Q, K, V), tuple | list)


def _only_output_adapter(student, pos, kw):
    out = student(*pos, **kw)
    return out, ref.scaled_dot_product_attention(*pos[:4], **kw)[1]


def _masks_ones_are_blocked(fn, size=(4, 3)):
    """True when fn(..., mask) behaves as the lecture's attention with 1 - mask."""
    Q, K, V = (rng_for(size).normal(0, 1, (size[0], size[1])) for _ in range(3))
    mask = np.tril(np.ones((size[0], size[0])))
    got = first(fn(Q, K, V, mask))
    lecture = ref.scaled_dot_product_attention(Q, K, V, mask)[0]
    flipped = ref.scaled_dot_product_attention(Q, K, V, 1 - mask)[0]
    return close(got, flipped) and not close(got, lecture)


def _flip_mask_adapter(student, pos, kw):
    pos = list(pos)
    if len(pos) > 3 and pos[3] is not None:
        pos[3] = 1 - np.asarray(pos[3])
    return student(*pos, **kw)


def _flip_result_adapter(student, pos, kw):
    return 1 - np.asarray(student(*pos, **kw), dtype=np.float64)


def _squeeze_head_axis_adapter(student, pos, kw):
    """TensorFlow's (b, 1, 1, n) padding mask as the lecture's (b, 1, n)."""
    got = np.asarray(student(*pos, **kw))
    return got.reshape(got.shape[0], 1, got.shape[-1]) if got.ndim == 4 else got


def conventions(block: str, fn) -> list[tuple[Convention, object]]:
    """The conventions `fn` (a student's block) follows that are not the lecture's, each with
    its adapter (adapter(student, args, kwargs) computes the lecture's result)."""
    found = []
    try:
        if block == "scaled_dot_product_attention":
            only = _returns_only_output(fn)
            if only:
                found.append((ONLY_OUTPUT, _only_output_adapter))
            if _masks_ones_are_blocked(fn):
                found.append((TF_MASK, _flip_mask_adapter))
        elif block == "create_look_ahead_mask":
            got = np.asarray(fn(4), dtype=np.float64).reshape(-1, 4)[-4:]
            if np.array_equal(got, 1 - np.tril(np.ones((4, 4)))):
                found.append((TF_LOOK_AHEAD, _flip_result_adapter))
        elif block == "create_padding_mask":
            tokens = np.array([[5, 7, 0, 0], [3, 0, 0, 0]])
            got = np.asarray(fn(tokens), dtype=np.float64)
            if got.shape == (2, 1, 1, 4):
                found.append((PADDING_4D, _squeeze_head_axis_adapter))
            if got.size == 8 and np.array_equal(got.reshape(2, 4), [[0, 0, 1, 1], [0, 1, 1, 1]]):
                found.append((TF_PADDING, _flip_result_adapter))
    except Exception:  # noqa: BLE001 - a crash here shows in the properties, with its line
        return []
    return found


ONLY_OUTPUT = Convention(
    "scaled_dot_product_attention",
    "returns_output_only",
    "只返回了输出 output；讲义的 scaled_dot_product_attention 返回 (output, weights)，"
    "演示要读权重。下面用参考实现的权重补上，只检查你的输出",
    False,
)
TF_MASK = Convention(
    "scaled_dot_product_attention",
    "mask_one_is_blocked",
    "把 mask = 1 当成“屏蔽”（TensorFlow 教程的旧约定，§12 误区 7）；讲义是 1 = 可以看、"
    "0 = 屏蔽，加的是 (1 − mask)·(−1e9)。下面的检查替你把 mask 换成 1 − mask",
    False,
)
TF_LOOK_AHEAD = Convention(
    "create_look_ahead_mask",
    "mask_one_is_blocked",
    "返回的是 1 = 屏蔽 的 look-ahead mask（TensorFlow 的 1 − band_part）；"
    "讲义是下三角的 1 = 可以看。下面的检查替你换成 1 − mask",
    False,
)
TF_PADDING = Convention(
    "create_padding_mask",
    "mask_one_is_blocked",
    "padding 位置是 1（TensorFlow 的约定）；讲义是真实的词 = 1、padding = 0。"
    "下面的检查替你换成 1 − mask",
    False,
)
PADDING_4D = Convention(
    "create_padding_mask",
    "shape_b_1_1_n",
    "返回 (b, 1, 1, n)（TensorFlow 教程的形状，多一个头的轴）；讲义是 (b, 1, n)。"
    "这是有名的约定，接受：下面的检查把它当 (b, 1, n) 用",
    True,
)

# the adapter of each convention (adapter(student, args, kwargs) -> the lecture's result)
ADAPTERS = {
    ONLY_OUTPUT: _only_output_adapter,
    TF_MASK: _flip_mask_adapter,
    TF_LOOK_AHEAD: _flip_result_adapter,
    TF_PADDING: _flip_result_adapter,
    PADDING_4D: _squeeze_head_axis_adapter,
}
