"""Demo 06.3 (§9.5 on a GPU): the timing demo, PyTorch's yardstick models, the crossover text,
the GPU-only claim, and the build that leaves the demo out unless `device: cuda`.

The demo itself is built for a GPU; here it runs on the CPU at toy sizes (the code path is the
same apart from torch.cuda.synchronize), and on cuda where a GPU exists.
"""

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from repository import copy_repository

from lecture17.experiments.beyond import RATIOS, TIMED_MODELS, gpu_step_time
from lecture17.reporting import diff, ledger
from lecture17.reporting.report import crossover_lines
from lecture17.tiny_transformer import TransformerConfig
from lecture17.torch_models import PlainGRU, TorchTransformer
from lecture17.training import VOCAB_SIZE, reversal_batch

ROOT = Path(__file__).resolve().parents[1]
CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

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


# -----------------------------------------------------------------------------
# the demo


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
    ms = table[table["quantity"] == "ms_per_step"].set_index(["model", "seq_len"])["value"]
    assert set(ms.index) == {(m, L) for m in TIMED_MODELS for L in (4, 8)}
    assert (ms > 0).all()
    for quantity, top, bottom in RATIOS:
        for L in (4, 8):
            row = table[(table["quantity"] == quantity) & (table["seq_len"] == L)]
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


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_cuda_without_a_gpu_says_so():
    with pytest.raises(RuntimeError, match="no GPU"):
        run(device="cuda")


@CUDA
@pytest.mark.parametrize("size", ["small", "base"])
def test_on_a_gpu_the_table_names_the_gpu(size):
    table = run(size, device="cuda")
    assert set(table["device_name"]) == {torch.cuda.get_device_name()}
    assert (table.loc[table["quantity"] == "ms_per_step", "value"] > 0).all()


# -----------------------------------------------------------------------------
# PyTorch's own models, the yardsticks

SMALL = TransformerConfig(VOCAB_SIZE, VOCAB_SIZE, d_model=16, n_heads=2, d_ff=32, max_len=9)


@pytest.mark.parametrize(
    "model",
    [
        lambda: TorchTransformer(SMALL),
        lambda: PlainGRU(VOCAB_SIZE, emb_dim=8, hidden=16),
    ],
)
def test_the_yardsticks_take_our_models_inputs(model):
    src, tgt_in, _ = reversal_batch(torch.Generator().manual_seed(0), 3, 8)  # tgt_in: L + 1
    assert model()(src, tgt_in).shape == (3, 9, VOCAB_SIZE)


def test_nn_transformer_is_causal_like_ours():
    """Changing a later target token leaves the earlier positions' logits alone (§8.1)."""
    torch.manual_seed(0)
    model = TorchTransformer(SMALL).eval()
    src, tgt_in, _ = reversal_batch(torch.Generator().manual_seed(0), 2, 8)
    changed = tgt_in.clone()
    changed[:, 5:] = (changed[:, 5:] + 1) % VOCAB_SIZE
    with torch.no_grad():
        a, b = model(src, tgt_in), model(src, changed)
    torch.testing.assert_close(a[:, :5], b[:, :5])
    assert not torch.allclose(a[:, 5:], b[:, 5:])


@pytest.mark.parametrize("change", [{"pe": "learned"}, {"emb_scale": 4.0}, {"scale": False}])
def test_nn_transformer_refuses_settings_it_cannot_mirror(change):
    with pytest.raises(ValueError, match="TorchTransformer supports only"):
        TorchTransformer(replace(SMALL, **change))


def test_nn_transformer_refuses_a_sequence_longer_than_its_pe_table():
    model = TorchTransformer(replace(SMALL, max_len=8))
    src, tgt_in, _ = reversal_batch(torch.Generator().manual_seed(0), 2, 8)  # tgt_in has 9
    with pytest.raises(ValueError, match="sequence length 9 exceeds max_len 8"):
        model(src, tgt_in)


# -----------------------------------------------------------------------------
# the report's crossover sentence


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
    return frame.assign(min=frame["mean"], max=frame["mean"], n_seeds=1)


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
# the GPU-only claim, and the CPU build that leaves 06.3 out

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
    assert failures == 0 and lines[1].endswith("计时 timing: (9, 6, 3) vs (9, 6, 3)")


def test_the_ledger_knows_only_cuda_as_a_need(tmp_path):
    path = tmp_path / "ledger.yaml"
    path.write_text("- {id: A, section: '§1', claim: c, lecture: '1', class: timing, needs: tpu}\n")
    with pytest.raises(ValueError, match=r"needs 'tpu'; expected one of \('cuda',\)"):
        ledger.load_ledger(path)


