"""Named checks of 02_scaling_multihead.yaml (§4–§5): what the vocabulary of
lecture17.reporting.checks cannot say in one word. Each takes the claim's checks.Context and
returns a Finding.

Monte Carlo claims (02.1, 02.2): each seed of ours is one run of the lecture's simulation, so
every seed (the selectors `<name>_lo` and `<name>_hi`: min and max over seeds) must lie within
K = 4 standard errors of the lecture's number: a false alarm of 6e-5 per comparison for a
normal estimate, fixed before looking at the numbers.
- 02.1 (q, k with N(0, 1) components, n = n_pairs): the lecture's numbers are the expectations
  themselves (Var = d_k, std = √d_k, scaled Var = 1), and the standard error of one run is
  known: q·k is a sum of d_k products with E[(q_i k_i)^4] = 9, so its fourth central moment is
  3 d_k² + 6 d_k and SE(Var) = d_k √((2 + 6/d_k) / n); SE(std) is half that relative to √d_k.
- 02.2 (n = n_trials): the lecture's number is its own run, rounded. Ours is compared with
  tol = half a unit of its last printed digit + K √2 SE (√2: two runs of the same size), per
  cell, SE = the per-trial standard deviation our run measured (`<quantity>_trial_sd`, the
  largest over our seeds) / √n. (Before the spread was in the table, SE was
  bounded by Bhatia–Davis, 3–8× the measured one: it accepted a softmax temperature off by
  10–15 %.)
"""

import math
import re

import numpy as np

from lecture17.reporting.checks import Context, Finding, check

K = 4  # standard errors: the Monte Carlo tolerance (module docstring)


# -------------------------------------------------------------------------------------------
# 02.1 Var(q·k) = d_k (§4.2): the lecture's numbers are exact expectations


@check
def c026_var_is_d_k(v):
    """§4.2: every seed's Var(q·k) within K SE of d_k, and its scaled Var within K SE of 1."""
    d = v.get("settings.d_k_values")  # (n_dk,)
    n = float(v.get("settings.n_pairs")[0])
    one = float(v.get("lecture")[0])
    se = np.sqrt((2 + 6 / d) / n)  # SE of Var/d_k and of the scaled Var, per d_k
    z = np.stack(
        [
            (v["var_lo"] / d - one) / se,
            (v["var_hi"] / d - one) / se,
            (v["scaled_lo"] - one) / se,
            (v["scaled_hi"] - one) / se,
        ]
    )  # (4, n_dk)
    row, col = np.unravel_index(np.argmax(np.abs(z)), z.shape)
    worst = abs(z[row, col])
    return Finding(
        worst <= K,
        f"各种子 every seed: Var/d_k 和缩放后的 Var 离 {one:g} 最远在 d_k = {d[col]:g}，"
        f"{worst:.1f} 个标准误 SE ≤ {K}（n = {n:,.0f}）",
    )


def _std_is_sqrt_d_k(v, name: str) -> Finding:
    """Every seed's std of q·k within K SE of the lecture's √d_k (d_k = its square)."""
    root = float(v.get("lecture")[0])  # the lecture's std, √d_k
    d, n = root**2, float(v.get("settings.n_pairs")[0])
    se = root * math.sqrt((2 + 6 / d) / n) / 2
    seeds = np.concatenate([v[f"{name}_lo"], v[f"{name}_hi"]])
    worst = seeds[np.argmax(np.abs(seeds - root))]
    return Finding(
        abs(worst - root) <= K * se,
        f"各种子 every seed: 最远的 worst {worst:.3f} 与 √d_k = {root:g} 差 "
        f"{abs(worst - root):.3f} ≤ {K} SE = {K * se:.3f}",
    )


@check
def c027_std_is_sqrt_d_k(v):
    return _std_is_sqrt_d_k(v, "std_1024")


@check
def c035_std_is_sqrt_d_k(v):
    return _std_is_sqrt_d_k(v, "std_4")


# -------------------------------------------------------------------------------------------
# 02.2 softmax saturation (§4.3): the lecture's numbers are its own runs, rounded


