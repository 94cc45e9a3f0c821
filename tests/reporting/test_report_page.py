"""The report as a page: navigation, formulas, verdicts in words, the lecture beside ours,
numbered figures — checked on the HTML text (the browser test checks the rendered page)."""

import html as html_lib
import re
from pathlib import Path

import matplotlib
import pandas as pd
import pytest
import yaml
from conftest import ROOT
from pages import SMALL_FIGURES, reference_missing, reference_render, render, small_build, tables_of

from lecture17.reporting import claims as report_claims
from lecture17.reporting import figure_base, figures, figures_reversal, ledger
from lecture17.reporting import page as report_html
from lecture17.reporting import report as report_mod
from lecture17.reporting.report import figure_numbers
from lecture17.reporting.views import (
    beside_lecture,
    fold,
    lecture_cells,
    lecture_numbers,
    view_grid,
)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    work = tmp_path_factory.mktemp("page")
    path = small_build(work)
    return {
        "html": path.read_text(encoding="utf-8"),
        "md": (work / "lecture17.md").read_text(encoding="utf-8"),
        "work": work,
    }


def test_a_built_demo_the_template_does_not_place_fails_the_report(page, tmp_path):
    text = (ROOT / "report" / "templates" / "lecture17.md.j2").read_text(encoding="utf-8")
    line = '{{ r.demo("03.3") }}'
    assert line in text
    template = tmp_path / "lecture17.md.j2"
    template.write_text(text.replace(line, ""), encoding="utf-8")
    for imported in (ROOT / "report" / "templates").glob("macros*.j2"):  # what it imports
        (tmp_path / imported.name).write_text(imported.read_text(encoding="utf-8"))
    tables = sorted((page["work"] / "tables").glob("[0-9]*[0-9].csv"))
    figures_drawn = sorted((page["work"] / "figures").glob("*.png"))
    config = ROOT / "config" / "config.yaml"
    with pytest.raises(ValueError, match=r"places no .* for \['03\.3'\]"):
        render(tmp_path, tables, figures_drawn, config, template=template)


def visible_text(page_html: str) -> str:
    """The page's text outside formulas, styles and tags (what a reader sees, roughly)."""
    text = re.sub(r"<(style|math)\b.*?</\1>", " ", page_html, flags=re.S)
    return html_lib.unescape(re.sub(r"<[^>]+>", " ", text))


# -----------------------------------------------------------------------------
# headings, contents, links


def test_a_heading_id_is_its_section_number():
    assert report_html.slug("§4.4 “查字典”实验") == "s4-4"
    assert report_html.slug("§13 练习 · Exercises") == "s13"
    assert report_html.slug("复现信息 Provenance") == "provenance"
    assert report_html.covered("§5.2–§5.4 参数个数") == [(5, 2), (5, 3), (5, 4)]
    assert report_html.covered("§8.2、§8.4 解码器层") == [(8, 2), (8, 4)]


def test_a_section_reference_links_to_the_heading_that_covers_it_or_to_nothing():
    body, headings = report_html.anchor_headings(
        "<h2>§5 多头</h2><h3>§5.2–§5.4 参数</h3><h2>§13 练习</h2>"
    )
    targets = report_html.section_targets(headings)
    linked = report_html.resolve_links("@@SEC:§5.3 / §7.1 / Ex4(c)@@", targets, set())
    assert linked == '<a href="#s5-2">§5.3</a> / §7.1 / <a href="#s13">练习 4(c)</a>'
    assert report_html.resolve_links("@@CLAIM:C001@@ @@CLAIM:C002@@", {}, {"C001"}) == (
        '<a href="#C001">C001</a> C002'
    )
    assert 'id="s5-2"' in body


def test_every_heading_has_a_unique_id_and_a_line_in_the_contents(page):
    main = page["html"].split("<main>", 1)[1]
    headings = re.findall(r'<h([23]) id="([^"]+)">', main)
    ids = [i for _, i in headings]
    assert len(ids) == len(set(ids)) > 30
    nav = page["html"].split("</nav>", 1)[0]
    assert set(re.findall(r'href="#([^"]+)"', nav)) == set(ids)
    numbered = [i for i in ids if re.fullmatch(r"s\d+(-\d+)*", i)]
    assert {"s1", "s4-4", "s9-1", "s9-5", "s11", "s12", "s13"} <= set(numbered)


def test_every_markdown_heading_starts_a_block(page):
    """A heading right under a table's last row is read as one more row: §13's first exercise
    heading was glued to 13.1's last table (lost from the page and its contents)."""
    lines = page["md"].splitlines()
    glued = [
        line
        for before, line in zip(lines, lines[1:], strict=False)
        if re.match(r"#{1,6} ", line) and before.strip() and not before.endswith("-->")
    ]  # (an HTML comment closes its own block: a marker line may come right before)
    assert not glued, glued
    assert "### 练习 1 Exercise 1" in lines


def test_every_in_page_link_resolves(page):
    ids = set(re.findall(r'\sid="([^"]+)"', page["html"]))
    hrefs = re.findall(r'href="#([^"]*)"', page["html"])
    assert hrefs and [h for h in hrefs if h not in ids] == []
    assert "@@" not in page["html"] and "@@" not in page["md"]


def test_every_claim_has_a_card_with_a_sentence_and_its_check_folded_away(page):
    entries = ledger.load_ledger(ROOT / "report" / "ledger")
    for e in entries:
        card = re.search(
            rf'<div class="claim v-\w+" id="{re.escape(e["id"])}">(.*?)</div>', page["html"], re.S
        )
        assert card, e["id"]
        body = card.group(1)
        assert "讲义 lecture" in body and '<details class="audit">' in body, e["id"]
        assert '<p class="take study">' in body, e["id"]  # the study reading's sentence


def test_sections_11_and_12_list_their_claims_with_links(page):
    for number, claim in (("s11", "C012"), ("s12", "C118")):
        section = page["html"].split(f'id="{number}"', 1)[1].split("<h2", 1)[0]
        assert f'href="#{claim}"' in section or claim in section


# -----------------------------------------------------------------------------
# formulas


def test_formulas_are_mathml_in_the_html_and_latex_in_the_markdown(page):
    assert "$t-1$" in page["md"] and "<math" not in page["md"]
    assert "<math" in page["html"]
    assert "$" not in visible_text(page["html"])


def test_ascii_symbols_become_mathml_outside_code():
    out = report_html.symbols("<p>√d_k and d_model</p><code>d_model</code><p>d_k_values</p>")
    assert out.count("<math") == 2 and "<code>d_model</code>" in out and "d_k_values" in out


def test_a_dollar_inside_a_code_span_is_not_a_formula():
    text, formulas = report_html.stash_math("`echo $HOME` and $x_1$")
    assert text.startswith("`echo $HOME`") and len(formulas) == 1


# -----------------------------------------------------------------------------
# verdicts in words


def outcome(status, **entry):
    e = {"id": "X1", "section": "§0", "claim": "c", "lecture": "1", "class": "exact", **entry}
    finding = ledger.checks.Finding(False, "ours = 2 > 1")
    return ledger.Outcome(e, status, ours="2", findings=[finding])


def test_the_lectures_own_error_is_told_apart_from_not_reproduced():
    assert report_claims.verdict(outcome("differs")) == "differs"
    error = outcome("differs", expect="differs", flag="F02", note="the lecture is wrong here")
    assert report_claims.verdict(error) == "lecture_error"
    assert "讲义有误" in report_claims.badge(error, html_mode=False)
    assert "lecture is wrong" in report_claims.claim_card(error).split('<details class="audit">')[0]


