"""The training demos 02.3, 03.5 and 04.3 at the tiny settings of .test/config/config.yaml.

Their numbers at full settings are the build's business (the ledger checks them in the report);
here: the table each returns, determinism, the computed chance levels, that the settings
really reach the model (scale, emb_scale, norm_first), the device argument, and bad settings.
Every training demo (these and 05.1, 05.3) takes its training as one `train: TrainSettings`.
"""

import dataclasses
import inspect
import itertools
import math
import typing
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import yaml

from lecture17 import tiny_transformer as tt
from lecture17 import training
from lecture17.experiments import layers, positional_encoding, scaling_multihead
from lecture17.pipeline.job import as_arguments, check_demo, check_settings, load_demo, run_demo
from lecture17.training import TrainSettings

ROOT = Path(__file__).resolve().parents[1]
TEST_CONFIG = ROOT / ".test" / "config" / "config.yaml"
DEMO_FUNCTIONS = {
    "02.3": scaling_multihead.lookup_task,
    "03.5": positional_encoding.pe_ablation,
    "04.3": layers.post_vs_pre_ln,
}
CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU on this machine")
TRAINING_DEMOS = ["02.3", "03.5", "04.3", "05.1", "05.3"]  # the demos that call training.train


@cache
def spec(demo: str) -> dict:
    with open(TEST_CONFIG, encoding="utf-8") as f:
        return yaml.safe_load(f)["demos"][demo]


def grid_points(demo: str) -> list[dict]:
    """The jobs of a demo, in the workflow's order (common.smk's grid_points)."""
    grid = spec(demo)["grid"]
    return [dict(zip(grid, combo, strict=True)) for combo in itertools.product(*grid.values())]


def kwargs(
    demo: str, point: dict | None = None, device: str = "cpu", train=None, **overrides
) -> dict:
    """The demo's arguments as run.py passes them (its `train:` block as a TrainSettings), at a
    grid point; `train` changes fields of the TrainSettings, `overrides` other settings."""
    point = grid_points(demo)[0] if point is None else point
    values = {**spec(demo)["settings"], **point, "device": device, **overrides}
    arguments = as_arguments(DEMO_FUNCTIONS[demo], values)
    arguments["train"] = dataclasses.replace(arguments["train"], **(train or {}))
    return arguments


@cache
def table(demo: str, point_index: int = 0) -> pd.DataFrame:
    """One tiny run per (demo, grid point), shared by the tests (seed 0)."""
    return DEMO_FUNCTIONS[demo](**kwargs(demo, grid_points(demo)[point_index]), seed=0)


def values(frame: pd.DataFrame, quantity: str, **labels) -> np.ndarray:
    rows = frame[frame["quantity"] == quantity]
    for label, wanted in labels.items():
        rows = rows[rows[label] == wanted]
    return rows["value"].to_numpy()


# -------------------------------------------------------------------------------------------
# the table


@pytest.mark.parametrize("demo", sorted(DEMO_FUNCTIONS))
def test_settings_match_the_function_and_the_table_is_tidy(demo):
    check_settings(DEMO_FUNCTIONS[demo], kwargs(demo))  # the .test config fits the signature
    out = run_demo(demo, spec(demo)["settings"] | {"device": "cpu"}, 0, grid_points(demo)[0])
    columns = list(out.columns)
    assert columns[:2] == ["demo", "seed"] and columns[-2:] == ["quantity", "value"]
    for label in grid_points(demo)[0]:  # run.py labels the rows with the grid point
        assert label in out.columns
    assert out["value"].dtype == np.float64 and np.isfinite(out["value"]).all()


@pytest.mark.parametrize("demo", sorted(DEMO_FUNCTIONS))
def test_same_seed_same_table(demo):
    again = DEMO_FUNCTIONS[demo](**kwargs(demo), seed=0)
    pd.testing.assert_frame_equal(table(demo), again)


# -------------------------------------------------------------------------------------------
# 02.3 the look-up task (§4.4)


