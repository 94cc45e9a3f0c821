"""Demos 06.1–06.7: the lecture's "at scale" claims made concrete (§8.4, §9.5, §10.4), and the
results it states without measuring (§6.5, §7.5, §8.4, §9.6).

06.1 shows tiled_attention against the plain version (their equality and memory are tested in
test_attention_numpy.py), 06.2 greedy decoding with a KV cache (test_tiny_transformer.py tests
the cache), 06.3 the training step time on a GPU: built for one, it runs here on the CPU at toy
sizes (the code path is the same apart from torch.cuda.synchronize), and on cuda where a GPU
exists. 06.4 gradients at initialisation, 06.5 the hand-built reversal layer, 06.6 beam search
on 05.1's kept models, 06.7 length extrapolation (RoPE and ALiBi themselves are tested in
test_attention_numpy.py and test_tiny_transformer.py). The report's and the ledger's handling
is tested in tests/reporting/.
"""

import re

import numpy as np
import pandas as pd
import pytest
import torch
import yaml
from conftest import ATOL, ROOT, requires_cuda, without_cuda

from lecture17.experiments import DEMOS
from lecture17.experiments.beyond import (
    RATIOS,
    TIMED_MODELS,
    gpu_step_time,
    kv_cache_decoding,
    memory_light_attention,
)
from lecture17.pipeline.aggregate import select

# -------------------------------------------------------------------------------------------
# 06.1 attention without the n×n matrix (§10.4)


def test_demo_06_1_rows_and_values():
    sizes = [8, 20]
    table = memory_light_attention(sizes=sizes, d=4, block_size=3, repeats=2, seed=0)
    assert list(table.columns) == ["method", "n", "quantity", "value"]
    expected = {
        (method, n, quantity)
        for n in sizes
        for method, quantity in [
            ("plain", "ms"),
            ("plain", "peak_mb"),
            ("plain", "matrix_mb"),
            ("tiled", "ms"),
            ("tiled", "peak_mb"),
            ("tiled", "max_abs_diff"),
        ]
    }
    rows = list(zip(table["method"], table["n"], table["quantity"], strict=True))
    assert len(rows) == len(set(rows)) and set(rows) == expected
    value = table.set_index(["method", "n", "quantity"])["value"]
    for n in sizes:
        assert value["plain", n, "matrix_mb"] == n * n * 8 / 1e6
        assert value["tiled", n, "max_abs_diff"] < ATOL
        assert value["plain", n, "peak_mb"] >= value["plain", n, "matrix_mb"]
        assert value["plain", n, "ms"] > 0 and value["tiled", n, "ms"] > 0


def test_demo_06_1_lecture_matrix_size_and_memory_gap():
    # §3.4: "一个 (n, n) 的 float64 权重矩阵在 n = 2048 时就占 33.6 MB"
    table = memory_light_attention(sizes=[2048], d=8, block_size=64, repeats=1, seed=0)
    value = table.set_index(["method", "quantity"])["value"]
    assert f"{value['plain', 'matrix_mb']:.1f}" == "33.6"
    assert value["plain", "peak_mb"] >= 33.6
    assert value["tiled", "peak_mb"] <= 0.05 * value["plain", "matrix_mb"]
    assert value["tiled", "max_abs_diff"] < ATOL


def test_demo_06_1_peak_memory_is_deterministic():
    # The report shows peak_mb outside the machine-dependent block: it must repeat exactly.
    def peaks():
        table = memory_light_attention(sizes=[16, 100], d=8, block_size=16, repeats=1, seed=1)
        return select(table, "peak_mb")["value"].to_numpy()

    np.testing.assert_array_equal(peaks(), peaks())


# -------------------------------------------------------------------------------------------
# 06.2 greedy decoding with a KV cache (§8.4)


