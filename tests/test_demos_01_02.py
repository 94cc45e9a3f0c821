"""Demos 01.1–01.5 and 02.1, 02.2, 02.4, 02.5 against the lecture (§1–§5).

Every demo runs with its settings from config/config.yaml. Exact claims are compared with the
lecture's printed digits; equivalences against PRECISION; random demos against the trend the
lecture states (the lecture's own digits for them are one seed of one machine).
"""

import json
import subprocess
import sys
from functools import cache
from itertools import pairwise
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from lecture17.experiments.scaling_multihead import one_head_vs_three
from lecture17.pipeline.aggregate import aggregate, read_runs
from lecture17.pipeline.csvio import write_csv
from lecture17.pipeline.job import run_demo
from lecture17.reporting.report import load_views, render_view

ROOT = Path(__file__).resolve().parents[1]
PRECISION = 1e-13  # machine-precision equivalences (§3.1, §3.2, §5.4), declared once
DEMOS = ["01.1", "01.2", "01.3", "01.4", "01.5", "02.1", "02.2", "02.4", "02.5"]
WORDS = ["Jane", "visite", "l'Afrique", "en", "septembre"]


@cache
def config() -> dict:
    with open(ROOT / "config" / "config.yaml", encoding="utf-8") as f:
        return yaml.safe_load(f)["demos"]


@cache
def run(demo: str, seed: int = 0) -> pd.DataFrame:
    return run_demo(demo, config()[demo]["settings"], seed)


def pick(table: pd.DataFrame, quantity: str, **labels) -> float:
    """The one value of `quantity` whose label columns equal `labels`."""
    rows = table[table["quantity"] == quantity]
    for label, wanted in labels.items():
        rows = rows[(rows[label] == wanted).fillna(False).astype(bool)]
    assert len(rows) == 1, f"{quantity} {labels}: {len(rows)} rows"
    return float(rows["value"].iloc[0])


def seeds(demo: str) -> list[int]:
    return config()[demo]["seeds"]


# -------------------------------------------------------------------------------------------
# 01.1 Jane visite l'Afrique en septembre (§2.3)


def test_jane_query_and_scores_of_afrique():
    table = run("01.1")
    query = [
        pick(table, "query_vector", query="l'Afrique", dim=d)
        for d in ("person", "action", "place", "time")
    ]
    scores = [pick(table, "scaled_score", query="l'Afrique", key=k) for k in WORDS]
    assert query == [0, 4, 0, 0]  # §2.3 "l'Afrique 的 query 是 (0, 4, 0, 0)"
    assert [f"{s:g}" for s in scores] == ["0", "2", "0", "0.5", "0"]  # §2.3


def test_jane_weights_and_output_have_the_lectures_digits():
    table = run("01.1")
    afrique_visite = pick(table, "weight", query="l'Afrique", key="visite")
    assert f"{afrique_visite:.3f}" == "0.614"  # §2.3, §11
    output = [
        pick(table, "output", query="l'Afrique", dim=d)
        for d in ("person", "action", "place", "time")
    ]
    assert [f"{v:.3f}" for v in output] == ["0.117", "0.648", "0.117", "0.117"]  # A⟨3⟩
    for key in ("Jane", "l'Afrique"):  # §2.3 "各 0.379"
        assert f"{pick(table, 'weight', query='visite', key=key):.3f}" == "0.379"


def test_jane_weight_rows_sum_to_one():
    weights = run("01.1").query("quantity == 'weight'")
    sums = weights.groupby("query")["value"].sum()
    assert len(sums) == 5
    np.testing.assert_allclose(sums.to_numpy(), 1.0, rtol=0, atol=PRECISION)


# -------------------------------------------------------------------------------------------
# 01.2 loop = matrix = PyTorch (§3.1)


@pytest.mark.parametrize("seed", seeds("01.2"))
def test_loop_matrix_and_torch_agree(seed):
    table = run("01.2", seed)
    assert pick(table, "max_abs_diff", comparison="loop_vs_matrix") < PRECISION  # 4.4e-16
    assert pick(table, "max_abs_diff", comparison="matrix_vs_torch") < PRECISION  # 2.2e-16


# -------------------------------------------------------------------------------------------
# 01.3 permutation equivariance (§3.2, Ex5)


@pytest.mark.parametrize("seed", seeds("01.3"))
def test_without_pe_word_order_is_invisible(seed):
    table = run("01.3", seed)
    assert pick(table, "visite_max_abs_diff", pe="none") < PRECISION  # §11: 2.8e-16
    assert pick(table, "perm_max_abs_diff", pe="none") < PRECISION  # §3.2: 2.2e-16


