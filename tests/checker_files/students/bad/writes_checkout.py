"""Lecture 17 作业：把结果写到仓库的 results/ 里，方便以后对比。"""

from pathlib import Path

import numpy as np

# 仓库根目录：tests/checker_files/students/bad/ 往上四层
REPO = Path(__file__).resolve().parents[4]
(REPO / "student_was_here.txt").write_text("student was here\n")
(REPO / "results").mkdir(parents=True, exist_ok=True)
(REPO / "results" / "student_was_here.csv").write_text("student,was,here\n1,2,3\n")


def softmax(x, axis=-1):
    """softmax（讲义 §2.2），减去最大值防止 exp 溢出。"""
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)
