"""The attention explorer's data and markup (reporting/explorer.py); the browser tests drive it
(tests/reporting/test_browser.py: tap, hover, keyboard, and the page without JavaScript)."""

import json
import re
from html import unescape

import pandas as pd
import pytest

from lecture17.reporting import explorer


def table(rows):
    frame = pd.DataFrame(rows, columns=["head", "query", "key", "mean"])
    frame["quantity"] = "weight"
    return frame


ROWS = [(h, q, k, w) for h in ("1", "2") for q in ("a", "b") for k, w in (("x", 0.25), ("y", 0.75))]


def test_the_weights_are_the_tables_per_head_query_and_key():
    data = explorer.weights(table(ROWS), query="query", key="key", quantity="weight", head="head")
    assert data["queries"] == ["a", "b"] and data["keys"] == ["x", "y"]
    assert data["weights"] == [[[0.25, 0.75]] * 2] * 2


def test_a_grid_with_a_hole_is_refused():
    with pytest.raises(ValueError, match="full query × key grid"):
        explorer.weights(table(ROWS[:-1]), query="query", key="key", quantity="weight", head="head")


def test_the_block_draws_its_first_query_and_carries_every_weight():
    rows = [("1", "a", "x", 0.1), ("1", "a", "y", 0.9), ("1", "b", "x", 0.6), ("1", "b", "y", 0.4)]
    data = explorer.weights(table(rows), query="query", key="key", quantity="weight", head="head")
    block = explorer.explorer(data, "t", "explore-t")
    assert re.findall(r'class="w">([^<]*)<', block) == ["0.100", "0.900"]
    assert 'aria-pressed="true">a<' in block and 'aria-pressed="false">b<' in block
    (carried,) = json.loads(unescape(re.search(r'data-weights="([^"]*)"', block).group(1)))
    assert carried["weights"] == [[[0.1, 0.9], [0.6, 0.4]]] and carried["heads"] == ["头 1"]
    assert 'data-e="' not in block  # one example: nothing to choose


def test_examples_to_choose_from_each_carry_their_own_labels_and_the_first_is_drawn():
    rows = [("1", "a", "x", 0.1), ("1", "a", "y", 0.9), ("1", "b", "x", 0.6), ("1", "b", "y", 0.4)]
    one = explorer.weights(table(rows), query="query", key="key", quantity="weight", head="head")
    other = {**one, "keys": ["u", "v"], "weights": [[[0.5, 0.5], [0.2, 0.8]]]}
    block = explorer.explorer(
        [{**one, "label": "第 1 条"}, {**other, "label": "第 2 条"}], "t", "e"
    )
    assert 'data-e="0" aria-pressed="true">第 1 条<' in block and 'data-e="1"' in block
    assert re.findall(r'class="key">([^<]*)<', block) == ["x", "y"]
    carried = json.loads(unescape(re.search(r'data-weights="([^"]*)"', block).group(1)))
    assert [c["keys"] for c in carried] == [["x", "y"], ["u", "v"]]
    with pytest.raises(ValueError, match="differ"):
        explorer.explorer([one, {**other, "keys": ["u"]}], "t", "e")


def test_no_example_or_examples_whose_heads_differ_are_refused_and_one_is_named():
    rows = [("1", "a", "x", 0.1), ("1", "a", "y", 0.9), ("1", "b", "x", 0.6), ("1", "b", "y", 0.4)]
    one = explorer.weights(table(rows), query="query", key="key", quantity="weight", head="head")
    with pytest.raises(ValueError, match="no example"):
        explorer.explorer([], "t", "e")
    with pytest.raises(ValueError, match="differ"):  # the script never redraws the heads' names
        explorer.explorer([one, {**one, "heads": ["2"]}], "t", "e")
    assert '<p class="one-query">为 L = 8 搭的层</p>' in explorer.explorer(
        [{**one, "label": "为 L = 8 搭的层"}], "t", "e"
    )
    with pytest.raises(ValueError, match="no rows"):
        explorer.by_example(
            table(rows), {"quantity": "weight", "where": {"head": "9"}}, "head", "{}"
        )


def test_a_reversals_mirror_key_is_framed_for_the_first_query_and_carried_for_every_query():
    assert explorer.mirror_marks(4, 3) == [2, 1, 0, None]  # the EOS step reads no source
    rows = [("1", q, k, 0.5) for q in ("a", "b") for k in ("x", "y")]
    data = explorer.weights(table(rows), query="query", key="key", quantity="weight", head="head")
    block = explorer.explorer({**data, "marks": [1, 0]}, "t", "e")
    assert re.findall(r'<li( class="mark")?><span class="key">(\w)<', block) == [
        ("", "x"),
        (' class="mark"', "y"),
    ]
    assert "short-keys" in block  # one-letter keys: heads side by side on a phone
