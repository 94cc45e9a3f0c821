"""Does a timing measured in the build agree with the benchmark on the idle machine?

    .venv/bin/python bench/timing_agreement.py            # after `make report`, machine idle

Demo 05.4 times one training step of each model at each L inside the build, as a job that runs
alone (registry `alone`: it takes every core, so no other job shares the machine), and writes
the median of its timed steps with their quartiles (results/tables/05.4.timing.csv). This
script times the same models at the same sizes with bench/step_time.py's method (interleaved
rounds, a fixed batch, single thread) on the machine as it is now, and says for each cell
whether the benchmark's median lies within the build's quartiles widened by the benchmark's own
quartiles — the two spreads the two measurements have. A benchmark, not a test: it prints, and
its exit status is 0 whatever it finds (README quotes a run).
"""

import argparse
import statistics
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from step_time import build_models  # noqa: E402

from lecture17.experiments.beyond import training_step  # noqa: E402
from lecture17.pipeline.aggregate import read_tables  # noqa: E402
from lecture17.timing import timed  # noqa: E402
from lecture17.training import reversal_batch  # noqa: E402

OURS = {
    "transformer": "transformer (ours)",
    "gru": "gru (ours)",
    "gru_attention": "gru_attention (ours)",
}


def build_cells(tables: Path) -> dict:
    """(model, L) -> (q1, median, q3) ms per step, as 05.4 measured them in the build."""
    table = read_tables([tables / "05.4.csv", tables / "05.4.timing.csv"])["05.4"]
    cells = {}
    for (model, L), rows in table.groupby(["model", "seq_len"]):
        ms = {q: float(rows.loc[rows["quantity"] == q, "mean"].iloc[0]) for q in rows["quantity"]}
        cells[(model, int(L))] = (ms["ms_per_step_q1"], ms["ms_per_step"], ms["ms_per_step_q3"])
    return cells


def bench_cell(model: str, L: int, rounds: int, block: int) -> tuple[float, float, float]:
    """Quartiles of ms per step over `rounds` clock readings of `block` steps each."""
    args = argparse.Namespace(d_model=64, n_heads=4, d_ff=256, emb_dim=64, hidden=128)
    net = build_models(args, max_len=L + 1)[OURS[model]]()
    batch = reversal_batch(torch.Generator().manual_seed(0), 64, L)
    step = training_step(net, batch, 1e-3, "cpu", "fp32")
    for _ in range(10):
        step()
    seconds = [timed(lambda: [step() for _ in range(block)])[1] / block for _ in range(rounds)]
    q = statistics.quantiles([1e3 * s for s in seconds], n=4)
    return q[0], q[1], q[2]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=Path, default=Path("results/tables"))
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--block", type=int, default=3)
    parser.add_argument("--lengths", type=int, nargs="+", default=[8, 16, 32])
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    cells = build_cells(args.tables)
    print("05.4 在构建里（单独跑）vs 空闲机器上的基准 in the build (alone) vs the benchmark, idle")
    print(f"{'model':>14} {'L':>4}  {'build q1–median–q3':>24}  {'bench q1–median–q3':>24}  agree")
    agree = 0
    shown = [(m, L) for (m, L) in sorted(cells) if L in args.lengths]
    for model, L in shown:
        b1, bm, b3 = cells[(model, L)]
        q1, qm, q3 = bench_cell(model, L, args.rounds, args.block)
        ok = b1 - (qm - q1) <= qm <= b3 + (q3 - qm)
        agree += ok
        print(
            f"{model:>14} {L:>4}  {b1:7.2f}–{bm:7.2f}–{b3:7.2f}  {q1:7.2f}–{qm:7.2f}–{q3:7.2f}"
            f"  {'yes' if ok else 'no'}"
        )
    print(f"一致 agree: {agree} / {len(shown)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
