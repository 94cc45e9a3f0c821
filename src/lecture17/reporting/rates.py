"""How often something happens across seeds: a count k of N, with its 95% interval.

The protocol's seeds (the lecture's 1–3) say what one run saw; the robustness seeds (07.x,
recorded) say how often it happens. A rate k/N is shown with the Wilson score interval at
95% (Wilson 1927), which stays inside [0, 1] and is not degenerate at k = 0 or k = N:

    centre = (k + z²/2) / (N + z²),  half-width = z √(k(N − k)/N + z²/4) / (N + z²),  z = 1.96

`at_least_once(p, n)` is the chance that a run of n seeds shows the event at least once,
1 − (1 − p)ⁿ (seeds independent), the reading of "a 3-seed run shows a lagging seed".
"""

import math

Z95 = 1.959963984540054  # the standard normal's 97.5% quantile


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion k/n (95% by default)."""
    if n <= 0 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n > 0, got k={k}, n={n}")
    centre = (k + z * z / 2) / (n + z * z)
    half = z * math.sqrt(k * (n - k) / n + z * z / 4) / (n + z * z)
    return max(0.0, centre - half), min(1.0, centre + half)


def at_least_once(p: float, n: int) -> float:
    """The chance that n independent seeds show an event of probability p at least once."""
    return 1 - (1 - p) ** n


def rate_text(k: int, n: int) -> str:
    """ "3/10（95% 区间 interval 0.11–0.60）"."""
    lo, hi = wilson(k, n)
    return f"{k}/{n}（95% 区间 interval {lo:.2f}–{hi:.2f}）"
