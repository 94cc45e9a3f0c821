"""The report machinery: views, ledger verdicts, the diff, and the README's generated part."""

from pathlib import Path

import pandas as pd
import pytest

from lecture17 import diff, ledger
from lecture17.__main__ import as_text, width
from lecture17.reference import BEGIN, END, readme_section, splice
from lecture17.report import render_view

ROOT = Path(__file__).resolve().parents[1]


def table(rows) -> pd.DataFrame:
    """A seed-averaged table as aggregate.py writes it (labels are text)."""
    frame = pd.DataFrame(
        rows, columns=["demo", "model", "quantity", "mean", "min", "max", "n_seeds"]
    )
    return frame.astype({"model": str})


TABLE = table(
    [
        ["09.9", "rnn", "acc", 0.5, 0.4, 0.6, 3],
        ["09.9", "attn", "acc", 0.9, 0.9, 0.9, 3],
        ["09.9", "rnn", "diff", 2e-16, 1e-16, 3e-16, 3],
        ["09.9", "attn", "diff", 4e-16, 4e-16, 4e-16, 3],
    ]
)


# -----------------------------------------------------------------------------
# views


def test_a_view_shows_the_seed_spread_only_where_seeds_disagree():
    text = render_view(
        TABLE,
        {"title": "t", "quantities": ["acc"], "index": ["model"], "columns": [], "fmt": ".2f"},
    )
    assert "| rnn | 0.50 (0.40–0.60) |" in text
    assert "| attn | 0.90 |" in text


def test_a_pipe_in_a_label_does_not_break_the_markdown_table():
    text = render_view(
        TABLE,
        {
            "title": "t",
            "quantities": ["acc"],
            "index": ["model"],
            "columns": ["quantity"],
            "fmt": ".1f",
            "labels": {"acc": "max |a − b|"},
        },
    )
    assert "max \\|a − b\\|" in text


def test_a_view_that_selects_nothing_is_an_error():
    with pytest.raises(ValueError, match="selects no rows"):
        render_view(TABLE, {"title": "t", "quantities": ["nothing"], "index": ["model"]})


def test_terminal_tables_align_chinese_text_at_two_columns_per_character():
    assert width("注意力 ab") == 9
    lines = as_text("| 模型 model | 值 |\n|---|---|\n| rnn | 0.5 |").splitlines()
    assert len({width(line.rstrip()) for line in lines[:1] + lines[2:]}) >= 1
    assert lines[2].index("0.5") == width("模型 model") + 2


# -----------------------------------------------------------------------------
# the ledger's verdicts


def entry(**kw):
    return {"id": "X1", "section": "§0", "demo": "09.9", "claim": "c", "lecture": "0.90", **kw}


@pytest.mark.parametrize(
    ("kw", "status"),
    [
        (
            {
                "class": "exact",
                "value": {"quantity": "acc", "where": {"model": "attn"}},
                "fmt": ".2f",
            },
            "same",
        ),
        (
            {
                "class": "exact",
                "value": {"quantity": "acc", "where": {"model": "rnn"}},
                "fmt": ".2f",
            },
            "differs",
        ),
        ({"class": "precision", "value": {"quantity": "diff", "stat": "max"}}, "precision"),
        ({"class": "precision", "value": {"quantity": "diff"}, "bound": 3e-16}, "differs"),
        (
            {
                "class": "seeded",
                "values": {
                    "a": {"quantity": "acc", "where": {"model": "attn"}},
                    "r": {"quantity": "acc", "where": {"model": "rnn"}},
                },
                "holds": "a > r",
            },
            "holds",
        ),
        (
            {
                "class": "seeded",
                "value": {"quantity": "acc", "where": {"model": "rnn"}},
                "holds": "ours > 0.8",
            },
            "differs",
        ),
        ({"class": "timing", "value": {"quantity": "acc"}, "holds": "all(ours > 0.8)"}, "timing"),
        ({"class": "cited"}, "cited"),
        ({"class": "exact", "value": {"quantity": "acc", "demo": "07.7"}}, "missing"),
        ({"class": "exact", "value": {"quantity": "acc", "where": {"model": "gru"}}}, "missing"),
    ],
)
def test_each_class_decides_agreement_its_own_way(kw, status):
    assert ledger.evaluate(entry(**kw), {"09.9": TABLE}).status == status


def test_a_list_of_where_clauses_picks_rows_in_that_order():
    e = entry(
        **{
            "class": "exact",
            "lecture": "(0.90, 0.50)",
            "fmt": ".2f",
            "value": {"quantity": "acc", "where": [{"model": "attn"}, {"model": "rnn"}]},
        }
    )
    outcome = ledger.evaluate(e, {"09.9": TABLE})
    assert (outcome.status, outcome.ours) == ("same", "(0.90, 0.50)")


