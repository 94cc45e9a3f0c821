"""`python -m lecture17 diff`: two builds compared cell by cell and claim by claim.

Deterministic cells must print the same digits; trained cells are flagged only beyond
seed-to-seed variation (Welch + Holm); a cell with one seed is not judged; claims follow
their cells; a counted verdict that flips fails even within seed variation (a flip of a claim
that is not counted is a note); a build that did not finish is refused.
"""

import math

import numpy as np
import pandas as pd
import pytest

from lecture17.reporting import diff

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


def test_another_sample_of_the_same_distribution_differs_in_no_cell(tmp_path):
    other = [
        ("gru", "acc", [0.52, 0.47, 0.49]),
        ("tf", "acc", [0.968, 1.0, 0.99]),
        ("tf", "loss", [0.11, 0.10, 0.13]),
    ]
    lines, failures = run(build(tmp_path, "a", TRAINED), build(tmp_path, "b", other))
    assert failures == 0, lines
    assert "verdict flips（计入的数字 counted claims）: 0" in lines[1]


def test_a_counted_verdict_that_flips_fails_even_within_seed_variation(tmp_path):
    # Another CPU: every seed's run is another draw; the worst seed moved from 0.968 to 0.320
    # and the verdict flipped. Three seeds cannot tell the two builds' cells apart, but a
    # verdict that depends on the sample is no fact about the lecture: the diff fails.
    other = [
        ("gru", "acc", [0.52, 0.47, 0.49]),
        ("tf", "acc", [0.320, 1.0, 0.99]),
        ("tf", "loss", [0.11, 0.10, 0.13]),
    ]
    lines, failures = run(build(tmp_path, "a", TRAINED), build(tmp_path, "b", other))
    assert failures == 1, lines
    assert "counted claims）: 1" in lines[1] and "S1" in lines[2] and "verdict flips" in lines[2]


BEYOND = {"section": "§8.4", "claim": "c", "lecture": "—", "class": "beyond", "fmt": ".3f"}


def test_a_beyond_claim_on_trained_cells_is_judged_by_them_and_on_deterministic_cells_by_digits(
    tmp_path,
):
    """06.6's beams read 05.1's trained models: another CPU prints other digits within seed
    variation, which is no difference; a beyond claim on deterministic cells (06.5's hand-built
    layer) must print the same digits, as an exact claim must."""
    check = [{"above": {"value": "v", "than": 0}}]
    trained = {**BEYOND, "id": "B1", "demo": "09.9", "values": {"v": {"quantity": "acc"}}}
    analytic = {**BEYOND, "id": "B2", "demo": "09.8", "values": {"v": {"quantity": "weight"}}}
    trained["check"] = analytic["check"] = check
    other = [
        ("gru", "acc", [0.52, 0.47, 0.49]),
        ("tf", "acc", [0.968, 1.0, 0.99]),
        ("tf", "loss", [0.11, 0.10, 0.13]),
    ]
    a, b = build(tmp_path, "a", TRAINED), build(tmp_path, "b", other)
    assert run(a, b, [trained])[1] == 0
    changed = [("gru", "acc", [0.10, 0.11, 0.09]), *TRAINED[1:]]
    lines, failures = run(a, build(tmp_path, "c", changed), [trained])
    assert failures == 2 and any(line.startswith("    B1") for line in lines)  # cell and claim
    moved = build(tmp_path, "d", TRAINED, analytic_rows=(("x", "weight", [0.615]),))
    lines, failures = run(a, moved, [analytic])
    assert any(line.startswith("    B2") and "≠" in line for line in lines)


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
    assert "1 个只有一个种子" in lines[0] and any("one seed" in line for line in lines)
    assert failures == 1  # not a cell difference: the counted verdict flipped (0.968 → 0.320)


def test_a_row_on_one_side_only_differs(tmp_path):
    fewer = (("x", "weight", [0.614]),)
    more = (*fewer, ("x", "other", [1.0]))
    assert run(build(tmp_path, "a", TRAINED, more), build(tmp_path, "b", TRAINED, fewer))[1] == 1


def test_a_table_with_other_label_columns_differs_and_never_crashes(tmp_path):
    """A demo that gained a label (06.5's explorer weights: query, key) against an older build."""
    a = build(tmp_path, "a", TRAINED)
    b = build(tmp_path, "b", TRAINED)
    b.tables["09.8"] = b.tables["09.8"].assign(query="q0", key="k0")
    report = diff.compare_cells(a, b, {})
    assert [k for k, _ in report.differ] == [("09.8",)]
    assert "label columns differ" in report.differ[0][1]


