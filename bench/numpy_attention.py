"""Benchmark: our numpy attention vs PyTorch's, float64, one thread (§3.4).

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 .venv/bin/python bench/numpy_attention.py

Times, for n in {512, 1024, 2048, 4096} and d = 64 (unbatched, float64, single thread):

    textbook  softmax(Q K^T / sqrt(d)) V written the obvious way (a new array per step),
              kept here as the yardstick for what the in-place version gains;
    ours      attention_numpy.scaled_dot_product_attention (returns output AND weights);
    PyTorch   torch.nn.functional.scaled_dot_product_attention (output only).

Each cell is the median of ``--repeats`` calls; the three are interleaved inside one run so
that a noisy machine slows them alike. Ratios ("speed vs PyTorch") are PyTorch's time divided
by ours: 1.0 = as fast, 0.8 = 80% of PyTorch's speed. Timings differ on every run and machine.
"""

import os

# One thread for every BLAS before numpy and torch load (the lecture's single-core timings).
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import platform  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from lecture17.attention_numpy import scaled_dot_product_attention  # noqa: E402
from lecture17.timing import interleaved_ms  # noqa: E402


def textbook_attention(Q, K, V):
    """softmax(Q K^T / sqrt(d_k)) V, one new (n, n) array per step."""
    scores = Q @ K.T / np.sqrt(Q.shape[-1])  # (n, n)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))  # (n, n)
    weights = e / e.sum(axis=-1, keepdims=True)  # (n, n)
    return weights @ V, weights


def time_size(n, d, repeats, rng):
    """Median ms of the three versions at one n, their calls interleaved (noise hits all alike)."""
    Q, K, V = rng.standard_normal((3, n, d))  # (n, d) each
    q, k, v = (torch.from_numpy(a) for a in (Q, K, V))
    calls = {
        "textbook": lambda: textbook_attention(Q, K, V),
        "ours": lambda: scaled_dot_product_attention(Q, K, V),
        "torch": lambda: F.scaled_dot_product_attention(q, k, v),
    }
    for fn in calls.values():  # warm-up
        fn()
    return interleaved_ms(calls, repeats)  # one call of each per round


def cpu_name():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[512, 1024, 2048, 4096])
    parser.add_argument("--d", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()

    torch.set_num_threads(1)
    env = {v: os.environ.get(v, "-") for v in ("OPENBLAS_NUM_THREADS", "OPENBLAS_CORETYPE")}
    print(
        f"CPU: {cpu_name()} · {os.cpu_count()} 核 cores · numpy {np.__version__} · "
        f"torch {torch.__version__} · torch 线程 threads {torch.get_num_threads()} · {env}"
    )
    print(f"d = {args.d}, float64, 不分批 unbatched, {args.repeats} 次取中位数 median (ms)\n")
    print(
        "| n | 教科书写法 textbook ms | 我们 ours ms | PyTorch ms "
        "| 教科书/PyTorch 速度 speed | 我们/PyTorch 速度 speed |"
    )
    print("|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    for n in args.sizes:
        ms = time_size(n, args.d, args.repeats, rng)
        print(
            f"| {n} | {ms['textbook']:.1f} | {ms['ours']:.1f} | {ms['torch']:.1f} "
            f"| {ms['torch'] / ms['textbook']:.2f}× | {ms['torch'] / ms['ours']:.2f}× |"
        )


if __name__ == "__main__":
    main()
