"""Demos 05.1, 05.3, 05.4 (§9): table structure, determinism, conventions, settings checks.

The models train here at tiny sizes for a few steps: the numbers are not the lecture's (the
full build checks those against report/ledger.yaml); what is tested is what every run must
satisfy. The §9 sizes from config/config.yaml are used only where nothing is trained (the
parameter counts of §9.1).
"""

import math
from functools import cache

import demos
import numpy as np
import pandas as pd
import pytest
import torch
from conftest import ATOL_FLOAT32, ROOT, requires_cuda, value, without_cuda
from demos import config

from lecture17 import tasks
from lecture17 import tiny_transformer as tt
from lecture17 import training as tr
from lecture17.experiments import DEMOS
from lecture17.experiments import transformer_vs_rnn as ex
from lecture17.pipeline.aggregate import aggregate, read_runs, select
from lecture17.pipeline.csvio import write_csv
from lecture17.pipeline.job import run_demo
from lecture17.reporting.views import load_views, render_view

MODELS = ["gru", "gru_attention", "transformer"]
TINY_SIZES = {
    "gru": {"emb_dim": 8, "hidden": 16},
    "gru_attention": {"emb_dim": 8, "hidden": 16},
    "transformer": {"d_model": 16, "n_heads": 2, "d_ff": 32, "n_enc_layers": 1, "n_dec_layers": 1},
}
TRAIN = dict(
    sizes=TINY_SIZES, train=tr.TrainSettings(steps=8, lr=1e-3, warmup=4, batch_size=16, n_test=40)
)
L = 6
pytestmark = pytest.mark.slow


@cache
def comparison(model: str, seed: int = 0, seq_len: int = L, device: str = "cpu"):
    return ex.reversal_comparison(**TRAIN, model=model, seq_len=seq_len, device=device, seed=seed)


@cache
def analysis(model: str, device: str = "cpu"):
    return ex.attention_analysis(
        **TRAIN, model=model, seq_len=L, n_samples=20, maps=True, device=device, seed=0
    )


def timing(model: str = "transformer", device: str = "cpu"):
    return ex.step_time(
        model=model,
        seq_len=L,
        sizes=TINY_SIZES,
        lr=1e-3,
        batch_size=8,
        warmup_steps=1,
        timed_steps=2,
        device=device,
        seed=0,
    )


def untimed(table: pd.DataFrame) -> pd.DataFrame:
    """A 05.1 run without its declared timings (they differ on every run)."""
    return demos.untimed("05.1", table).reset_index(drop=True)


# -------------------------------------------------------------------------------------------
# the contract and the config


def test_attention_analysis_trains_the_05_1_model():
    """§9.4 opens the L = 16, seed-0 model of §9.2: same training settings and sizes."""
    train_keys = ["sizes", "train"]  # the same sizes and the same `train:` block
    one, three = config()["05.1"], config()["05.3"]
    assert {k: three["settings"][k] for k in train_keys} == {
        k: one["settings"][k] for k in train_keys
    }
    assert three["settings"]["seq_len"] in one["grid"]["seq_len"]
    assert set(three["grid"]["model"]) <= set(one["grid"]["model"])
    assert set(three["seeds"]) <= set(one["seeds"])
    assert config()["05.4"]["settings"]["sizes"] == one["settings"]["sizes"]


def test_transformer_has_the_fewest_parameters_at_the_section_9_sizes():
    """§9.1 "Transformer 的参数最少" (C104), with the configured sizes, nothing trained."""
    sizes = config()["05.1"]["settings"]["sizes"]
    vocab = tr.VOCAB_SIZE
    counts = {
        m: tt.count_parameters(tt.build_model(m, src_vocab=vocab, tgt_vocab=vocab, **sizes[m]))
        for m in MODELS
    }
    assert counts["transformer"] < min(counts["gru"], counts["gru_attention"]), counts


# -------------------------------------------------------------------------------------------
# 05.1