def test_demo_counts_the_lecture_positions_and_decodes_the_same_tokens():
    table = kv_cache_decoding(
        lengths=[8, 16],
        batch_size=2,
        d_model=16,
        n_heads=2,
        d_ff=32,
        n_layers=1,
        repeats=1,
        seed=0,
    )
    assert list(table.columns) == ["method", "length", "quantity", "value"]
    values = table.set_index(["method", "length", "quantity"])["value"]
    assert values["uncached", 8, "positions"] == 36  # §8.4 "36 而不是 8"
    assert values["cached", 8, "positions"] == 8
    assert values["uncached", 16, "positions"] == 136
    assert values["cached", 16, "positions"] == 16
    assert (select(table, "same_tokens")["value"] == 1.0).all()
    assert (select(table, "ms")["value"] > 0).all()
    ratio = values["cached", 16, "ms_ratio_uncached_over_cached"]
    assert ratio == pytest.approx(values["uncached", 16, "ms"] / values["cached", 16, "ms"])


# -------------------------------------------------------------------------------------------
# 06.3 the training step on a GPU (§9.5)

SIZES = {
    "small": {"d_model": 16, "n_heads": 2, "d_ff": 32, "precision": "fp32"},
    "base": {"d_model": 32, "n_heads": 4, "d_ff": 64, "precision": "bf16"},
}


def run(size="small", device="cpu", **changes):
    settings = dict(
        size=size,
        sizes=SIZES,
        models=list(TIMED_MODELS),
        seq_lens=[4, 8],
        batch_size=4,
        lr=1e-3,
        warmup_steps=1,
        rounds=2,
        device=device,
        seed=0,
    )
    return gpu_step_time(**(settings | changes))


@pytest.mark.parametrize("size", ["small", "base"])  # fp32, and bf16 autocast
def test_every_model_gets_a_time_at_every_length_and_ratios_from_the_same_run(size):
    table = run(size)
    assert list(table.columns) == [
        "device_name",
        "d_model",
        "precision",
        "model",
        "seq_len",
        "quantity",
        "value",
    ]
    assert set(table["device_name"]) == {"cpu"}
    assert set(table["d_model"]) == {SIZES[size]["d_model"]}
    assert set(table["precision"]) == {SIZES[size]["precision"]}
    ms = select(table, "ms_per_step").set_index(["model", "seq_len"])["value"]
    assert set(ms.index) == {(m, L) for m in TIMED_MODELS for L in (4, 8)}
    assert (ms > 0).all()
    for quantity, top, bottom in RATIOS:
        for L in (4, 8):
            row = select(table, quantity, seq_len=L)
            assert list(row["model"]) == [top]
            assert row["value"].iloc[0] == ms[top, L] / ms[bottom, L]
    # every quantity is a timing: the reproducible CSV of this demo is empty by design
    assert table["quantity"].str.startswith("ms").all()


def test_ratios_need_both_models_so_a_subset_of_models_gives_only_its_own():
    table = run(models=["transformer", "gru"])
    assert set(table["quantity"]) == {"ms_per_step", "ms_ratio_transformer_over_gru"}


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"size": "huge"}, r"unknown size 'huge'; sizes has \['base', 'small'\]"),
        ({"models": ["transformer", "lstm"]}, r"unknown models \['lstm'\]"),
        ({"models": []}, "non-empty list"),
        ({"seq_lens": [0, 8]}, "seq_lens >= 1"),
        ({"rounds": 0}, "rounds >= 1"),
        ({"device": "gpu"}, r"unknown device 'gpu'"),
        ({"sizes": {"small": SIZES["small"] | {"precision": "fp16"}}}, "unknown precision"),
        ({"sizes": {"small": SIZES["small"] | {"n_heads": 3}}}, "divisible by n_heads"),
        ({"sizes": {"small": {"d_model": 16}}}, "must have exactly the keys"),
    ],
)
def test_bad_settings_are_refused_before_any_model_is_built(changes, message):
    with pytest.raises(ValueError, match=message):
        run(**changes)


@without_cuda
def test_cuda_without_a_gpu_says_so():
    with pytest.raises(RuntimeError, match="no GPU"):
        run(device="cuda")


@requires_cuda
@pytest.mark.parametrize("size", ["small", "base"])
def test_on_a_gpu_the_table_names_the_gpu(size):
    table = run(size, device="cuda")
    assert set(table["device_name"]) == {torch.cuda.get_device_name()}
    assert (select(table, "ms_per_step")["value"] > 0).all()


# -----------------------------------------------------------------------------
# 06.4 gradients at initialisation (§7.5, Xiong et al. 2020)

