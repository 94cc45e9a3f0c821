"""注意看 What to notice: the line under each table and figure of the study reading, read from
the cells it sits under (reporting/notice.py; report/views/*.yaml and report/notices.yaml).

Every study table and every figure the reference build draws has one; each renders on the
reference tables; change the table and the line changes (its numbers, and where a condition
turns, its words); a notice that names a value it does not define, a key it does not know, or
a condition beyond comparisons and arithmetic fails when the views load, not mid-render.
"""

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from pages import REFERENCE, reference_missing, reference_render

from lecture17.pipeline.aggregate import read_tables
from lecture17.reporting import notice
from lecture17.reporting.figures import FIGURES
from lecture17.reporting.report import load_notices
from lecture17.reporting.views import load_views

ROOT = Path(__file__).resolve().parents[2]
VIEWS = load_views(ROOT / "report" / "views")
NOTICES = load_notices(ROOT / "report" / "notices.yaml")
needs_reference = pytest.mark.skipif(bool(reference_missing()), reason=reference_missing() or "")


@pytest.fixture(scope="module")
def tables():
    paths = [p for p in sorted((REFERENCE / "tables").glob("*.csv")) if ".timing" not in p.name]
    return read_tables(paths)


def study_views():
    for demo, items in VIEWS.items():
        for i, view in enumerate(items):
            if not view.get("audit"):
                yield pytest.param(demo, view, id=f"{demo}#{i}")


def rendered(view, demo, tables, change=None) -> str:
    table = tables[str(view.get("table", demo))].copy()
    if change:
        table = change(table)
    return notice.line(view["notice"], table, view.get("where"), view.get("fmt"))


def shifted(table):
    """Every cell moved (×1.37 + 0.011): each number a line prints comes out different."""
    for stat in ("mean", "min", "max"):
        table[stat] = table[stat] * 1.37 + 0.011
    return table


@needs_reference
@pytest.mark.parametrize("demo, view", list(study_views()))
def test_every_study_table_says_what_to_notice_from_its_own_cells(demo, view, tables):
    source = str(view.get("table", demo))
    if source not in tables:  # a GPU table (06.3): not in a CPU build, nothing shown
        pytest.skip(f"{source} is not in the reference build")
    assert "notice" in view, f"{demo} {view['title']}: no 注意看 line"
    said = rendered(view, demo, tables)
    assert said and re.search(r"\d", said), said
    assert rendered(view, demo, tables, shifted) != said  # its numbers are the table's


@needs_reference
@pytest.mark.parametrize("name", sorted(FIGURES))
def test_every_figure_drawn_says_what_to_notice(name, tables):
    if not (REFERENCE / "figures" / f"{name}.png").is_file():
        pytest.skip(f"{name} is not drawn in the reference build")
    assert name in NOTICES, f"{name}: no 注意看 line"
    spec = NOTICES[name]
    table = tables[str(spec.get("table", FIGURES[name].table))]
    said = notice.line(spec, table)
    assert said and re.search(r"\d", said), said
    assert notice.line(spec, shifted(table.copy())) != said


@needs_reference
def test_the_words_follow_the_cells_not_only_the_numbers(tables):
    """02.2's unscaled softmax: saturated in the reference; with the max weights halved the
    line says it is not (its condition turns), and 01.4's RNN that stops decaying is not
    called exponential."""
    view = next(v for v in VIEWS["02.2"] if v.get("where") == {"scaled": "unscaled"})
    assert "几乎成了 argmax" in rendered(view, "02.2", tables)

    def halved(table):
        rows = table["quantity"] == "max_weight"
        table.loc[rows, "mean"] = table.loc[rows, "mean"] / 2
        return table

    assert "还没有饱和" in rendered(view, "02.2", tables, halved)

    def flat_rnn(table):
        rows = (table["quantity"] == "sensitivity") & (table["model"] == "rnn")
        table.loc[rows, "mean"] = 0.5
        return table

    spec = NOTICES["01.4_sensitivity"]
    assert "指数" not in notice.line(spec, flat_rnn(tables["01.4"].copy()))
    assert "直线" in notice.line(spec, tables["01.4"])
    assert "直线" not in notice.line(spec, flat_rnn(tables["01.4"].copy()))


A = {"a": {"quantity": "x"}}


@pytest.mark.parametrize(
    "spec, words",
    [
        ({"values": A, "say": "{b}"}, "names b"),
        ({"values": A, "say": "{a}", "typo": 1}, "unknown notice keys"),
        ({"values": {"a": {"quantity": "x", "whre": {}}}, "say": "{a}"}, "unknown keys"),
        ({"values": A, "say": [{"if": "b > 1", "say": "{a}"}]}, "not a value"),
        ({"values": A, "say": [{"if": "__import__('os')", "say": "{a}"}]}, "only comparisons"),
        ({"values": A, "say": [{"if": "a >", "say": "{a}"}]}, "condition"),
    ],
)
def test_a_notice_that_cannot_render_fails_when_it_loads(spec, words):
    with pytest.raises(notice.NoticeError, match=words):
        notice.validate(spec, "test")


def test_a_condition_reads_lists_and_arithmetic():
    numbers = {"a": np.array([0.2, 0.4]), "b": 0.5}
    assert notice.condition("max(a) < b and min(a) * 2 > 0.3", numbers)
    assert notice.condition("a < b", numbers)  # every element
    assert not notice.condition("a > 0.3", numbers)
    assert notice.condition("not b > 1 or a > 1", numbers)
    assert notice.condition("0.1 < b < 1", numbers)


