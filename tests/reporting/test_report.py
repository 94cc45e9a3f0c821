"""The report machinery: views, ledger verdicts, the diff, the README's generated part, and how
the report, the ledger and the diff treat 06.3's GPU-only timings."""

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import ROOT

from lecture17.experiments import DEMOS
from lecture17.reporting import diff, ledger
from lecture17.reporting.reference import BEGIN, END, RESULTS, readme_section, splice
from lecture17.reporting.report import template_environment
from lecture17.reporting.views import as_text, crossovers, render_view
from lecture17.reporting.views import display_width as width


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


def test_a_partial_build_says_a_view_has_no_rows_instead(monkeypatch):
    """check --trained's scratch build (LECTURE17_PARTIAL_VIEWS=1): a student's layers hide
    their attention weights, so those views select nothing there; said, not raised."""
    from lecture17.reporting import template_api

    view = {"title": "t", "quantities": ["nothing"], "index": ["model"], "section": "§1"}
    report = template_api.Report({"01.4": TABLE}, {"01.4": [view]}, [], {})
    with pytest.raises(ValueError, match="selects no rows"):
        report.view(view, "01.4", [])
    monkeypatch.setattr(template_api, "PARTIAL", True)
    assert "本次构建没有这张表的行" in "".join(report.view(view, "01.4", []))


def test_terminal_tables_align_chinese_text_at_two_columns_per_character():
    assert width("注意力 ab") == 9
    lines = as_text("| 模型 model | 值 |\n|---|---|\n| rnn | 0.5 |").splitlines()
    assert len({width(line.rstrip()) for line in lines[:1] + lines[2:]}) >= 1
    assert lines[2].index("0.5") == width("模型 model") + 2


# -----------------------------------------------------------------------------
# the ledger's verdicts


def entry(**kw):
    return {"id": "X1", "section": "§0", "demo": "09.9", "claim": "c", "lecture": "0.90", **kw}


ATTN = {"quantity": "acc", "where": {"model": "attn"}}
RNN = {"quantity": "acc", "where": {"model": "rnn"}}


@pytest.mark.parametrize(
    ("kw", "status"),
    [
        ({"class": "exact", "value": ATTN, "fmt": ".2f"}, "same"),
        ({"class": "exact", "value": RNN, "fmt": ".2f"}, "differs"),
        ({"class": "reconstructed", "value": ATTN, "fmt": ".2f", "flag": "F08"}, "same"),
        ({"class": "echo", "value": ATTN, "fmt": ".2f"}, "echo"),
        ({"class": "echo", "value": RNN, "fmt": ".2f"}, "differs"),  # a typo in a setting
        ({"class": "echo"}, "echo"),  # the lecture's arithmetic, no table
        ({"class": "precision", "value": {"quantity": "diff", "stat": "max"}}, "precision"),
        ({"class": "precision", "value": {"quantity": "diff"}, "bound": 3e-16}, "differs"),
        (
            {
                "class": "seeded",
                "values": {"a": ATTN, "r": RNN},
                "check": [{"above": {"value": "a", "than": "r"}}],
            },
            "holds",
        ),
        (
            {"class": "seeded", "value": RNN, "check": [{"above": {"value": "ours", "than": 0.8}}]},
            "differs",
        ),
        (
            {"class": "seeded", "value": RNN, "number": 0.9, "check": [{"order_of": "ours"}]},
            "holds",
        ),
        (
            {
                "class": "timing",
                "value": ATTN,
                "check": [{"above": {"value": "ours", "than": 0.8}}],
            },
            "timing",
        ),
        (
            {"class": "timing", "value": RNN, "check": [{"above": {"value": "ours", "than": 0.8}}]},
            "timing_fails",
        ),
        ({"class": "cited"}, "cited"),
        ({"class": "exact", "value": {"quantity": "acc", "demo": "07.7"}}, "missing"),
        ({"class": "exact", "value": {"quantity": "acc", "where": {"model": "gru"}}}, "missing"),
    ],
)
def test_each_class_decides_agreement_its_own_way(kw, status):
    assert ledger.evaluate(entry(**kw), {"09.9": TABLE}).status == status


def test_a_timing_claim_that_fails_here_is_listed_not_agreeing():
    e = entry(
        **{"class": "timing", "value": RNN, "check": [{"above": {"value": "ours", "than": 1}}]}
    )
    outcome = ledger.evaluate(e, {"09.9": TABLE})
    assert not outcome.agrees and " ≤ 1" in outcome.reason  # the relation as it came out