GRADIENT_SIZES = dict(length=6, n_layers=3, d_model=16, n_heads=2, d_ff=32, batch_size=8)


def test_layer_gradients_give_every_layer_of_both_placements_and_their_ratios():
    from lecture17.experiments.beyond import layer_gradients

    df = layer_gradients(**GRADIENT_SIZES, seed=0)
    norms = df[df.quantity == "grad_norm"]
    assert sorted(norms.placement.unique()) == ["post_ln", "pre_ln"]
    for placement in ("post_ln", "pre_ln"):
        g = norms[norms.placement == placement].sort_values("layer").value.to_numpy()
        assert len(g) == 3 and (g > 0).all()
        one = df[(df.placement == placement) & df.layer.isna()].set_index("quantity").value
        assert one["grad_spread"] == pytest.approx(g.max() / g.min())
        assert one["grad_ratio_top_bottom"] == pytest.approx(g[-2:].mean() / g[:2].mean())
    post = norms[norms.placement == "post_ln"].value.to_numpy()
    pre = norms[norms.placement == "pre_ln"].value.to_numpy()
    assert not np.allclose(post, pre)  # the placement reaches the layers


def test_layer_gradients_are_those_of_04_3s_first_step():
    """The same init and first batch as train() under the seed: the norms are the gradient of
    the loss 04.3's run takes its first step on."""
    import torch

    from lecture17 import training
    from lecture17.experiments.beyond import layer_gradients
    from lecture17.experiments.layers import _classifier_builder

    s = GRADIENT_SIZES
    df = layer_gradients(**s, seed=3)
    torch.manual_seed(3)
    model = _classifier_builder(s["n_layers"], s["d_model"], s["n_heads"], s["d_ff"], True)()
    model = model.double()
    task = training.InplaceReversalTask(s["length"])
    batch = task.sample(torch.Generator().manual_seed(3), s["batch_size"])
    task.loss(model, batch).backward()
    first = torch.cat([p.grad.flatten() for p in model.encoder.layers[0].parameters()])
    ours = df[(df.placement == "pre_ln") & (df.layer == 1)].value.item()
    assert ours == pytest.approx(first.norm().item(), rel=1e-12)


# -----------------------------------------------------------------------------
# 06.5 reversal by one hand-built layer of encoder-decoder attention (§9.6)


@pytest.mark.parametrize("length", [2, 5, 16, 33])
def test_the_mirror_map_turns_every_position_into_its_mirror(length):
    from lecture17.attention_numpy import positional_encoding
    from lecture17.experiments.beyond import mirror_map

    pe = positional_encoding(length, 64)
    assert np.abs(pe @ mirror_map(length, 64) - pe[::-1]).max() < 1e-12
    R = mirror_map(length, 64)
    assert np.abs(R @ R - np.eye(64)).max() < 1e-12  # a reflection: mirroring twice is nothing


def test_the_sharpness_keeps_the_weight_off_the_mirror_below_the_leak():
    from lecture17.attention_numpy import positional_encoding, scaled_dot_product_attention
    from lecture17.experiments.beyond import _sharpness, mirror_map

    L, d, leak = 6, 16, 1e-6
    pe = positional_encoding(L, d)
    q = _sharpness(L, d, leak) * pe @ mirror_map(L, d)
    _, weights = scaled_dot_product_attention(q, pe, pe)
    off = 1 - weights[np.arange(L), np.arange(L)[::-1]]
    assert off.max() <= leak and off.max() > 0


