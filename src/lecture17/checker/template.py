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