def test_a_sections_text_outside_its_timing_block_does_not_depend_on_the_timings():
    """A timing that holds in one run and fails in the next changes only the machine-dependent
    part of the reading note; the part a diff compares is the same, and the timing part is
    written in both runs (so the blocks around it do not leave a blank line in one only)."""
    from lecture17.reporting.claims import reading_note

    exact = ledger.evaluate(
        entry(
            **{
                "class": "seeded",
                "value": RNN,
                "check": [{"above": {"value": "ours", "than": 0.8}}],
            }
        ),
        {"09.9": TABLE},
    )
    notes = []
    for than in (0.1, 1):  # holds, then fails
        e = entry(
            **{
                "class": "timing",
                "value": RNN,
                "check": [{"above": {"value": "ours", "than": than}}],
            }
        )
        notes.append(reading_note([exact, ledger.evaluate(e, {"09.9": TABLE})], True, False, False))
    (stable_a, timing_a), (stable_b, timing_b) = notes
    assert stable_a == stable_b != ""
    assert timing_a != timing_b and timing_a and timing_b
    assert "1 个和讲义一致 agree。" in timing_a and "，。" not in timing_a


def test_the_problem_list_outside_its_timing_block_does_not_depend_on_the_timings():
    from lecture17.reporting.report import MACHINE_BEGIN, Report, machine_dependent

    texts = []
    for than in (0.1, 1):  # the timing holds, then fails
        e = entry(
            **{
                "class": "timing",
                "value": RNN,
                "check": [{"above": {"value": "ours", "than": than}}],
            }
        )
        report = Report({"09.9": TABLE}, {}, [ledger.evaluate(e, {"09.9": TABLE})], {})
        texts.append(report.problems())
    stable = [t.split(MACHINE_BEGIN)[0] for t in texts]
    assert stable[0] == stable[1] and "除计时外" in stable[0]
    assert texts[0] != texts[1] and all(t.endswith(machine_dependent("")[-30:]) for t in texts)


def test_a_check_the_data_cannot_decide_is_not_resolvable():
    from lecture17.reporting.checks import PREDICATES, Finding

    PREDICATES["x1_grid"] = lambda v: Finding(None, "not resolvable at eval_every 25")
    try:
        e = entry(**{"class": "seeded", "value": RNN, "check": [{"predicate": "x1_grid"}]})
        outcome = ledger.evaluate(e, {"09.9": TABLE})
    finally:
        del PREDICATES["x1_grid"]
    assert outcome.status == "unresolved" and "eval_every" in outcome.reason


def test_settings_are_read_from_the_config_not_retyped():
    e = entry(
        **{
            "class": "echo",
            "value": RNN,
            "check": [{"equal": {"value": "ours", "to": "settings.p"}}],
        }
    )
    assert ledger.evaluate(e, {"09.9": TABLE}, {"09.9": {"settings": {"p": 0.5}}}).status == "echo"
    assert (
        ledger.evaluate(e, {"09.9": TABLE}, {"09.9": {"settings": {"p": 0.4}}}).status == "differs"
    )


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


def test_a_selector_can_reduce_its_rows_for_show():
    e = entry(
        **{
            "class": "seeded",
            "values": {"lo": {"quantity": "acc", "stat": "min", "reduce": "min"}},
            "check": [{"below": {"value": "lo", "than": 1}}],
            "fmt": ".1f",
        }
    )
    assert ledger.evaluate(e, {"09.9": TABLE}).ours == "0.4"


def test_the_ledger_rejects_unknown_keys_and_classes(tmp_path):
    path = tmp_path / "ledger.yaml"
    path.write_text("- {id: A, section: '§1', claim: c, lecture: '1', class: exact, colour: red}\n")
    with pytest.raises(ValueError, match="'A'.*unknown keys"):
        ledger.load_ledger(path)
    path.write_text("- {id: A, section: '§1', claim: c, lecture: '1', class: guessed}\n")
    with pytest.raises(ValueError, match="'A'.*expected one of"):
        ledger.load_ledger(path)


def test_the_summary_counts_reproduced_reconstructed_and_echo_apart():
    outcomes = [
        ledger.evaluate(entry(**kw), {"09.9": TABLE})
        for kw in (
            {"class": "exact", "value": ATTN, "fmt": ".2f"},
            {"class": "reconstructed", "value": ATTN, "fmt": ".2f", "flag": "F08"},
            {"class": "echo", "value": ATTN, "fmt": ".2f"},
            {"class": "exact", "value": RNN, "fmt": ".2f"},
        )
    ]
    assert ledger.reproduced(outcomes) == {
        "reproduced": 1,
        "counted": 2,
        "reconstructed": 1,
        "echo": 1,
    }
    # a counted claim that needs a GPU this build lacks is counted, never as reproduced
    gpu = ledger.Outcome(entry(**{"class": "seeded", "value": ATTN}), "gpu")
    assert ledger.reproduced([*outcomes, gpu])["reproduced"] == 1
    assert ledger.reproduced([*outcomes, gpu])["counted"] == 3


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
    results = (ROOT / RESULTS).read_text(encoding="utf-8")
    generated = readme_section(reference, ROOT / "report" / "ledger")
    assert splice(results, generated) == results, f"{RESULTS} is stale: run `make reference`"


