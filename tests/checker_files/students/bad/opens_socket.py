"""Lecture 17 作业：先看看能不能联网（要下载词表）。"""

import socket

import numpy as np

conn = socket.create_connection(("1.1.1.1", 80), timeout=5)
conn.close()
conn = socket.create_connection(("pypi.org", 443), timeout=5)
conn.close()


def softmax(x, axis=-1):
    """softmax（讲义 §2.2），减去最大值防止 exp 溢出。"""
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)
