"""Lecture 17 · Transformer Networks — reproducible companion code.

The lecture's code, at the top of the package (read it in this order, like the lecture):
    attention_numpy      every block from scratch in numpy, rows are tokens, float64 (§2–§8)
    tiny_transformer     a small Transformer and GRU seq2seq baselines in PyTorch (§6.6, §7.5, §9),
                         and §4.4's one-layer look-up model
    training             the tasks of §4.4, §6.6, §7.5 and §9, train() and evaluation
    torch_models         PyTorch's own nn.Transformer / nn.GRU, the yardsticks of 06.3 and bench/
    timing, train_settings   the one clock, and TrainSettings (torch-free helpers)
Above them, importing only them:
    experiments          one module per lecture script (01 … 06, 13), the demo registry DEMOS
The machinery, which the lecture's code and the experiments never import
(tests/test_architecture.py checks every edge):
    pipeline             one job of a demo into CSVs, seed-averaged tables, a rule's code inputs
    reporting            the ledger and its checks, figures, the report, diff, the reference build
docs/ARCHITECTURE.md draws how the data moves between them.

This file imports nothing on purpose: a numpy-only job must not pay for `import torch`.
"""

__version__ = "0.1.0"
