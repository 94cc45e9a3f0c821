"""Time one training step of our models against PyTorch's own (a benchmark, not a test).

    .venv/bin/python bench/step_time.py                 # L = 8, 16, 32; about a minute
    .venv/bin/python bench/step_time.py --lengths 8 64 128 --repeats 30

One step = forward + cross-entropy + zero_grad + backward + Adam step (train()'s optimizer,
the same for every model), batch 64, teacher forcing on the reversal task (§9.1),
single-threaded (§0.5, §9.5). Pairs compared, same sizes on both sides:
- tiny_transformer.Transformer vs nn.Transformer (d_model 64, 4 heads, d_ff 256, 1 + 1
  layers, dropout 0), both with the same embeddings, sinusoidal PE and output layer; the
  look-ahead mask for nn.Transformer is built once per length, outside the timing;
- GRUSeq2Seq (with and without attention) vs a plain nn.GRU encoder-decoder (emb 64,
  hidden 128).
Models are timed in interleaved rounds (each round runs every model once for `block` steps)
so slow drifts of the machine hit all of them alike; each time is the median over rounds.
Timings are machine-dependent and drift by 10-30 % between runs (bench/README.md).
"""

import argparse
import statistics
import time

import torch
import torch.nn.functional as F
from torch import nn

from lecture17.tiny_transformer import GRUSeq2Seq, Transformer, sinusoidal_encoding
from lecture17.training import VOCAB_SIZE, make_optimizer, reversal_batch

# -----------------------------------------------------------------------------
# PyTorch's own models, wrapped to the same interface (forward(src, tgt_in) -> logits)


class TorchTransformer(nn.Module):
    """nn.Transformer with the embeddings, PE and output layer of our Transformer."""

    def __init__(self, vocab, d_model=64, n_heads=4, d_ff=256, max_len=256):
        super().__init__()
        self.src_embed = nn.Embedding(vocab, d_model)
        self.tgt_embed = nn.Embedding(vocab, d_model)
        self.register_buffer("pe", sinusoidal_encoding(max_len, d_model), persistent=False)
        self.transformer = nn.Transformer(
            d_model, n_heads, 1, 1, d_ff, dropout=0.0, batch_first=True
        )
        self.out = nn.Linear(d_model, vocab)
        self.masks = {}  # n -> (n, n) float mask, -inf above the diagonal

    def forward(self, src, tgt_in):
        n_src, n_tgt = src.shape[1], tgt_in.shape[1]
        if n_tgt not in self.masks:
            self.masks[n_tgt] = nn.Transformer.generate_square_subsequent_mask(n_tgt)
        x = self.src_embed(src) + self.pe[:n_src]  # (b, n_src, d_model)
        y = self.tgt_embed(tgt_in) + self.pe[:n_tgt]  # (b, n_tgt, d_model)
        y = self.transformer(x, y, tgt_mask=self.masks[n_tgt], tgt_is_causal=True)
        return self.out(y)  # (b, n_tgt, vocab)


class PlainGRU(nn.Module):
    """Embedding -> nn.GRU encoder -> nn.GRU decoder started from its last state -> Linear."""

    def __init__(self, vocab, emb_dim=64, hidden=128):
        super().__init__()
        self.src_embed = nn.Embedding(vocab, emb_dim)
        self.tgt_embed = nn.Embedding(vocab, emb_dim)
        self.encoder = nn.GRU(emb_dim, hidden, batch_first=True)
        self.decoder = nn.GRU(emb_dim, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, src, tgt_in):
        _, last = self.encoder(self.src_embed(src))  # (1, b, hidden)
        states, _ = self.decoder(self.tgt_embed(tgt_in), last)  # (b, n_tgt, hidden)
        return self.out(states)


MODELS = {
    "transformer (ours)": lambda: Transformer(VOCAB_SIZE, VOCAB_SIZE),
    "nn.Transformer": lambda: TorchTransformer(VOCAB_SIZE),
    "gru (ours)": lambda: GRUSeq2Seq(VOCAB_SIZE, VOCAB_SIZE),
    "gru_attention (ours)": lambda: GRUSeq2Seq(VOCAB_SIZE, VOCAB_SIZE, attention=True),
    "nn.GRU enc-dec": lambda: PlainGRU(VOCAB_SIZE),
}
RATIOS = [
    ("transformer (ours)", "nn.Transformer"),
    ("gru (ours)", "nn.GRU enc-dec"),
    ("gru_attention (ours)", "nn.GRU enc-dec"),
]

# -----------------------------------------------------------------------------
# timing


def make_step(model, batch):
    """A closure running one training step on a fixed batch."""
    opt = make_optimizer("adam", model.parameters(), 1e-3)
    src, tgt_in, tgt_out = batch

    def step():
        logits = model(src, tgt_in)  # (b, L+1, vocab)
        loss = F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return step


def time_models(L, batch_size, warmup, rounds, block):
    """Median ms per step of every model at length L, timed in interleaved rounds."""
    torch.manual_seed(0)
    batch = reversal_batch(torch.Generator().manual_seed(0), batch_size, L)
    steps = {name: make_step(build(), batch) for name, build in MODELS.items()}
    for step in steps.values():
        for _ in range(warmup):
            step()
    times = {name: [] for name in steps}
    for _ in range(rounds):
        for name, step in steps.items():
            start = time.perf_counter()
            for _ in range(block):
                step()
            times[name].append((time.perf_counter() - start) / block)
    return {name: 1e3 * statistics.median(t) for name, t in times.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[8, 16, 32])
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--warmup", type=int, default=10, help="untimed steps per model")
    parser.add_argument("--repeats", type=int, default=20, help="interleaved timing rounds")
    parser.add_argument("--block", type=int, default=5, help="steps per model per round")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)  # §9.5: CPU, single thread

    print(
        f"每步训练耗时 Training step time (ms, median of {args.repeats} rounds x "
        f"{args.block} steps, batch {args.batch_size}, 1 thread, torch {torch.__version__})"
    )
    names = list(MODELS)
    print(f"{'L':>4}  " + "  ".join(f"{name:>20}" for name in names))
    results = {}
    for L in args.lengths:
        results[L] = time_models(L, args.batch_size, args.warmup, args.repeats, args.block)
        print(f"{L:>4}  " + "  ".join(f"{results[L][name]:>20.2f}" for name in names))
    print("\n比值 Ratio (ours / PyTorch's; < 1 = ours faster)")
    print(f"{'L':>4}  " + "  ".join(f"{f'{a} / {b}':>44}" for a, b in RATIOS))
    for L, ms in results.items():
        print(f"{L:>4}  " + "  ".join(f"{ms[a] / ms[b]:>44.2f}" for a, b in RATIOS))


if __name__ == "__main__":
    main()