@pytest.mark.parametrize("point_index", [0, 1])
def test_lookup_rows_per_learning_rate_and_per_job(point_index):
    settings, point = spec("02.3")["settings"], grid_points("02.3")[point_index]
    out = table("02.3", point_index)
    lrs = settings["adam_lrs"] if point["optimizer"] == "adam" else settings["sgd_lrs"]
    labels = [format(lr, "g") for lr in lrs]  # text labels, as the report and ledger read them
    curve = out[out["quantity"] == "accuracy"]
    assert list(dict.fromkeys(curve["lr"])) == labels
    every = settings["train"]["eval_every"]
    expected_steps = list(range(every, settings["train"]["steps"] + 1, every))
    for label in labels:
        assert curve[curve["lr"] == label]["step"].tolist() == expected_steps
    reached = {label: values(out, "reached", lr=label)[0] for label in labels}
    steps = {label: values(out, "steps_to_90", lr=label) for label in labels}
    for label in labels:  # a step count exactly where the threshold was reached
        first = [
            s
            for s, a in zip(expected_steps, values(out, "accuracy", lr=label), strict=True)
            if a >= settings["threshold"]
        ]
        assert reached[label] == float(bool(first))
        assert steps[label].tolist() == first[:1]
    assert values(out, "n_lrs").tolist() == [len(lrs)]
    assert values(out, "n_lrs_reached").tolist() == [sum(reached.values())]
    all_steps = [s[0] for s in steps.values() if len(s)]
    assert values(out, "best_steps_to_90").tolist() == ([min(all_steps)] if all_steps else [])
    assert values(out, "best_lr")[0] in lrs


def test_lookup_chance_is_one_over_the_number_of_pairs():
    n_pairs = spec("02.3")["settings"]["n_pairs"]
    assert values(table("02.3"), "chance").tolist() == [1 / n_pairs]


def test_lookup_simulated_chance_is_one_over_the_number_of_pairs():
    """A random guesser scored by LookupTask.evaluate: 1/n_pairs within ~5 standard errors."""
    p = 1 / spec("02.3")["settings"]["n_pairs"]
    out = table("02.3")
    assert out["quantity"].iloc[-1] == "simulated_chance"  # new rows go last
    sigma = math.sqrt(p * (1 - p) / training.CHANCE_DRAWS)  # 0.00077 at 1/16
    assert values(out, "simulated_chance")[0] == pytest.approx(p, abs=min(0.005, 5 * sigma))


def test_lookup_fastest_lr_ties_and_none_reached():
    tie = {0.1: {"steps": 50, "final": 1.0}, 1: {"steps": 50, "final": 1.0}}
    assert scaling_multihead._fastest(tie) == 0.1  # the first swept lr of a tie
    none = {0.1: {"steps": None, "final": 0.3}, 1: {"steps": None, "final": 0.5}}
    assert scaling_multihead._fastest(none) == 1  # no lr reached: the best final accuracy


# -------------------------------------------------------------------------------------------
# 03.5 positional-encoding ablation (§6.6)


def test_pe_chance_counts_the_eos():
    # F01: uniform guessing is right 1 time in 10 on each symbol; EOS is counted and right
    L = spec("03.5")["settings"]["length"]
    assert values(table("03.5"), "chance")[0] == pytest.approx((L * 0.1 + 1) / (L + 1), abs=1e-15)
    assert (16 * 0.1 + 1) / 17 == pytest.approx(0.1529, abs=1e-4)  # the lecture's 0.153 at L=16


def test_pe_simulated_chance_counts_the_eos():
    """F01 measured: random symbols then EOS, scored by greedy_accuracy like the models."""
    L = spec("03.5")["settings"]["length"]
    out = table("03.5")
    assert list(out["quantity"].iloc[-2:]) == ["simulated_chance", "simulated_symbol_chance"]
    sigma = math.sqrt(0.1 * 0.9 / training.CHANCE_DRAWS)  # one random symbol: 0.00095
    token = values(out, "simulated_chance")[0]
    assert token == pytest.approx((L * 0.1 + 1) / (L + 1), abs=5 * sigma * L / (L + 1))
    assert values(out, "simulated_symbol_chance")[0] == pytest.approx(0.1, abs=5 * sigma)
    assert abs(token - values(out, "chance")[0]) < 0.005