def test_a_typo_in_a_where_list_or_a_quantity_is_never_silently_dropped():
    typo = entry(
        **{
            "class": "exact",
            "fmt": ".2f",
            "lecture": "0.90",
            "value": {"quantity": "acc", "where": {"model": ["attn", "atn"]}},
        }
    )
    assert ledger.evaluate(typo, {"09.9": TABLE}).status == "missing"  # not "same" from one row
    wrong = entry(**{"class": "exact", "fmt": ".2f", "value": {"quantity": "accc"}})
    assert ledger.evaluate(wrong, {"09.9": TABLE}).status == "missing"


def test_a_typo_in_a_settings_path_names_the_claim():
    e = entry(
        **{
            "class": "echo",
            "value": RNN,
            "check": [{"equal": {"value": "ours", "to": "settings.n_tset"}}],
        }
    )
    with pytest.raises(ValueError, match="'X1'.*n_tset"):
        ledger.evaluate_all([e], {"09.9": TABLE}, {"09.9": {"settings": {"n_test": 500}}})


# -----------------------------------------------------------------------------
# demo 06.3's tables: the report's crossover sentence


def timing_table(ratios: dict) -> pd.DataFrame:
    """An aggregated 06.3 table: {d_model: [Transformer / GRU at L = 32, 64, 128]}."""
    rows = []
    for d_model, values in ratios.items():
        for L, ratio in zip((32, 64, 128), values, strict=True):
            gru = 10.0
            for model, quantity, value in (
                ("transformer", "ms_per_step", ratio * gru),
                ("gru", "ms_per_step", gru),
                ("transformer", "ms_ratio_transformer_over_gru", ratio),
            ):
                rows.append([str(d_model), "bf16", model, str(L), quantity, value])
    frame = pd.DataFrame(
        rows, columns=["d_model", "precision", "model", "seq_len", "quantity", "mean"]
    )
    table = frame.assign(min=frame["mean"], max=frame["mean"], n_seeds=1)
    table.attrs["timings"] = frozenset(DEMOS["06.3"].timings)  # as read_tables marks them
    return table


def crossover_lines(table) -> str:
    """06.3's crossover sentences as the report words them: views.crossovers, through the
    template's `crossover` macro."""
    env = template_environment(ROOT / "report/templates")
    words = env.from_string(
        '{% from "macros.md.j2" import crossover %}\n'
        "{% for c in found %}\n{{ crossover(c) }}\n{% endfor %}\n"
    )
    return words.render(found=crossovers(table)).rstrip("\n")


def test_the_crossover_is_the_shortest_length_from_which_the_transformer_stays_faster():
    text = crossover_lines(
        timing_table({64: [1.5, 1.2, 1.1], 512: [1.2, 0.9, 0.5], 1024: [0.8, 1.1, 0.5]})
    )
    never, crossing, late = text.splitlines()
    assert never.startswith("- d_model 64") and "GRU 每步都比 Transformer 快" in never
    assert "L = 128：Transformer 11.0 ms，GRU 10.0 ms" in never
    assert "在 L = 32 和 64 之间" in crossing and "L ≥ 64" in crossing
    # faster at 32, slower at 64: the Transformer stays faster only from 128 on
    assert "在 L = 64 和 128 之间" in late


def test_a_transformer_faster_everywhere_is_said_so():
    text = crossover_lines(timing_table({512: [0.9, 0.6, 0.3]}))
    assert "从 L = 32 起 Transformer 每步都更快" in text


# -----------------------------------------------------------------------------
# a GPU-only claim (demo 06.3): no verdict, no difference without its table

GPU_CLAIM = {
    "id": "G",
    "section": "§9.5",
    "demo": "06.3",
    "claim": "c",
    "lecture": "faster",
    "class": "timing",
    "needs": "cuda",
    "values": {
        "tf": {"quantity": "ms_per_step", "where": {"model": "transformer"}},
        "gru": {"quantity": "ms_per_step", "where": {"model": "gru"}},
    },
    "check": [{"below": {"value": "tf", "than": "gru"}}],
}