def planned_rules(*args: str) -> str:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run(
        [sys.executable, "-m", "snakemake", "--dry-run", "--forceall", "--quiet", "rules", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.mark.slow
def test_a_cpu_build_leaves_the_gpu_demo_out_and_a_cuda_build_plans_one_job_per_size():
    assert "gpu_step_time" not in planned_rules()
    cuda = planned_rules("--config", "device=cuda")
    assert any(line.split()[:2] == ["gpu_step_time", "2"] for line in cuda.splitlines())


# -----------------------------------------------------------------------------
# runs recorded on a GPU (report/measured/), aggregated by a CPU build

TEST_CONFIG = ".test/config/config.yaml"


def lecture17(work: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(
        os.environ,
        PYTHONPATH=str(work / "src"),
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    )
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=work, env=env, capture_output=True, text=True
    )


def args_of_the_test_config() -> list[str]:
    return ["--configfile", TEST_CONFIG, "--replace-workflow-config"]


def gpu_only(config_text: str) -> str:
    """The .test config with 06.3 a GPU-only demo, as in the full config."""
    import yaml

    config = yaml.safe_load(config_text)
    config["demos"]["06.3"]["devices"] = ["cuda"]
    return yaml.safe_dump(config, allow_unicode=True)


@pytest.mark.slow
def test_a_cpu_build_aggregates_recorded_gpu_runs_only_while_their_settings_hold(tmp_path):
    work = copy_repository(tmp_path)
    config = work / TEST_CONFIG
    config.write_text(gpu_only(config.read_text()))
    # on a GPU machine: python -m lecture17 run 06.3 --device cuda --results report/measured
    done = lecture17(
        work, "lecture17", "run", "06.3", "--config", TEST_CONFIG, "--results", "report/measured"
    )
    assert done.returncode == 1 and "只在 device ['cuda'] 上运行" in done.stderr
    spec_text = config.read_text()
    config.write_text(spec_text.replace("    - cuda\n", "    - cuda\n    - cpu\n", 1))
    done = lecture17(
        work, "lecture17", "run", "06.3", "--config", TEST_CONFIG, "--results", "report/measured"
    )
    assert done.returncode == 0, done.stderr
    assert (work / "report/measured/06.3/size=base/seed0.timing.csv").is_file()
    assert '"device": "cpu"' in (work / "report/measured/06.3/settings.json").read_text()
    config.write_text(spec_text)  # back to a GPU-only demo, in a CPU build

    def plan():
        args = args_of_the_test_config()
        done = lecture17(work, "snakemake", "--dry-run", "--forceall", "--printshellcmds", *args)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout + done.stderr

    planned = plan()
    assert "results/tables/06.3.csv" in planned and "report/measured/06.3/size=small" in planned
    assert "rule gpu_step_time" not in planned and "--recorded 06.3" in planned
    config.write_text(spec_text.replace("rounds: 2", "rounds: 3"))  # the config moved on
    planned = plan()
    assert "recorded with other settings" in planned
    assert "results/tables/06.3.csv" not in planned and "--recorded  " in planned
    asked = lecture17(
        work, "snakemake", "-n", *args_of_the_test_config(), "results/tables/06.3.csv"
    )  # as `python -m lecture17 show 06.3` does
    said = asked.stdout + asked.stderr
    assert asked.returncode != 0 and "runs only in a build with device in ['cuda']" in said


def test_running_a_demo_without_snakemake_writes_what_its_rule_writes(tmp_path):
    import json

    import yaml

    settings = yaml.safe_load((ROOT / "config/config.yaml").read_text())["demos"]["01.1"]
    rule = lecture17(
        ROOT,
        "lecture17.pipeline.job",
        "01.1",
        "--seed",
        "0",
        "--settings",
        json.dumps(settings["settings"], sort_keys=True),
        "--out",
        str(tmp_path / "rule/01.1/seed0.csv"),
    )
    assert rule.returncode == 0, rule.stderr
    alone = lecture17(ROOT, "lecture17", "run", "01.1", "--results", str(tmp_path / "alone"))
    assert alone.returncode == 0, alone.stderr
    for name in ("seed0.csv", "seed0.timing.csv"):
        assert (tmp_path / "alone/01.1" / name).read_bytes() == (
            tmp_path / "rule/01.1" / name
        ).read_bytes()
    assert json.loads((tmp_path / "alone/01.1/settings.json").read_text()) == settings["settings"]
