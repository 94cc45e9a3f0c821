"""Lecture 17 作业：numpy 版本不对就退出。"""

import sys

import numpy as np

sys.exit(3)


def softmax(x, axis=-1):
    """softmax（讲义 §2.2），减去最大值防止 exp 溢出。"""
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)