def test_every_status_has_a_sign_a_label_and_a_sentence():
    for status in [*ledger.STATUS, report_claims.LECTURE_ERROR]:
        assert {report_claims.SYMBOL[status], report_claims.VERDICT[status]}
    text = report_claims.sentence(outcome("differs"))
    assert text.startswith("讲义 lecture 1；我们 ours 2：没有复现") and "ours = 2 > 1" in text


def test_a_note_about_a_build_is_folded_away_not_shown_beside_the_sentence():
    card = report_claims.claim_card(outcome("holds", **{"class": "seeded", "note": "ours: 0.97"}))
    head, details = card.split('<details class="audit">')
    assert "0.97" not in head and "0.97" in details


@pytest.mark.parametrize(
    "claim, part",
    [
        ("随机 RNN：距离 32 的敏感度 sensitivity at distance 32", "随机 RNN：距离 32 的敏感度"),
        (
            "缩放 + Adam：全部在 600 步内达到 90% scaled + Adam: every lr",
            "缩放 + Adam：全部在 600 步内达到 90%",
        ),
        ("一个线性的 W^Q", "一个线性的 W^Q"),  # one English word is a term, not a translation
        (
            "l'Afrique 的 query q⟨3⟩ query of l'Afrique",
            "l'Afrique 的 query q⟨3⟩ query of l'Afrique",
        ),
        ("一个头停在 BOS 上（我们：权重）a decoder head on BOS", "一个头停在 BOS 上（我们：权重）"),
        ("only English here", "only English here"),
        (  # a formula is not cut in its bracket (was "全是 √(")
            "200 个位置的 ‖PE(pos)‖ 全是 √(d/2) every norm (min and max)",
            "200 个位置的 ‖PE(pos)‖ 全是 √(d/2)",
        ),
        (  # nor after a root sign (was "嵌入 × √")
            "正弦 + 嵌入 × √d_model sinusoidal, embeddings × 8",
            "正弦 + 嵌入 × √d_model",
        ),
    ],
)
def test_the_study_reading_keeps_the_chinese_part_of_a_claim(claim, part):
    assert report_claims.chinese_part(claim) == part


@pytest.mark.parametrize(
    "text, shown",
    [
        ("不都在 not every value in [1, 30] 之间", "不都在 [1, 30] 之间"),
        # the gloss before a closing bracket goes whole (it had kept "attention", losing "no")
        ("GRU seq2seq（无注意力 no attention），L 32", "GRU seq2seq（无注意力），L 32"),
        ("逐词 per token (含 EOS)", "逐词 (含 EOS)"),
    ],
)
def test_the_study_reading_drops_a_gloss_whole(text, shown):
    from lecture17.reporting.words import study_text

    assert study_text(text) == shown


def test_a_takeaway_says_whether_our_run_supports_the_lecture_and_which_part():
    holds = report_claims.takeaway(outcome("holds", **{"class": "seeded"}))
    assert holds.endswith("支持讲义。") and "不支持" not in holds
    # an order-of-magnitude check (random-init values) says so: 0.19 vs 0.11 "supports" as meant
    orders = outcome("holds", **{"class": "seeded", "check": [{"order_of": {"value": "v"}}]})
    assert report_claims.takeaway(orders).endswith("支持讲义（只比数量级：在讲义的 10 倍以内）。")
    o = outcome("differs", **{"class": "seeded"})
    o.findings = [ledger.checks.Finding(True, "a"), ledger.checks.Finding(False, "b")]
    assert "不支持讲义（检查的 2 项里 1 项成立）" in report_claims.takeaway(o)
    o.findings = [ledger.checks.Finding(False, "记录的种子里讲义的话成立的: 2/10（95% 区间 …")]
    assert "记录的 10 个种子里有 2 个成立" in report_claims.takeaway(o)
    o.findings, o.ours, o.seeds = [], "(1, 2, 3, 4, 5)", [0, 1, 2]
    o.entry["value"] = {"quantity": "q", "demo": "02.1"}
    long = report_claims.takeaway(o)  # a long list: which seeds, its values left to the table
    assert "我们按种子 0–2 平均" in long and "(1, 2" not in long and "审计" not in long


def test_a_seed_free_demo_names_no_seed_and_its_numbers_are_the_same_for_every_seed():
    """The registry's `seed_free` demos: seeds 0 and 1 give the same rows (timings aside), and
    neither a takeaway nor a table title names a seed for them; a seeded demo's still do."""
    from lecture17.experiments import DEMOS
    from lecture17.pipeline.job import run_demo

    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text(encoding="utf-8"))
    free = [d for d in DEMOS.values() if d.seed_free]
    assert {d.id for d in free} >= {"01.1", "03.1"}
    for demo in free:
        settings = config["demos"][demo.id]["settings"]
        rows = [run_demo(demo.id, settings, seed) for seed in (0, 1)]
        rows = [r[~r["quantity"].isin(demo.timings)].drop(columns="seed") for r in rows]
        pd.testing.assert_frame_equal(*(r.reset_index(drop=True) for r in rows), obj=demo.id)
    o = outcome("same", demo="03.1", value={"quantity": "q"})
    o.ours, o.seeds = "(1, 2)", [0]
    assert "种子" not in report_claims.takeaway(o)
    o.entry["demo"] = "02.1"
    assert "我们按种子 0" in report_claims.takeaway(o)  # two unnamed values: the seeds only
    o.ours = "2"
    assert "我们（种子 0）2" in report_claims.takeaway(o)


def test_a_short_tuple_in_a_takeaway_names_each_value():
    values = {
        "beam": {"quantity": "sequence_accuracy", "where": {"width": 4}},
        "greedy": {"quantity": "sequence_accuracy", "where": {"width": 1}},
    }
    o = outcome("holds", **{"class": "beyond", "demo": "06.6", "values": values})
    o.ours, o.numbers = "(0.743, 0.710)", {"beam": 0.743, "greedy": 0.710}
    o.entry["show"], o.entry["fmt"] = ["beam", "greedy"], ".3f"
    said = report_claims.takeaway(o)
    labels = ledger.value_labels(o.entry, study=True)  # the views' Chinese where they give one
    assert "(0.743" not in said and labels["beam"] in said and "0.743、" in said
    assert labels["greedy"] in said and labels["beam"] != labels["greedy"]
    o.numbers["beam"] = [0.7, 0.8]  # a shown list: no name per value, so no unlabelled tuple
    assert "(0.743" not in report_claims.takeaway(o) and "0.7" not in report_claims.takeaway(o)


def test_a_cells_seed_spread_is_for_the_audit_reading_only():
    html = "<tr><td>GRU · 8</td><td>0.503 (0.490–0.514)</td><td>1.000</td></tr><p>L (8–32)</p>"
    out = report_html.seed_spreads(html)
    assert '<td>0.503<span class="spread"> (0.490–0.514)</span></td>' in out
    assert "<p>L (8–32)</p>" in out  # outside a table cell: left alone
    assert out.count("spread") == 1
    # the caption's "（最小–最大）" is hidden with the spreads it announces
    out = report_html.seed_spreads("<p>种子 0、1 的平均（最小–最大）</p>")
    assert out == '<p>种子 0、1 的平均<span class="spread">（最小–最大）</span></p>'


def test_claim_text_is_escaped_in_the_card():
    card = report_claims.claim_card(outcome("same", claim="max weight, s > t <b>"))
    assert "&lt;b&gt;" in card and "<b>" not in card


