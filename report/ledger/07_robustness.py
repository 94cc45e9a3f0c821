"""Named checks of 07_robustness.yaml: claims about seeds, counted over the robustness seeds.

Each value is every seed's value (`stat: seeds`, in seed order). A rate k/N is shown with its
95% Wilson interval (lecture17.reporting.rates); the pass rule of each claim is stated in its
ledger note, fixed before the runs were made.
"""

import numpy as np

from lecture17.reporting.checks import Finding, check
from lecture17.reporting.rates import at_least_once, counted_rule, rate_text


@check
def r92a_lagging_seed_rate(v) -> Finding:
    """A seed lags when its whole-sequence accuracy is more than 0.1 below the seeds' median;
    the lecture's "one seed lags" holds when lagging seeds occur (k ≥ 1)."""
    seq = v["seq"]
    lagging = int(np.sum(seq < np.median(seq) - 0.1))
    p = lagging / len(seq)
    counted_rule(len(seq), lambda k: k >= 1)
    return Finding(
        lagging >= 1,
        f"落后的种子 lagging seeds（< 中位数 median {np.median(seq):.3f} − 0.1）："
        f"{rate_text(lagging, len(seq))}；3 个种子里至少一个 in a 3-seed run: "
        f"{at_least_once(p, 3):.2f}",
    )


@check
def r92a_protocol_run_has_a_lagging_seed(v) -> Finding:
    """L17-R9.2a's why: the default build's own 3-seed run (protocol_seq) has a seed that lags
    as r92a_lagging_seed_rate defines it (more than 0.1 below the seeds' median)."""
    seq = v["protocol_seq"]
    lagging = int(np.sum(seq < np.median(seq) - 0.1))
    return Finding(
        lagging >= 1,
        f"默认构建的种子 the default build's seeds ({', '.join(f'{x:.3f}' for x in seq)})：落后的 "
        f"lagging（< 中位数 median {np.median(seq):.3f} − 0.1）{lagging}/{len(seq)}",
    )


@check
def r92b_near_one_rate(v) -> Finding:
    """Near 1 = error below 10× the lecture's error (1 − its `number`); holds when most seeds
    are."""
    seq, bound = v["seq"], 10 * (1 - float(v.get("lecture")[0]))
    near = int(np.sum(1 - seq < bound))
    counted_rule(len(seq), lambda k: k > len(seq) / 2)
    return Finding(
        near > len(seq) / 2,
        f"接近 1 的种子 seeds near 1（错误率 error < {bound:.2f}）：{rate_text(near, len(seq))}，"
        f"最差 worst {np.min(seq):.3f}",
    )


@check
def r92c_unstable(v) -> Finding:
    """Fails = per-token accuracy below 0.5; unstable = some seeds fail and some do not."""
    tok = v["tok"]
    failed = int(np.sum(tok < 0.5))
    counted_rule(len(tok), lambda k: 1 <= k <= len(tok) - 1)
    return Finding(
        1 <= failed <= len(tok) - 1,
        f"学不会的种子 failed seeds（逐词 per-token < 0.5）：{rate_text(failed, len(tok))}；"
        f"逐词 per-token {np.min(tok):.3f}–{np.max(tok):.3f}",
    )


@check
def r92c_input_feeding_has_a_failing_seed(v) -> Finding:
    """L17-R9.2c's why: with Luong's input feeding (tok_fed, 07.5's other reading) some
    recorded seed fails as r92c_unstable defines it (per-token accuracy below 0.5)."""
    tok = v["tok_fed"]
    failed = int(np.sum(tok < 0.5))
    return Finding(
        failed >= 1,
        f"input feeding 时学不会的种子 failed seeds with input feeding（逐词 per-token < 0.5）："
        f"{failed}/{len(tok)}；逐词 per-token {np.min(tok):.3f}–{np.max(tok):.3f}",
    )


@check
def r92d_below_every_transformer_seed(v) -> Finding:
    """The share of (GRU + attention seed, Transformer seed) pairs with GRU + attention lower;
    the lecture's "every seed below" holds when it is 1."""
    ga, tf = v["ga"], v["tf"]
    below = int(np.sum(ga[:, None] < tf[None, :]))
    pairs = len(ga) * len(tf)
    counted_rule(pairs, lambda k: k == pairs)
    return Finding(
        below == pairs,
        f"GRU + 注意力更低的种子对 pairs below：{below}/{pairs} = {below / pairs:.2f}；"
        f"GRU + 注意力 {np.min(ga):.3f}–{np.max(ga):.3f}，Transformer {np.min(tf):.3f}–"
        f"{np.max(tf):.3f}",
    )


@check
def r94a_a_head_parks_on_bos(v) -> Finding:
    """Per model (seed): some decoder self-attention head with BOS weight > 1/2 and mean
    entropy < ln 2 (C118's reading); holds when it happens in some model (k ≥ 1). The values
    come head after head (rows), each with every seed: reshaped to (heads, seeds)."""
    n_seeds = _n_seeds(v)
    bos = v["bos"].reshape(-1, n_seeds)  # (heads, seeds)
    entropy = v["entropy"].reshape(-1, n_seeds)
    parks = np.any((bos > 0.5) & (entropy < np.log(2)), axis=0)  # (seeds,)
    k = int(parks.sum())
    counted_rule(n_seeds, lambda k_: k_ >= 1)
    return Finding(
        k >= 1,
        f"有头停在 BOS 上的模型 models with a head parked on BOS：{rate_text(k, n_seeds)}；"
        f"每个模型最大的 BOS 权重 largest BOS weight per model {np.min(bos.max(0)):.3f}–"
        f"{np.max(bos.max(0)):.3f}",
    )


def _n_seeds(v) -> int:
    """The seeds of 07.6 (its config's, which its recording must match)."""
    if not v.settings or not v.settings.get("seeds"):
        raise ValueError("07.6's seeds are not in the settings given to the check")
    return len(v.settings["seeds"])


# Values under which each claim holds and fails (tests/reporting/test_ledger.py; the rows are
# per-seed values, which the test's mutations of a table's mean do not reach).
EXAMPLES = {
    "L17-R9.2a": {"holds": {"seq": [0.95, 0.96, 0.97, 0.7]}, "fails": {"seq": [0.95] * 4}},
    "L17-R9.2b": {"holds": {"seq": [0.99, 0.98, 0.5]}, "fails": {"seq": [0.99, 0.5, 0.5]}},
    "L17-R9.2c": {"holds": {"tok": [0.3, 0.9]}, "fails": {"tok": [0.9, 0.9]}},
    "L17-R9.2d": {
        "holds": {"ga": [0.5, 0.6], "tf": [0.9, 0.95]},
        "fails": {"ga": [0.5, 0.96], "tf": [0.9, 0.95]},
    },
    "L17-R9.4a": {
        "holds": {"bos": [0.9] + [0.1] * 39, "entropy": [0.2] + [2.0] * 39},
        "fails": {"bos": [0.1] * 40, "entropy": [2.0] * 40},
    },
}