def test_a_trained_row_on_one_side_only_is_judged_by_its_seed_count(tmp_path):
    # 07.2's steps_to_90 exists for the seeds that reached 90 %: 3 of 3 against 0 of 3 is
    # Fisher p = 0.1, seed variation at this n; 10 of 10 against 0 of 10 is not
    fewer = TRAINED[:2]
    assert run(build(tmp_path, "a", TRAINED), build(tmp_path, "b", fewer))[1] == 0
    demos = {"09.8": {"seeds": [0]}, "09.9": {"seeds": list(range(10)), "grid": {"m": ["a"]}}}
    ten = [(m, q, (list(v) * 4)[:10]) for m, q, v in TRAINED]
    # in a comparison of thousands of cells (Holm's m) it is still seen: a family of its own
    ten += [
        (f"m{i}", "acc", [0.5 + 0.01 * (i % 7 + j % 3) for j in range(10)]) for i in range(3000)
    ]
    a = diff.Build(tmp_path, {"09.9": table("09.9", ten)}, demos)
    b = diff.Build(tmp_path, {"09.9": table("09.9", ten[:2] + ten[3:])}, demos)
    lines, failures = diff.diff_builds([], a, b, {})
    assert failures == 1 and any("10/10 vs 0/10" in line for line in lines), lines


@pytest.mark.parametrize(
    "k_a, n_a, k_b, n_b, p",
    [
        (3, 3, 0, 3, 0.1),
        (10, 10, 0, 10, 2 / math.comb(20, 10)),
        (1, 2, 1, 2, 1.0),
        (2, 5, 0, 5, 0.4444444444444444),
    ],
)
def test_fisher_p_is_the_two_sided_exact_test(k_a, n_a, k_b, n_b, p):
    assert diff.fisher_p(k_a, n_a, k_b, n_b) == pytest.approx(p, rel=1e-12)


def test_a_measured_quantity_agrees_within_its_tolerance(tmp_path):
    # 06.1's peak_mb counts the interpreter's own allocations too (~1 kB): 1 % relative
    def peak(value):
        return {"06.1": table("06.1", [("plain", "peak_mb", [value])])}

    demos = {"06.1": {"seeds": [0]}}
    a = diff.Build(tmp_path, peak(0.364144), demos)
    near, far = diff.Build(tmp_path, peak(0.36504), demos), diff.Build(tmp_path, peak(0.38), demos)
    assert diff.compare_cells(a, near, {("06.1", "peak_mb"): ".4f"}).differ == []
    assert len(diff.compare_cells(a, far, {("06.1", "peak_mb"): ".4f"}).differ) == 1


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


@pytest.mark.parametrize(("t", "n"), [(4.303, 2), (2.0, 3), (1.0, 5), (6.0, 3)])
def test_welch_p_has_the_two_sided_t_tail(t, n):
    # equal stds and seed counts: Welch's df is 2n − 2 and its t is the gap over √(2s²/n)
    a = pd.Series({"mean": t * math.sqrt(2 / n), "std": 1.0, "n_seeds": n})
    b = pd.Series({"mean": 0.0, "std": 1.0, "n_seeds": n})
    assert diff.welch_p(a, b) == pytest.approx(float(t_tail(t, 2 * n - 2)), rel=1e-9)
    if (t, n) == (4.303, 2):
        assert diff.welch_p(a, b) == pytest.approx(0.05, abs=1e-4)  # the t-table's 2.5 % at df 2


def t_tail(t: float, df: float) -> float:
    """Two-sided tail of Student's t by numerical integration of its density (mpmath)."""
    import mpmath

    density = lambda x: (  # noqa: E731
        mpmath.gamma((df + 1) / 2)
        / (mpmath.sqrt(df * mpmath.pi) * mpmath.gamma(df / 2))
        * (1 + x * x / df) ** (-(df + 1) / 2)
    )
    return 2 * mpmath.quad(density, [t, mpmath.inf])


def test_holm_rejects_more_than_bonferroni_would():
    assert diff.holm({"a": 0.004, "b": 0.006}, alpha=0.01) == {"a", "b"}  # 0.006 ≤ 0.01 / 1
    # a third test that is not listed (a cell that printed the same) tightens every threshold
    assert diff.holm({"a": 0.004, "b": 0.006}, alpha=0.01, m=3) == set()


def test_holm_refuses_a_nan_p_value():
    with pytest.raises(ValueError, match="p-values"):
        diff.holm({"a": float("nan")})


def test_a_nan_in_a_trained_cell_is_a_difference_and_never_hangs(tmp_path):
    nan = [("gru", "acc", [0.50, float("nan"), 0.45]), *TRAINED[1:]]
    a, b = build(tmp_path, "a", TRAINED), build(tmp_path, "b", nan)
    lines, failures = run(a, b)
    assert failures >= 1 and any("gru · acc" in line for line in lines)