def test_a_section_that_differs_starts_with_a_reading_note(page):
    section = page["md"].split("### §1.2 路径长度", 1)[1].split("\n", 1)[1]  # C004, C005 differ
    assert section.lstrip().startswith("**读这一节 Reading this section**")
    first = section.lstrip().split("\n\n", 1)[0]
    assert re.search(r"\bC00[45]\b", first), first  # it names the claims that do not agree


# -----------------------------------------------------------------------------
# the lecture beside ours, folded tables, worked examples, lost tables


def test_lecture_numbers_are_read_only_when_every_item_is_a_number():
    assert lecture_numbers("(0.117, 0.648)") == ["0.117", "0.648"]
    assert lecture_numbers("(1,050,624, 1,050,624)") == ["1,050,624", "1,050,624"]
    assert lecture_numbers("0.719 vs 0.311") == ["0.719", "0.311"]
    assert lecture_numbers("约 0.25") is None and lecture_numbers("4/4, 4/4") is None


def test_a_quoted_cell_shows_the_lectures_value_beside_ours():
    assert beside_lecture("0.614", "0.614", html=False) == "0.614（= 讲义）"
    assert beside_lecture("2.0", "2", html=False) == "2.0（= 讲义）"
    assert beside_lecture("0.945 (0.930–0.989)", "0.937", html=False).endswith("讲义 0.937）")
    assert 'class="lec"' in beside_lecture("1", "2", html=True)


def test_the_jane_table_carries_the_lectures_weights(page):
    tables = tables_of(page["work"] / "tables")
    entries = ledger.load_ledger(ROOT / "report" / "ledger")
    demos = yaml.safe_load((ROOT / "config" / "config.yaml").read_text(encoding="utf-8"))["demos"]
    outcomes = ledger.evaluate_all(entries, tables, demos)
    quoted = lecture_cells(outcomes, tables)
    view = {
        "title": "w",
        "quantities": ["weight"],
        "index": ["query"],
        "columns": ["key"],
        "fmt": ".3f",
    }
    grid = view_grid(tables["01.1"], view, {k: v for (d, k), v in quoted.items() if d == "01.1"})
    row = dict(grid["rows"])["l'Afrique"]
    assert row[1] == "0.614（= 讲义）"


def test_one_row_becomes_a_line_and_a_constant_setting_column_a_fact():
    one = {"keys": [()], "corner": "n", "columns": ["值 value"], "rows": [("2048", ["33.6"])]}
    assert fold(one) == (None, ["n = 2048：33.6"])
    grid = {
        "keys": [("acc",), ("n_lrs",)],
        "corner": "d_k",
        "columns": ["a", "b"],
        "rows": [("4", ["1", "5"]), ("16", ["2", "5"])],
    }
    assert fold(grid)[0] == grid  # only the columns a view marks `fold`
    folded, facts = fold(grid, ["n_lrs"])
    assert folded["columns"] == ["a"] and facts == ["b：5（每行相同 in every row）"]
    grid["rows"][1][1][1] = "4"
    assert fold(grid, ["n_lrs"])[0] == grid  # not constant: stays a column


def test_worked_examples_print_their_inputs(page):
    md = page["md"]
    assert r"$X = {\begin{pmatrix}" in md.split("### §2.3", 1)[1].split("###", 1)[0]
    assert "强度 strength 6" in md.split("### §5.1", 1)[1].split("###", 1)[0]
    assert r"$Q = {\begin{pmatrix}2 & 2 & 0 & 0" in md.split("## §13", 1)[1]


def test_tables_the_lecture_lost_without_numbers_are_named(page):
    for section in ("§2.2", "§2.4", "§7.3", "§10.1"):
        block = page["md"].split(f"### {section}", 1)[1].split("###", 1)[0]
        assert "没有数字" in block and "held no numbers" in block, section


# -----------------------------------------------------------------------------
# figures


def test_figures_are_numbered_by_section_and_referenced_from_the_text(page):
    for name in SMALL_FIGURES:
        number = figures.FIGURES[name].section
        anchor = f"fig-{number.replace('.', '-')}"
        assert f'<figure id="{anchor}">' in page["html"]
        assert f'href="#{anchor}"' in page["html"]
        assert f"图 {number} Figure {number}" in page["md"]
    assert re.findall(r'<img src="data:image/png;base64,', page["html"])


def test_a_phone_gets_the_phone_drawing_and_the_provenance_names_the_font(page):
    sources = re.findall(r'<source media="([^"]+)" srcset="data:image/png;base64,', page["html"])
    assert sources == [report_mod.PHONE_MEDIA] * len(SMALL_FIGURES)
    css = (ROOT / "report" / "templates" / "lecture17.html.j2").read_text(encoding="utf-8")
    assert f"{report_mod.PHONE_MEDIA} {{ .zoom {{ display: none; }} }}" in css
    assert f"图的字体 figure font：{figures.font_note()}" in page["md"]
    assert figure_numbers(["05.4_step_time", "06.3_gpu_step_time"]) == {
        "05.4_step_time": "9.5a",
        "06.3_gpu_step_time": "9.5b",
    }


def drawn(name: str, folder: Path, phone: bool = False):
    matplotlib.use("Agg")
    demo = figures.FIGURES[name].table
    return figures.render(name, tables_of(folder)[demo], phone=phone)


def figure_cases():
    """Every figure, wide and on a phone, in Chinese (this machine's CJK font) and in the English
    a machine without it draws."""
    reason = reference_missing()
    no_font = "no Noto Sans CJK SC: fonts-noto-cjk"
    cases = []
    for name in figures.FIGURES:
        for phone in (False, True):
            for chinese in (True, False):
                marks = []
                if name not in SMALL_FIGURES and reason:
                    marks.append(pytest.mark.skip(reason=reason))
                if chinese and figures.cjk_font() is None:
                    marks.append(pytest.mark.skip(reason=no_font))
                source = "small" if name in SMALL_FIGURES else "reference"
                tag = f"{name}-{'phone' if phone else 'wide'}-{'zh' if chinese else 'en'}"
                cases.append(pytest.param(name, source, phone, chinese, id=tag, marks=marks))
    return cases


def titles(fig) -> list:
    """Every title: the figure's and its subfigures' suptitles, each axes' title."""
    from matplotlib.figure import FigureBase

    tops = [f._suptitle for f in fig.findobj(FigureBase) if getattr(f, "_suptitle", None)]
    return tops + [ax.title for ax in fig.axes if ax.title.get_text()]


@pytest.mark.parametrize(("name", "source", "phone", "chinese"), figure_cases())
def test_figure_text_is_readable_and_legends_stay_off_the_data_and_the_titles(
    name, source, phone, chinese, page, monkeypatch
):
    import matplotlib.pyplot as plt
    from matplotlib.legend import Legend
    from matplotlib.text import Text

    if not chinese:
        monkeypatch.setattr(figure_base, "cjk_font", lambda: None)  # _t and font_note ask it
    folder = page["work"] / "tables" if source == "small" else ROOT / "report/reference/tables"
    if source == "reference" and figures.FIGURES[name].table not in tables_of(folder):
        pytest.skip(f"the reference build has no table {figures.FIGURES[name].table}")
    fig = drawn(name, folder, phone)
    fig.canvas.draw()
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    assert texts and figures.smallest_text_pt(fig) >= figures.MIN_FONT_PT
    width = fig.get_size_inches()[0]
    assert (
        width == figures.PHONE_WIDTH if phone else figures.PHONE_WIDTH < width <= figures.MAX_WIDTH
    )
    renderer = fig.canvas.get_renderer()
    page_box = fig.bbox.padded(1)
    drawn_boxes = [ax.get_tightbbox(renderer) for ax in fig.axes]  # its ticks, labels, title
    drawn_boxes += [a.get_window_extent(renderer) for a in titles(fig) + fig.findobj(Legend)]
    for box in drawn_boxes:  # nothing cut off at the figure's edge
        assert page_box.contains(box.x0, box.y0) and page_box.contains(box.x1, box.y1), box
    for legend in fig.findobj(Legend):
        box = legend.get_window_extent(renderer)
        for ax in fig.axes:
            assert not box.overlaps(ax.get_window_extent(renderer)), (name, ax.get_title())
        for title in titles(fig):
            assert not box.overlaps(title.get_window_extent(renderer)), title.get_text()
    words = re.sub(r"\$[^$]*\$", "", " ".join(t.get_text() for t in texts))  # mathtext aside
    assert not re.search(r"\b(post_ln|pre_ln|adam|sgd|sqrt|d_k|_|True|False)\b", words), words
    plt.close(fig)


