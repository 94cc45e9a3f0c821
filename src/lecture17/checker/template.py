"""`python -m lecture17 check --template`: a starting file generated from attention_numpy.

Every block a student may write, in the lecture's order: its signature (without the
arguments beyond the lecture), the lecture's §, the shapes of its docstring, and a body that
raises NotImplementedError. A block left so runs the reference; a file where every block is
left so is "no block replaced" (exit 3), never a pass.
"""

import inspect

from lecture17.checker import blocks

HEADER = '''"""Lecture 17 的 numpy 积木，自己写一遍 (your own numpy blocks for lecture 17).

把 raise NotImplementedError 换成你的实现，然后检查：
    python -m lecture17 check {name}
没写的积木用参考实现；每个积木的文档说明了讲义的 § 和形状（行是词，float64）。
"""

import numpy as np
'''


def _doc(name: str) -> str:
    """The reference's summary line, Parameters (without the arguments beyond the lecture)
    and Returns: the shapes, not how the reference computes them (its Notes stay out)."""
    doc = inspect.getdoc(blocks.reference(name)) or ""
    summary, *rest = doc.split("\n\n", 1)
    sections, current = {}, None
    for line in (rest[0] if rest else "").splitlines():
        if line in ("Parameters", "Returns", "Notes", "Examples"):
            current = line
            sections[current] = []
        elif current and not set(line) <= {"-"}:
            sections[current].append(line)
    beyond, kept, skipping = set(blocks.BEYOND.get(name, ())), [], False
    for line in sections.get("Parameters", []):
        if line and not line.startswith(" "):
            skipping = line.split(" : ")[0].strip() in beyond
        if not skipping:
            kept.append(line)
    section, title = blocks.BLOCKS[name]
    parts = [f"{title}（讲义 {section}）: {summary}"]
    for head, body in (("Parameters", kept), ("Returns", sections.get("Returns", []))):
        if body:
            parts.append("\n".join([head, "-" * len(head), *body]).rstrip())
    return "\n\n".join(parts)


def block_source(name: str) -> str:
    doc = _doc(name).replace('"""', "'''")
    body = "\n".join(f"    {line}" if line else "" for line in doc.splitlines())
    head = f"def {blocks.signature_text(name)}:"
    return f'{head}\n    """{body.lstrip()}\n    """\n    raise NotImplementedError\n'


def template(filename: str = "my_blocks.py") -> str:
    return HEADER.format(name=filename) + "".join(
        f"\n\n{block_source(name)}" for name in blocks.BLOCKS
    )


TRAINED = '''"""Lecture 17 的 PyTorch 层，自己写一遍 (your own torch layers for lecture 17).

把 raise NotImplementedError 换成你的实现，然后检查：
    python -m lecture17 check --trained {name}             # 性质（几秒）+ 训练的演示（几分钟）
    python -m lecture17 check --trained --no-build {name}  # 只看性质
没写的类用参考实现。mask：1/True = 可以看 (may attend)，能广播到 (b, h, n_q, n_k)。
演示只调用下面的构造函数和 forward，不读你的属性名或权重名；要读参考内部的作业
（load_from_torch、09.1 去掉注意力头）保留对照的数字，检查结果会说明。
"""

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    """多头注意力 multi-head attention（讲义 §5.2）: MultiHead(Q, K, V) = Concat(head_1..h) W^O."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        raise NotImplementedError

    def forward(self, query, key, value, mask=None):
        """query (b, n_q, d_model), key/value (b, n_k, d_model) -> output (b, n_q, d_model),
        or (output, weights (b, h, n_q, n_k))."""
        raise NotImplementedError


class EncoderLayer(nn.Module):
    """编码器层 encoder layer（讲义 §7.1）: 自注意力 + FFN，各带残差和 LayerNorm（Post-LN；
    norm_first=True 为 Pre-LN，§7.5）。"""

    def __init__(self, d_model, n_heads, d_ff, norm_first=False):
        super().__init__()
        raise NotImplementedError

    def forward(self, x, mask=None):
        """x (b, n, d_model) -> (b, n, d_model)."""
        raise NotImplementedError


class DecoderLayer(nn.Module):
    """解码器层 decoder layer（讲义 §8.2）: 带 look-ahead mask 的自注意力、对 memory 的
    cross-attention、FFN，各带残差和 LayerNorm。"""

    def __init__(self, d_model, n_heads, d_ff, norm_first=False):
        super().__init__()
        raise NotImplementedError

    def forward(self, x, memory, self_mask=None, memory_mask=None):
        """x (b, n_tgt, d_model), memory (b, n_src, d_model) -> (b, n_tgt, d_model)；
        look-ahead mask 由这一层自己加 (§8.1)。"""
        raise NotImplementedError
'''


def trained_template(filename: str = "my_layers.py") -> str:
    return TRAINED.format(name=filename)