@needs_reference
def test_the_page_shows_each_line_once_under_its_table(tmp_path):
    html_text = reference_render(tmp_path).read_text(encoding="utf-8")
    lines = re.findall(r'<p class="notice"><b>注意看</b> (.*?)</p>', html_text)
    expected = sum(1 for d, vs in VIEWS.items() for v in vs if "notice" in v and not v.get("audit"))
    drawn = [n for n in NOTICES if (REFERENCE / "figures" / f"{n}.png").is_file()]
    gpu = sum(1 for v in VIEWS.get("06.3", []) if "notice" in v)  # not in a CPU build
    example = 1  # §9.2's decoded example (05.5) says what to notice under its tokens
    assert len(lines) == expected - gpu + len(drawn) + example
    assert len(set(lines)) == len(lines)
    markdown = (tmp_path / "lecture17.md").read_text(encoding="utf-8")
    assert markdown.count("*注意看*：") == len(lines)


# -----------------------------------------------------------------------------
# 06.3's GPU tables: no GPU recording in the reference build, so a table shaped like a GPU
# build's (the config's grid: two sizes, its lengths, the five models), its numbers made up


def gpu_table(transformer_at_2048: dict) -> pd.DataFrame:
    """ms per step: GRU 10 ms at every length and size; the Transformer 1 ms at L = 32, rising
    to transformer_at_2048[size] at L = 2048; ratios from the same numbers."""

    spec = yaml.safe_load((ROOT / "config/config.yaml").read_text())["demos"]["06.3"]["settings"]
    lengths, rows = spec["seq_lens"], []
    for size, sizes in spec["sizes"].items():
        for i, L in enumerate(lengths):
            t = 1 + (transformer_at_2048[size] - 1) * i / (len(lengths) - 1)
            ms = {"transformer": t, "gru": 10.0, "gru_attention": 12.0}
            ms |= {"nn.Transformer": t / 2, "nn.GRU": 5.0}
            labels = dict(
                size=size,
                device_name="GPU",
                d_model=str(sizes["d_model"]),
                precision=sizes["precision"],
                seq_len=str(L),
            )
            rows += [dict(labels, model=m, quantity="ms_per_step", mean=v) for m, v in ms.items()]
            ratios = {
                "ms_ratio_transformer_over_gru": t / 10,
                "ms_ratio_transformer_over_gru_attention": t / 12,
                "ms_ratio_transformer_over_nn_transformer": 2.0,
                "ms_ratio_gru_over_nn_gru": 2.0,
            }
            rows += [dict(labels, quantity=q, mean=v) for q, v in ratios.items()]
    table = pd.DataFrame(rows)
    return table.assign(min=table["mean"], max=table["mean"], n_seeds=1)


def test_the_gpu_tables_and_figure_say_what_to_notice_from_their_cells():
    wide_wins = gpu_table({"small": 20.0, "base": 5.0})  # §9.5: the base width's Transformer wins
    never = gpu_table({"small": 25.0, "base": 30.0})
    for view in VIEWS["06.3"]:
        assert "notice" in view, view["title"]
        said = notice.line(view["notice"], wide_wins, view.get("where"), view.get("fmt"))
        assert re.search(r"\d", said) and said != notice.line(
            view["notice"], never, view.get("where"), view.get("fmt")
        )
    base = next(v for v in VIEWS["06.3"] if v.get("where") == {"size": "base"})
    assert "填满了 GPU" in notice.line(base["notice"], wide_wins, base["where"], base["fmt"])
    assert "没有显现" in notice.line(base["notice"], never, base["where"], base["fmt"])
    small = next(v for v in VIEWS["06.3"] if v.get("where") == {"size": "small"})
    narrow_wins = gpu_table({"small": 5.0, "base": 5.0})
    assert "连 §9 这么窄的模型" in notice.line(small["notice"], narrow_wins, small["where"])
    assert "还没有显出" in notice.line(small["notice"], wide_wins, small["where"])
    figure = NOTICES["06.3_gpu_step_time"]
    assert figure.get("machine_dependent")  # a timing: where a diff of two reports skips
    assert "要模型够宽才显现" in notice.line(figure, wide_wins)
    assert "要模型够宽才显现" not in notice.line(figure, never)


def test_mirror_plus_one_is_the_word_the_decoder_has_just_read():
    """§9.4: output step t < L of the reversal copies source position L − 1 − t (the mirror);
    the decoder's input at step t is the previous output, the source word at mirror + 1. So
    an attention peak at mirror + 1 sits on the word just read, never the next one to output:
    the words say that, pinned here on the task itself."""
    import torch

    from lecture17.tasks import reversal_batch

    src, tgt_in, tgt_out = reversal_batch(torch.Generator().manual_seed(0), 4, 6)
    L = src.shape[1]
    for t in range(1, L):
        mirror = L - 1 - t
        assert torch.equal(tgt_out[:, t], src[:, mirror])  # the word to output
        assert torch.equal(tgt_in[:, t], src[:, mirror + 1])  # the word just read
    text = (ROOT / "report" / "views" / "05.yaml").read_text(encoding="utf-8")
    said = [line for line in text.splitlines() if "镜像 +1，也就是" in line]
    assert said and all("刚读进" in line and "下一个要输出" not in line for line in said)