def test_hand_built_reversal_rows_and_a_layer_built_for_another_length():
    from lecture17.experiments.beyond import hand_built_reversal

    df = hand_built_reversal(
        lengths=[3, 5], d_model=16, n_sources=20, leak=1e-6, explore_length=3, seed=0
    )
    cells = df[df.quantity == "sequence_accuracy"][["built_for", "length"]]
    assert len(cells) == 4  # every (built for, tested at) pair
    mirror = df[df.quantity == "min_mirror_weight"]
    assert sorted(zip(mirror.built_for, mirror.length, strict=True)) == [(3, 3), (5, 5)]
    # the explorer's weights: at L = 3, each layer's rows; the one built for 3 on the mirror
    weights = df[df.quantity == "weight"]
    assert set(weights.length) == {3} and sorted(set(weights.built_for)) == [3, 5]
    own = weights[weights.built_for == 3].pivot(index="query", columns="key", values="value")
    assert np.allclose(own.to_numpy(), np.eye(3)[::-1], atol=1e-4)  # on the mirror
    other = weights[weights.built_for == 5].pivot(index="query", columns="key", values="value")
    assert np.allclose(other.sum(axis=1), 1, atol=1e-5) and not np.allclose(other, np.eye(3)[::-1])
    with pytest.raises(ValueError, match="explore_length"):
        hand_built_reversal(
            lengths=[3], d_model=16, n_sources=2, leak=1e-6, explore_length=4, seed=0
        )


# -------------------------------------------------------------------------------------------
# 06.6 beam search and exposure bias on 05.1's kept models (§8.4)


def _kept_05_1(tmp_path, point):
    """Run 05.1's job at the .test settings for one grid point: its CSV and its kept models."""
    from demos import spec

    from lecture17.experiments.kept_models import models_path
    from lecture17.pipeline.job import run_job

    out = tmp_path / "05.1" / "seed0.csv"
    settings = {**spec("05.1")["settings"], "device": "cpu"}
    run_job("05.1", settings, 0, point, out)
    return out, models_path(out)


@pytest.mark.parametrize("reader", [d for d, entry in DEMOS.items() if entry.reads_models])
def test_a_reader_of_05_1s_kept_model_gets_what_training_again_gives(tmp_path, reader):
    """06.6 (beam search) and 05.5 (the decoded examples) read 05.1's models."""
    from demos import spec

    from lecture17.pipeline.job import run_demo

    point = {"model": "gru_attention", "seq_len": 32}
    _, models = _kept_05_1(tmp_path, point)
    settings = {**spec(reader)["settings"], "device": "cpu"}
    read = run_demo(reader, settings, 0, point, models)
    again = run_demo(reader, settings, 0, point)  # no file: trained again, the same way
    pd.testing.assert_frame_equal(read, again)


def test_06_6_refuses_a_kept_model_trained_with_other_settings(tmp_path):
    from demos import spec

    from lecture17.pipeline.job import run_demo

    point = {"model": "transformer", "seq_len": 32}
    _, models = _kept_05_1(tmp_path, point)
    settings = {**spec("06.6")["settings"], "device": "cpu"}
    other = {**settings, "train": {**settings["train"], "steps": 11}}
    with pytest.raises(ValueError, match="expected one kept model"):
        run_demo("06.6", other, 0, point, models)
    with pytest.raises(ValueError, match="expected one kept model"):
        run_demo("06.6", settings, 1, point, models)  # another seed's model


def test_06_6_rows_add_up_and_the_exact_checks_are_zero():
    from demos import spec, tiny_run

    table = tiny_run("06.6", 1)  # the transformer at the .test settings
    widths = spec("06.6")["settings"]["widths"]

    def one(quantity, **labels):
        return float(select(table, quantity, **labels)["value"].iloc[0])

    for width in widths:
        wrong = 1 - one("sequence_accuracy", width=width)
        errors = one("search_errors", width=width) + one("model_errors", width=width)
        assert errors == pytest.approx(wrong, abs=1e-12)
    assert one("greedy_mismatch", width=1) == 0
    assert one("cache_mismatch", width=widths[-1]) == 0
    L = 32
    for name in ("teacher_forced", "free_running"):
        per_position = select(table, f"{name}_position_accuracy")["value"]
        assert len(per_position) == L
        assert one(f"{name}_symbol_accuracy") == pytest.approx(per_position.mean(), abs=1e-12)