@pytest.mark.parametrize("model", MODELS)
def test_comparison_table(model):
    table = comparison(model)
    assert list(table.columns) == ["position", "quantity", "value"]
    assert table["value"].dtype == np.float64 and table["value"].notna().all()
    positions = select(table, "position_accuracy")["position"]
    assert positions.tolist() == list(range(1, L + 1))  # 1-based, EOS position left out (F07)
    assert table.loc[table.quantity != "position_accuracy", "position"].isna().all()
    accuracies = table[table.quantity.str.endswith("accuracy")]["value"]
    assert accuracies.between(0, 1).all()
    assert value(table, "ms_per_step") > 0 and value(table, "ms_train_total") > 0
    vocab = tr.VOCAB_SIZE
    built = tt.build_model(model, src_vocab=vocab, tgt_vocab=vocab, **TINY_SIZES[model])
    assert value(table, "n_params") == tt.count_parameters(built)
    width = "d_model" if model == "transformer" else "hidden"
    assert value(table, width) == TINY_SIZES[model][width]


def test_comparison_through_run_demo_gets_the_grid_labels():
    settings = {**TRAIN, "device": "cpu"}
    table = run_demo("05.1", settings, 0, {"model": "transformer", "seq_len": L})
    assert list(table.columns) == ["demo", "seed", "model", "seq_len", "position"] + [
        "quantity",
        "value",
    ]
    assert set(table["model"]) == {"transformer"} and set(table["seq_len"]) == {L}


def test_position_accuracy_is_one_based_and_leaves_out_eos():
    """F07: output position t (1-based) copies input L + 1 - t; the EOS step is not a position."""
    final = {
        "token_accuracy": 0.5,
        "symbol_accuracy": 0.4,
        "sequence_accuracy": 0.1,
        "position_accuracy": [0.9, 0.8, 0.7, 1.0],  # 0-based steps 0..L, the last is EOS
    }
    records = ex.accuracy_records(final, 3)
    by_position = {r["position"]: r["value"] for r in records if "position" in r}
    assert by_position == {1: 0.9, 2: 0.8, 3: 0.7}


@pytest.mark.parametrize("model", MODELS)
def test_position_accuracies_average_to_the_symbol_accuracy(model):
    """Every position has the same number of samples, so their mean is symbol_accuracy
    (the L symbols, no EOS): a shifted or EOS-including position axis would not be."""
    table = comparison(model)
    per_position = select(table, "position_accuracy")["value"]
    assert per_position.mean() == pytest.approx(value(table, "symbol_accuracy"), abs=1e-12)
    symbols, tokens = value(table, "symbol_accuracy"), value(table, "token_accuracy")
    eos = tokens * (L + 1) - symbols * L  # F01: token accuracy counts EOS as one more output
    assert -1e-9 <= eos <= 1 + 1e-9


def test_comparison_is_deterministic():
    again = ex.reversal_comparison(**TRAIN, model="gru_attention", seq_len=L, device="cpu", seed=0)
    pd.testing.assert_frame_equal(untimed(comparison("gru_attention")), untimed(again))


def test_comparison_depends_on_the_seed():
    a, b = comparison("transformer", seed=0), comparison("transformer", seed=1)
    assert not untimed(a).equals(untimed(b))


# -------------------------------------------------------------------------------------------
# 05.3


@pytest.mark.parametrize("model", ["transformer", "gru_attention"])
def test_attention_statistics_have_one_value_per_head(model):
    table = analysis(model)
    assert list(table.columns) == ["block", "head", "query", "key", "quantity", "value"]
    stats = table[table.quantity != "map"].dropna(subset=["block"])
    n_heads = TINY_SIZES["transformer"]["n_heads"] if model == "transformer" else 1
    for (_, _), group in stats.groupby(["block", "quantity"]):
        assert sorted(group["head"]) == list(range(1, n_heads + 1))
    expected_blocks = (
        {"encoder.0.self_attn", "decoder.0.self_attn", "decoder.0.cross_attn"}
        if model == "transformer"
        else {"cross_attn"}
    )
    assert set(stats["block"]) == expected_blocks
    cross = stats[stats.block.str.endswith("cross_attn")].pivot(
        index="head", columns="quantity", values="value"
    )
    assert (cross["mirror_weight"] + cross["neighbour_weight"] <= 1 + 1e-6).all()
    if model == "transformer":
        encoder = stats[stats.block == "encoder.0.self_attn"]
        uniform = select(encoder, "uniform_entropy")["value"]
        assert np.allclose(uniform, math.log(L))  # §9.4 uniform = ln L (ln 16 = 2.77)
        assert (select(encoder, "entropy")["value"] <= math.log(L) + 1e-6).all()


