"""Lecture 17 作业：softmax 还有问题，先让它报错。"""


def softmax(x, axis=-1):
    """softmax（讲义 §2.2）：还没写好。"""
    raise ValueError("bad")
