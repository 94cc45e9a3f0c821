"""How often something happens across seeds: a count k of N, with its 95% interval.

The protocol's seeds (the lecture's 1–3) say what one run saw; the robustness seeds (07.x,
recorded) say how often it happens. A rate k/N is shown with the Wilson score interval at
95% (Wilson 1927), which stays inside [0, 1] and is not degenerate at k = 0 or k = N:

    centre = (k + z²/2) / (N + z²),  half-width = z √(k(N − k)/N + z²/4) / (N + z²),  z = 1.96

`decide(k, n, threshold)` judges a rate against a pass rule: it holds when the whole 95%
interval lies above the threshold, fails when it lies below, and is not resolvable when the
interval straddles it — with how many more seeds, at the rate seen, would decide.

`at_least_once(p, n)` is the chance that a run of n seeds shows the event at least once,
1 − (1 − p)ⁿ (seeds independent), the reading of "a 3-seed run shows a lagging seed".
"""

import math
from contextlib import contextmanager

Z95 = 1.959963984540054  # the standard normal's 97.5% quantile

# Every rate decision made while TRACE is a list appends (n, rule): n the seeds (or the runs'
# seeds) it was decided on, rule(k) the verdict the same rule gives k of those n. A test
# evaluates the ledger with it on and asks, of every rule, that k = 0 … n reaches both
# "holds" and "differs" (tests/reporting/test_ledger.py).
TRACE: list | None = None


def _trace(n: int, rule) -> None:
    if TRACE is not None:
        TRACE.append((n, rule))


def counted_rule(n: int, rule) -> None:
    """A predicate that decides by a count k of n by its own rule (k ≥ 1, every pair, …) says
    so here: `rule(k)` is its verdict for k of n, traced like the interval rules."""
    _trace(n, rule)


def fewest_to_hold(n: int, threshold: float = 0.5) -> int | None:
    """The fewest of n for which decide(k, n, threshold) holds (None: no k of n does)."""
    return next((k for k in range(n + 1) if _above(k, n, threshold) is True), None)


@contextmanager
def untraced():
    """Rate decisions that do not decide the claim (the protocol seeds shown beside it, one
    recorded seed of a per-seed claim) are left out of TRACE."""
    global TRACE
    kept, TRACE = TRACE, None
    try:
        yield
    finally:
        TRACE = kept


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


def seeds_to_decide(k: int, n: int, threshold: float, limit: int = 1000) -> int | None:
    """How many more seeds, at the rate k/n seen, until the 95% interval clears `threshold`
    (None: not within `limit` seeds, e.g. a rate equal to the threshold)."""
    for total in range(n + 1, limit + 1):
        lo, hi = wilson(round(k / n * total), total)
        if lo > threshold or hi < threshold:
            return total - n
    return None


def _above(k: int, n: int, threshold: float) -> bool | None:
    lo, hi = wilson(k, n)
    return True if lo > threshold else False if hi < threshold else None


def decide(k: int, n: int, threshold: float = 0.5) -> tuple[bool | None, str]:
    """(verdict, sentence) of a rate k/n against its pass rule "rate > threshold": True when the
    95% Wilson interval lies above the threshold, False when below, None when it straddles."""
    _trace(n, lambda k_: _above(k_, n, threshold))
    lo, hi = wilson(k, n)
    text = rate_text(k, n)
    if lo > threshold:
        return True, f"{text}，区间在 {threshold:g} 之上 above {threshold:g}"
    if hi < threshold:
        return False, f"{text}，区间在 {threshold:g} 之下 below {threshold:g}"
    more = seeds_to_decide(k, n, threshold)
    need = f"按这个比率再要约 {more} 个种子 about {more} more seeds" if more else "更多种子"
    return None, f"{text}，区间跨过 {threshold:g} straddles {threshold:g}：{need}才能判断"


# -----------------------------------------------------------------------------
# a chance over every 3-seed run of the recorded seeds (rulebook R12)


RUN = 3  # the lecture's §9 run: 3 seeds (R12's 'a run of that size')


def disjoint_runs(n_seeds: int) -> int:
    """How many independent 3-seed runs n recorded seeds hold. A chance averaged over every
    3-subset (a U-statistic) is no more precise than that many trials in the worst case
    (Hoeffding), so its interval is taken at this n, not at n_seeds."""
    return n_seeds // RUN


def _decides(chance: float, runs: int) -> bool:
    lo, hi = wilson(chance * runs, runs)
    return lo > 0.5 or hi < 0.5


def three_seed_decision(chance: float, n_seeds: int) -> tuple[bool | None, str]:
    """(verdict, words) of a chance estimated from n_seeds recorded seeds against 1/2: the 95 %
    Wilson interval at disjoint_runs(n_seeds) trials (the formula holds for a fractional count);
    not resolvable with fewer than 3 seeds or while the interval straddles 1/2, saying how many
    more seeds (at the chance seen) would decide it."""
    _trace(n_seeds, lambda k: three_seed_decision(k / n_seeds, n_seeds)[0] if n_seeds else None)
    runs = disjoint_runs(n_seeds)
    if runs == 0 or not math.isfinite(chance):
        return None, f"只有 {n_seeds} 个记录的种子，凑不出一次 3 个种子的运行 fewer than 3 seeds"
    lo, hi = wilson(chance * runs, runs)
    ok = True if lo > 0.5 else False if hi < 0.5 else None
    words = (
        f"{chance:.2f}（95% 区间 interval {lo:.2f}–{hi:.2f}，按 {n_seeds} 个种子里 {runs} 次"
        f"互不重叠的 3 种子运行 as {runs} disjoint 3-seed runs of {n_seeds} seeds，"
        "和 1/2 比 against 1/2）"
    )
    if ok is None:
        more = next(
            (x for x in range(1, 1000) if _decides(chance, disjoint_runs(n_seeds + x))), None
        )
        if more:
            words += f"；按这个概率再要约 {more} 个种子 about {more} more seeds would decide"
    return ok, words


# -----------------------------------------------------------------------------
# the chance that a 3-seed run shows a per-seed event (rulebook R12)


def run_chance(k: int, n: int, shows) -> tuple[float, float]:
    """The 95 % interval of the chance that a 3-seed run shows something, from the recorded
    seeds' rate k / n of a per-seed event (Wilson) and `shows(p)`, that chance as a monotone
    function of the event's probability p (a seed's own event, so the recorded seeds are n
    independent trials)."""
    a, b = (shows(p) for p in wilson(k, n))
    return min(a, b), max(a, b)


def run_chance_decision(k: int, n: int, shows) -> tuple[bool | None, float, float]:
    """(verdict, lo, hi) of R12 on a per-seed rate: holds when the chance's interval lies above
    1/2, fails below, None in between."""

    def rule(k_: int) -> bool | None:
        lo_, hi_ = run_chance(k_, n, shows)
        return True if lo_ > 0.5 else False if hi_ < 0.5 else None

    _trace(n, rule)
    lo, hi = run_chance(k, n, shows)
    return rule(k), lo, hi