@pytest.mark.skipif(bool(reference_missing()), reason=reference_missing() or "")
def test_the_anti_diagonal_the_lecture_expects_is_marked_on_every_cross_attention_map():
    """§9.4: output step t of the reversal reads source position L − 1 − t (its mirror)."""
    from matplotlib.lines import Line2D

    fig = drawn("05.3_attention_maps", ROOT / "report/reference/tables", phone=True)
    marked = []
    for ax in fig.axes:
        lines = [line for line in ax.get_lines() if isinstance(line, Line2D)]
        if lines:
            n_keys = ax.images[0].get_array().shape[1]
            (line,) = lines
            assert list(line.get_xdata()) == [n_keys - 1, 0] == list(line.get_ydata())[::-1]
            marked.append(ax)
    panels = figures_reversal._attention_panels(tables_of(ROOT / "report/reference/tables")["05.3"])
    assert len(marked) == len(panels["cross"]) > 0
    legend = " ".join(t.get_text() for t in fig.legends[0].get_texts())
    assert "讲义预期的反对角线" in legend or "the lecture's expectation" in legend


@pytest.mark.skipif(bool(reference_missing()), reason=reference_missing() or "")
@pytest.mark.parametrize("phone", [False, True])
def test_the_attention_maps_draw_a_table_of_one_block(phone):
    """check --trained on a student's layers: the Transformer's maps are not collected (the
    adapter sees the layer, not the block in it), the GRU's are; the figure draws its one row
    (it had crashed: one subfigure is not a list)."""
    matplotlib.use("Agg")
    from matplotlib import pyplot

    table = tables_of(ROOT / "report/reference/tables")["05.3"]
    table = table[(table["quantity"] != "map") | (table["model"] == "gru_attention")]
    fig = figures.render("05.3_attention_maps", table, phone=phone)
    assert len([ax for ax in fig.axes if ax.images]) == 1
    pyplot.close(fig)


CJK = re.compile(r"[\u4e00-\u9fff]")


def label_text(fig) -> str:
    from matplotlib.text import Text

    return " ".join(t.get_text() for t in fig.findobj(Text) if t.get_visible())


@pytest.mark.skipif(figures.cjk_font() is None, reason="no Noto Sans CJK SC: fonts-noto-cjk")
def test_figures_are_labelled_in_chinese_with_the_english_term_once(page):
    fig = drawn("03.1_pe_heatmap", page["work"] / "tables")
    text = label_text(fig)
    assert CJK.search(text) and text.count("positional encoding") == 1
    assert "Noto Sans CJK SC" in figures.font_note() and figures.cjk_font().version[0].isdigit()


def test_a_cjk_font_installed_after_matplotlibs_font_cache_was_written_is_found(monkeypatch):
    """matplotlib lists the fonts once, in a cache it never refreshes: fonts-noto-cjk installed
    after its first import (CI's image) must still draw the Chinese labels."""
    from matplotlib import font_manager

    files = [p for p in font_manager.findSystemFonts() if Path(p).name.startswith(figures.CJK_FILE)]
    if not files:
        pytest.skip("no Noto Sans CJK SC: fonts-noto-cjk")
    stale = font_manager.FontManager()
    stale.ttflist = [f for f in stale.ttflist if f.name != figures.CJK_FAMILY]
    monkeypatch.setattr(font_manager, "fontManager", stale)
    monkeypatch.setattr(font_manager, "findfont", stale.findfont)
    with pytest.raises(ValueError):  # the cache as CI's image had it
        stale.findfont(
            font_manager.FontProperties(family=figures.CJK_FAMILY), fallback_to_default=False
        )
    font = figures.cjk_font.__wrapped__()
    assert font is not None and font.family == figures.CJK_FAMILY and font.version[0].isdigit()


def test_without_the_cjk_font_the_figures_are_english_and_the_png_says_so(
    page, tmp_path, monkeypatch
):
    monkeypatch.setattr(figure_base, "cjk_font", lambda: None)  # _t and font_note ask it
    for name in SMALL_FIGURES:
        assert not CJK.search(label_text(drawn(name, page["work"] / "tables"))), name
    name = SMALL_FIGURES[0]
    table = page["work"] / "tables" / f"{figures.FIGURES[name].table}.csv"
    figures.draw(name, table, tmp_path / "a.png", tmp_path / "phone.png")
    figures.draw(name, table, tmp_path / "b.png")
    assert (tmp_path / "a.png").read_bytes() == (tmp_path / "b.png").read_bytes()
    assert "English labels" in figures.png_text(tmp_path / "phone.png")[figures.FONT_KEY]
    assert "图里的标注是英文" in report_mod.figure_fonts([tmp_path / "a.png"])  # the page says so


def test_a_figure_is_the_same_bytes_when_drawn_twice(page, tmp_path):
    name = SMALL_FIGURES[0]
    table = page["work"] / "tables" / f"{figures.FIGURES[name].table}.csv"
    figures.draw(name, table, tmp_path / "a.png", tmp_path / "a-phone.png")
    figures.draw(name, table, tmp_path / "b.png", tmp_path / "b-phone.png")
    assert (tmp_path / "a.png").read_bytes() == (tmp_path / "b.png").read_bytes()
    assert (tmp_path / "a-phone.png").read_bytes() == (tmp_path / "b-phone.png").read_bytes()
    info = figures.png_text(tmp_path / "a-phone.png")
    assert info[figures.FONT_KEY] == figures.font_note()
    assert float(info[figures.SMALLEST_KEY]) == figures.MIN_FONT_PT * figures.DPI / 72


# -----------------------------------------------------------------------------
# the page as a file


def test_the_page_is_responsive_and_its_tables_scroll(page):
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in page["html"]
    assert page["html"].count("<table>") == page["html"].count('<div class="scroll"><table>') > 5


def test_two_renders_give_the_same_bytes(page, tmp_path):
    again = small_build(tmp_path)
    assert again.read_text(encoding="utf-8") == page["html"]
    assert (tmp_path / "lecture17.md").read_text(encoding="utf-8") == page["md"]