def test_06_6_free_running_is_greedy_and_teacher_forcing_reads_the_right_prefix():
    """The exposure rows from their definitions, on a stand-in model whose answers are known:
    teacher-forced it is always right; free-running (its greedy_decode) it gets outputs 1 and
    3 wrong of L = 3, so after the first error one of the two later positions is right."""
    from lecture17.experiments.beyond import _exposure_rows

    tgt_out = torch.tensor([[5, 4, 3, 2]])  # reversal of [3, 4, 5], then EOS

    class StandIn(torch.nn.Module):
        def forward(self, src, tgt_in):  # the right next token at every position
            return torch.nn.functional.one_hot(tgt_out, 13).double()

        def greedy_decode(self, src, max_len, bos_id=1):
            return torch.tensor([[6, 4, 6, 2]])

    src, tgt_in = torch.tensor([[3, 4, 5]]), torch.tensor([[1, 5, 4, 3]])
    rows = {
        (r["quantity"], r.get("position")): r["value"]
        for r in _exposure_rows(StandIn(), src, tgt_in, tgt_out)
    }
    assert rows[("teacher_forced_symbol_accuracy", None)] == 1
    assert rows[("free_running_symbol_accuracy", None)] == pytest.approx(1 / 3)
    assert [rows[("free_running_position_accuracy", t)] for t in (1, 2, 3)] == [0, 1, 0]
    assert rows[("positions_after_first_error", None)] == 2  # positions 2 and 3
    assert rows[("free_running_after_first_error", None)] == 0.5
    assert rows[("teacher_forced_after_first_error", None)] == 1


def test_06_6_a_width_1_beam_that_differs_from_greedy_counts_unless_at_a_near_tie():
    """greedy_mismatch reads the top-2 logit gap at each source's first differing step, from
    the model fed greedy's own prefix: a gap of a few ulps (two float32 paths may round it
    either way) is a near-tie, shown apart; a difference anywhere else is a bug in the search."""
    from lecture17.experiments.beyond import NEAR_TIE, _greedy_mismatch
    from lecture17.training import BOS

    greedy = torch.tensor([[5, 4, 3, 2]] * 4)
    tie = NEAR_TIE / 100
    gaps = torch.tensor(
        [
            [1.0, tie, 1.0, 1.0],  # source 0: first differs at step 1, a near-tie
            [1.0, 1.0, tie, tie],  # source 1: first differs at step 1 (wide), later near-ties
            [tie, tie, tie, tie],  # source 2: the same tokens
            [tie, 1.0, 1.0, 1.0],  # source 3: a near-tie before it first differs, at step 3
        ]
    )

    class StandIn(torch.nn.Module):
        def forward(self, src, prefix):  # the top two logits differ by gaps[b, t]
            assert prefix.tolist() == [[BOS, 5, 4, 3]] * 4
            logits = torch.zeros(4, 4, 13, dtype=torch.float64)
            logits[..., 7] = 1.0
            logits[..., 8] = 1.0 - gaps
            return logits

    tokens = greedy.clone()
    tokens[0, 1:] = 9
    tokens[1, 1:] = 9
    tokens[3, 3] = 9
    mismatch, ties = _greedy_mismatch(StandIn(), None, tokens, greedy)
    assert (mismatch, ties) == (0.5, 0.25)
    # the page quotes the threshold the code uses
    ledger = yaml.safe_load((ROOT / "report/ledger/04_layers.yaml").read_text(encoding="utf-8"))
    (note,) = [c["note"] for c in ledger if c.get("id") == "L17-06.6a"]
    views = (ROOT / "report/views/06.yaml").read_text(encoding="utf-8")
    label = re.search(r"greedy_near_ties: .*差 ≤ (\S+)）", views).group(1)
    assert float(re.search(r"只差 ≤ (\S+) 时", note).group(1)) == float(label) == NEAR_TIE


@pytest.mark.parametrize("widths", [[2, 4], [1, 4, 2], [1, 1], []])
def test_06_6_widths_must_start_at_greedy_and_increase(widths):
    from demos import kwargs

    from lecture17.experiments.beyond import beam_search_study

    with pytest.raises(ValueError, match="widths must start at 1"):
        beam_search_study(**kwargs("06.6", widths=widths), seed=0)


@pytest.mark.parametrize("uncached_sources", [0, 51])  # the .test config's n_test is 50
def test_06_6_the_uncached_check_reads_1_to_n_test_sources(uncached_sources):
    from demos import kwargs

    from lecture17.experiments.beyond import beam_search_study

    with pytest.raises(ValueError, match="uncached_sources must be 1..n_test"):
        beam_search_study(**kwargs("06.6", uncached_sources=uncached_sources), seed=0)


