"""Time one training step of our models against PyTorch's own (a benchmark, not a test).

    .venv/bin/python bench/step_time.py                 # CPU, L = 8, 16, 32; about a minute
    .venv/bin/python bench/step_time.py --lengths 8 64 128 --repeats 30
    python bench/step_time.py --device cuda --d-model 512 --n-heads 8 --d-ff 2048 \\
        --emb-dim 512 --hidden 512 --precision bf16 --lengths 128 512 2048   # on a GPU

One step = forward + cross-entropy + zero_grad + backward + Adam step (train()'s fused Adam,
the same for every model), batch 64, teacher forcing on the reversal task (§9.1); on the CPU
single-threaded (§0.5, §9.5), on cuda with torch.cuda.synchronize() before each clock reading.
Pairs compared, same sizes on both sides (lecture17.torch_models):
- tiny_transformer.Transformer vs nn.Transformer (default d_model 64, 4 heads, d_ff 256,
  1 + 1 layers, dropout 0), both with the same embeddings, sinusoidal PE and output layer; the
  look-ahead mask for nn.Transformer is built once per length, outside the timing;
- GRUSeq2Seq (with and without attention) vs a plain nn.GRU encoder-decoder (default emb 64,
  hidden 128, the sizes of 05.x).
`--precision bf16` runs the forward pass under torch.autocast (bfloat16 matmuls, float32
parameters), as demo 06.3 does at d_model 512.
Models are timed in interleaved rounds (each round runs every model once for `block` steps)
so slow drifts of the machine hit all of them alike; each time is the median over rounds.
Timings are machine-dependent and drift by 10-30 % between runs (bench/README.md).
"""

import argparse

import torch

from lecture17.experiments.beyond import training_step
from lecture17.timing import interleaved_ms
from lecture17.tiny_transformer import GRUSeq2Seq, Transformer, TransformerConfig
from lecture17.torch_models import PlainGRU, TorchTransformer
from lecture17.training import VOCAB_SIZE, reversal_batch, to_device

RATIOS = [
    ("transformer (ours)", "nn.Transformer"),
    ("gru (ours)", "nn.GRU enc-dec"),
    ("gru_attention (ours)", "nn.GRU enc-dec"),
]


def build_models(args, max_len):
    """name -> constructor, at the sizes the command line gives."""
    config = TransformerConfig(
        VOCAB_SIZE,
        VOCAB_SIZE,
        d_model=args.d_model,
        n_heads=args.n_heads,
        d_ff=args.d_ff,
        max_len=max_len,
    )
    gru = dict(emb_dim=args.emb_dim, hidden=args.hidden)
    return {
        "transformer (ours)": lambda: Transformer(config),
        "nn.Transformer": lambda: TorchTransformer(config),
        "gru (ours)": lambda: GRUSeq2Seq(VOCAB_SIZE, VOCAB_SIZE, **gru),
        "gru_attention (ours)": lambda: GRUSeq2Seq(VOCAB_SIZE, VOCAB_SIZE, attention=True, **gru),
        "nn.GRU enc-dec": lambda: PlainGRU(VOCAB_SIZE, **gru),
    }


# -----------------------------------------------------------------------------
# timing


def time_models(args, L):
    """Median ms per step of every model at length L, timed in interleaved rounds."""
    torch.manual_seed(0)
    batch = reversal_batch(torch.Generator().manual_seed(0), args.batch_size, L)
    batch = to_device(batch, args.device)
    steps = {}
    for name, build in build_models(args, max_len=L + 1).items():
        model = build().to(args.device)
        steps[name] = training_step(model, batch, 1e-3, args.device, args.precision)
        for _ in range(args.warmup):
            steps[name]()
    return interleaved_ms(steps, args.repeats, args.device, args.block)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[8, 16, 32])
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--warmup", type=int, default=10, help="untimed steps per model")
    parser.add_argument("--repeats", type=int, default=20, help="interleaved timing rounds")
    parser.add_argument("--block", type=int, default=5, help="steps per model per round")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    parser.add_argument("--d-model", type=int, default=64, help="Transformers' width")
    parser.add_argument("--n-heads", type=int, default=4)
    parser.add_argument("--d-ff", type=int, default=256)
    parser.add_argument("--emb-dim", type=int, default=64, help="GRUs' embedding width")
    parser.add_argument("--hidden", type=int, default=128, help="GRUs' hidden state")
    args = parser.parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: torch sees no GPU on this machine")
    if args.d_model % args.n_heads:
        parser.error(f"--d-model {args.d_model} must be divisible by --n-heads {args.n_heads}")
    if args.device == "cpu":
        torch.set_num_threads(1)  # §9.5: CPU, single thread
    where = torch.cuda.get_device_name() if args.device == "cuda" else "CPU, 1 thread"

    print(
        f"每步训练耗时 Training step time (ms, median of {args.repeats} rounds x "
        f"{args.block} steps, batch {args.batch_size}, {where}, {args.precision}, "
        f"torch {torch.__version__})"
    )
    print(
        f"Transformers: d_model {args.d_model}, {args.n_heads} heads, d_ff {args.d_ff}, 1 + 1 "
        f"layers; GRUs: emb {args.emb_dim}, hidden {args.hidden}"
    )
    names = list(build_models(args, max_len=1))
    print(f"{'L':>5}  " + "  ".join(f"{name:>20}" for name in names))
    results = {}
    for L in args.lengths:
        results[L] = time_models(args, L)
        print(f"{L:>5}  " + "  ".join(f"{results[L][name]:>20.2f}" for name in names))
    print("\n比值 Ratio (ours / PyTorch's; < 1 = ours faster)")
    print(f"{'L':>5}  " + "  ".join(f"{f'{a} / {b}':>44}" for a, b in RATIOS))
    for L, ms in results.items():
        print(f"{L:>5}  " + "  ".join(f"{ms[a] / ms[b]:>44.2f}" for a, b in RATIOS))


if __name__ == "__main__":
    main()