def misplaced(md: str) -> list[tuple[str, str, str]]:
    """(claim, its section, the heading it sits under) for every claim row of the Markdown
    report whose heading is not its own: an exercise's claim under another exercise's (or no
    exercise's) heading, a § claim under a heading that names other § numbers."""
    wrong, heading = [], ""
    for line in md.splitlines():
        if line.startswith("#"):  # a subheading without a § ("更多种子") is in its §'s
            text = line.lstrip("#").strip()
            if line.startswith("## ") or report_html.covered(text) or text.startswith("练习"):
                heading = text
            continue
        row = re.match(r"\| ((?:C|L17-)[\w.-]+) \| ([^|]+) \|", line)
        if not row or not heading:
            continue
        claim, section = row.group(1), row.group(2).strip()
        if section.startswith("Ex"):
            number = re.match(r"Ex(\d+)", section).group(1)
            if not re.match(rf"练习 {number}\b", heading):
                wrong.append((claim, section, heading))
        elif section.startswith("§") and report_html.covered(heading):
            says = [
                (int(a), int(b) if b else None)
                for a, b in report_html.SECTION_NUMBERS.findall(section)
            ]  # "§11 / §3.2": either
            sections = report_html.covered(heading)
            if not any(s in sections or (s[0], None) in sections for s in says):
                wrong.append((claim, section, heading))
    return wrong


def test_every_card_sits_under_its_own_heading(page, tmp_path):
    """An exercise's card under its exercise's heading (Ex2, Ex3(c), Ex6(b), Ex8 were
    filed under 练习 9), a § card under a heading that covers its § — on the small page and on
    the reference rendered again."""
    assert misplaced(page["md"]) == []
    if reference_missing():
        pytest.skip(reference_missing())
    reference_render(tmp_path)
    md = (tmp_path / "lecture17.md").read_text(encoding="utf-8")
    assert "| C128 | Ex2 |" in md  # the test reads the rows it judges
    assert misplaced(md) == []


def test_every_flag_a_claim_uses_is_explained_on_the_page(page):
    """F01–F10 were never defined on the page; each flag used is, in a sentence."""
    used = {e["flag"] for e in ledger.load_ledger(ROOT / "report" / "ledger") if e.get("flag")}
    assert used and used <= set(ledger.FLAG_TEXT)
    for flag in used:  # the small page's claims use some of them; each one is explained
        if f"[{flag}]" in page["md"] or f"，{flag}）" in page["md"]:
            assert f"**{flag}**：" in page["md"], flag
    assert "**F01**：" in page["md"] or "F01" not in page["md"]


# -----------------------------------------------------------------------------
# the study reading read cold (a second review): each takeaway says which seeds,
# why a claim does not hold, which part of a compound claim holds


def seeded(status, seeds, stat=None, **entry):
    value = {"quantity": "q", **({"stat": stat} if stat else {})}
    o = outcome(status, **{"class": "seeded", "demo": "05.1", "value": value, **entry})
    o.seeds, o.ours, o.findings = seeds, "0.58", []
    return o


def test_a_takeaway_says_which_seeds_and_which_statistic_it_shows():
    assert "我们（种子 0–2 平均）0.58" in report_claims.takeaway(seeded("holds", [0, 1, 2]))
    assert "我们（种子 0）0.58" in report_claims.takeaway(seeded("holds", [0]))
    assert "（种子 0–2 中最大）" in report_claims.takeaway(seeded("precision", [0, 1, 2], "max"))
    o = seeded("holds", list(range(100, 110)))
    o.protocol = seeded("holds", [0, 1, 2])
    assert "我们（记录的种子 100–109 平均）0.58" in report_claims.takeaway(o)
    assert report_claims.seed_words([0, 1, 2, 100, 101, 102]) == "种子 0–2、100–102"


def test_every_table_says_which_seeds_it_shows(page):
    """Every table names its seeds, except a seed-free demo's (registry `seed_free`), which
    names none: no seed changes its numbers."""
    from lecture17.experiments import DEMOS
    from lecture17.reporting.views import load_views

    views = load_views(ROOT / "report" / "views")
    free = {v["title"] for d, vs in views.items() if DEMOS[d].seed_free for v in vs}
    tables = re.findall(r"^(\*\*[^*\n]+\*\*.*)\n\n\|", page["md"], flags=re.M)  # a table's title
    unnamed = [t for t in tables if "种子" not in t and "一次运行" not in t]
    assert tables and unnamed and {t.split("**")[1] for t in unnamed} <= free
    assert [t for t in tables if t.split("**")[1] in free and "（种子" in t] == []


def test_where_the_protocol_seeds_and_the_recorded_seeds_disagree_one_sentence_says_which():
    o = seeded("unresolved", list(range(100, 110)))
    o.protocol = seeded("differs", [0])
    said = report_claims.takeaway(o)
    assert "本页表格里的种子 0（0.58）上不成立；以记录的 10 个种子为准" in said
    o.protocol = seeded("unresolved", [0])  # they agree: nothing to reconcile
    assert "以记录的" not in report_claims.takeaway(o)


def test_where_the_protocol_seeds_fail_the_note_says_what_failed_without_the_tolerance_recipe():
    o = seeded("holds", list(range(100, 110)))
    o.protocol = seeded("differs", [0])
    o.protocol.findings = [
        ledger.checks.Finding(True, "先成立的一步"),
        ledger.checks.Finding(
            False, "平均熵 = 0.09 离讲义 0.11 差 0.019，容差 0.005（半个末位 + 4 SE）：超出容差"
        ),
    ]
    text = report_claims.takeaway(o)
    assert "上不成立（离讲义 0.11 差 0.019，只允许差 0.005）；以记录的 10 个种子为准。" in text
    o.protocol.findings = [ledger.checks.Finding(False, "未满足：后面的位置在 0.64–0.78 内")]
    assert "上不成立（要求：后面的位置在 0.64–0.78 内）" in report_claims.takeaway(o)


def test_two_parts_of_one_sentence_with_opposite_badges_say_which_part_each_judges():
    """Two claims on two parts of one sentence (a `pair`, not twins) each keep their verdict:
    the card says which part each judges, never that the other decides."""
    rated = seeded("unresolved", list(range(100, 110)), id="C1", pair="C2", section="§9.4")
    rated.protocol, rated.detail = seeded("differs", [0]), [ledger.checks.Finding(None, "x")]
    rate = seeded("holds", list(range(100, 110)), id="C2", pair="C1", section="§9.2 / §11")
    others = {"C1": rated, "C2": rate}
    mine, theirs = report_claims.takeaway(rated, others), report_claims.takeaway(rate, others)
    assert "另有一条在 §9.2 演示 05.1（✓ 成立）" in mine and "以本条为准" not in mine
    assert "另有一条在 §9.4 演示 05.1（? 无法分辨）" in theirs and "以那一条为准" not in theirs
    assert "两条判的是这句话的不同部分，各有各的结论" in mine  # no `judges`: the general words
    rated.entry["judges"], rate.entry["judges"] = "先后", "两个步数本身"
    mine = report_claims.takeaway(rated, others)
    assert "本条判的是先后，那一条判的是两个步数本身。" in mine
    rate.status = "unresolved"  # the same verdict: no sentence
    assert "另有一条" not in report_claims.takeaway(rated, others)


def test_twins_say_every_time_which_one_decides():
    """Twins (one assertion): the evidence card points to the deciding one with its verdict,
    and the deciding card says the other is its evidence, whatever the two verdicts."""
    decider = seeded("holds", list(range(100, 110)), id="C2", pair="C1", section="§9.2")
    decider.entry["preregistered"] = True
    evidence = seeded("unresolved", list(range(100, 110)), id="C1", pair="C2", section="§9.2")
    evidence.entry["evidence"] = True
    others = {"C1": evidence, "C2": decider}
    said = report_claims.takeaway(evidence, others)
    assert "以 §9.2 演示 05.1 那一条为准（✓ 成立，读法在跑实验前定下）" in said
    assert "本条只作佐证" in said and "数据还定不了" not in said
    assert "只作本条的佐证" in report_claims.takeaway(decider, others)
    assert report_claims.study_verdict(evidence) == report_claims.EVIDENCE


