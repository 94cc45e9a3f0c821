"""Lecture 17 · Transformer Networks — reproducible companion code.

Modules (read them in this order, like the lecture):
    attention_numpy      every block from scratch in numpy, rows are tokens, float64 (§2–§8)
    tiny_transformer     a small Transformer and GRU seq2seq baselines in PyTorch (§6.6, §7.5, §9)
    experiments.*        one module per lecture script (01 … 05); each demo returns a tidy DataFrame
    run                  what a Snakemake rule calls: one demo, one seed, one CSV
    aggregate            seed-averaged tables (mean and min–max), one per demo
    report               the Markdown / HTML report, lecture values beside ours

This file imports nothing on purpose: a numpy-only job must not pay for `import torch`.
"""

__version__ = "0.1.0"
