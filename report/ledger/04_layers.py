"""Named checks of 04_layers.yaml (§7–§8): the claims the vocabulary cannot say.

Each takes the entry's checks.Context and returns a Finding with the numbers it compared.
An accuracy curve is read in the table's row order: steps 0 (the initialisation), eval_every,
2 eval_every, …, steps, as the 04.3 demo writes them.
"""

import numpy as np

from lecture17.reporting.checks import Finding, binomial_band, check

# "学会 learned": the lecture's 90 % (§4.4 "第一次达到 90% 准确率"), one threshold for §7.5
LEARNED = 0.9

# -----------------------------------------------------------------------------
# §7.5 Post-LN vs Pre-LN, and warmup (trained, one seed)


@check
def c085_stays_at_chance(v) -> Finding:
    """Every checkpoint after step 0 within 3 standard errors of a guesser's accuracy."""
    after_init = v["curve"][1:]
    chance = float(v["chance"][0])
    if not 0 < chance < 1:
        return Finding(False, f"瞎猜水平不是概率 chance {chance:g} is not a probability")
    n_positions = float(v.get("settings.train.n_test")[0] * v.get("settings.length")[0])
    band = binomial_band(chance, n_positions)
    worst = float(np.max(np.abs(after_init - chance)))
    return Finding(
        worst <= band,
        f"初始化之后离瞎猜 {chance:.3f} 最远 after step 0 at most {worst:.4f} from chance "
        f"≤ 3 个标准误 3 standard errors = {band:.4f}（{n_positions:.0f} 个位置 positions）",
    )


@check
def c087_trained_at_the_end(v) -> Finding:
    """The warmup run's final checkpoint reaches the lecture's "learned" 90 %."""
    final = float(v["warmup"][-1])
    return Finding(
        final >= LEARNED,
        f"warmup 运行的最后一个检查点 final checkpoint {final:.3f} ≥ {LEARNED:g}（学会 learned）",
    )


@check
def c088_both_learned_at_the_end(v) -> Finding:
    """At lr 1e−3, Pre-LN's and Post-LN's final checkpoints both reach 90 %."""
    pre, post = float(v["pre"][-1]), float(v["post"][-1])
    return Finding(
        min(pre, post) >= LEARNED,
        f"最后一个检查点 final checkpoints: Pre-LN {pre:.3f}, Post-LN {post:.3f} ≥ "
        f"{LEARNED:g}（学会 learned）",
    )


# -----------------------------------------------------------------------------
# §8.4 greedy decoding with and without a KV cache


@check
def l17_06_2a_uncached_is_sum_t(v) -> Finding:
    """Without a cache, decoding L tokens computes 1 + 2 + … + L = L(L + 1)/2 positions."""
    lengths = v.get("settings.lengths")
    expected = lengths * (lengths + 1) / 2
    ours = v["uncached"]
    ok = ours.shape == expected.shape and bool(np.all(ours == expected))
    listed = ", ".join(f"{x:,.0f}" for x in expected)
    return Finding(ok, f"{v.show('uncached')} = Σt（L = {lengths.astype(int).tolist()}）: {listed}")


# -----------------------------------------------------------------------------
# values under which a claim holds and fails, where the reference build's own cannot show both

_CLIMBS = [0.06, 0.19, 0.23, 0.33, 0.65, 0.99, 1.0, 1.0]  # a warmup run that learns
EXAMPLES = {
    "L17-06.2c": {  # timing: the speed-up of the cache at L = 8 … 128
        "holds": {"speedup": [1.2, 1.8, 3.1, 5.6, 10.4]},
        "fails": {"speedup": [2.2, 1.7, 1.6, 2.7, 9.5]},
    },
    "C087": {  # a run that learns and stays, and one that falls back by the last checkpoint
        "holds": {"warmup": [*_CLIMBS, 0.99, 0.98]},
        "fails": {"warmup": [*_CLIMBS, 0.96, 0.89]},
    },
}