def test_judges_belongs_to_a_pair_and_the_ledgers_pairs_say_what_each_judges(tmp_path):
    entries = ledger.load_ledger(ROOT / "report" / "ledger")
    # two parts of one sentence say which part each judges; twins (one assertion) say which
    # decides instead (`evidence`, `preregistered`)
    twins = {ledger.assertion(e) for e in entries if e.get("evidence")}
    paired = [e for e in entries if "pair" in e and ledger.assertion(e) not in twins]
    assert paired and all("judges" in e for e in paired)
    (tmp_path / "x.yaml").write_text(
        "- {id: C1, section: '§1', demo: '01.1', claim: c, lecture: '1', class: exact,"
        " judges: part, numbers: {a: 1}, values: {a: {quantity: q}},"
        " check: [{equal: {value: a, to: 1}}]}\n"
    )
    with pytest.raises(ValueError, match="`judges` says which part of a pair"):
        ledger.load_ledger(tmp_path)


def test_a_reason_is_shown_only_while_its_check_holds_on_the_data():
    entries = {e["id"]: e for e in ledger.load_ledger(ROOT / "report" / "ledger")}
    tables = tables_of(ROOT / "report" / "reference" / "tables")
    o = ledger.evaluate(entries["C004"], tables)
    assert o.status == "differs" and o.why and "可能的原因" in report_claims.takeaway(o)
    rnn = tables["01.4"]
    faster = (rnn["model"] == "rnn") & (rnn["distance"].astype(str) == "32")
    slower = rnn.copy()
    slower.loc[faster, ["mean", "min", "max"]] *= 1e6  # now above the lecture's 5.3e-07
    o = ledger.evaluate(entries["C004"], {**tables, "01.4": slower})
    assert o.why == "" and "可能的原因" not in report_claims.takeaway(o)
    o = ledger.evaluate(entries["C004"], tables)
    o.status = "holds"  # a reason explains a claim that does not hold, never one that does
    assert "可能的原因" not in report_claims.takeaway(o)


def test_every_differs_the_reviewer_found_without_a_reason_has_one():
    entries = ledger.load_ledger(ROOT / "report" / "ledger")
    ids = {"C004", "C005", "C039", "C040", "C042", "C087", "L17-B7.5a", "L17-B7.5b", "C107"}
    ids |= {"C108", "C113", "C114", "L17-R9.2c", "C023", "C123", "L17-06.8a", "L17-06.8b"}
    ids |= {"L17-R9.2a", "L17-06.8c", "L17-S0a"}  # the second cold read's
    ids |= {"L17-06.7e", "C002"}  # the third's: ALiBi on copy, script 05's two minutes
    assert ids <= {e["id"] for e in entries if "why" in e}
    # the newest reasons hold on the reference build, where their claims do not agree
    tables = tables_of(ROOT / "report" / "reference" / "tables")
    for entry in (e for e in entries if e["id"] in {"L17-R9.2a", "L17-06.8c", "L17-06.7e"}):
        o = ledger.evaluate(entry, tables)
        assert not report_claims.agreement(o) and o.why, entry["id"]


def test_a_claim_beyond_the_lecture_is_never_said_to_contradict_the_lecture():
    o = outcome("differs", **{"class": "beyond", "demo": "06.7"})
    text = report_claims.takeaway(o)
    assert "不支持讲义" not in text and "在我们这里不成立（讲义只是提到，没有测）" in text
    o.findings = [ledger.checks.Finding(True, "a"), ledger.checks.Finding(False, "b")]
    assert "在我们这里不成立（检查的 2 项里 1 项成立）" in report_claims.takeaway(o)
    o = outcome("differs", **{"class": "seeded", "demo": "05.1"})
    assert "不支持讲义" in report_claims.takeaway(o)  # the lecture's own claim keeps its word


def test_how_many_more_seeds_would_decide_is_the_audit_readings():
    """Seed arithmetic ("再要约 12 个种子") is for the audit reading: the card's audit sentence
    says it, the study takeaway does not (its reason says why in words)."""
    o = seeded("unresolved", list(range(100, 110)))
    o.findings = [ledger.checks.Finding(None, "区间跨过 0.5：按这个比率再要约 12 个种子 about 12")]
    assert "再要约" not in report_claims.takeaway(o)
    assert "再要约 12 个种子" in report_claims.sentence(o)


def test_a_failed_timing_shows_our_number_not_the_rule():
    o = outcome("timing_fails", **{"class": "timing"})
    o.ours = "(7,581, 12,985, 24,175, 10,357)"
    o.findings = [
        ledger.checks.Finding(False, "未满足 not met：3 个种子 × 9 个设置共 425 s，须在 120 s 以内")
    ]
    said = report_claims.takeaway(o)
    assert "我们：3 个种子 × 9 个设置共 425 s" in said and "见审计读法" not in said


def test_a_compound_claim_says_which_part_holds_and_which_fails():
    o = outcome("timing_fails", **{"class": "timing", "parts": ["1–30 ms", "同一量级", "同一量级"]})
    o.findings = [ledger.checks.Finding(ok, "f") for ok in (False, True, True)]
    assert "部分成立（✓ 同一量级；✗ 1–30 ms）" in report_claims.takeaway(o)
    # the study reading's badge says "partly" where a part holds; the audit keeps "differs"
    o = outcome("differs", **{"class": "seeded", "parts": ["趋势", "数值"]})
    o.findings = [ledger.checks.Finding(ok, "f") for ok in (True, False)]
    assert "◐ 部分成立" in report_claims.study_badge(o) and 'class="claim v-partly"' in (
        report_claims.claim_card(o)
    )
    assert "✗" in report_claims.badge(o, html_mode=True)
    assert "部分支持讲义（1 条）" in report_claims.problems_short([o])
    o.findings = [ledger.checks.Finding(False, "f") for _ in range(2)]  # no part holds
    assert "✗ 不同" in report_claims.study_badge(o)
    parts = {e["id"]: e.get("parts") for e in ledger.load_ledger(ROOT / "report" / "ledger")}
    assert parts["C122"] and parts["C005"] and parts["C113"] and parts["C108"] and parts["L17-S0a"]


def test_the_study_reading_names_values_in_chinese_with_one_label_for_the_length():
    for e in ledger.load_ledger(ROOT / "report" / "ledger"):
        if e["class"] in ("cited",) or not ("value" in e or "values" in e):
            continue
        for label in ledger.value_labels(e, study=True).values():
            assert not re.search(r"simulated|seq len|lowest seed|the largest|↓|\[\w+\]", label), (
                e["id"],
                label,
            )
            assert not re.search(r"种子中(最小|最大)，其中\1", label), (e["id"], label)
    both = {"quantity": "sensitivity", "stat": "min", "reduce": "min"}
    assert ledger.value_label(both, "01.4", study=True).endswith("所有种子、所有格里最小）")
    # a setting whose value names it is said once: "（不缩放）", not "（缩放 不缩放）"
    for value, said in (("scaled", "（缩放）"), ("unscaled", "（不缩放）")):
        where = {"quantity": "max_weight", "where": {"scaled": value}}
        assert ledger.value_label(where, "02.2", study=True).endswith(said), value


def test_echoes_are_counted_apart_from_agreeing_claims_in_a_section_note():
    echo, same, off = outcome("echo"), outcome("same"), outcome("differs")
    note = report_claims._reading([echo, same, off], html_mode=False)
    assert "1 个和讲义一致 agree" in note and "1 个回显讲义自己的数" in note