@pytest.mark.parametrize("seed", seeds("01.3"))
def test_with_pe_word_order_changes_the_output(seed):
    table = run("01.3", seed)
    # §3.2: 1.29 with PE: clearly non-zero (its size depends on the random draws)
    assert pick(table, "perm_max_abs_diff", pe="sinusoidal") > 1e-2
    assert pick(table, "visite_max_abs_diff", pe="sinusoidal") > 1e-2


def test_visite_components_match_the_max_diff():
    table = run("01.3")
    rows = table[table["quantity"] == "visite_output"]
    for pe in ("none", "sinusoidal"):
        a, b = (
            rows[(rows["pe"] == pe) & (rows["sentence"] == s)]["value"].to_numpy()
            for s in ("Jane visite Marie", "Marie visite Jane")
        )
        assert len(a) == len(b) == config()["01.3"]["settings"]["n_components"]
        assert np.max(np.abs(a - b)) <= pick(table, "visite_max_abs_diff", pe=pe)


# -------------------------------------------------------------------------------------------
# 01.4 path length (§1.2)


def _sensitivity(model: str) -> pd.Series:
    table = run("01.4")
    rows = table[(table["quantity"] == "sensitivity") & (table["model"] == model)]
    return pd.Series(rows["value"].to_numpy(), index=rows["distance"].astype(int).to_numpy())


def test_every_distance_is_reported():
    n = config()["01.4"]["settings"]["seq_len"]
    for model in ("rnn", "attention"):
        assert list(_sensitivity(model).index) == list(range(n))


def test_rnn_sensitivity_decays_roughly_exponentially():
    rnn = _sensitivity("rnn")
    # §1.2: 2.3 at distance 1, 5.3e-07 at 32, 9.2e-14 at 63
    assert rnn[32] < 1e-4 * rnn[1]
    checkpoints = [1, 2, 4, 8, 16, 32, 48, 63]
    assert all(rnn[a] > rnn[b] for a, b in pairwise(checkpoints))
    assert rnn[63] < 1e-4 * rnn[32]


def test_attention_sensitivity_does_not_depend_on_distance():
    table, att = run("01.4"), _sensitivity("attention")
    near = pick(table, "mean_sensitivity_1_8", model="attention")  # §1.2: 1.1e-01
    far = pick(table, "mean_sensitivity_32_63", model="attention")  # §1.2: 1.3e-01
    assert near == pytest.approx(att[1:9].mean(), rel=1e-12)
    assert far == pytest.approx(att[32:64].mean(), rel=1e-12)
    assert far / 3 < near < far * 3
    assert att[0] > att[1:].max()  # §1.2: distance 0 also enters through the query
    assert att[1:].min() > _sensitivity("rnn")[32]


# -------------------------------------------------------------------------------------------
# 01.5 complexity (§3.4)


def test_multiply_adds_and_memory():
    settings, table = config()["01.5"]["settings"], run("01.5")
    d = settings["d_model"]
    for n in settings["n_values"]:
        assert pick(table, "multiply_adds", model="self_attention", n=n) == n * n * d
        assert pick(table, "multiply_adds", model="rnn", n=n) == n * d * d
        assert pick(table, "ratio", n=n) == n / d
    assert f"{pick(table, 'weight_matrix_mb', n=2048):.1f}" == "33.6"  # §3.4


def test_counted_multiply_adds_equal_the_closed_forms():
    """FlopCounterMode's count of Q K^T and of n recurrent steps vs §3.4's n²d and nd²."""
    settings, table = config()["01.5"]["settings"], run("01.5")
    d = settings["d_model"]
    for n in settings["n_values"]:
        assert pick(table, "counted_multiply_adds", model="self_attention", n=n) == n * n * d
        assert pick(table, "counted_multiply_adds", model="rnn", n=n) == n * d * d
        assert pick(table, "counted_ratio", n=n) == n / d  # §3.4 "比值就是 n/d"
    counted = {"counted_multiply_adds", "counted_ratio"}
    last = table["quantity"].iloc[-3 * len(settings["n_values"]) :]
    assert set(last) == counted  # the counted rows come after the others


def test_counting_sees_the_shapes_it_is_given():
    """Not the formula echoed: rectangular sizes, and a count that would miss a step."""
    from lecture17.experiments.self_attention import _counted_multiply_adds

    assert _counted_multiply_adds(3, 5) == {"self_attention": 3 * 3 * 5, "rnn": 3 * 5 * 5}
    assert _counted_multiply_adds(1, 7) == {"self_attention": 7, "rnn": 49}


def test_only_the_ms_quantities_change_between_runs():
    settings, table = config()["01.5"]["settings"], run("01.5")
    timed = table["quantity"].str.startswith("ms_")
    per_layer = table[table["quantity"] == "ms_per_layer"]
    assert len(per_layer) == 2 * len(settings["timing_n_values"])
    assert (per_layer["value"] > 0).all()
    again = run_demo("01.5", settings, 0)  # a second run: everything but the timings repeats
    pd.testing.assert_frame_equal(table[~timed], again[~timed])


