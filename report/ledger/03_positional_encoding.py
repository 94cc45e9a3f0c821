"""Named checks of 03_positional_encoding.yaml (§6): the claims the vocabulary cannot say.

Each takes the entry's checks.Context and returns a Finding with the numbers it compared.
Curves are read in the table's row order, which is the config's order (ascending distances).
"""

import math

import numpy as np

from lecture17.reporting.checks import Finding, check
from lecture17.reporting.rates import decide

# -----------------------------------------------------------------------------
# §6.3 dot products of positional encodings


@check
def l17_03_3a_dots_fall_roughly(v) -> Finding:
    """Most pairs of distances k < k' have dot(k') < dot(k): Kendall's tau below 0."""
    dots = v["dots"]
    i, j = np.triu_indices(len(dots), k=1)  # every pair k_i < k_j
    falls = int(np.sum(dots[j] < dots[i]))
    rises = int(np.sum(dots[j] > dots[i]))
    return Finding(
        falls > rises,
        f"{len(i)} 对距离中 {falls} 对变小、{rises} 对变大 of {len(i)} pairs of distances "
        f"{falls} fall, {rises} rise",
    )


# -----------------------------------------------------------------------------
# §6.6 the positional-encoding ablation (trained, two seeds)


def _gain(v, name: str) -> float:
    """Accuracy gained over chance (the EOS-counting chance of flag F01)."""
    return float(v[name][0] - v["chance"][0])


@check
def c071_only_a_little_above_chance(v) -> Finding:
    """No PE gains less than a tenth of what the sinusoidal encoding gains over chance."""
    gain, full = _gain(v, "no_pe"), _gain(v, "sinusoidal")
    return Finding(
        gain < full / 10,
        f"不用位置编码比瞎猜高 no PE gains {gain:.3f} < 正弦编码的十分之一 "
        f"a tenth of sinusoidal's {full:.3f}",
    )


@check
def c072_as_good_as_sinusoidal(v) -> Finding:
    """|learned − sinusoidal| is below a tenth of what PE brings (sinusoidal − none)."""
    gap = abs(float(v["learned"][0] - v["sinusoidal"][0]))
    effect = float(v["sinusoidal"][0] - v["no_pe"][0])
    return Finding(
        gap < effect / 10,
        f"|可学习 learned − 正弦 sinusoidal| = {gap:.3f} < 位置编码作用的十分之一 "
        f"a tenth of the PE effect (sinusoidal − none = {effect:.3f})",
    )


@check
def c075_learned_almost_nothing(v) -> Finding:
    """Rulebook R10, "几乎什么也没学会": the scaled row got less than a quarter of the way
    from chance to a perfect score (nearer "nothing" than "half learned"; the lecture's own
    0.261 / 0.281 are 13–15 % of the way), and below the unscaled row that learned."""
    gain, full = _gain(v, "scaled"), _gain(v, "sinusoidal")
    chance = float(v["chance"][0])
    room = (1 - chance) / 4
    return Finding(
        bool(gain < room and gain < full),
        f"乘 √d_model 后比瞎猜高 scaled gains {gain:.3f} < 从瞎猜到全对的四分之一 a quarter of "
        f"the way from chance {chance:.3f} to 1 = {room:.3f}，且低于正弦编码的 below "
        f"sinusoidal's {full:.3f}",
    )


# §6.6's embedding norm: an N(0, 1) embedding of the task's vocabulary (training.VOCAB_SIZE =
# 13 rows: PAD, BOS, EOS and 10 symbols; tests/reporting/test_ledger.py checks the number)
VOCAB = 13


def chi_moments(d: int) -> tuple[float, float]:
    """Mean and sd of ‖x‖ for x ~ N(0, I_d): E = √2 Γ((d + 1)/2) / Γ(d/2), Var = d − E²."""
    mean = math.sqrt(2) * math.exp(math.lgamma((d + 1) / 2) - math.lgamma(d / 2))
    return mean, math.sqrt(d - mean * mean)


@check
def c073_norm_within_sampling_error(v) -> Finding:
    """Rulebook R2/R3: the lecture states the distribution (nn.Embedding's N(0, 1), d_model),
    so its 8.21 is a Monte Carlo estimate over VOCAB rows: every seed within half a unit plus
    4 √2 standard errors (its number is another draw of the same size) of it, the standard
    error exact, sd(‖x‖)/√VOCAB. An N(0, 1/d) embedding (‖x‖ ≈ 1, §6.6's warning) fails."""
    d = int(v.get("settings.d_model")[0])
    _, sd = chi_moments(d)
    lecture = float(v.get("lecture")[0])
    tol = 0.005 + 4 * math.sqrt(2) * sd / math.sqrt(VOCAB)
    lo, hi = float(np.min(v["norm_min"])), float(np.max(v["norm_max"]))
    worst = max(abs(lo - lecture), abs(hi - lecture))
    return Finding(
        worst <= tol,
        f"每个种子的平均长度 every seed's mean norm {lo:.2f}–{hi:.2f}，离讲义 {lecture:g} 最远 "
        f"{worst:.2f} ≤ 半个末位 + 4√2 个标准误 half a unit + 4√2 SE = {tol:.2f}"
        f"（sd(‖x‖) = {sd:.3f}，{VOCAB} 行 rows，d_model {d}）",
    )


# float32: the embeddings and the PE are float32 tensors (eps 1.2e-7); their norms agree with
# the exact formula to a few eps, so 1e-6 relative is the precision float32 can promise
FLOAT32_RTOL = 1e-6


