"""Lecture 17 作业：写一个名字里有 U+2028 的调试文件，softmax 是对的。"""

from pathlib import Path

import numpy as np

Path("debug\u2028notes.txt").write_text("x\n")


def softmax(x, axis=-1):
    """softmax（讲义 §2.2），减去最大值防止 exp 溢出。"""
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)
