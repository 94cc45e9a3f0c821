"""Lecture 17 作业：softmax 里留了一句调试用的 sys.exit()。"""

import sys

import numpy as np


def softmax(x, axis=-1):
    """softmax（讲义 §2.2）。"""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim > 2:
        sys.exit("调试：看到三维的输入就停")
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)