def test_measured_uniform_entropy_is_ln_l_per_encoder_head():
    """§9.4 "均匀分布是 2.77": attention_entropy on uniform rows, the entropies' own code."""
    table = analysis("transformer")
    n_heads = TINY_SIZES["transformer"]["n_heads"]
    measured = select(table, "measured_uniform_entropy")
    assert list(measured["block"]) == ["encoder.0.self_attn"] * n_heads
    assert list(measured["head"]) == list(range(1, n_heads + 1))
    assert np.allclose(measured["value"], math.log(L), rtol=0, atol=1e-12)
    assert list(table.index[-n_heads:]) == list(measured.index)  # the new rows come last
    assert ex.attention_entropy(torch.full((1, 1, 1, 16), 1 / 16)).item() == pytest.approx(
        2.77, abs=0.005
    )  # ln 16 at §9.4's L = 16 (float32)
    assert "measured_uniform_entropy" not in set(analysis("gru_attention")["quantity"])


@pytest.mark.parametrize("model", ["transformer", "gru_attention"])
def test_attention_maps_are_mean_weights_whose_rows_sum_to_one(model):
    maps = analysis(model)
    maps = select(maps, "map")
    assert maps["value"].between(0, 1).all()
    sums = maps.groupby(["block", "head", "query"])["value"].sum()
    assert np.allclose(sums, 1.0, atol=ATOL_FLOAT32)  # the maps are means of float32 softmax rows
    shapes = {
        block: (group["query"].max() + 1, group["key"].max() + 1)
        for block, group in maps.groupby("block")
    }
    cross = "decoder.0.cross_attn" if model == "transformer" else "cross_attn"
    assert shapes[cross] == (L + 1, L)  # L symbols and EOS read the L source positions
    if model == "transformer":
        assert shapes["decoder.0.self_attn"] == (L + 1, L + 1)  # BOS + prefix, masked
        assert shapes["encoder.0.self_attn"] == (L, L)
        self_attn = maps[maps.block == "decoder.0.self_attn"]
        assert (self_attn.loc[self_attn["key"] > self_attn["query"], "value"] == 0).all()  # §8.1


def test_mirror_weight_agrees_with_the_map():
    """The mean map's anti-diagonal is the mirror weight (steps t < L, source L-1-t)."""
    table = analysis("transformer")
    maps = select(table, "map", block="decoder.0.cross_attn")
    for head in (1, 2):
        m = maps[maps["head"] == head]
        diagonal = m[(m["query"] < L) & (m["key"] == L - 1 - m["query"])]["value"].mean()
        mirror = value(table, "mirror_weight", block="decoder.0.cross_attn", head=head)
        assert diagonal == pytest.approx(mirror, abs=1e-6)


def test_attention_analysis_model_is_the_05_1_model():
    """Same settings and seed as 05.1: the analysed model is 05.1's (same accuracy)."""
    for model in ("transformer", "gru_attention"):
        ours, theirs = analysis(model), comparison(model)
        for q in ("token_accuracy", "sequence_accuracy"):
            assert value(ours, q) == value(theirs, q)


def test_without_maps_the_analysis_keeps_every_statistic():
    """maps=False (the robustness runs 07.6, 07.7) drops the `map` rows and nothing else."""
    full = analysis("transformer")
    lean = ex.attention_analysis(
        **TRAIN, model="transformer", seq_len=L, n_samples=20, maps=False, device="cpu", seed=0
    )
    kept = full[full["quantity"] != "map"].reset_index(drop=True)
    assert "map" in set(full["quantity"]) and "map" not in set(lean["quantity"])
    assert lean.drop(columns=["query", "key"]).equals(kept.drop(columns=["query", "key"]))


@pytest.mark.parametrize("score, input_feeding", [("dot", False), ("general", True)])
def test_a_luong_reading_is_05_1s_gru_attention_with_that_reading(score, input_feeding):
    table = ex.luong_reading(
        **TRAIN, score=score, input_feeding=input_feeding, seq_len=L, device="cpu", seed=0
    )
    main = comparison("gru_attention")
    assert list(table["quantity"]) == list(main["quantity"])
    params = {
        "dot": -(TINY_SIZES["gru_attention"]["hidden"] ** 2),  # no W_a
        "general": 3 * TINY_SIZES["gru_attention"]["hidden"] ** 2,  # W_ih: 3 gates x hidden more
    }[score]
    assert value(table, "n_params") == value(main, "n_params") + params


# -------------------------------------------------------------------------------------------
# 05.4


