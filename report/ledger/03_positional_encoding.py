"""Named checks of 03_positional_encoding.yaml (§6): the claims the vocabulary cannot say.

Each takes the entry's checks.Context and returns a Finding with the numbers it compared.
Curves are read in the table's row order, which is the config's order (ascending distances).
"""

import numpy as np

from lecture17.reporting.checks import Finding, check

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
    """The scaled row's gain over chance is below half of the unscaled sinusoidal row's."""
    gain, full = _gain(v, "scaled"), _gain(v, "sinusoidal")
    return Finding(
        gain < full / 2,
        f"乘 √d_model 后比瞎猜高 scaled gains {gain:.3f} < 正弦编码的一半 "
        f"half of sinusoidal's {full:.3f}",
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
