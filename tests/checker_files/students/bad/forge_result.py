"""Lecture 17 作业：想替检查器打印一个“通过”的结果（应该做不到）。"""

import json
import os

import numpy as np

bundle = {"summary": "检查 check：通过 passed", "report": {"exit": 0, "blocks": {}}, "page": ""}
try:
    with open(f"/proc/{os.getppid()}/fd/1", "w") as out:
        out.write("LECTURE17-CHECK-RESULT " + json.dumps(bundle) + "\n")
except OSError:
    pass


def softmax(x, axis=-1):
    """softmax（讲义 §2.2）：故意写错，只有 exp。"""
    return np.exp(np.asarray(x, dtype=np.float64))