def test_step_time_table():
    table = timing("gru")
    assert list(table.columns) == ["quantity", "value"]
    assert table["quantity"].tolist() == ["ms_per_step", "ms_per_step_q1", "ms_per_step_q3"]
    q1, median, q3 = (float(table["value"].iloc[i]) for i in (1, 0, 2))
    assert 0 < q1 <= median <= q3  # the median of the timed steps within its quartiles


# -------------------------------------------------------------------------------------------
# the report's views render from these tables


def test_views_render_from_a_small_build(tmp_path):
    """Every 05 view (05.2 reads table 05.1) selects rows of tables shaped like the build's."""
    train = {**TRAIN, "device": "cpu"}
    step = {k: TINY_SIZES if k == "sizes" else 2 for k in ("sizes", "batch_size")}
    step |= {"lr": 1e-3, "warmup_steps": 1, "timed_steps": 2, "device": "cpu"}
    jobs = {
        "05.1": [(train, {"model": m, "seq_len": 32}) for m in ("gru", "transformer")],
        "05.3": [
            ({**train, "seq_len": L, "n_samples": 20, "maps": True}, {"model": m})
            for m in ("transformer", "gru_attention")
        ],
        "05.4": [(step, {"model": m, "seq_len": L}) for m in ("gru", "transformer")],
        "05.5": [
            ({**train, "n_examples": 2, "attention_lengths": [32]}, {"model": m, "seq_len": 32})
            for m in MODELS
        ],
    }
    tables = {}
    for demo, points in jobs.items():
        paths = []
        for i, (settings, point) in enumerate(points):
            paths.append(tmp_path / f"{demo}_{i}.csv")
            write_csv(run_demo(demo, settings, 0, point), paths[-1])
        tables[demo] = aggregate(read_runs(paths))
    views = load_views(ROOT / "report" / "views")
    for demo in [d for d, entry in DEMOS.items() if entry.script == "05"]:  # 05.1–05.5
        for view in views[demo]:
            text = render_view(tables[str(view.get("table", demo))], view)
            assert text.count("\n") >= 2, view["title"]


# -------------------------------------------------------------------------------------------
# 05.5 one example at a time


@cache
def decoded(model: str, n_examples: int = 3):
    return ex.decoded_examples(
        **TRAIN,
        model=model,
        seq_len=L,
        n_examples=n_examples,
        attention_lengths=[L],
        device="cpu",
        seed=0,
        trained=None,
    )


def tokens_of(table, quantity: str, example: int) -> list[int]:
    rows = select(table, quantity, example=example)
    return [int(v) for v in rows.sort_values("position")["value"]]


@pytest.mark.parametrize("model", MODELS)
def test_decoded_examples_are_the_first_of_05_1s_test_set_reversed(model):
    table = decoded(model)
    src, _, tgt_out = tr.evaluation_set(tr.ReversalTask(L), 0, 3)
    vocab = {r.token: int(r.value) for r in select(table, "token_id").itertuples()}
    assert vocab["EOS"] == tasks.EOS and vocab["0"] == tasks.FIRST_SYMBOL
    for i in range(3):
        assert tokens_of(table, "source", i) == src[i].tolist()
        assert tokens_of(table, "target", i) == tgt_out[i].tolist()
        assert tokens_of(table, "target", i) == [*src[i].flip(0).tolist(), tasks.EOS]
        right = tokens_of(table, "output", i) == tokens_of(table, "target", i)
        assert value(table, "sequence_correct", example=i) == float(right)


def test_every_decoded_example_scored_agrees_with_05_1s_sequence_accuracy():
    """All of the test set, one sequence at a time: the share decoded right is 05.1's number
    for the same model (trained again: the same settings and seed)."""
    n_test = TRAIN["train"].n_test
    share = select(decoded("gru_attention", n_test), "sequence_correct")["value"].mean()
    assert share == value(comparison("gru_attention"), "sequence_accuracy")


@pytest.mark.parametrize("model", ["gru_attention", "transformer"])
def test_per_example_cross_attention_rows_are_distributions_over_the_source(model):
    weights = select(decoded(model), "weight")
    heads = TINY_SIZES["transformer"]["n_heads"] if model == "transformer" else 1
    assert len(weights) == 3 * heads * (L + 1) * L
    sums = weights.groupby(["example", "head", "query"])["value"].sum()
    assert np.allclose(sums, 1.0, atol=1e-6)
    assert select(decoded("gru"), "weight").empty  # no attention, no weights
    other_length = ex.decoded_examples(
        **TRAIN,
        model=model,
        seq_len=L,
        n_examples=1,
        attention_lengths=[L + 1],
        device="cpu",
        seed=0,
        trained=None,
    )
    assert select(other_length, "weight").empty  # weights only at the lengths asked