def _half_unit(text: str, number: float) -> float:
    """Half a unit of the last digit with which `text` prints `number` ("76%" → 0.005)."""
    for token in re.findall(r"\d+(?:\.\d+)?%?", text):
        percent = token.endswith("%")
        digits = token.rstrip("%")
        if math.isclose(float(digits) / (100 if percent else 1), number, rel_tol=1e-9):
            decimals = len(digits.partition(".")[2])
            return 0.5 * 10.0**-decimals / (100 if percent else 1)
    raise ValueError(f"the lecture's text {text!r} does not print {number!r}")


def _near_lecture_run(v, name: str, of: str) -> Finding:
    """Every seed of `name`, cell by cell, within ½ unit + K √2 SE of the lecture's number, SE
    from the cell's measured per-trial standard deviation `name_sd` (module docstring)."""
    lecture = float(v.get(of)[0])
    n = float(v.get("settings.n_trials")[0])
    se = np.asarray(v[f"{name}_sd"], dtype=float) / math.sqrt(n)  # (n_cells,)
    tol = _half_unit(v.text, lecture) + K * math.sqrt(2) * se  # (n_cells,)
    lo, hi = (np.asarray(v[f"{name}_{stat}"], dtype=float) for stat in ("lo", "hi"))
    if not (lo.shape == hi.shape == se.shape):
        raise ValueError(f"{name}: the seeds' range and the per-trial sd cover other cells")
    off = np.maximum(np.abs(lo - lecture), np.abs(hi - lecture))  # (n_cells,)
    worst = int(np.argmax(off / tol))
    value = lo[worst] if abs(lo[worst] - lecture) >= abs(hi[worst] - lecture) else hi[worst]
    return Finding(
        bool(np.all(off <= tol)),
        f"各种子 every seed: 最远的 worst {format(value, v.fmt)} 与讲义 lecture "
        f"{format(lecture, v.fmt)} 差 {off[worst]:.2g}，容许 tol {tol[worst]:.2g}"
        f"（½ 末位 + {K}√2 SE，SE = {se[worst]:.1g}：逐次标准差 per-trial sd / √{n:.0f}）",
    )


@check
def c030_near_lecture_run(v):
    """Scaled max weight, every d_k."""
    return _near_lecture_run(v, "mw", "lecture")


@check
def l17_02_2a_near_lecture_run(v):
    """Scaled entropy, every d_k."""
    return _near_lecture_run(v, "ent", "lecture")


@check
def l17_02_2b_near_lecture_run(v):
    """Scaled ‖J‖_F, every d_k."""
    return _near_lecture_run(v, "jn", "lecture")


@check
def c031_near_lecture_run(v):
    """Unscaled, d_k = 1024: a share of queries (each trial 0 or 1)."""
    return _near_lecture_run(v, "f1024", "lecture")


@check
def c032_near_lecture_run(v):
    return _near_lecture_run(v, "ju1024", "lecture")


@check
def c033_near_lecture_run(v):
    return _near_lecture_run(v, "js1024", "lecture")


@check
def c034_unscaled_near_lecture_run(v):
    return _near_lecture_run(v, "ju4", "lecture.unscaled")


@check
def c034_scaled_near_lecture_run(v):
    return _near_lecture_run(v, "js4", "lecture.scaled")


# -------------------------------------------------------------------------------------------
# 02.3 the look-up task (§4.4): steps to 90 % are read on an evaluation grid
#
# A step count s, evaluated every e = settings.claim_every steps, says the first crossing
# of 90 % lies in (s − e, s]; at the first evaluation (s = e) only that it is ≤ e.

SEVERAL = 2  # "慢好几倍" (several times slower): at least twice the steps, the least it can mean


def _cells(values: np.ndarray) -> str:
    return ", ".join(f"{x:g}" for x in values)