def test_pe_norms_at_initialisation():
    d_model = spec("03.5")["settings"]["d_model"]
    plain, scaled = table("03.5", 0), table("03.5", 1)  # sinusoidal, sinusoidal_scaled
    default = inspect.signature(tt.Embedding).parameters["emb_scale"].default
    assert values(plain, "emb_scale")[0] == default == 1.0  # §6.6: the code's default
    assert values(scaled, "emb_scale")[0] == pytest.approx(math.sqrt(d_model))
    assert values(scaled, "scaled_embedding_norm")[0] == pytest.approx(
        math.sqrt(d_model) * values(scaled, "embedding_norm")[0], rel=1e-12
    )
    for frame in (plain, scaled):  # ‖PE(pos)‖ = √(d/2) at every position (§6.2)
        assert values(frame, "pe_norm")[0] == pytest.approx(math.sqrt(d_model / 2), rel=1e-6)
    # the same seed draws the same token embeddings in both variants
    assert values(plain, "embedding_norm")[0] == values(scaled, "embedding_norm")[0]


def test_pe_no_positional_encoding_has_no_pe_norm():
    out = positional_encoding.pe_ablation(**kwargs("03.5", {"variant": "none"}), seed=0)
    assert "pe_norm" not in set(out["quantity"])
    assert {"token_accuracy", "symbol_accuracy", "sequence_accuracy"} <= set(out["quantity"])


@pytest.mark.parametrize("scale", [True, False])
def test_pe_scale_setting_reaches_every_attention_block(scale):
    sizes = {k: spec("03.5")["settings"][k] for k in ("d_model", "n_heads", "d_ff")}
    model = positional_encoding.pe_ablation_model(
        variant="sinusoidal", vocab_size=training.VOCAB_SIZE, scale=scale, **sizes
    )
    blocks = [m for m in model.modules() if isinstance(m, tt.MultiHeadAttention)]
    assert len(blocks) == 3 and all(b.scale is scale for b in blocks)  # enc self, dec self, cross


def test_pe_ablation_trains_the_model_it_was_asked_for(monkeypatch):
    """scale=False and the variant reach the model train() builds (Ex9 is a config edit)."""
    built = []
    original = training.train

    def spy(make_model, task, settings, **kw):
        def recording():
            built.append(make_model())
            return built[-1]

        return original(recording, task, settings, **kw)

    monkeypatch.setattr(training, "train", spy)
    positional_encoding.pe_ablation(
        **kwargs("03.5", {"variant": "learned"}, scale=False, train={"steps": 2}), seed=0
    )
    (model,) = built
    assert model.encoder.embed.pe_kind == "learned"
    blocks = [m for m in model.modules() if isinstance(m, tt.MultiHeadAttention)]
    assert blocks and not any(b.scale for b in blocks)


# -------------------------------------------------------------------------------------------
# 04.3 Post-LN vs Pre-LN (§7.5)


def test_ln_curve_starts_at_initialisation_and_chance_is_one_in_ten():
    settings = spec("04.3")["settings"]
    out = table("04.3")
    curve = out[out["quantity"] == "accuracy"]
    every = settings["train"]["eval_every"]
    assert curve["step"].tolist() == list(range(0, settings["train"]["steps"] + 1, every))
    assert values(out, "chance").tolist() == [1 / training.N_SYMBOLS] == [0.1]
    assert len(values(out, "sequence_accuracy")) == 1


def test_ln_simulated_chance_is_one_in_ten():
    out = table("04.3")
    assert out["quantity"].iloc[-1] == "simulated_chance"
    sigma = math.sqrt(0.1 * 0.9 / training.CHANCE_DRAWS)
    assert values(out, "simulated_chance")[0] == pytest.approx(0.1, abs=5 * sigma)


def test_ln_setups_build_the_right_norm_placement(monkeypatch):
    built = []
    original = training.train

    def spy(make_model, task, settings, **kw):
        built.append((make_model(), settings.warmup, settings.lr))
        return original(make_model, task, settings, **kw)

    monkeypatch.setattr(training, "train", spy)
    for setup in layers.LN_SETUPS:
        point = {"lr": 0.01, "setup": setup}
        layers.post_vs_pre_ln(**kwargs("04.3", point, train={"steps": 1}), seed=0)
    warmup = spec("04.3")["settings"]["train"]["warmup"]
    assert {lr for *_, lr in built} == {0.01}  # the grid's lr, set per run
    (post, w_post, _), (pre, w_pre, _), (post_warm, w_warm, _) = built
    assert [layer.norm_first for layer in post.encoder.layers] == [False] * len(post.encoder.layers)
    assert all(layer.norm_first for layer in pre.encoder.layers)
    assert not any(layer.norm_first for layer in post_warm.encoder.layers)
    assert (w_post, w_pre, w_warm) == (0, 0, warmup)


