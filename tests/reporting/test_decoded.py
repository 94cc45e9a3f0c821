"""§9's decoded example and per-example attention (reporting/decoded.py) on a small table shaped
like demo 05.5's aggregated one: the names come from the table's vocabulary, the marks from the
tokens that differ, the sentence from the marks."""

import re

import pandas as pd
import pytest

from lecture17.reporting import decoded

VOCAB = {"0": 3, "1": 4, "2": 5, "PAD": 0, "BOS": 1, "EOS": 2}
SOURCE = ["0", "1", "2"]
TARGET = ["2", "1", "0", "EOS"]


def table(outputs: dict, weights=True) -> pd.DataFrame:
    """outputs: model -> its output names, at L = 3, example 0."""
    rows = [dict(token=name, quantity="token_id", mean=i) for name, i in VOCAB.items()]
    for model, output in outputs.items():
        for quantity, seq in (("source", SOURCE), ("target", TARGET), ("output", output)):
            rows += [
                dict(
                    model=model,
                    seq_len="3",
                    example="0",
                    position=str(p),
                    quantity=quantity,
                    mean=VOCAB[t],
                )
                for p, t in enumerate(seq)
            ]
    if weights:
        rows += [
            dict(
                model="transformer",
                seq_len="3",
                block="decoder.0.cross_attn",
                example="0",
                head=str(h),
                query=str(q),
                key=str(k),
                quantity="weight",
                mean=1.0 if k == min(2 - q, 2) else 0.0,
            )
            for h in (1, 2)
            for q in range(4)
            for k in range(3)
        ]
    return pd.DataFrame(rows)


def test_the_tokens_are_named_by_the_tables_own_vocabulary():
    seen = decoded.tokens(table({"transformer": TARGET}), "transformer", 3, 0)
    assert seen == {"source": SOURCE, "target": TARGET, "output": TARGET}


def test_wrong_tokens_are_marked_and_the_line_counts_them():
    outputs = {"transformer": TARGET, "gru": ["2", "0", "0", "EOS"]}
    block = decoded.example_block(table(outputs), 3, 0, html_mode=True)
    assert re.findall(r'<b class="wrong" title="应为 (\w+)">(\w+)</b>', block) == [("1", "0")]
    assert "Transformer 4 个输出全对" in block
    assert "GRU（无注意力）错 1 个，只有开头 1 个连着对（源序列最后读进去的 1 个词）" in block
    first_wrong = {"transformer": TARGET, "gru": ["0", "1", "0", "EOS"]}
    assert "从第 1 个就错" in decoded.example_block(table(first_wrong), 3, 0, html_mode=True)
    markdown = decoded.example_block(table(outputs), 3, 0, html_mode=False)
    assert "| GRU（无注意力） | 2**0**0 EOS |" in markdown
    other = decoded.example_block(table({**outputs, "gru": TARGET}), 3, 0, html_mode=True)
    assert 'class="wrong"' not in other and "错" not in other  # the marks are the data's
    assert "Transformer、GRU（无注意力） 4 个输出全对" in other


def test_a_run_of_wrong_tokens_is_one_bold_span_in_markdown():
    row = decoded._row(["1", "2", "0", "EOS", "EOS"], {1, 2, 3}, [], html_mode=False)
    assert row == "1**20 EOS** EOS"  # CommonMark reads **20 EOS**; **2****0** it would not


def test_without_the_transformers_weights_the_explorer_is_left_out():
    """Exercise 8 runs L = 32 alone; 05.5 records weights at L = 16 only: no explorer, no error."""
    t = table({"transformer": TARGET}, weights=False)
    assert decoded.explorer_block(t, "t", "explore-05-5", 16) == ""


def test_a_phone_wraps_a_long_row_between_groups_of_tokens():
    row = decoded._row([str(i % 3) for i in range(17)], set(), [], html_mode=True)
    assert row.count('<span class="group">') == 3  # 8 + 8 + 1


def test_the_explorer_gets_each_examples_weights_named_by_its_tokens():
    (one,) = decoded.attention(table({"transformer": ["2", "2", "PAD", "EOS"]}), 3, [0])
    assert one["queries"] == ["0：2", "1：2", "2：PAD", "3：EOS"]  # what it decoded, not the target
    assert one["keys"] == SOURCE and one["heads"] == ["1", "2"]
    assert one["weights"][0][0] == [0.0, 0.0, 1.0]  # output step 0 reads the last source token


def test_a_missing_weight_or_example_is_refused():
    t = table({"transformer": TARGET})
    with pytest.raises(ValueError, match="full query × key grid"):
        decoded.attention(t.iloc[:-1], 3, [0])
    with pytest.raises(ValueError, match="example 1"):
        decoded.attention(t, 3, [1])
    with pytest.raises(ValueError, match="token_id"):
        decoded.names(t[t["quantity"] != "token_id"])
