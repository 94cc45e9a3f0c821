"""Lecture 17 作业：调试输出太多了。"""

import numpy as np

for step in range(104858):  # 每行 100 字节，共约 10 MB
    print(f"debug step {step:08d} " + "x" * 79)


def softmax(x, axis=-1):
    """softmax（讲义 §2.2），减去最大值防止 exp 溢出。"""
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)
