"""Lecture 17 作业：数据在上一级目录。"""

import os

import numpy as np

os.chdir("..")
with open("student_was_here.txt", "w") as f:
    f.write("student was here\n")


def softmax(x, axis=-1):
    """softmax（讲义 §2.2），减去最大值防止 exp 溢出。"""
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)
