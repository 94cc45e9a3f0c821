"""Lecture 17 作业：把只读的文件系统重新挂成可写，再往仓库里写（沙箱里都应该失败）。"""

import subprocess
from pathlib import Path

import numpy as np

subprocess.run(["mount", "-o", "remount,rw", "/"], capture_output=True, check=False)
REPO = Path(__file__).resolve().parents[4]
(REPO / "student_was_here.txt").write_text("student was here\n")


def softmax(x, axis=-1):
    """softmax（讲义 §2.2），减去最大值防止 exp 溢出。"""
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)
