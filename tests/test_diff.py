"""`python -m lecture17 diff`: two builds compared cell by cell and claim by claim.

Deterministic cells must print the same digits; trained cells are flagged only beyond
seed-to-seed variation (Welch + Holm); a cell with one seed is not judged; claims follow
their cells; a verdict that flips within seed variation is a note, not a difference.
"""

import numpy as np
import pandas as pd
import pytest

from lecture17 import diff

DEMOS = {"09.8": {"seeds": [0]}, "09.9": {"seeds": [0, 1, 2], "grid": {"model": ["a"]}}}


def table(demo, rows) -> pd.DataFrame:
    """A seed-averaged table as aggregate.py writes it, from per-seed values."""
    out = []
    for model, quantity, values in rows:
        v = np.asarray(values, dtype=float)
        std = v.std(ddof=1) if len(v) > 1 else 0.0
        out.append([demo, model, quantity, v.mean(), v.min(), v.max(), std, len(v)])
    columns = ["demo", "model", "quantity", "mean", "min", "max", "std", "n_seeds"]
    return pd.DataFrame(out, columns=columns)


def build(tmp_path, name, trained_rows, analytic_rows=(("x", "weight", [0.614]),)) -> diff.Build:
    return diff.Build(
        tmp_path / name,
        {"09.8": table("09.8", analytic_rows), "09.9": table("09.9", trained_rows)},
        DEMOS,
    )


TRAINED = [
    ("gru", "acc", [0.50, 0.55, 0.45]),
    ("tf", "acc", [0.968, 1.0, 1.0]),
    ("tf", "loss", [0.10, 0.12, 0.11]),
]
CLAIMS = [
    {
        "id": "S1",
        "section": "§9.2",
        "demo": "09.9",
        "claim": "the worst Transformer seed lags",
        "lecture": "lags",
        "class": "seeded",
        "values": {"worst": {"quantity": "acc", "where": {"model": "tf"}, "stat": "min"}},
        "check": [{"below": {"value": "worst", "than": 0.95}}],
    },
    {
        "id": "E1",
        "section": "§2.3",
        "demo": "09.8",
        "claim": "a weight",
        "lecture": "0.614",
        "class": "exact",
        "value": {"quantity": "weight"},
        "fmt": ".3f",
    },
]


def run(a, b, claims=CLAIMS):
    return diff.diff_builds(claims, a, b, {"09.8": [{"quantities": ["weight"], "fmt": ".3f"}]})


def test_identical_builds_do_not_differ(tmp_path):
    lines, failures = run(build(tmp_path, "a", TRAINED), build(tmp_path, "b", TRAINED))
    assert failures == 0 and not any("notes" in line for line in lines)


def test_another_sample_of_the_same_distribution_is_not_a_difference(tmp_path):
    # Another CPU: every seed's run is another draw; the worst seed moved from 0.968 to 0.320
    # and the verdict flipped, yet three seeds cannot tell the two builds apart.
    other = [
        ("gru", "acc", [0.52, 0.47, 0.49]),
        ("tf", "acc", [0.320, 1.0, 0.99]),
        ("tf", "loss", [0.11, 0.10, 0.13]),
    ]
    lines, failures = run(build(tmp_path, "a", TRAINED), build(tmp_path, "b", other))
    assert failures == 0, lines
    assert any("S1" in line and "verdict flips" in line for line in lines)


def test_a_real_change_of_a_trained_cell_is_flagged(tmp_path):
    changed = [
        ("gru", "acc", [0.10, 0.11, 0.09]),  # another learning rate
        ("tf", "acc", [0.968, 1.0, 1.0]),
        ("tf", "loss", [0.10, 0.12, 0.11]),
    ]
    lines, failures = run(build(tmp_path, "a", TRAINED), build(tmp_path, "b", changed))
    assert failures == 1 and any("gru · acc" in line and "p =" in line for line in lines)


def test_a_deterministic_cell_that_no_claim_reads_is_compared_at_printed_precision(tmp_path):
    same_print = (("x", "weight", [0.6141]), ("x", "other", [1.0]))
    moved = (("x", "weight", [0.6141]), ("x", "other", [1.001]))
    a = build(tmp_path, "a", TRAINED, same_print)
    b = build(tmp_path, "b", TRAINED, (("x", "weight", [0.6139]), ("x", "other", [1.0])))
    assert run(a, b)[1] == 0  # 0.614 either way
    lines, failures = run(a, build(tmp_path, "c", TRAINED, moved))
    assert failures == 1 and any("other" in line for line in lines)


def test_rounding_errors_of_an_equivalence_agree(tmp_path):
    a = build(tmp_path, "a", TRAINED, (("x", "weight", [0.614]), ("x", "err", [2.2e-16])))
    b = build(tmp_path, "b", TRAINED, (("x", "weight", [0.614]), ("x", "err", [4.4e-16])))
    assert run(a, b)[1] == 0


def test_a_single_seed_cell_is_not_judged(tmp_path):
    demos = {"09.9": {"seeds": [0], "grid": {"model": ["a"]}}}
    a = diff.Build(tmp_path, {"09.9": table("09.9", [("tf", "acc", [0.968])])}, demos)
    b = diff.Build(tmp_path, {"09.9": table("09.9", [("tf", "acc", [0.320])])}, demos)
    lines, failures = diff.diff_builds(CLAIMS[:1], a, b, {})
    assert failures == 0
    assert "1 个只有一个种子" in lines[0] and any("one seed" in line for line in lines)


def test_a_row_on_one_side_only_differs(tmp_path):
    fewer = TRAINED[:2]
    assert run(build(tmp_path, "a", TRAINED), build(tmp_path, "b", fewer))[1] == 1


@pytest.mark.parametrize("n", [3, 5])
def test_welch_p_is_uniform_under_the_null_and_small_for_a_shift(n):
    rng = np.random.default_rng(0)
    p = []
    for _ in range(400):
        x, y = rng.normal(size=n), rng.normal(size=n)
        rows = [pd.Series({"mean": v.mean(), "std": v.std(ddof=1), "n_seeds": n}) for v in (x, y)]
        p.append(diff.welch_p(*rows))
    assert abs(np.mean(np.array(p) < 0.05) - 0.05) < 0.03  # a calibrated test
    shifted = [pd.Series({"mean": m, "std": 0.1, "n_seeds": n}) for m in (0.0, 1.0)]
    assert diff.welch_p(*shifted) < 1e-3


def test_holm_controls_the_family_and_keeps_a_strong_signal():
    p = {i: 0.2 for i in range(100)} | {"real": 1e-6, "weak": 0.004}
    assert diff.holm(p, alpha=0.01) == {"real"}  # 0.004 > 0.01 / 101: not rejected
