"""Named checks of 04_layers.yaml (§7–§8): the claims the vocabulary cannot say.

Each takes the entry's checks.Context and returns a Finding with the numbers it compared.
An accuracy curve is read in the table's row order: steps 0 (the initialisation), eval_every,
2 eval_every, …, steps, as the 04.3 demo writes them.
"""

import numpy as np

from lecture17.reporting.checks import Finding, binomial_band, check
from lecture17.reporting.rates import decide

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
def c087_trains_on_most_recorded_seeds(v) -> Finding:
    """On 07.4's recorded seeds: a seed trains when its final checkpoint reaches 90 %; the
    lecture's "能训练" holds when the rate's 95 % interval lies above 1/2, fails below it, and
    is not resolvable in between (rates.decide). The protocol seed's curve is shown beside."""
    final = np.asarray(v["seeds"], dtype=float)
    ok, text = decide(int(np.sum(final >= LEARNED)), len(final))
    protocol = float(v["warmup"][-1])
    return Finding(
        ok,
        f"记录的种子里最后一个检查点 ≥ {LEARNED:g} 的 recorded seeds trained at the end: {text}"
        f"（协议的种子 protocol seed {protocol:.3f}，只作对照 shown, not judged）",
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
# §8.4 beyond the lecture: beam search and exposure bias (06.6), rates over the cells
# (model × L × seed: `stat: seeds` gives every row's seeds, row after row, in the same order)


def _most_cells(higher, lower, what: str) -> Finding:
    """Of the cells where the two differ, does `higher` win most (95 % interval above 1/2)?
    `what` names the count; "{n}" in it becomes "N 格里两者不同的 n" (of how many cells)."""
    higher, lower = np.asarray(higher, dtype=float), np.asarray(lower, dtype=float)
    differ = higher != lower
    k, n = int(np.sum(higher[differ] > lower[differ])), int(np.sum(differ))
    if n == 0:
        return Finding(
            None, f"没有一格两者不同 no cell where they differ（{len(higher)} 格 cells）"
        )
    ok, text = decide(k, n)
    what = what.format(n=f"{len(higher)} 格里两者不同的 {n}")  # "27 格里两者不同的 9 格里…"
    return Finding(ok, f"{what}：{text}（{len(higher)} 格里 {n} 格两者不同 of the cells differ）")


@check
def l17_06_6b_beam_beats_greedy(v) -> Finding:
    """A cell shows it when width 4's sequence accuracy is above greedy's; cells where they are
    equal are left out; holds when most of the rest do."""
    return _most_cells(
        v["beam"], v["greedy"], "{n} 格里，宽度 4 更高的 cells where width 4 is higher"
    )


@check
def l17_06_6c_worse_after_own_error(v) -> Finding:
    """A cell (one that went wrong free-running) shows it when, after each sequence's first
    error, teacher forcing is right more often than free-running on the same positions."""
    return _most_cells(
        v["forced"],
        v["free"],
        "出过错的格里，出错之后喂正确前缀（teacher forcing）更准的 cells worse after an own error",
    )


@check
def l17_06_6d_teacher_forcing_overstates(v) -> Finding:
    """A cell shows it when the teacher-forced symbol accuracy is above the free-running one."""
    return _most_cells(
        v["forced"],
        v["free"],
        "{n} 格里，teacher forcing 更高的 cells where teacher forcing is higher",
    )


# -----------------------------------------------------------------------------
# values under which a claim holds and fails, where the reference build's own cannot show both

_CLIMBS = [0.06, 0.19, 0.23, 0.33, 0.65, 0.99, 1.0, 1.0]  # a warmup run that learns
# -----------------------------------------------------------------------------
# §7.5 beyond the lecture: Xiong et al. (2020)'s gradients at initialisation (06.4), a rate
# over the seeds (every seed's value, `stat: seeds`)


@check
def b75a_post_ln_top_heavy(v) -> Finding:
    """A seed shows it when the two layers nearest the output get larger gradients than the two
    nearest the input (ratio > 1); holds when most seeds do (95 % interval above 1/2)."""
    ratio = v["ratio"]
    k = int(np.sum(ratio > 1))
    ok, text = decide(k, len(ratio))
    return Finding(
        ok,
        f"靠近输出的两层梯度更大的种子 seeds with the top layers' gradients larger：{text}；"
        f"比值 ratio {np.min(ratio):.2f}–{np.max(ratio):.2f}",
    )


@check
def b75b_pre_ln_more_even(v) -> Finding:
    """A seed shows it when Pre-LN's largest over smallest layer gradient is below Post-LN's;
    holds when most seeds do."""
    pre, post = v["pre"], v["post"]
    k = int(np.sum(pre < post))
    ok, text = decide(k, len(pre))
    return Finding(
        ok,
        f"Pre-LN 更均匀的种子 seeds where Pre-LN is more even：{text}；最大 ÷ 最小 max/min "
        f"Pre-LN {np.median(pre):.2f}、Post-LN {np.median(post):.2f}（中位数 medians）",
    )


EXAMPLES = {
    "L17-06.6b": {  # 9 cells: the beam higher where they differ, or lower
        "holds": {
            "beam": [0.72, 0.0, 1.0, 0.91, 0.55, 0.3, 0.8, 0.62, 0.4],
            "greedy": [0.70, 0.0, 1.0, 0.90, 0.50, 0.2, 0.7, 0.60, 0.3],
        },
        "fails": {
            "beam": [0.70, 0.0, 1.0, 0.89, 0.50, 0.2, 0.7, 0.58, 0.3],
            "greedy": [0.72, 0.0, 1.0, 0.91, 0.55, 0.3, 0.8, 0.62, 0.4],
        },
    },
    "L17-06.6c": {
        "holds": {
            "free": [0.2, 0.15, 0.24, 0.3, 0.1, 0.2],
            "forced": [0.98, 0.99, 0.6, 0.7, 0.9, 0.8],
        },
        "fails": {
            "free": [0.98, 0.99, 0.6, 0.7, 0.9, 0.8],
            "forced": [0.2, 0.15, 0.24, 0.3, 0.1, 0.2],
        },
    },
    "L17-06.6d": {
        "holds": {
            "forced": [1.0, 0.99, 0.66, 0.43, 0.9, 0.8],
            "free": [1.0, 0.97, 0.4, 0.2, 0.7, 0.6],
        },
        "fails": {
            "forced": [1.0, 0.97, 0.4, 0.2, 0.7, 0.6],
            "free": [1.0, 0.99, 0.66, 0.43, 0.9, 0.8],
        },
    },
    "L17-B7.5a": {  # ten seeds: top-heavy Post-LN gradients, or even ones
        "holds": {"ratio": [1.8, 2.1, 1.5, 1.9, 2.4, 1.7, 1.6, 2.0, 2.2, 1.9]},
        "fails": {"ratio": [0.9, 1.0, 0.95, 0.99, 1.02, 0.97, 0.93, 0.98, 0.96, 0.94]},
    },
    "L17-B7.5b": {
        "holds": {"pre": [1.1] * 10, "post": [2.5] * 10},
        "fails": {"pre": [1.3] * 10, "post": [1.1] * 10},
    },
    "L17-06.2c": {  # timing: the speed-up of the cache at L = 8 … 128
        "holds": {"speedup": [1.2, 1.8, 3.1, 5.6, 10.4]},
        "fails": {"speedup": [2.2, 1.7, 1.6, 2.7, 9.5]},
    },
    "C087": {  # ten recorded seeds that train, and ten that fall back by the last checkpoint
        "holds": {"seeds": [0.98] * 10, "warmup": [*_CLIMBS, 0.99, 0.98]},
        "fails": {"seeds": [0.28] * 10, "warmup": [*_CLIMBS, 0.96, 0.89]},
    },
}