def test_tied_seeds_are_judged_by_the_quantitys_usual_spread(tmp_path):
    # three seeds at 1.000 against three at 0.998: std 0 on both sides, but the quantity's
    # spread elsewhere in the table (0.05) explains a 0.002 gap
    rows = [("tf", "acc", [1.0, 1.0, 1.0]), ("gru", "acc", [0.50, 0.55, 0.45])]
    moved = [("tf", "acc", [0.998, 0.998, 0.998]), ("gru", "acc", [0.50, 0.55, 0.45])]
    assert run(build(tmp_path, "a", rows), build(tmp_path, "b", moved), claims=[])[1] == 0
    # a quantity that never varies (a parameter count) has no spread to explain a change
    counts = [("tf", "n_params", [100, 100, 100])]
    changed = [("tf", "n_params", [120, 120, 120])]
    assert run(build(tmp_path, "c", counts), build(tmp_path, "d", changed), claims=[])[1] == 1


def test_timing_rows_are_never_compared(tmp_path):
    timed = [*TRAINED, ("tf", "ms_per_step", [10.0, 11.0, 12.0])]
    slower = [*TRAINED, ("tf", "ms_per_step", [100.0, 110.0, 120.0])]
    a, b = build(tmp_path, "a", timed), build(tmp_path, "b", slower)
    assert run(a, b)[1] == 1  # a quantity is not a timing because of its name ...
    for side in (a, b):  # ... but because it came from the table's .timing.csv (read_tables)
        side.tables["09.9"].attrs["timings"] = frozenset({"ms_per_step"})
    assert run(a, b)[1] == 0


def test_a_timing_row_on_one_side_only_is_not_compared(tmp_path):
    # the build table's ms_script of the recorded scripts (07) exists only in a checkout whose
    # benchmarks/ saw their jobs run (the reference's, not a fresh clone's): a timing, never judged
    a = build(tmp_path, "a", TRAINED, (("x", "weight", [0.614]), ("07", "ms_script", [8.3e6])))
    b = build(tmp_path, "b", TRAINED)
    a.tables["09.8"].attrs["timings"] = frozenset({"ms_script"})
    assert run(a, b)[1] == 0


def test_a_verdict_that_flips_on_one_seed_says_both(tmp_path):
    demos = {"09.9": {"seeds": [0], "grid": {"model": ["a"]}}}
    a = diff.Build(tmp_path, {"09.9": table("09.9", [("tf", "acc", [0.968])])}, demos)
    b = diff.Build(tmp_path, {"09.9": table("09.9", [("tf", "acc", [0.320])])}, demos)
    lines, _ = diff.diff_builds(CLAIMS[:1], a, b, {})
    assert any("verdict flips" in line and "one seed" in line for line in lines)


def built(tmp_path, name="a"):
    """A checkout-shaped build whose report wrote its manifest (reporting.report)."""
    from lecture17.reporting.report import write_manifest

    folder = tmp_path / name
    (folder / "results/tables").mkdir(parents=True)
    (folder / "results/09.9/model=a").mkdir(parents=True)
    (folder / "results/09.9/model=a/seed0.csv").write_text("demo,seed,quantity,value\n")
    for demo, rows in (("09.8", (("x", "weight", [0.614]),)), ("09.9", TRAINED)):
        table(demo, rows).to_csv(folder / f"results/tables/{demo}.csv", index=False)
    tables = sorted((folder / "results/tables").glob("*.csv"))
    write_manifest([str(t) for t in tables], folder / "results/manifest.json")
    return folder


def test_diff_reads_only_the_tables_its_report_read(tmp_path):
    folder = built(tmp_path)
    assert set(diff.load_tables(folder)) == {"09.8", "09.9"}
    # a table the report did not read (a stale recording's, left by an earlier build)
    table("07.1", TRAINED).to_csv(folder / "results/tables/07.1.csv", index=False)
    assert set(diff.load_tables(folder)) == {"09.8", "09.9"}  # not built, as in the report


def test_diff_refuses_a_build_that_did_not_finish(tmp_path):
    import os

    folder = built(tmp_path)
    table("09.9", TRAINED[:1]).to_csv(folder / "results/tables/09.9.csv", index=False)
    with pytest.raises(diff.IncompleteBuild, match="09.9.csv was rewritten"):
        diff.load_tables(folder)
    assert set(diff.load_tables(folder, incomplete=True)) == {"09.8"}  # what still matches
    folder = built(tmp_path, "b")
    run_csv = folder / "results/09.9/model=a/seed0.csv"
    later = (folder / "results/manifest.json").stat().st_mtime + 10
    os.utime(run_csv, (later, later))  # a job of a later build that never reached the report
    with pytest.raises(diff.IncompleteBuild, match="1 run CSVs are newer"):
        diff.load_tables(folder)
    (folder / "results/manifest.json").unlink()
    with pytest.raises(diff.IncompleteBuild, match="never built"):
        diff.load_tables(folder)
