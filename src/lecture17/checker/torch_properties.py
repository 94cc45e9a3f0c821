"""The weight-agnostic properties of a student's torch classes (check --trained, part 1).

Each runs in a forked child (checker/child.py), float64, eval mode, random weights: what holds
for any weights — shapes, attention weights that sum to 1, keys whose order does not matter,
the mask kept, causality, padding that changes nothing — so no reference number is needed.
"""

from dataclasses import dataclass
from pathlib import Path

from lecture17.checker import child

D_MODEL, HEADS, D_FF, TOL = 8, 2, 16, 1e-9


@dataclass
class Property:
    cls: str
    name: str  # Chinese, what it checks
    ok: bool
    detail: str = ""


def build(cls, name: str):
    return cls(D_MODEL, HEADS) if name == "MultiHeadAttention" else cls(D_MODEL, HEADS, D_FF)


def _close(a, b) -> bool:
    import torch

    return a.shape == b.shape and bool(torch.allclose(a, b, rtol=0, atol=TOL))


def _out(result):
    return result[0] if isinstance(result, tuple | list) else result


def class_properties(path: Path, name: str) -> list[Property]:
    """In a child: the weight-agnostic properties of one class, float64, eval mode; a crash
    of the student's code is a Failure with its line."""
    module = child.load_student(path)
    try:
        return _properties(module, name)
    except Exception as error:  # noqa: BLE001 - the student's code, reported with its line
        raise child.StudentError(child.where(error, path, "crash")) from None


def _properties(module, name: str) -> list[Property]:
    import torch

    torch.manual_seed(0)
    block = build(getattr(module, name), name).double().eval()
    g = torch.Generator().manual_seed(1)

    def rand(*shape):
        return torch.randn(*shape, generator=g, dtype=torch.float64)

    found = []

    def prop(label, ok, detail=""):
        found.append(Property(name, label, bool(ok), detail))

    checks = {"MultiHeadAttention": _attention, "EncoderLayer": _encoder}
    with torch.no_grad():
        checks.get(name, _decoder)(block, rand, prop)
    return found


def _attention(block, rand, prop) -> None:
    """MultiHeadAttention: shapes, weights summing to 1, key order, query order, the mask."""
    import torch

    q, k, v = rand(2, 3, D_MODEL), rand(2, 5, D_MODEL), rand(2, 5, D_MODEL)
    result = block(q, k, v, None)
    out = _out(result)
    prop(
        "输出形状 (b, n_q, d_model)",
        tuple(out.shape) == (2, 3, D_MODEL),
        str(tuple(out.shape)),
    )
    if isinstance(result, tuple | list) and len(result) > 1 and result[1] is not None:
        w = result[1]
        ok = tuple(w.shape) == (2, HEADS, 3, 5) and _close(
            w.sum(-1), torch.ones(2, HEADS, 3, dtype=w.dtype)
        )
        prop("权重 weights 形状 (b, h, n_q, n_k)，每行和为 1", ok, str(tuple(w.shape)))
    perm = torch.tensor([3, 0, 4, 1, 2])
    prop(
        "键值一起换顺序，输出不变 (keys, values permuted together)",
        _close(_out(block(q, k[:, perm], v[:, perm], None)), out),
    )
    qp = torch.tensor([2, 0, 1])
    prop(
        "查询换顺序，输出跟着换 (queries permuted)",
        _close(_out(block(q[:, qp], k, v, None)), out[:, qp]),
    )
    mask = torch.ones(2, 1, 1, 5, dtype=torch.bool)
    mask[:, ..., 4] = False
    k2, v2 = k.clone(), v.clone()
    k2[:, 4], v2[:, 4] = rand(2, D_MODEL) * 5, rand(2, D_MODEL) * 5
    a, b = _out(block(q, k, v, mask)), _out(block(q, k2, v2, mask))
    prop("mask 为 0 的键改了，输出不变（1 = 可以看）", _close(a, b))


def _encoder(block, rand, prop) -> None:
    """EncoderLayer: the shape, permutation equivariance, padding that changes nothing."""
    import torch

    x = rand(2, 5, D_MODEL)
    out = _out(block(x))
    prop(
        "输出形状 (b, n, d_model)",
        tuple(out.shape) == (2, 5, D_MODEL),
        str(tuple(out.shape)),
    )
    perm = torch.tensor([3, 0, 4, 1, 2])
    prop(
        "位置换顺序，输出跟着换（没有位置编码时）",
        _close(_out(block(x[:, perm])), out[:, perm]),
    )
    mask = torch.ones(2, 1, 1, 5, dtype=torch.bool)
    mask[..., 4] = False
    x2 = x.clone()
    x2[:, 4] = rand(2, D_MODEL) * 5
    a, b = _out(block(x, mask)), _out(block(x2, mask))
    prop("填充位置 padding 改了，其它位置不变", _close(a[:, :4], b[:, :4]))


def _decoder(block, rand, prop) -> None:
    """DecoderLayer: the shape, causality, memory order that changes nothing."""
    import torch

    x, memory = rand(2, 4, D_MODEL), rand(2, 5, D_MODEL)
    out = _out(block(x, memory))
    prop(
        "输出形状 (b, n_tgt, d_model)",
        tuple(out.shape) == (2, 4, D_MODEL),
        str(tuple(out.shape)),
    )
    x2 = x.clone()
    x2[:, 3] = rand(2, D_MODEL) * 5
    prop(
        "因果 causal：改第 4 个位置，前 3 个不变（look-ahead mask）",
        _close(_out(block(x2, memory))[:, :3], out[:, :3]),
    )
    perm = torch.tensor([3, 0, 4, 1, 2])
    prop(
        "memory 换顺序，输出不变（cross-attention）",
        _close(_out(block(x, memory[:, perm])), out),
    )
    prop(
        "交叉注意力读编码器的输出：memory 换成别的，输出跟着变 (cross-attention reads memory)",
        not _close(_out(block(x, rand(2, 5, D_MODEL) * 3)), out),
    )