@check
def c074_scaled_by_sqrt_d_model(v) -> Finding:
    """The mean norm after scaling is √d_model times the mean norm before (float32)."""
    scaled, norm = float(v["scaled"][0]), float(v["norm"][0])
    factor = float(np.sqrt(v.get("settings.d_model")[0]))
    return Finding(
        abs(scaled - factor * norm) < FLOAT32_RTOL * factor * abs(norm),
        f"乘后 scaled {scaled:.7g} = √d_model × 乘前 unscaled = {factor:g} × {norm:.7g}"
        f"（float32, 相对 rel {FLOAT32_RTOL:g}）",
    )


@check
def c074_pe_norm_is_sqrt_half_d_model(v) -> Finding:
    """‖PE(pos)‖ = √(d_model/2) (§6.2), the lecture's 5.66 at d_model = 64 (float32)."""
    pe = float(v["pe"][0])
    formula = float(np.sqrt(v.get("settings.d_model")[0] / 2))
    return Finding(
        abs(pe / formula - 1) < FLOAT32_RTOL,
        f"‖PE‖ = {pe:.7g}，√(d_model/2) = {formula:.7g}（float32, 相对 rel {FLOAT32_RTOL:g}）",
    )


# -----------------------------------------------------------------------------
# §6.5 beyond the lecture: length extrapolation (06.7), rates over 07.9's recorded runs
# (`stat: seeds` gives every row's seeds, row after row, in the same order at every length)

LEARNED = 0.9  # the lecture's "learned" 90 % (§4.4), at the training length and beyond it
LONGER = ("at_24", "at_32", "at_48")


def _runs(v) -> tuple[np.ndarray, np.ndarray]:
    """(learned, extrapolates): per run, symbol accuracy ≥ 0.9 at 16; and at 16, 24, 32, 48."""
    seen = np.asarray(v["seen"], dtype=float)
    longer = [np.asarray(v[name], dtype=float) for name in LONGER]
    if any(x.shape != seen.shape for x in longer):
        raise ValueError(f"lengths give different numbers of runs: {[x.shape for x in longer]}")
    learned = seen >= LEARNED
    return learned, learned & np.all([x >= LEARNED for x in longer], axis=0)


def _rate_of_runs(v, extrapolate: bool) -> Finding:
    """Of the runs that learned, do most extrapolate (`extrapolate`) or most not?"""
    learned, extrapolates = _runs(v)
    n = int(np.sum(learned))
    if n == 0:
        return Finding(
            None,
            f"{learned.size} 次运行没有一次学会 none of {learned.size} runs learned"
            f"（16 上 < {LEARNED:g}）",
        )
    k = int(np.sum(extrapolates)) if extrapolate else n - int(np.sum(extrapolates))
    ok, text = decide(k, n)
    what = "能外推的 that extrapolate" if extrapolate else "不能外推的 that do not extrapolate"
    worst = min(float(np.min(np.asarray(v[name])[learned])) for name in LONGER)
    return Finding(
        ok,
        f"学会了的运行里{what}：{text}（{learned.size} 次运行里 {n} 次学会 learned at 16；"
        f"它们在更长处最低 lowest beyond 16 {worst:.3f}）",
    )


@check
def l17_06_7a_sinusoidal_does_not_extrapolate(v) -> Finding:
    """Of the sinusoidal runs (both tasks) that learned at 16, most fall below 0.9 at 24, 32 or
    48 (the rate's 95 % interval above 1/2)."""
    return _rate_of_runs(v, extrapolate=False)


@check
def l17_06_7c_learned_does_not_extrapolate(v) -> Finding:
    """As L17-06.7a, for the learned table."""
    return _rate_of_runs(v, extrapolate=False)


@check
def l17_06_7d_rope_extrapolates_on_copy(v) -> Finding:
    """Of RoPE's copy runs that learned at 16, most stay ≥ 0.9 at 24, 32 and 48."""
    return _rate_of_runs(v, extrapolate=True)


@check
def l17_06_7e_alibi_extrapolates_on_copy(v) -> Finding:
    """As L17-06.7d, for ALiBi."""
    return _rate_of_runs(v, extrapolate=True)


@check
def l17_06_7f_relative_does_not_extrapolate_reversal(v) -> Finding:
    """Of RoPE's and ALiBi's reversal runs that learned at 16, most fall below 0.9 beyond it."""
    return _rate_of_runs(v, extrapolate=False)


# -----------------------------------------------------------------------------
# values under which a claim holds and fails, where the reference build's own cannot show both

_LEARNED_RUNS = [0.99, 0.98, 1.0, 0.97, 0.99, 1.0, 0.96, 0.99, 1.0, 0.98]
_STAYS = {"seen": _LEARNED_RUNS, **{name: [0.95] * 10 for name in LONGER}}
_FALLS = {"seen": _LEARNED_RUNS, **{name: [0.4] * 10 for name in LONGER}}
EXAMPLES = {
    "L17-06.7a": {"holds": _FALLS, "fails": _STAYS},
    "L17-06.7c": {"holds": _FALLS, "fails": _STAYS},
    "L17-06.7d": {"holds": _STAYS, "fails": _FALLS},
    "L17-06.7e": {"holds": _STAYS, "fails": _FALLS},
    "L17-06.7f": {"holds": _FALLS, "fails": _STAYS},
}
