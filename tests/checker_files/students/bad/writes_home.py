"""Lecture 17 作业：运行记录写到家目录。"""

from pathlib import Path

import numpy as np

(Path.home() / "student_was_here.txt").write_text("student was here\n")


def softmax(x, axis=-1):
    """softmax（讲义 §2.2），减去最大值防止 exp 溢出。"""
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)
