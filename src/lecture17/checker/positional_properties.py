"""The properties of the positional encoding (§6): PE(0), the norm of each position, the
shift PE(p + k) = PE(p) M_k and the rotation M_k, in the lecture's order
(checker/properties.py lists them all).
"""

import numpy as np

from lecture17 import attention_numpy as ref
from lecture17.checker.property_base import SIZES_PE, close, gap, prop

# -----------------------------------------------------------------------------
# §6 positional encoding


def pe_matches(fn, size):
    got, want = fn(*size), ref.positional_encoding(*size)
    return "" if close(got, want) else gap(got, want)


def pe_starts_at_zero(fn, size):
    _, d_model = size
    first = np.asarray(fn(*size))[0]
    want = np.tile([0.0, 1.0], d_model // 2)
    return (
        "" if close(first, want) else f"PE(0) = {np.round(first, 3).tolist()}，应为 (0, 1, 0, 1, …)"
    )


def pe_norm(fn, size):
    _, d_model = size
    norms = np.linalg.norm(np.asarray(fn(*size)), axis=-1)
    want = np.full(len(norms), np.sqrt(d_model / 2))
    return "" if close(norms, want) else f"范数应为 √(d/2) = {want[0]:.6g}：" + gap(norms, want)


def pe_shift_is_linear(fn, size):
    max_len, d_model = size
    if max_len < 2:  # one position: nothing to shift to
        return ""
    pe = np.asarray(fn(max_len, d_model))
    moved = pe[:-1] @ ref.relative_shift_matrix(1, d_model)
    if close(moved, pe[1:]):
        return ""
    return f"p = 0..{max_len - 2}，你的 PE 两行之间：" + gap(
        moved, pe[1:], ("PE(p) M_1", "PE(p + 1)")
    )


def shift_matrix_moves_pe(fn, size):
    k, d_model = size
    pe = ref.positional_encoding(8 + k, d_model)
    moved = pe[:8] @ np.asarray(fn(k, d_model))
    return "" if close(moved, pe[k:]) else f"PE(p) M_{k} ≠ PE(p + {k}): " + gap(moved, pe[k:])


def shift_matrix_orthogonal(fn, size):
    M = np.asarray(fn(*size))
    eye = np.eye(len(M))
    return "" if close(M @ M.T, eye) else "M_k M_kᵀ 和 I：" + gap(M @ M.T, eye, ("M_k M_kᵀ", "I"))


PROPERTIES = [  # in the lecture's order
    prop(
        "positional_encoding",
        "starts_at_zero",
        "PE(0) = (0, 1, 0, 1, …)：sin 在偶数维，cos 在奇数维（§6.2）",
        pe_starts_at_zero,
        SIZES_PE,
    ),
    prop(
        "positional_encoding", "norm", "每个位置的范数都是 √(d_model/2)（§6.2）", pe_norm, SIZES_PE
    ),
    prop(
        "positional_encoding",
        "shift_is_linear",
        "PE(p + k) = PE(p) M_k（§6.3）",
        pe_shift_is_linear,
        SIZES_PE,
    ),
    prop("positional_encoding", "matches", "和参考实现逐数一致（float64）", pe_matches, SIZES_PE),
    prop(
        "relative_shift_matrix",
        "moves_pe",
        "PE(p) M_k = PE(p + k)，对每个 p（§6.3）",
        shift_matrix_moves_pe,
        ((1, 2), (2, 4), (3, 8)),
    ),
    prop(
        "relative_shift_matrix",
        "orthogonal",
        "M_k 是旋转：M_k M_kᵀ = I（§6.3）",
        shift_matrix_orthogonal,
        ((1, 2), (2, 4), (3, 8)),
    ),
]
