"""Where one training step's time goes, against the machine's own GEMM ceiling.

    .venv/bin/python bench/step_profile.py              # 05.1's three models at L = 32; ~1 min
    .venv/bin/python bench/step_profile.py --lengths 16 32 --steps 20

For each model of 05.1 (the config's sizes), one training step exactly as train() runs it
(training.train_step: forward, loss, zero_grad, backward, fused Adam; batch 64, one thread):
- its FLOPs, counted by torch.utils.flop_counter.FlopCounterMode (matrix products only: what
  the counter counts; elementwise work counts 0);
- its time: the median of `--steps` steps after 3 untimed ones;
- torch.profiler over the same number of steps: self CPU time per operator, split into the
  matrix products (aten::mm, addmm, bmm, baddbmm, addmv, and the GRU's fused cell where it is
  one op) and the rest, the rest's largest operators named;
- the GEMM ceiling: every matrix-product shape the profiler saw (with its count per step),
  timed alone with torch.mm / torch.bmm on the same thread in the same run, gives the time
  those products would take at the machine's GEMM speed; FLOPs / that time is the ceiling.
The printed ratio, achieved GFLOP/s ÷ ceiling GFLOP/s, is the share of the physical limit one
step reaches. Timings are machine-dependent; the ratios, measured within one run, move less.
"""

import argparse
import collections

import torch
import yaml
from torch.profiler import ProfilerActivity, profile
from torch.utils.flop_counter import FlopCounterMode

from lecture17.experiments.transformer_vs_rnn import builder
from lecture17.timing import median_ms
from lecture17.training import ReversalTask, make_optimizer, train_step

GEMM_OPS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::addmv")


def config_sizes():
    with open("config/config.yaml", encoding="utf-8") as f:
        return yaml.safe_load(f)["demos"]["05.1"]["settings"]["sizes"]


def setup(model, seq_len, sizes, batch_size=64, seed=0):
    torch.manual_seed(seed)
    net = builder(model, sizes)()
    opt = make_optimizer("adam", net.parameters(), 1e-3)
    task = ReversalTask(seq_len)
    batch = task.sample(torch.Generator().manual_seed(seed), batch_size)
    return task, net, opt, batch


def step_ms(task, net, opt, batch, steps):
    for _ in range(3):
        train_step(task, net, batch, opt)
    return median_ms(lambda: train_step(task, net, batch, opt), steps)


def step_flops(task, net, opt, batch):
    with FlopCounterMode(display=False) as counter:
        train_step(task, net, batch, opt)
    return counter.get_total_flops()


def profiled(task, net, opt, batch, steps):
    """(self CPU ms per step by operator, {(op, shapes): calls per step})."""
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        for _ in range(steps):
            train_step(task, net, batch, opt)
    by_op = collections.Counter()
    for event in prof.key_averages():
        by_op[event.key] += event.self_cpu_time_total / 1e3 / steps
    shapes = collections.Counter()
    for event in prof.key_averages(group_by_input_shape=True):
        if event.key in GEMM_OPS:
            shapes[(event.key, str(event.input_shapes))] += event.count / steps
    return by_op, shapes


def gemm_operands(op, shapes):
    """The two matrix operands of one profiled product, from its recorded input shapes."""
    dims = [s for s in shapes if s]  # bias and scalars come as [] or 1-d
    if op in ("aten::addmm", "aten::baddbmm"):
        a, b = dims[-2], dims[-1]
    elif op == "aten::addmv":
        a, b = dims[-2], dims[-1] + [1]
    else:
        a, b = dims[0], dims[1]
    return a, b


def ceiling_ms(shapes, repeats=20):
    """Time every profiled product shape alone (torch.mm / torch.bmm, fresh random operands):
    (ms per step at GEMM speed, FLOPs of those products)."""
    total_ms, total_flops = 0.0, 0.0
    for (op, text), calls in shapes.items():
        a_shape, b_shape = gemm_operands(op, eval(text))  # the profiler's own repr of lists
        a, b = torch.randn(a_shape), torch.randn(b_shape)
        fn = torch.bmm if a.dim() == 3 else torch.mm
        for _ in range(3):
            fn(a, b)
        ms = median_ms(lambda: fn(a, b), repeats)  # noqa: B023 (called here, in this loop)
        m, k = a_shape[-2], a_shape[-1]
        n = b_shape[-1]
        batch = a_shape[0] if a.dim() == 3 else 1
        total_ms += calls * ms
        total_flops += calls * 2 * batch * m * k * n
    return total_ms, total_flops


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[32])
    parser.add_argument("--models", nargs="+", default=["transformer", "gru", "gru_attention"])
    parser.add_argument("--steps", type=int, default=15)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    sizes = config_sizes()
    print(
        "| 模型 model | L | ms / 步 step | GFLOP / 步 | 达到 achieved GFLOP/s | "
        "GEMM 上限 ceiling GFLOP/s | 达到 / 上限 ratio | GEMM 占时 share | "
        "其余最大的 largest rest |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for seq_len in args.lengths:
        for model in args.models:
            task, net, opt, batch = setup(model, seq_len, sizes)
            flops = step_flops(task, net, opt, batch)
            ms = step_ms(task, net, opt, batch, args.steps)
            by_op, shapes = profiled(task, net, opt, batch, args.steps)
            gemm = sum(by_op[op] for op in GEMM_OPS)
            profiled_total = sum(by_op.values())
            ceil_ms, ceil_flops = ceiling_ms(shapes)
            achieved = flops / ms / 1e6
            ceiling = ceil_flops / ceil_ms / 1e6
            rest = [(k, v) for k, v in by_op.most_common() if k not in GEMM_OPS][:3]
            named = ", ".join(
                f"{k.removeprefix('aten::')} {v / profiled_total:.0%}" for k, v in rest
            )
            print(
                f"| {model} | {seq_len} | {ms:.1f} | {flops / 1e9:.3f} | {achieved:.1f} | "
                f"{ceiling:.1f} | {achieved / ceiling:.2f} | {gemm / profiled_total:.0%} | "
                f"{named} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