def test_the_headings_name_no_study_the_default_build_does_not_run():
    from lecture17.experiments import DEMOS

    text = (ROOT / "report" / "templates" / "lecture17.md.j2").read_text(encoding="utf-8")
    headings = [line for line in text.splitlines() if line.startswith("#")]
    studies = [d for d, demo in DEMOS.items() if demo.study]
    assert studies and [h for h in headings for d in studies if d in h] == []
    views = yaml.safe_load((ROOT / "report" / "views" / "07.yaml").read_text(encoding="utf-8"))
    for recorded in ("07.9", "09.1"):  # the studies' tables: one in the study reading
        assert any(not v.get("audit") for v in views[recorded])


def study_text(page_html: str) -> tuple[str, list[str]]:
    """The study reading's text (audit blocks, folded checks, formulas and styles left out)
    and its headings, from the page's HTML."""
    from html.parser import HTMLParser

    class Reader(HTMLParser):
        def __init__(self):
            super().__init__()
            self.stack, self.hidden, self.text, self.headings = [], 0, [], []

        def handle_starttag(self, tag, attrs):
            if tag in ("br", "img", "hr", "input", "meta", "link"):
                return
            cls = dict(attrs).get("class") or ""
            hidden_classes = {"audit", "en", "spread"}  # hidden by the study reading's CSS
            hide = bool(hidden_classes & set(cls.split()))
            hide = hide or tag in ("details", "style", "math", "nav")
            self.stack.append((tag, hide))
            self.hidden += hide

        def handle_endtag(self, tag):
            while self.stack:
                name, hide = self.stack.pop()
                self.hidden -= hide
                if name == tag:
                    break

        def handle_data(self, data):
            if not self.hidden:
                self.text.append(data)
                if self.stack and self.stack[-1][0] in ("h2", "h3", "h4", "h5"):
                    self.headings.append(data)

    reader = Reader()
    reader.feed(page_html)
    return "".join(reader.text), reader.headings


@pytest.fixture(scope="module")
def reference_page(tmp_path_factory):
    if reason := reference_missing():
        pytest.skip(reason)
    return reference_render(tmp_path_factory.mktemp("reference")).read_text(encoding="utf-8")


def test_the_study_reading_has_no_machinery_and_no_orphaned_heading(reference_page):
    text, headings = study_text(reference_page)
    for machinery in ("report/", "config/", "snakemake", "python -m", "Wilson", "pre-registered"):
        assert machinery not in text, machinery
    # one id system for students (§, 代码 NN 演示 k): no claim ids, no rulebook rules
    assert re.findall(r"\bC\d{3}\b|\bL17-[\w.–]+|\bR\d{1,2}\b|运行之前", text) == []
    # no formula left as pseudo-LaTeX (W_i^Q, h_t^T W_a h_s, ‖…‖_F): MathML (<math> is left out
    # of the text here); code names such as emb_scale are not formulas
    assert re.findall(r"\^[\w{]|\b[A-Za-z]{1,2}_[A-Za-z0-9]{1,2}\b|‖_", text) == []
    # no unlabelled tuple of ours in a takeaway ("我们（种子 0）(0.6667, 0.6667)")
    assert re.findall(r"我们[^—。：]{0,30}\([−\d][^)]*,[^)]*\)", text) == []
    assert [h for h in headings if "更多种子" in h or "Failed seeds" in h] == []
    assert "§10.4" in text and "分块的注意力" in text  # §10.4 has its takeaway
    # demos by the lecture's names only: "代码 06 演示 2", never the registry's "06.2"
    assert re.findall(r"(?<![\d.§])(?:0\d|13)\.\d(?![\d.])", text) == []
    assert "代码 06 演示 2" in text and "代码 01–05 是讲义的五个脚本" in text
    # the jargon a cold reader stumbled on, in the reading path
    for word in ("容差", "默认构建的种子", "results CSV", "饱和阈值", "判定：", "tolerance"):
        assert word not in text, word


def test_a_demo_id_in_running_text_becomes_the_lectures_name_outside_code():
    html_in = (
        "<p>读 05.1 的模型（记录的运行 recorded，演示 07.6、07.5）；config 13.1；演示 demo 06.2；"
        "§10.4，0.05，1e-05.1，v01.2，105.1 s</p><code>run 06.3</code><a href='#d-05.1'>x</a>"
    )
    assert report_html.demo_names(html_in) == (
        "<p>读 代码 05 演示 1 的模型（记录的运行 recorded，代码 07 演示 6、代码 07 演示 5）；"
        "代码 13 演示 1；代码 06 演示 2；§10.4，0.05，1e-05.1，v01.2，105.1 s</p>"
        "<code>run 06.3</code><a href='#d-05.1'>x</a>"
    )


def test_an_english_gloss_shows_once_in_the_study_reading_and_terms_always():
    html_in = (
        '<div class="audit"><p>最快步数 fastest</p></div>'  # the audit's showing is not the first
        "<p>最快步数 fastest；扫过 swept</p><td>最快步数 fastest</td>"
        "<p>不带注意力的 GRU seq2seq；模型 GRU；numpy 编码器层 vs nn.TransformerEncoderLayer</p>"
        "<p>查字典 The Look-up task（代码 02 演示 3）与 exposure bias；种子 t = 1</p>"
        "<code>模型 model fastest</code>"
    )
    out = report_html.english_once(html_in.replace("fastest", "fastest steps"))
    # the third showing, after the visible first; its space goes with it
    assert out.count('<span class="en"> fastest steps</span>') == 1
    assert "<p>最快步数 fastest steps；扫过 swept</p>" in out  # first showings, as they were
    for kept in ("GRU seq2seq", "vs nn.TransformerEncoderLayer", "exposure bias", "t = 1"):
        assert f'<span class="en"> {kept}' not in out, kept
    assert "<code>模型 model fastest steps</code>" in out  # code is never touched
    again = report_html.english_once(
        html_in + "<p>实验 The look-up task</p><p>实验 the Look-up task</p>"
    )
    assert '<span class="en"> the Look-up task</span>' in again  # case aside, the same gloss
    # one word may be the word itself, not a translation: never hidden
    once = "<p>放进不同 batch，有 mask：</p><p>放进不同 batch，有 mask：</p>"
    assert report_html.english_once(once) == once
    # a translation (four words or more) is the audit reading's from its first showing
    title = "<p>l'Afrique 的打分 Scaled scores of each word（q·k）</p>"
    assert '<span class="en"> Scaled scores of each word</span>' in report_html.english_once(title)
    assert "Scaled scores" not in report_html.english_once(title).replace(
        '<span class="en"> Scaled scores of each word</span>', ""
    )
    # a gloss inside the parentheses it closes: "GRU（无注意力 no attention）" in every row
    rows = "<td>GRU（无注意力 no attention）</td>" * 2 + "<p>最大误差 max error of PE(p)</p>"
    out = report_html.english_once(rows)
    assert out.count('<span class="en"> no attention</span>）') == 1  # the second row's
    assert "max error of PE(p)" in out  # an ASCII parenthesis is the text's, not a close