# -------------------------------------------------------------------------------------------
# 02.1 Var(q·k) = d_k (§4.2)


def test_dot_product_variance_grows_like_d_k():
    table = run("02.1")
    for d_k in config()["02.1"]["settings"]["d_k_values"]:
        assert pick(table, "var", d_k=d_k) == pytest.approx(d_k, rel=0.05)
        assert pick(table, "var_scaled", d_k=d_k) == pytest.approx(1.0, abs=0.05)
    assert f"{pick(table, 'std', d_k=1024):.0f}" == "32"  # §4.2 "标准差约 32"


# -------------------------------------------------------------------------------------------
# 02.2 softmax saturation (§4.3, Ex9)


def test_scaled_softmax_looks_the_same_for_every_d_k():
    table = run("02.2")
    for d_k in config()["02.2"]["settings"]["d_k_values"]:
        # §4.3: max weight ~0.25, entropy ~2.36, ‖J‖_F ~0.30 whatever d_k
        assert 0.28 <= pick(table, "jacobian_norm", d_k=d_k, scaled="scaled") <= 0.32
        assert 0.22 <= pick(table, "max_weight", d_k=d_k, scaled="scaled") <= 0.27
        assert 2.30 <= pick(table, "entropy", d_k=d_k, scaled="scaled") <= 2.42 < np.log(16)


def test_unscaled_softmax_saturates_as_d_k_grows():
    table = run("02.2")
    # §4.3: d_k = 1024 unscaled: 76% of queries above 0.99, ‖J‖_F 0.0543
    assert pick(table, "fraction_saturated", d_k=1024, scaled="unscaled") > 0.5
    assert pick(table, "jacobian_norm", d_k=1024, scaled="unscaled") < 0.1
    d_ks = config()["02.2"]["settings"]["d_k_values"]
    fractions = [pick(table, "fraction_saturated", d_k=d, scaled="unscaled") for d in d_ks]
    norms = [pick(table, "jacobian_norm", d_k=d, scaled="unscaled") for d in d_ks]
    assert fractions == sorted(fractions) and norms == sorted(norms, reverse=True)


def test_measured_uniform_entropy_is_ln_n_keys():
    """§4.3 "均匀分布的熵是 ln 16 = 2.77", from the code that measures the table's entropies."""
    table = run("02.2")
    n_keys = config()["02.2"]["settings"]["n_keys"]
    measured = pick(table, "measured_uniform_entropy")
    assert measured == pytest.approx(np.log(n_keys), abs=1e-12)
    assert f"{measured:.2f}" == "2.77"
    assert table["quantity"].iloc[-1] == "measured_uniform_entropy"
    entropies = table.loc[table["quantity"] == "entropy", "value"]  # scaled and unscaled
    assert (entropies < measured).all()  # no row of 16 random scores is more spread out


def test_small_d_k_is_not_saturated_yet():
    table = run("02.2")
    # §4.3: d_k = 4 unscaled ‖J‖_F slightly larger than scaled (0.3245 vs 0.2976)
    assert pick(table, "jacobian_norm", d_k=4, scaled="unscaled") > pick(
        table, "jacobian_norm", d_k=4, scaled="scaled"
    )
    # Ex9: d_k = 16 unscaled max weight 0.684, ‖J‖_F 0.2805 vs scaled 0.3030
    assert pick(table, "max_weight", d_k=16, scaled="unscaled") == pytest.approx(0.684, abs=0.02)
    assert pick(table, "jacobian_norm", d_k=16, scaled="unscaled") == pytest.approx(
        0.2805, abs=0.01
    )
    assert pick(table, "jacobian_norm", d_k=16, scaled="scaled") == pytest.approx(0.3030, abs=0.01)


# -------------------------------------------------------------------------------------------
# 02.4 multi-head: parameters, three implementations, the mask pitfall (§5.2–§5.4)


def test_parameter_count_does_not_depend_on_heads():
    table = run("02.4")
    for h in (1, 8, 16):  # §5.2
        for quantity in ("n_params_torch", "n_params_formula"):
            assert f"{pick(table, quantity, n_heads=h):,.0f}" == "1,050,624"


@pytest.mark.parametrize("seed", seeds("02.4"))
def test_numpy_ours_and_torch_agree(seed):
    table = run("02.4", seed)
    diffs = table[table["quantity"].str.startswith("max_abs_diff")]
    # 3 cases × 3 comparisons × (output, weights); §5.4: 1.3e-15, 8.9e-16, 2.2e-16, 6.7e-16
    assert len(diffs) == 18
    assert set(diffs["case"]) == {"self", "cross", "padding"}
    assert (diffs["value"] < PRECISION).all()