def test_06_6_the_cache_check_sees_a_cache_that_differs(monkeypatch):
    """cache_mismatch is not a constant 0: a KV cache that forgets every cached position but
    the newest (a student's cache that overwrites instead of appending) is counted."""
    from demos import grid_points, kwargs

    from lecture17 import tiny_transformer as tt
    from lecture17.experiments.beyond import beam_search_study

    def forgetful(cache, k, v):
        cache.self_k, cache.self_v = k, v
        return k, v

    monkeypatch.setattr(tt.KVCache, "append", forgetful)
    table = beam_search_study(**kwargs("06.6", grid_points("06.6")[1]), seed=0)
    mismatch = select(table, "cache_mismatch")["value"].iloc[0]
    assert mismatch > 0


# -----------------------------------------------------------------------------
# 06.7 length extrapolation (§6.5): train short, test long, four positional schemes


def extrapolation(pe, task="copy", steps=10, **changes):
    from lecture17.experiments.beyond import length_extrapolation
    from lecture17.training import TrainSettings

    settings = dict(
        task=task,
        pe=pe,
        train_lengths=[1, 4],
        test_lengths=[4, 6],
        transformer=dict(d_model=16, n_heads=2, d_ff=32, n_enc_layers=1, n_dec_layers=1),
        train=TrainSettings(steps=steps, lr=1e-3, warmup=5, batch_size=16, n_test=20),
        device="cpu",
        seed=0,
    )
    return length_extrapolation(**(settings | changes))


@pytest.mark.parametrize("pe", ["sinusoidal", "learned", "rope", "alibi"])
def test_06_7_rows_per_length_and_position(pe):
    df = extrapolation(pe)
    for length in (4, 6):
        at = df[df["length"] == length]
        positions = select(at, "position_accuracy")
        assert positions["position"].tolist() == list(range(length))  # 0-based, every output
        symbol = select(at, "symbol_accuracy")["value"].item()
        assert symbol == pytest.approx(positions["value"].mean(), abs=1e-12)
        assert 0 <= select(at, "sequence_accuracy")["value"].item() <= symbol
    has_table_rows = "pe_unseen_rows_max_change" in set(df["quantity"])
    assert has_table_rows == (pe == "learned")


def test_06_7_a_learned_table_keeps_its_unseen_rows_and_moves_the_seen_ones():
    """Trained on L ≤ 4, the rows 4 and 5 of the learned table get no gradient: unchanged,
    bit for bit; every row 0..3 moved."""
    df = extrapolation("learned", steps=20)
    assert select(df, "pe_unseen_rows_max_change")["value"].item() == 0.0
    assert select(df, "pe_seen_rows_min_change")["value"].item() > 0.0


def test_06_7_the_row_changes_see_a_moved_unseen_row(monkeypatch):
    """The measurement can fail: a table whose unseen rows do move is reported as moved."""
    from lecture17.experiments import beyond

    model = type("M", (torch.nn.Module,), {})()
    model.pe = torch.nn.Parameter(torch.zeros(6, 3))
    initial = {"pe": torch.zeros(6, 3)}
    with torch.no_grad():
        model.pe[:4] += 0.5
        model.pe[5, 1] = -0.25
    changes = beyond._pe_row_changes(model, initial, seen=4)
    assert changes == {"pe_unseen_rows_max_change": 0.25, "pe_seen_rows_min_change": 0.5}


def test_06_7_is_deterministic_and_the_schemes_differ():
    first, again = extrapolation("rope"), extrapolation("rope")
    pd.testing.assert_frame_equal(first, again)
    assert not extrapolation("alibi")["value"].equals(first["value"])


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"task": "sort"}, r"unknown task 'sort'"),
        ({"pe": "none"}, r"unknown pe 'none'"),
        ({"train_lengths": [4]}, r"\[shortest, longest\]"),
        ({"train_lengths": [5, 4]}, r"\[shortest, longest\]"),
        ({"test_lengths": [6, 4]}, "increasing"),
        ({"test_lengths": []}, "increasing"),
        ({"transformer": {"d_model": 16}}, "exactly the keys"),
        ({"device": "gpu"}, "unknown device"),
    ],
)
def test_06_7_bad_settings_are_refused_before_training(changes, message):
    with pytest.raises(ValueError, match=message):
        extrapolation(**({"pe": "learned"} | changes))


