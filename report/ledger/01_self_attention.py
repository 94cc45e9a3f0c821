"""Named checks of 01_self_attention.yaml (§1–§3): what the vocabulary of lecture17.reporting.checks
cannot say in one word. Each takes the claim's checks.Context and returns a Finding.
"""

import numpy as np

from lecture17.reporting.checks import Finding, check

# -------------------------------------------------------------------------------------------
# §1.2 path length (demo 01.4)


@check
def c005_decay_continues(v):
    """§1.2 "几乎按指数衰减": the decay from distance 32 to 63 continues the one from 1 to 32.

    Distances 1 → 32 → 63 are two equal steps of 31. An exponential drops the same number of
    decades over each; the check allows the second within 10 % of the first (on a log plot, the
    32 → 63 segment continues the 1 → 32 line to within a tenth of its drop). A power law
    1/d^a would drop about 5× fewer decades over the second (log 63/32 vs log 32/1).
    """
    first = float(np.log10(v["rnn_32"] / v["rnn_1"])[0])  # decades, negative when decaying
    second = float(np.log10(v["rnn_63"] / v["rnn_32"])[0])
    gap = abs(second - first) / abs(first) if first else np.inf
    ok = first < 0 and gap <= 0.1
    return Finding(
        ok,
        f"距离 1→32 降了 {-first:.1f} 个数量级，32→63 降了 {-second:.1f} 个（相差 {gap:.0%}，"
        f"容许 10%）decades dropped over 1→32 and 32→63",
    )


# -------------------------------------------------------------------------------------------
# §3.4 multiply-adds and timing (demo 01.5)


@check
def c022_counts_follow_formula(v):
    """§3.4: self-attention n²d, RNN nd², ratio n/d, at the config's n values and d."""
    n = v.get("settings.n_values")  # (n_n,)
    d = float(v.get("settings.d_model")[0])
    sa, rnn, ratio = v["sa"], v["rnn"], v["ratio"]
    if not len(n) == len(sa) == len(rnn) == len(ratio):
        rows = f"n {len(n)}, n²d {len(sa)}, nd² {len(rnn)}, n/d {len(ratio)}"
        return Finding(False, f"行数不一致 rows do not match: {rows}")
    ok = (
        np.array_equal(sa, n**2 * d)
        and np.array_equal(rnn, n * d**2)
        and np.array_equal(ratio, n / d)
    )
    verdict = "全部等于公式 all equal the formula" if ok else "和公式不符 differ from the formula"
    return Finding(ok, f"n = {n.astype(int).tolist()}、d = {d:g}：n²d、nd²、n/d {verdict}")


@check
def c023_roughly_3_to_4(v):
    """§3.4 "大致变成 3–4 倍": every doubling of n multiplies the time by a factor that, rounded
    to a whole number ("大致", roughly), is 3 or 4 (the quadratic's 4, less at small n)."""
    growth = v["growth"]
    lo, hi = float(v.get("lecture.lo")[0]), float(v.get("lecture.hi")[0])
    rounded = np.round(growth)
    ok = bool(np.all((rounded >= lo) & (rounded <= hi)))
    shown = ", ".join(f"{g:.1f}" for g in growth)
    if ok:
        return Finding(ok, f"每次翻倍 per doubling ({shown}) 取整后都在 {lo:g}–{hi:g} 倍")
    outside = ", ".join(
        f"{g:.1f}" for g, r in zip(growth, rounded, strict=True) if not lo <= r <= hi
    )
    return Finding(
        ok, f"每次翻倍 per doubling ({shown})：{outside} 取整后不在 {lo:g}–{hi:g} 倍之内"
    )


# -------------------------------------------------------------------------------------------
# Values under which a claim holds and fails, where ours honestly differ from the lecture's
# (tests/reporting/test_ledger.py::test_every_check_can_fail_and_hold). "holds" are the
# lecture's own numbers (or numbers like them); "fails" are numbers like ours.

EXAMPLES = {
    "C004": {
        "holds": {"rnn_32": [5.3e-07], "rnn_32_lo": [3.0e-07], "rnn_32_hi": [8.0e-07]},
        "fails": {"rnn_32": [1.0e-10], "rnn_32_lo": [2.4e-11], "rnn_32_hi": [1.6e-10]},
    },
    "C005": {
        "holds": {
            "rnn_63": [9.2e-14],
            "rnn_63_lo": [5.0e-14],
            "rnn_63_hi": [1.5e-13],
            "rnn_32": [5.3e-07],
            "rnn_1": [2.3],
        },
        "fails": {
            "rnn_63": [1.0e-20],
            "rnn_63_lo": [4.5e-22],
            "rnn_63_hi": [2.2e-20],
            "rnn_32": [1.0e-10],
            "rnn_1": [1.7],
        },
    },
    "C023": {
        "holds": {"growth": [2.9, 3.5, 3.9, 4.1, 4.4]},
        "fails": {"growth": [2.9, 3.5, 3.9, 4.1, 4.6]},
    },
}