def test_inverted_mask_attends_only_to_padding():
    table = run("02.4")
    assert f"{pick(table, 'pad_weight_mean', mask='inverted'):.3f}" == "1.000"  # §5.4
    assert f"{pick(table, 'pad_weight_min', mask='inverted'):.3f}" == "1.000"
    assert pick(table, "pad_weight_max", mask="correct") == 0.0  # exp(-inf) = 0 exactly


# -------------------------------------------------------------------------------------------
# 02.5 one head vs three (§5.1)


def test_one_head_averages_three_heads_each_answer():
    table = run("02.5")
    for key in ("Jane", "l'Afrique", "septembre"):  # §5.1 "各 0.284"
        assert f"{pick(table, 'weight', head='single', key=key):.3f}" == "0.284"
    for head, key in (("who", "Jane"), ("where", "l'Afrique"), ("when", "septembre")):
        assert f"{pick(table, 'weight', head=head, key=key):.3f}" == "0.797"  # §5.1


def test_three_heads_concatenate_to_twelve_dims():
    table = run("02.5")
    concat = table[table["quantity"] == "concat_output"]
    assert list(concat["head"]) == ["who"] * 4 + ["where"] * 4 + ["when"] * 4
    # each head's answer sits in its own slice: who → person, where → place, when → time
    for head, dim in (("who", "person"), ("where", "place"), ("when", "time")):
        block = concat[concat["head"] == head].set_index("dim")["value"]
        assert block.idxmax() == dim


def test_three_heads_do_not_interfere():
    """§5.1 "互不干扰": each head alone = its slice of the heads computed together (§5.3);
    noise on the other heads' W^Q, W^K, W^V leaves a slice exactly unchanged, its own moves it."""
    table = run("02.5")
    for head in ("who", "where", "when"):
        assert pick(table, "head_alone_vs_slice", head=head) < PRECISION
        assert pick(table, "cross_head_change", head=head) == 0.0
        assert pick(table, "own_head_change", head=head) > 0.1  # the control
    new = {"head_alone_vs_slice", "cross_head_change", "own_head_change"}
    assert set(table["quantity"].iloc[-9:]) == new  # the new rows come last


def test_head_interference_would_be_seen(monkeypatch):
    """The measurement can fail: let W^O mix the heads before the slices are read."""
    from lecture17.experiments import scaling_multihead as sm

    unmixed = sm._heads_together
    mixing = np.random.default_rng(0).standard_normal((12, 12))  # (12, 12), a dense W^O
    monkeypatch.setattr(sm, "_heads_together", lambda *a: unmixed(*a) @ mixing)
    table = sm.one_head_vs_three(strength=6, seed=0)
    for head in ("who", "where", "when"):
        assert pick(table, "head_alone_vs_slice", head=head) > 0.1
        assert pick(table, "cross_head_change", head=head) > 0.1


def test_f03_strength_4_gives_the_01_1_numbers_instead():
    # Flag F03: with §2.3's strength 4 the 02.5 digits are 0.267 / 0.614, not 0.284 / 0.797.
    table = one_head_vs_three(strength=4, seed=0)
    assert f"{pick(table, 'weight', head='single', key='Jane'):.3f}" == "0.267"
    assert f"{pick(table, 'weight', head='who', key='Jane'):.3f}" == "0.614"


# -------------------------------------------------------------------------------------------
# the runner, the config and the report views


def test_cli_writes_the_csv(tmp_path):
    out = tmp_path / "01.1" / "seed0.csv"
    settings = json.dumps(config()["01.1"]["settings"])
    cmd = [
        sys.executable,
        "-m",
        "lecture17.pipeline.job",
        "01.1",
        "--seed",
        "0",
        "--settings",
        settings,
        "--out",
        str(out),
    ]
    subprocess.run(cmd, check=True, cwd=ROOT, capture_output=True, timeout=120)
    table = pd.read_csv(out, dtype={"demo": str}, keep_default_na=False)
    assert list(table.columns) == ["demo", "seed", "query", "key", "dim", "quantity", "value"]
    assert set(table["demo"]) == {"01.1"} and set(table["seed"]) == {0}
    afrique_visite = pick(table, "weight", query="l'Afrique", key="visite")
    assert f"{afrique_visite:.3f}" == "0.614"


def test_unknown_setting_is_an_error():
    settings = config()["01.1"]["settings"] | {"streng": 4}
    with pytest.raises(ValueError, match="unknown settings"):
        run_demo("01.1", settings, 0)


@pytest.mark.parametrize("demo", DEMOS)
def test_every_view_selects_rows(demo, tmp_path):
    path = tmp_path / "seed0.csv"
    write_csv(run(demo), path)
    table = aggregate(read_runs([path]))
    views = load_views(ROOT / "report" / "views")[demo]
    assert views
    for view in views:
        rendered = render_view(table, view)
        assert "—" not in rendered, f"{view['title']}: empty cells"