def test_show_may_be_an_expression_over_the_named_values():
    e = entry(
        **{
            "class": "seeded",
            "values": {"a": {"quantity": "acc"}},
            "holds": "max(a) < 1",
            "show": "max(a) - min(a)",
            "fmt": ".1f",
        }
    )
    assert ledger.evaluate(e, {"09.9": TABLE}).ours == "0.4"


def test_the_ledger_rejects_unknown_keys_and_classes(tmp_path):
    path = tmp_path / "ledger.yaml"
    path.write_text("- {id: A, section: '§1', claim: c, lecture: '1', class: exact, colour: red}\n")
    with pytest.raises(ValueError, match="unknown keys"):
        ledger.load_ledger(path)
    path.write_text("- {id: A, section: '§1', claim: c, lecture: '1', class: guessed}\n")
    with pytest.raises(ValueError, match="class must be one of"):
        ledger.load_ledger(path)


# -----------------------------------------------------------------------------
# the diff


ENTRIES = [
    entry(
        id="E",
        **{
            "class": "exact",
            "value": {"quantity": "acc", "where": {"model": "attn"}},
            "fmt": ".2f",
        },
    ),
    entry(id="P", **{"class": "precision", "value": {"quantity": "diff", "stat": "max"}}),
    entry(
        id="S",
        **{
            "class": "seeded",
            "value": {"quantity": "acc", "where": {"model": "rnn"}},
            "holds": "ours > 0",
        },
    ),
]


def shifted(quantity, model, by):
    other = TABLE.copy()
    rows = (other["quantity"] == quantity) & (other["model"] == model)
    other.loc[rows, ["mean", "min", "max"]] += by
    return other


def test_two_identical_builds_do_not_differ():
    lines, failures = diff.diff_builds(ENTRIES, {"09.9": TABLE}, {"09.9": TABLE.copy()})
    assert (lines, failures) == ([], 0)


def test_an_exact_value_that_changes_a_printed_digit_differs():
    lines, failures = diff.diff_builds(
        ENTRIES, {"09.9": TABLE}, {"09.9": shifted("acc", "attn", 0.01)}
    )
    assert failures == 1 and lines[0].lstrip().startswith("E")


def test_a_seeded_value_may_move_within_the_seed_spread_but_not_beyond():
    assert diff.diff_builds(ENTRIES, {"09.9": TABLE}, {"09.9": shifted("acc", "rnn", 0.15)})[1] == 0
    assert diff.diff_builds(ENTRIES, {"09.9": TABLE}, {"09.9": shifted("acc", "rnn", 0.25)})[1] == 1


def test_a_precision_value_over_its_bound_differs():
    assert (
        diff.diff_builds(ENTRIES, {"09.9": TABLE}, {"09.9": shifted("diff", "attn", 1e-12)})[1] == 1
    )


def test_against_the_lecture_only_exact_and_precision_failures_count():
    failing_seeded = [ENTRIES[2] | {"holds": "ours > 0.8"}]
    lines, failures = diff.diff_lecture(failing_seeded, {"09.9": TABLE})
    assert failures == 0 and "differs" in lines[0]
    lines, failures = diff.diff_lecture([ENTRIES[0] | {"lecture": "0.91"}], {"09.9": TABLE})
    assert failures == 1 and "FAIL" in lines[0]
    known = [ENTRIES[0] | {"lecture": "0.91", "expect": "differs", "flag": "F02"}]
    assert diff.diff_lecture(known, {"09.9": TABLE})[1] == 0


def test_diff_says_what_to_do_when_a_folder_has_no_tables(tmp_path):
    with pytest.raises(ValueError, match="build it first"):
        diff.load_tables(tmp_path)


# -----------------------------------------------------------------------------
# the README's generated section


def test_splice_replaces_only_the_generated_block():
    readme = f"head\n{BEGIN}\nold\n{END}\ntail\n"
    assert splice(readme, "new") == f"head\n{BEGIN}\nnew\n{END}\ntail\n"
    with pytest.raises(ValueError, match="no"):
        splice("no markers", "new")


def test_the_readme_results_section_is_what_the_reference_build_and_the_ledger_give():
    reference = ROOT / "report" / "reference"
    assert (reference / "tables").is_dir(), "report/reference/ missing: run `make reference`"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    generated = readme_section(reference, ROOT / "report" / "ledger.yaml")
    assert splice(readme, generated) == readme, "README is stale: run `make reference`"