# -----------------------------------------------------------------------------
# 06.8 do the heads matter? (§9.4, §5, §12)

HEAD_SIZES = dict(d_model=16, n_heads=2, d_ff=32, n_enc_layers=1, n_dec_layers=1)


def heads_run(n_heads, ablate=None, steps=10, **changes):
    from lecture17.experiments.beyond import head_study
    from lecture17.training import TrainSettings

    settings = dict(
        n_heads=n_heads,
        transformer=HEAD_SIZES,
        seq_len=4,
        ablate=[2] if ablate is None else ablate,
        train=TrainSettings(steps=steps, lr=1e-3, warmup=5, batch_size=16, n_test=20),
        device="cpu",
        seed=0,
    )
    return head_study(**(settings | changes))


def test_06_8_a_zeroed_head_is_its_slice_of_the_concatenation_set_to_zero():
    from lecture17 import tiny_transformer as tt
    from lecture17.experiments.beyond import heads_zeroed

    torch.manual_seed(0)
    attention = tt.MultiHeadAttention(16, 4).double().eval()
    x = torch.randn(2, 5, 16, dtype=torch.float64)
    seen = {}
    attention.out_proj.register_forward_hook(lambda m, inputs, out: seen.update(ctx=inputs[0]))
    full, _ = attention(x, x, x)
    context = seen["ctx"].clone()
    with heads_zeroed(attention, [1, 3]):
        out, _ = attention(x, x, x)
    keep = torch.ones(16, dtype=torch.float64)
    keep[4:8] = keep[12:16] = 0
    torch.testing.assert_close(out, attention.out_proj(context * keep), rtol=0, atol=1e-12)
    assert not torch.allclose(out, full)
    again, _ = attention(x, x, x)  # the hook is gone on leaving
    assert torch.equal(again, full)


def test_06_8_rows_and_the_ablation_only_where_asked():
    ablated, plain = heads_run(2), heads_run(1, ablate=[2])
    assert select(ablated, "d_k")["value"].item() == 8
    assert select(plain, "d_k")["value"].item() == 16
    assert select(ablated, "without_head_symbol_accuracy")["head"].tolist() == [0, 1]
    assert select(ablated, "only_head_symbol_accuracy")["head"].tolist() == [0, 1]
    assert "without_head_symbol_accuracy" not in set(plain["quantity"])


def test_06_8_one_head_alone_is_the_whole_model():
    """With 1 head, 'only head 0' zeroes nothing: exactly the full model's accuracy."""
    df = heads_run(1, ablate=[1], steps=30)
    full = select(df, "symbol_accuracy")["value"].item()
    assert select(df, "only_head_symbol_accuracy")["value"].item() == full


def test_06_8_with_the_config_heads_it_is_05_1s_model():
    """The same builder, task, training and seed as 05.1: the same accuracies, bit for bit."""
    from lecture17.experiments.transformer_vs_rnn import reversal_comparison
    from lecture17.training import TrainSettings

    ours = heads_run(2, ablate=[])
    train = TrainSettings(steps=10, lr=1e-3, warmup=5, batch_size=16, n_test=20)
    theirs = reversal_comparison(
        model="transformer",
        seq_len=4,
        sizes={"transformer": HEAD_SIZES},
        train=train,
        device="cpu",
        seed=0,
    )
    for q in ("token_accuracy", "symbol_accuracy", "sequence_accuracy"):
        assert select(ours, q)["value"].item() == select(theirs, q)["value"].item()


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"n_heads": 3}, "divisible by 3 heads"),
        ({"n_heads": 0}, "n_heads must be an integer >= 1"),
        ({"ablate": 4}, "ablate must be a list"),
        ({"seq_len": 0}, "seq_len must be an integer >= 1"),
        ({"transformer": {"d_model": 16}}, "exactly the keys"),
        ({"device": "gpu"}, "unknown device"),
    ],
)
def test_06_8_bad_settings_are_refused_before_training(changes, message):
    with pytest.raises(ValueError, match=message):
        heads_run(**({"n_heads": 2} | changes))