@check
def c041_fastest_in_25_75(v):
    """§4.4 "最快的步数在 25–75 之间，几乎不随 d_k 变", scaled, every (optimizer, d_k) cell,
    read on the finest grid the build computes (rulebook R14: every settings.train.eval_every
    steps, the `_fine` column), never "not resolvable" where that grid decides.

    A fine step s means the first crossing lies in (s − e, s]; on the lecture's grid of
    claim_every steps the same run prints ⌈s / claim_every⌉ · claim_every: all of those within
    lo–hi. "几乎不随 d_k 变": per optimizer (the cells come Adam's d_k first, then SGD's), the
    fine steps span at most the width of the lecture's own band (hi − lo).
    """
    fine = v["best_fine"]
    grid = float(v.get("settings.claim_every")[0])
    lo, hi = float(v.get("lecture.lo")[0]), float(v.get("lecture.hi")[0])
    printed = np.ceil(fine / grid) * grid
    in_band = bool(np.all((printed >= lo) & (printed <= hi)))
    half = len(fine) // 2
    spans = [float(np.ptp(fine[:half])), float(np.ptp(fine[half:]))]
    flat = all(span <= hi - lo for span in spans)
    return Finding(
        in_band and flat,
        f"最快步数（细网格）best fine steps ({_cells(fine)})，按讲义每 {grid:g} 步的网格 on the "
        f"lecture's grid ({_cells(printed)}) {'都在' if in_band else '不全在'} {lo:g}–{hi:g}；"
        f"Adam / SGD 各自的跨度 spans across d_k {spans[0]:g} / {spans[1]:g} "
        f"{'≤' if flat else '>'} {hi - lo:g}",
    )


@check
def c042_several_times_slower(v):
    """§4.4 "不缩放时慢好几倍": per (optimizer, d_k) cell, the fastest unscaled run needs at
    least SEVERAL × the steps of the fastest scaled one, read on the finest grid the build
    computes (rulebook R14: e = settings.train.eval_every).

    On that grid the true ratio lies in [(s_u − e) / s_s, s_u / (s_s − e)]: holds where the
    lower end is ≥ SEVERAL, fails where the upper end is below it, else not resolvable.
    """
    slow, fast = v["slow"], v["fast"]
    e = float(v.get("settings.train.eval_every")[0])
    if len(slow) != len(fast):  # a cell where no lr reached 90 % has no best step
        counts = f"不缩放 unscaled {len(slow)} 格，缩放 scaled {len(fast)} 格"
        return Finding(None, f"无法配对 cells do not pair: {counts}")
    lower = np.maximum(slow - e, 0) / fast
    upper = np.where(fast > e, slow / np.maximum(fast - e, 1e-300), np.inf)
    n_hold, n_fail = int(np.sum(lower >= SEVERAL)), int(np.sum(upper < SEVERAL))
    n_open = len(slow) - n_hold - n_fail
    text = (
        f"最快步数（细网格）best fine steps 不缩放 unscaled ({_cells(slow)}) vs 缩放 scaled "
        f"({_cells(fast)})：{n_hold} 格至少慢 {SEVERAL} 倍 at least {SEVERAL}× slower，{n_fail} "
        f"格不到 not，{n_open} 格在每 {e:g} 步的网格上无法分辨 not resolvable"
    )
    return Finding(False if n_fail else (None if n_open else True), text)


@check
def c042_narrower_lr_range(v):
    """§4.4 "能用的学习率范围变窄": in no (optimizer, d_k) cell do more lrs reach 90 %
    unscaled than scaled, and in most cells fewer (a range that narrows in one cell of six
    has not narrowed)."""
    unscaled, scaled = v["n_unscaled"], v["n_scaled"]
    fewer = int(np.sum(unscaled < scaled))
    ok = bool(np.all(unscaled <= scaled)) and fewer > len(scaled) / 2
    return Finding(
        ok,
        f"达到 90% 的学习率个数 lrs reaching 90%: 不缩放 unscaled ({_cells(unscaled)}) vs "
        f"缩放 scaled ({_cells(scaled)})：{fewer} / {len(scaled)} 格更少 cells fewer，"
        f"{'没有一格更多 none more' if np.all(unscaled <= scaled) else '有一格更多 some more'}",
    )