# -------------------------------------------------------------------------------------------
# settings that are wrong, and the device


@pytest.mark.parametrize(
    ("demo", "bad", "allowed"),
    [
        ("03.5", {"variant": "rotary"}, "sinusoidal"),
        ("04.3", {"lr": 0.01, "setup": "post_ln_warmup200"}, "post_ln_warmup"),
        ("02.3", {"d_k": 16, "optimizer": "rmsprop", "scaled": True}, "adam"),
    ],
)
def test_unknown_choices_name_the_allowed_values(demo, bad, allowed):
    with pytest.raises(ValueError, match=allowed):
        DEMO_FUNCTIONS[demo](**kwargs(demo, bad), seed=0)


@pytest.mark.parametrize("demo", sorted(DEMO_FUNCTIONS))
def test_unknown_device_is_refused(demo):
    with pytest.raises(ValueError, match="cpu.*cuda"):
        DEMO_FUNCTIONS[demo](**kwargs(demo, device="tpu"), seed=0)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
@pytest.mark.parametrize("demo", sorted(DEMO_FUNCTIONS))
def test_cuda_without_a_gpu_says_so(demo):
    with pytest.raises(RuntimeError, match="no GPU"):
        DEMO_FUNCTIONS[demo](**kwargs(demo, device="cuda"), seed=0)


@CUDA
@pytest.mark.parametrize("demo", sorted(DEMO_FUNCTIONS))
def test_cuda_run_gives_the_same_table_layout(demo):
    on_gpu = DEMO_FUNCTIONS[demo](**kwargs(demo, device="cuda"), seed=0)
    on_cpu = table(demo)
    label_columns = [c for c in on_cpu.columns if c != "value"]
    pd.testing.assert_frame_equal(on_gpu[label_columns], on_cpu[label_columns])
    assert np.isfinite(on_gpu["value"]).all()
    # the same init and the same batches: the initial norms do not depend on the device
    for quantity in ("embedding_norm", "chance"):
        if quantity in set(on_cpu["quantity"]):
            assert values(on_gpu, quantity) == pytest.approx(values(on_cpu, quantity))


# -------------------------------------------------------------------------------------------
# one `train:` block per training demo, checked when the workflow is parsed


@pytest.mark.parametrize("demo", TRAINING_DEMOS)
def test_every_training_demo_takes_its_training_as_train_settings(demo):
    fn = load_demo(demo)
    assert typing.get_type_hints(fn)["train"] is TrainSettings
    assert inspect.signature(fn).parameters["train"].kind is inspect.Parameter.KEYWORD_ONLY
    block = spec(demo)["settings"]["train"]  # the .test config's, as the workflow reads it
    assert isinstance(as_arguments(fn, {"train": block})["train"], TrainSettings)


@pytest.mark.parametrize("demo", TRAINING_DEMOS)
def test_a_typo_inside_a_train_block_fails_at_parse_time_naming_the_key(demo):
    good = spec(demo)
    check_demo(demo, good, "cpu")  # the block as shipped parses
    typo = {**good, "settings": {**good["settings"], "train": {**good["settings"]["train"]}}}
    typo["settings"]["train"]["stpes"] = typo["settings"]["train"].pop("steps")
    with pytest.raises(ValueError) as raised:
        check_demo(demo, typo, "cpu")
    said = str(raised.value)
    assert f"config demos['{demo}']" in said and "unknown key 'stpes'" in said
    assert "missing key 'steps'" in said and "'eval_every'" in said  # and the keys it has
    wrong = {**good, "settings": {**good["settings"], "train": {"steps": "20"}}}
    with pytest.raises(ValueError, match=r"'steps' is '20' \(str\), expected int"):
        check_demo(demo, wrong, "cpu")
