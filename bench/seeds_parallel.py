"""Several seeds of one protocol trained in one process, against one training per seed.

    .venv/bin/python bench/seeds_parallel.py                     # 05.1's Transformer, L = 16
    .venv/bin/python bench/seeds_parallel.py --seeds 8 --steps 200 --model gru

Three trainings of the same seeds, each on one thread, with the config's sizes and training
settings of 05.1 (steps cut by --steps, to keep the benchmark short):
- sequential: training.train once per seed, as the build's jobs run it;
- vmapped: the seeds' models stacked (torch.func.stack_module_state) and trained together,
  one vmap(grad) call per step over the stack, fused Adam on the stacked parameters (Adam is
  elementwise, so each seed's update is its own); each seed draws its own batches from its own
  generator, exactly as train() does, and starts from the same initialisation;
- sequential again under ATEN_CPU_CAPABILITY=avx2 (a subprocess): the variation another CPU
  brings, which `python -m lecture17 diff` must tolerate anyway.
Printed: the training time of each (the median step × steps, as train() measures it, so the
evaluation is apart) and the speed-up; per seed, the
final loss and greedy token_accuracy of each, and the largest difference vmapped − sequential beside
the largest difference avx2 − sequential. bench/README.md quotes a run and the decision.
"""

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
from dataclasses import replace

import torch
import torch.nn.functional as F
import yaml
from torch.func import functional_call, grad_and_value, stack_module_state, vmap

from lecture17.experiments.transformer_vs_rnn import builder
from lecture17.timing import timed
from lecture17.train_settings import TrainSettings
from lecture17.training import ReversalTask, evaluation_set, train, warmup_lr


def protocol(model: str, steps: int):
    with open("config/config.yaml", encoding="utf-8") as f:
        spec = yaml.safe_load(f)["demos"]["05.1"]["settings"]
    settings = replace(TrainSettings(**spec["train"]), steps=steps)
    return builder(model, spec["sizes"]), settings


def sequential(model: str, length: int, seeds: list[int], steps: int) -> dict:
    make, settings = protocol(model, steps)
    task, found, seconds = ReversalTask(length), {}, 0.0
    for seed in seeds:
        result = train(make, task, settings, seed=seed)
        found[seed] = {"loss": result.history[-1]["loss"], **result.final}
        seconds += result.ms_per_step * settings.steps / 1e3  # its median step, evaluation apart
    return {"seconds": seconds, "seeds": found}


def vmapped(model: str, length: int, seeds: list[int], steps: int) -> dict:
    make, settings = protocol(model, steps)
    task = ReversalTask(length)
    torch.set_num_threads(1)
    models = []
    for seed in seeds:
        torch.manual_seed(seed)  # train()'s initialisation
        models.append(make())
    params, buffers = stack_module_state(models)  # {name: (S, ...)}
    base = copy.deepcopy(models[0]).to("meta")

    def loss(p, b, src, tgt_in, tgt_out):
        logits = functional_call(base, (p, b), (src, tgt_in))  # (b, L + 1, vocab)
        return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten())

    step = vmap(grad_and_value(loss))
    opt = torch.optim.Adam(params.values(), lr=settings.lr, fused=True)
    data = [torch.Generator().manual_seed(seed) for seed in seeds]  # train()'s batches

    def one_step(k: int):
        for group in opt.param_groups:
            group["lr"] = warmup_lr(settings.lr, k, settings.warmup)
        batches = [task.sample(g, settings.batch_size) for g in data]
        src, tgt_in, tgt_out = (torch.stack(parts) for parts in zip(*batches, strict=True))
        grads, losses = step(params, buffers, src, tgt_in, tgt_out)
        for name, p in params.items():
            p.grad = grads[name]
        opt.step()
        return losses

    times = []
    for k in range(settings.steps):
        losses, elapsed = timed(one_step, k)  # batches drawn and stacked included
        times.append(elapsed)
    seconds = statistics.median(times) * settings.steps  # as train(): the median step
    found = {}
    for i, (seed, net) in enumerate(zip(seeds, models, strict=True)):
        with torch.no_grad():
            for name, p in net.named_parameters():
                p.copy_(params[name][i])
        test = evaluation_set(task, seed, settings.n_test)
        found[seed] = {"loss": float(losses[i].detach()), **task.evaluate(net, test)}
    return {"seconds": seconds, "seeds": found}


def largest(a: dict, b: dict, key: str) -> float:
    return max(abs(float(a[s][key]) - float(b[s][key])) for s in a)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="transformer", choices=["transformer", "gru"])
    parser.add_argument("--length", type=int, default=16)
    parser.add_argument("--seeds", type=int, default=6)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--only", choices=["sequential"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    seeds = list(range(100, 100 + args.seeds))  # the robustness seeds' range (07.x)
    if args.only:  # the subprocess under another ATEN_CPU_CAPABILITY
        print(json.dumps(sequential(args.model, args.length, seeds, args.steps)))
        return 0
    one = sequential(args.model, args.length, seeds, args.steps)
    many = vmapped(args.model, args.length, seeds, args.steps)
    env = dict(os.environ, ATEN_CPU_CAPABILITY="avx2")
    cmd = [sys.executable, __file__, "--only", "sequential", *sys.argv[1:]]
    other = json.loads(subprocess.run(cmd, env=env, capture_output=True, check=True).stdout)
    other["seeds"] = {int(s): v for s, v in other["seeds"].items()}
    head = f"05.1 {args.model}, L = {args.length}, {args.seeds} seeds × {args.steps} steps"
    print(f"{head}, 1 thread")
    print(f"  one training per seed 每个种子一次训练: {one['seconds']:.1f} s")
    print(f"  all seeds in one vmap 所有种子一起 (vmap): {many['seconds']:.1f} s")
    print(f"  speed-up 加速: {one['seconds'] / many['seconds']:.2f}×")
    print("  seed  loss: seq / vmap / avx2        token_accuracy: seq / vmap / avx2")
    for s in seeds:
        a, b, c = one["seeds"][s], many["seeds"][s], other["seeds"][s]
        print(
            f"  {s}  {a['loss']:.5f} / {b['loss']:.5f} / {c['loss']:.5f}"
            f"    {a['token_accuracy']:.3f} / {b['token_accuracy']:.3f} / {c['token_accuracy']:.3f}"
        )
    for key in ("loss", "token_accuracy"):
        print(
            f"  largest |Δ{key}|: vmap − seq {largest(many['seeds'], one['seeds'], key):.2e}, "
            f"avx2 − seq {largest(other['seeds'], one['seeds'], key):.2e}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