def test_a_gpu_claim_without_its_table_needs_a_gpu_and_fails_nothing():
    outcome = ledger.evaluate(GPU_CLAIM, {})
    assert outcome.status == "gpu" and outcome.agrees
    assert diff.diff_lecture([GPU_CLAIM], {}) == ([], 0)
    without = {k: v for k, v in GPU_CLAIM.items() if k != "needs"}
    assert ledger.evaluate(without, {}).status == "missing"  # an ordinary claim is "not built"
    assert diff.diff_lecture([without], {})[1] == 1


def test_a_gpu_claim_with_its_table_is_judged_as_a_timing():
    table = timing_table({512: [0.9, 0.6, 0.3]})
    outcome = ledger.evaluate(GPU_CLAIM, {"06.3": table})
    assert outcome.status == "timing" and outcome.reason == ""
    np.testing.assert_allclose(outcome.numbers["tf"], [9.0, 6.0, 3.0])


def test_a_gpu_build_and_a_cpu_build_do_not_differ_on_the_gpu_claim(tmp_path):
    gpu_build = diff.Build(tmp_path, {"06.3": timing_table({512: [0.9, 0.6, 0.3]})}, {})
    cpu_build = diff.Build(tmp_path, {}, {})
    lines, failures = diff.diff_builds([GPU_CLAIM], gpu_build, cpu_build, {})
    assert failures == 0  # a table of timings on one side only (a GPU build's) is no difference
    lines, failures = diff.diff_builds([GPU_CLAIM], gpu_build, gpu_build, {}, show_timing=True)
    assert failures == 0 and lines[2].endswith("计时 timing: (9, 6, 3) vs (9, 6, 3)")


BEYOND_CLAIM = {
    "id": "B",
    "section": "§9.4",
    "demo": "09.9",
    "claim": "c",
    "lecture": "—",
    "class": "beyond",
    "values": {"acc": {"quantity": "acc", "where": {"model": "attn"}}},
    "check": [{"above": {"value": "acc", "than": 0.95}}],  # 0.9 in TABLE: it fails
}


def test_against_the_lecture_a_beyond_finding_is_listed_and_a_broken_property_fails():
    """A pre-registered beyond-the-lecture claim that does not hold is a result (where a
    published claim fails here); one marked `property: true` states a property of our code,
    and its failure is a bug, as an exact claim's would be."""
    assert ledger.evaluate(BEYOND_CLAIM, {"09.9": TABLE}).status == "differs"
    lines, failures = diff.diff_lecture([BEYOND_CLAIM], {"09.9": TABLE})
    assert failures == 0 and len(lines) == 1 and "预先登记的读法不成立" in lines[0]
    lines, failures = diff.diff_lecture([{**BEYOND_CLAIM, "property": True}], {"09.9": TABLE})
    assert failures == 1 and "不一致 FAIL" in lines[0]
    holding = {
        **BEYOND_CLAIM,
        "property": True,
        "check": [{"above": {"value": "acc", "than": 0.5}}],
    }
    assert diff.diff_lecture([holding], {"09.9": TABLE}) == ([], 0)
    assert diff.diff_lecture([BEYOND_CLAIM], {})[1] == 1  # not built still fails


@pytest.mark.parametrize("bad", [{"property": False}, {"property": True, "class": "seeded"}])
def test_property_marks_only_a_beyond_claim(bad, tmp_path):
    path = tmp_path / "ledger.yaml"
    entry = {k: v for k, v in BEYOND_CLAIM.items() if k not in ("values", "check")} | bad
    path.write_text(yaml.safe_dump([entry]))
    with pytest.raises(ValueError, match="property: true marks a beyond claim"):
        ledger.load_ledger(path)


def test_the_ledger_knows_only_cuda_as_a_need(tmp_path):
    path = tmp_path / "ledger.yaml"
    path.write_text("- {id: A, section: '§1', claim: c, lecture: '1', class: timing, needs: tpu}\n")
    with pytest.raises(ValueError, match=r"needs 'tpu'; expected one of \('cuda',\)"):
        ledger.load_ledger(path)


def test_a_table_in_the_terminal_keeps_a_cells_own_bar():
    """`python -m lecture17 show` and the lecture's scripts print views with as_text: a `|`
    inside a cell ("max |difference|") is escaped in the Markdown and must not split the cell."""
    from lecture17.reporting.views import as_text, markdown_table

    text = as_text(markdown_table(["比较 comparison", "max |d|"], [["loop | matrix", "1e-16"]]))
    header, rule, row = text.splitlines()
    assert header.split() == ["比较", "comparison", "max", "|d|"]
    assert row.split() == ["loop", "|", "matrix", "1e-16"] and len(rule.split()) == 2
