"""What every training demo of the registry (kind "training") must satisfy, at the tiny
settings of .test/config/config.yaml (demos.py).

Their numbers at full settings are the build's business (the ledger checks them in the report);
here: the contract, the table each returns, determinism, the device argument, bad settings,
and one `train: TrainSettings` block per demo that trains. What is particular to one demo (its
chance levels, that its settings really reach the model) is tested in its module's file
(test_scaling_multihead.py, test_positional_encoding.py, test_layers.py,
test_transformer_vs_rnn.py).
"""

import inspect
import typing

import numpy as np
import pandas as pd
import pytest
from conftest import requires_cuda, without_cuda
from demos import config, grid_points, kwargs, spec, tiny_run, untimed

from lecture17.experiments import DEMOS
from lecture17.pipeline.aggregate import select
from lecture17.pipeline.job import (
    NOT_SETTINGS,
    as_arguments,
    check_demo,
    check_settings,
    load_demo,
    run_demo,
)
from lecture17.training import TrainSettings

TRAINING = [d for d, demo in DEMOS.items() if demo.kind == "training"]
# the demos that call training.train: those whose config has a `train:` block (05.4 times
# training.train_step alone, with settings of its own)
TRAINS = [d for d in TRAINING if "train" in spec(d)["settings"]]


# -------------------------------------------------------------------------------------------
# the contract (docs/ARCHITECTURE.md), at config/config.yaml's settings (nothing is trained)


@pytest.mark.parametrize("demo", TRAINING)
def test_demo_follows_the_contract(demo):
    fn = load_demo(demo)
    params = inspect.signature(fn).parameters.values()
    assert all(p.kind is p.KEYWORD_ONLY and p.default is p.empty for p in params)
    first_point = {key: values[0] for key, values in config()[demo]["grid"].items()}
    check_settings(fn, {**config()[demo]["settings"], **first_point, "device": "cpu"})


# -------------------------------------------------------------------------------------------
# the table


@pytest.mark.parametrize("demo", TRAINING)
def test_settings_match_the_function_and_the_table_is_tidy(demo):
    settings = {k: v for k, v in kwargs(demo).items() if k not in NOT_SETTINGS}
    check_settings(load_demo(demo), settings)  # the .test config fits the signature
    out = run_demo(demo, spec(demo)["settings"] | {"device": "cpu"}, 0, grid_points(demo)[0])
    columns = list(out.columns)
    assert columns[:2] == ["demo", "seed"] and columns[-2:] == ["quantity", "value"]
    for label in grid_points(demo)[0]:  # run.py labels the rows with the grid point
        assert label in out.columns
    assert out["value"].dtype == np.float64 and np.isfinite(out["value"]).all()


@pytest.mark.parametrize("demo", TRAINING)
def test_same_seed_same_table(demo):
    """Everything but the demo's declared timings (05.1's, 05.4's ms), which differ on every run."""
    again = load_demo(demo)(**kwargs(demo), seed=0)
    pd.testing.assert_frame_equal(untimed(demo, tiny_run(demo)), untimed(demo, again))


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
        load_demo(demo)(**kwargs(demo, bad), seed=0)


@pytest.mark.parametrize("demo", TRAINING)
def test_unknown_device_is_refused(demo):
    with pytest.raises(ValueError, match="cpu.*cuda"):
        load_demo(demo)(**kwargs(demo, device="tpu"), seed=0)


@without_cuda
@pytest.mark.parametrize("demo", TRAINING)
def test_cuda_without_a_gpu_says_so(demo):
    with pytest.raises(RuntimeError, match="no GPU"):
        load_demo(demo)(**kwargs(demo, device="cuda"), seed=0)


@requires_cuda
@pytest.mark.parametrize("demo", TRAINING)
def test_cuda_run_gives_the_same_table_layout(demo):
    on_gpu = load_demo(demo)(**kwargs(demo, device="cuda"), seed=0)
    on_cpu = tiny_run(demo)
    label_columns = [c for c in on_cpu.columns if c != "value"]
    pd.testing.assert_frame_equal(on_gpu[label_columns], on_cpu[label_columns])
    assert np.isfinite(on_gpu["value"]).all()
    # the same init and the same batches: the initial norms do not depend on the device
    for quantity in ("embedding_norm", "chance"):
        if quantity in set(on_cpu["quantity"]):
            on_cpus = select(on_cpu, quantity)["value"].to_numpy()
            assert select(on_gpu, quantity)["value"].to_numpy() == pytest.approx(on_cpus)


# -------------------------------------------------------------------------------------------
# one `train:` block per training demo, checked when the workflow is parsed


@pytest.mark.parametrize("demo", TRAINS)
def test_every_training_demo_takes_its_training_as_train_settings(demo):
    fn = load_demo(demo)
    assert typing.get_type_hints(fn)["train"] is TrainSettings
    assert inspect.signature(fn).parameters["train"].kind is inspect.Parameter.KEYWORD_ONLY
    block = spec(demo)["settings"]["train"]  # the .test config's, as the workflow reads it
    assert isinstance(as_arguments(fn, {"train": block})["train"], TrainSettings)


@pytest.mark.parametrize("demo", TRAINS)
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