READINGS = ("layer", "embedded")  # 07.2's other readings of §4.4's set-up


@check
def c042_holds_in_the_other_readings(v):
    """C042's why: both of its checks hold under each of 07.2's other readings of the set-up
    (an ordinary attention layer with W^V and W^O; keys as embedded symbols), read from the
    values `<reading>_slow`, `_fast`, `_n_unscaled`, `_n_scaled` in place of the claim's own.
    A step that cannot decide (a cell the grid cannot resolve) does not count as holding."""
    texts, ok = [], True
    for reading in READINGS:
        own = {name: v[f"{reading}_{name}"] for name in ("slow", "fast", "n_unscaled", "n_scaled")}
        given = {k: v[k] for k in v.values if k.startswith("settings.")}  # EXAMPLES' settings
        renamed = Context({**own, **given}, v.lecture, v.text, v.settings, v.fmt)
        found = [c042_several_times_slower(renamed), c042_narrower_lr_range(renamed)]
        ok = ok and all(f.ok is True for f in found)
        texts.append(f"{reading}：" + "；".join(f.text for f in found))
    return Finding(ok, " | ".join(texts))


# -------------------------------------------------------------------------------------------
# 02.5 three heads (§5.1)


@check
def c046_twelve_dims(v):
    """§5.1: the concatenated output of the three heads has the lecture's 12 numbers."""
    size, wanted = v["concat"].size, int(v.get("lecture")[0])
    text = f"拼接后的长度 concatenated length {size} = 讲义 lecture {wanted}"
    return Finding(size == wanted, text)


# -------------------------------------------------------------------------------------------
# Values under which a claim holds and fails, where ours honestly differ from the lecture's
# or cannot decide (tests/reporting/test_ledger.py::test_every_check_can_fail_and_hold). The
# examples are checked without the build's config, so a setting a predicate reads is given as a
# value named like the reference ("settings.claim_every": Context.get looks up values
# first).

GRID = {"settings.claim_every": [25], "settings.train.eval_every": [5]}  # config, 02.3

EXAMPLES = {
    "C039": {  # the lecture's 3, 2, 1 of 4; ours: all 4 at every d_k
        "holds": {"n": [3, 2, 1], "total": [4, 4, 4]},
        "fails": {"n": [4, 4, 4], "total": [4, 4, 4]},
    },
    "C040": {"holds": {"n": [0]}, "fails": {"n": [2]}},
    "C041": {  # fine steps: the lecture's grid prints 25–75, flat in d_k; and one at 100
        "holds": {"best_fine": [35, 40, 60, 30, 55, 45], **GRID},
        "fails": {"best_fine": [35, 40, 90, 30, 55, 45], **GRID},
    },
    "C042": {
        "holds": {
            "slow": [100, 150, 200, 150, 200, 250],
            "fast": [25, 25, 25, 50, 50, 50],
            "n_unscaled": [3, 2, 1, 2, 1, 0],
            "n_scaled": [4, 4, 4, 3, 3, 4],
            **GRID,
        },  # (fine steps: every cell at least 2x slower; fewer lrs in every cell)
        "fails": {
            "slow": [25, 25, 25, 50, 50, 50],
            "fast": [50, 50, 50, 50, 50, 50],
            "n_unscaled": [4, 4, 4, 3, 3, 4],
            "n_scaled": [4, 4, 4, 3, 3, 4],
            **GRID,
        },
    },
}


# Ex9's readings of the same simulation (13_exercises.yaml: C036, L17-02.2c), by the same rule


@check
def c036_near_lecture_run(v):
    return _near_lecture_run(v, "mw16", "lecture")


@check
def l17_02_2c_unscaled_near_lecture_run(v):
    return _near_lecture_run(v, "ju16", "lecture.unscaled")


@check
def l17_02_2c_scaled_near_lecture_run(v):
    return _near_lecture_run(v, "js16", "lecture.scaled")