def test_too_many_examples_are_refused():
    with pytest.raises(ValueError, match="n_examples"):
        ex.decoded_examples(
            **TRAIN,
            model="gru",
            seq_len=L,
            n_examples=41,
            attention_lengths=[],
            device="cpu",
            seed=0,
            trained=None,
        )


# -------------------------------------------------------------------------------------------
# bad settings


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"model": "lstm"}, "gru_attention"),
        ({"device": "tpu"}, "cpu"),
        ({"sizes": {"gru": TINY_SIZES["gru"]}, "model": "transformer"}, "gru"),
        ({"seq_len": 0}, "positive"),
    ],
)
def test_bad_settings_raise_naming_what_is_allowed(override, message):
    settings = {**TRAIN, "model": "transformer", "seq_len": L, "device": "cpu", "seed": 0}
    with pytest.raises(ValueError, match=message):
        ex.reversal_comparison(**{**settings, **override})


def test_too_many_analysis_samples_are_refused():
    with pytest.raises(ValueError, match="n_samples"):
        ex.attention_analysis(
            **TRAIN, model="transformer", seq_len=L, n_samples=41, maps=True, device="cpu", seed=0
        )


def test_bad_step_counts_are_refused():
    with pytest.raises(ValueError, match="timed_steps"):
        ex.step_time(
            model="gru",
            seq_len=L,
            sizes=TINY_SIZES,
            lr=1e-3,
            batch_size=8,
            warmup_steps=1,
            timed_steps=0,
            device="cpu",
            seed=0,
        )


@without_cuda
def test_cuda_without_a_gpu_says_so():
    with pytest.raises(RuntimeError, match="no GPU.*cpu"):  # training.check_device's message
        comparison("gru", device="cuda")


# -------------------------------------------------------------------------------------------
# cuda (skipped without a GPU)


@pytest.mark.gpu
@requires_cuda
@pytest.mark.parametrize("model", MODELS)
def test_cuda_runs_like_the_cpu(model):
    cpu, gpu = untimed(comparison(model)), untimed(comparison(model, device="cuda"))
    assert cpu[["position", "quantity"]].equals(gpu[["position", "quantity"]])
    structure = ~cpu["quantity"].str.endswith("accuracy")
    assert cpu[structure].equals(gpu[structure])  # sizes and parameter counts
    # same data and initialisation; other kernels can flip a rare argmax, not the whole table
    assert np.allclose(cpu["value"], gpu["value"], atol=0.1)
    if model != "gru":
        assert not analysis(model, device="cuda").empty
    assert timing(model, device="cuda")["value"].iloc[0] > 0


# -------------------------------------------------------------------------------------------
# §9.4's statistics of attention weights (attention_statistics and its helpers)


def tiny_model(kind: str):
    torch.manual_seed(0)
    sizes = {"transformer": dict(d_model=16, n_heads=2, d_ff=32, max_len=16)}
    sizes["gru_attention"] = dict(emb_dim=8, hidden=16)
    return tt.build_model(kind, src_vocab=tr.VOCAB_SIZE, tgt_vocab=tr.VOCAB_SIZE, **sizes[kind])


def statistics(model, src) -> pd.DataFrame:
    return pd.DataFrame(ex.attention_statistics(ex.decoding_weights(model, src)))


def test_statistics_of_known_weights():
    n = 4
    mirror = torch.zeros(1, 1, n + 1, n)
    mirror[0, 0, torch.arange(n), n - 1 - torch.arange(n)] = 1.0  # the perfect anti-diagonal
    mirror[0, 0, n] = 1.0 / n  # EOS step: ignored by the mirror statistics
    assert ex.mirror_weight(mirror[:, :, :n]).tolist() == [1.0]
    assert ex.mirror_offset_share(mirror[:, :, :n], 0).tolist() == [1.0]
    shifted = mirror[:, :, :n].roll(1, dims=-1)  # mirror + 1 (the GRU's habit, §9.4)
    assert ex.mirror_offset_share(shifted, 1).tolist() == [0.75]  # the last step wraps around
    uniform = torch.full((2, 3, 5, 16), 1 / 16)
    torch.testing.assert_close(ex.attention_entropy(uniform), torch.full((3,), math.log(16)))
    assert ex.attention_entropy(mirror[:, :, :n]).tolist() == [0.0]
    parked = torch.zeros(1, 2, 3, 3)
    parked[:, 0, :, 0] = 1.0
    parked[:, 1] = torch.eye(3)
    assert ex.bos_weight(parked).tolist() == pytest.approx([1.0, 1 / 3])