def test_a_beyond_the_lecture_entry_in_the_contents_keeps_its_short_title_on_a_phone():
    heading = "§8.4 超出讲义：KV cache Beyond the lecture: a cache（代码 06 演示 2）"
    h = {"id": "s8-4-b", "html": heading}
    entry = report_html.toc_entry(h)
    # a phone shows .n and .d: "§8.4 超出讲义：KV cache 代码 06 演示 2", not "§8.4 超出讲义" twice
    assert '<span class="n">§8.4 超出讲义：KV cache</span>' in entry
    assert 'class="t"' not in entry and "Beyond" not in entry  # the contents are in Chinese
    assert '<span class="d">代码 06 演示 2</span>' in entry


def test_a_summary_point_is_a_sentence_with_how_its_sections_numbers_fare():
    """§11 / §12 restate each point in a sentence: its sections' counted numbers by the study
    verdict (the ones that do not hold by section), timings only pointed to, others left out."""
    holds = outcome("holds", section="§6.2", **{"class": "seeded"})
    same = outcome("same", section="§6.3 / §11")
    off = outcome("differs", section="§6.6", **{"class": "seeded"})
    elsewhere = outcome("differs", section="§7.3")
    echo = outcome("differs", section="§6.2", **{"class": "echo"})
    timing = outcome("timing_fails", section="§6.2", **{"class": "timing"})
    claims = [holds, same, off, elsewhere, echo, timing]
    said = report_claims.point_sentence(claims, "位置编码", "§6", html_mode=False)
    assert said == (
        "位置编码（§6）：这里算出的 3 个数字里 2 个支持讲义，1 个不支持（§6.6），"
        "另有 1 个计时，结论因机器而异，见它们的节。"
    )
    assert "都支持讲义" in report_claims.point_sentence(claims, "t", "§6.2 §6.3", False)
    assert "没有给出" in report_claims.point_sentence(claims, "t", "§10", False)
    assert report_claims.point_sentence(claims, "t", "§6.2", True).startswith("t（@@SEC:§6.2@@）")


def test_every_flag_the_page_explains_is_marked_where_it_is_used(reference_page):
    """The flags listed at the top (explained once, in the audit reading) are each named in
    the study reading where a claim or a table rests on them, and only those are listed."""
    text, _ = study_text(reference_page)
    listed = set(re.findall(r"(F(?:0[1-9]|10))：", visible_text(reference_page)))
    assert listed and not re.search(r"讲义文本的标记 flags", text)  # the list: audit reading's
    for flag in sorted(listed):
        assert flag in text, flag


@pytest.mark.parametrize(
    "ours, lecture, same",
    [
        ("0.614", "0.614", True),
        ("2.0", "2", True),
        ("0.3046", "0.305", True),  # ours printed with more decimals, rounded to the lecture's
        ("0.3046 (0.301–0.308)", "0.305", True),
        ("0.3044", "0.305", False),
        ("0.682", "0.684", False),
        ("0.30", "0.305", False),  # fewer decimals than the lecture's: not the same digits
    ],
)
def test_a_cell_is_marked_as_the_lectures_number_at_the_lectures_precision(ours, lecture, same):
    from lecture17.reporting.views import beside_lecture

    assert ("= 讲义" in beside_lecture(ours, lecture, html=False)) is same


def test_a_heading_inside_an_audit_block_is_listed_in_the_audit_reading_only():
    from lecture17.reporting import page as page_mod

    body = (
        "<h2>§1 一</h2><p>x</p>"
        f"<p>{page_mod.AUDIT_BEGIN}</p><h2>复现信息 Provenance</h2><h3>机器</h3>"
        f"<p>{page_mod.AUDIT_END}</p><h2>§2 二</h2>"
    )
    _, headings = page_mod.anchor_headings(body)
    assert [h["audit"] for h in headings] == [False, True, True, False]
    contents = page_mod.toc(headings)
    assert contents.count('<li class="audit">') == 2 and "<li><a" in contents


CARD = re.compile(r'<div class="claim [^"]*" id="([^"]+)">\s*<p class="take study">(.*?)</p>', re.S)
WORDS = re.compile(r"[\u3400-\u9fff]+|[A-Za-z][A-Za-z'’\-]*")


FORMULA = re.compile(r"‖[^‖]*‖(_F)?|\w+(?:_\{?\w+\}?|\^\{?\w+\}?)+|\$[^$]*\$")


def needed_words(text: str) -> str:
    """A claim's text less what the page may show otherwise: formulas (MathML, outside the
    text) and an English gloss that translates the Chinese before it (page_text's rule: a run of
    two or more words, no term), which the study reading shows once."""
    from lecture17.reporting.page_text import GLOSS, _is_gloss

    text = FORMULA.sub(" ", text)
    return GLOSS.sub(lambda m: " " if _is_gloss(m[0].strip()) else m[0], text)


def test_no_word_of_a_claim_is_lost_in_the_study_reading(reference_page):
    """Every card's study sentence, as a student sees it (the English-once rule applied), keeps
    every word of its ledger claim's Chinese part: hiding a repeated English gloss must never
    take a word the sentence needs ("teacher forcing", the "no" of "no attention")."""
    from lecture17.reporting.claim_words import study_claim  # the audit reading keeps the rest

    cards = dict(CARD.findall(reference_page))
    entries = {e["id"]: e for e in ledger.load_ledger(ROOT / "report" / "ledger")}
    assert len(cards) > 100
    lost = {}
    for claim_id, paragraph in cards.items():
        shown, _ = study_text(f"<p>{paragraph}</p>")
        shown = " ".join(shown.split())
        words = WORDS.findall(needed_words(study_claim(entries[claim_id])))
        if missing := [w for w in words if w not in shown]:
            lost[claim_id] = missing
    assert not lost, f"words of the ledger's claim not shown on the page: {lost}"


def test_the_word_test_catches_a_hidden_term():
    """The test above can fail: a term wrapped as a repeated gloss is not in the shown text."""
    shown, _ = study_text('<p>出错之后喂正确前缀<span class="en"> teacher forcing</span>更准</p>')
    assert "teacher" not in shown


def test_the_overview_counts_what_holds_and_says_what_was_not_built():
    """The overview's first sentence counts the lecture's own results that hold; one not built
    here is neither supported nor not: it is named apart. The lecture's arithmetic and an
    evidence twin are not counted at all."""
    outcomes = [
        seeded("holds", [0], id="A"),
        seeded("missing", [0], id="B"),
        seeded("differs", [0], id="C"),
        seeded("holds", [0], id="D", derivation="√4 = 2"),
        seeded("unresolved", [0], id="E", evidence=True),
    ]
    said = report_claims.overview_sentences(outcomes)
    assert "3 条里我们的运行支持 1 条" in said and "1 条本次没有构建" in said
    assert "不支持 1 条" in said and "还定不了 0 条" in said


def test_the_lectures_arithmetic_shows_as_arithmetic_not_as_a_result():
    """A derivation that checks out has its own badge (↺, not counted), never "✓ 成立"."""
    o = seeded("holds", [0], derivation="√4 = 2")
    assert report_claims.study_verdict(o) == report_claims.ARITHMETIC
    assert "和讲义的算术一致" in report_claims.takeaway(o)
    o.status = "differs"  # a wrong derivation is the lecture's to answer for: shown as differs
    assert report_claims.study_verdict(o) == "differs"


def test_a_machine_dependent_box_holding_only_audit_paragraphs_is_the_audit_readings():
    begin, end = "<!-- m:begin -->", "<!-- m:end -->"
    text = (
        f'{begin}<p class="reading audit">计时</p>{end}'
        f'{begin}<p class="reading audit">计时</p><p>第 1 条测试序列</p>{end}'
    )
    out = report_html.mark_machine_dependent(text, begin, end)
    assert re.findall(r'<div class="([\w ]+)">', out) == ["machine audit", "machine"]