@pytest.mark.parametrize("kind", ["transformer", "gru_attention"])
def test_attention_statistics_are_the_weights_read_one_by_one(kind):
    """Every statistic recomputed from the decoding weights with plain loops over samples,
    steps and keys: a wrong axis, an off-by-one mirror, the EOS step or query 0 counted in,
    or a head mixed up gives another number."""
    model = tiny_model(kind)
    src = tr.reversal_batch(torch.Generator().manual_seed(0), 10, L)[0]
    table = statistics(model, src).set_index(["block", "quantity", "head"])["value"]
    weights = ex.decoding_weights(model, src)
    expected = {}
    for block, w in weights.items():
        w = w.double().numpy()  # (b, h, n_q, n_k)
        for h in range(w.shape[1]):
            if block.endswith("cross_attn"):  # steps t < L, source L-1-t
                steps = [(s, t) for s in range(len(w)) for t in range(L)]
                rows = [w[s, h, t] for s, t in steps]
                expected[block, "mirror_weight", h + 1] = np.mean(
                    [w[s, h, t, L - 1 - t] for s, t in steps]
                )
                for k in (-1, 0, 1):
                    hits = [w[s, h, t].argmax() == L - 1 - t + k for s, t in steps]
                    expected[block, f"argmax_at_mirror{k:+d}", h + 1] = np.mean(hits)
            elif block.startswith("decoder"):  # queries t >= 1
                rows = [w[s, h, t] for s in range(len(w)) for t in range(1, L + 1)]
                expected[block, "bos_weight", h + 1] = np.mean([r[0] for r in rows])
            else:
                rows = [w[s, h, t] for s in range(len(w)) for t in range(L)]
            entropies = [-sum(p * math.log(p) for p in r if p > 0) for r in rows]
            expected[block, "entropy", h + 1] = np.mean(entropies)
    assert sorted(table.index) == sorted(expected)
    for key, wanted in expected.items():
        assert table[key] == pytest.approx(wanted, abs=1e-6), key


def test_attention_statistics_of_uniform_attention_are_the_uniform_values():
    """W^Q = W^K = 0 makes every attention uniform over the keys it may see: the statistics
    must then be those of uniform rows, block by block (a wrong axis or mask would not be)."""
    model = tiny_model("transformer")
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, tt.MultiHeadAttention):
                d = module.d_model
                module.in_proj.weight[: 2 * d] = 0  # W^Q and W^K
                module.in_proj.bias[: 2 * d] = 0
    src = tr.reversal_batch(torch.Generator().manual_seed(0), 10, L)[0]
    table = statistics(model, src).set_index(["block", "quantity", "head"])["value"]
    for head in (1, 2):
        assert table["encoder.0.self_attn", "entropy", head] == pytest.approx(math.log(L))
        assert table["decoder.0.cross_attn", "entropy", head] == pytest.approx(math.log(L))
        assert table["decoder.0.cross_attn", "mirror_weight", head] == pytest.approx(1 / L)
        # decoder queries t = 1..L see t + 1 positions (BOS and the prefix): uniform over them
        seen = range(2, L + 2)
        bos = sum(1 / k for k in seen) / L
        entropy = sum(math.log(k) for k in seen) / L
        assert table["decoder.0.self_attn", "bos_weight", head] == pytest.approx(bos)
        assert table["decoder.0.self_attn", "entropy", head] == pytest.approx(entropy)


@pytest.mark.gpu
@requires_cuda
@pytest.mark.parametrize("kind", ["transformer", "gru_attention"])
def test_attention_statistics_on_cuda_match_the_cpu(kind):
    model = tiny_model(kind)
    src = tr.reversal_batch(torch.Generator().manual_seed(0), 10, 6)[0]
    on_cpu = statistics(model, src)
    on_gpu = statistics(model.to("cuda"), src.to("cuda"))
    assert on_cpu[["block", "head", "quantity"]].equals(on_gpu[["block", "head", "quantity"]])
    assert on_gpu["value"].to_numpy() == pytest.approx(on_cpu["value"].to_numpy(), abs=1e-4)
