"""The lecture's five scripts (scripts/0N_*.py): they exist under the lecture's names, run their
demos without Snakemake, and an exercise's edit at the top of one changes the config exactly
where the lecture says (the workflow applies the same edits: tests/pipeline/test_workflow.py)."""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import CONFIG, ROOT

from lecture17.experiments import DEMOS
from lecture17.scripts import apply_edits, edits_of, lecture_scripts, script_edits, script_path


def config_demos() -> dict:
    return yaml.safe_load(CONFIG.read_text(encoding="utf-8"))["demos"]


def test_the_lecture_names_two_of_its_scripts_and_they_exist():
    assert lecture_scripts() == ["01", "02", "03", "04", "05"]
    assert script_path("03", ROOT) == ROOT / "scripts/03_positional_encoding.py"  # §6.2, Ex9
    assert script_path("05", ROOT) == ROOT / "scripts/05_transformer_vs_rnn.py"  # Ex8
    assert all(script_path(s, ROOT).exists() for s in lecture_scripts())
    with pytest.raises(ValueError, match="unknown lecture script"):
        script_path("99")


def test_as_committed_no_script_edits_the_config():
    assert script_edits(ROOT) == {}


def exercise_8(tmp_path, steps="1500", lengths="[32]"):
    text = script_path("05", ROOT).read_text(encoding="utf-8")
    edited = text.replace("STEPS = None", f"STEPS = {steps}").replace(
        "LENGTHS = None", f"LENGTHS = {lengths}"
    )
    assert edited.count("= None") == text.count("= None") - 2  # both constants found
    path = tmp_path / "05_transformer_vs_rnn.py"
    path.write_text(edited, encoding="utf-8")
    return edits_of(path)


def test_exercise_8_as_written_edits_05_1_and_the_demo_that_reads_its_models(tmp_path):
    edits = exercise_8(tmp_path)
    assert edits == {"05.1": {"settings.train.steps": 1500, "grid.seq_len": [32]}}
    before = config_demos()
    after = apply_edits(before, edits)
    assert after["05.1"]["settings"]["train"]["steps"] == 1500
    assert after["05.1"]["grid"]["seq_len"] == [32]
    readers = [d for d in before if DEMOS[d].reads_models == "05.1"]
    assert readers == ["05.5", "06.6"]  # they must read the models 05.1 now trains
    for reader in readers:
        assert after[reader]["settings"]["train"] == after["05.1"]["settings"]["train"]
        assert after[reader]["grid"]["seq_len"] == [32]
    changed = {d for d in before if after[d] != before[d]}
    assert changed == {"05.1", *readers}  # not 05.3, 05.4, nor the recorded 07.8 or 08.1
    assert before["05.1"]["settings"]["train"]["steps"] == 500  # the config itself untouched


def test_exercise_9_in_script_03_drops_the_scale_of_03_5_alone(tmp_path):
    text = script_path("03", ROOT).read_text(encoding="utf-8")
    path = tmp_path / "03_positional_encoding.py"
    path.write_text(text.replace("SCALE = None", "SCALE = False"), encoding="utf-8")
    edits = edits_of(path)
    assert edits == {"03.5": {"settings.scale": False}}
    before = config_demos()
    after = apply_edits(before, edits)
    assert (
        before["03.5"]["settings"]["scale"] is None and after["03.5"]["settings"]["scale"] is False
    )
    assert {d for d in before if after[d] != before[d]} == {"03.5"}  # not 07.3, 08.2 or 08.3


def _03_5_attention_scales(monkeypatch, default: bool) -> set:
    """Every attention block's scale in 03.5's §6.6 model, built from the config as its job
    builds it, with MultiHeadAttention's default scale set to `default` (the lecture's edit of
    `scale: bool = True` in tiny_transformer.py, made on the function's defaults)."""
    from lecture17 import tiny_transformer as tt
    from lecture17.experiments.positional_encoding import pe_ablation_model
    from lecture17.training import VOCAB_SIZE

    init = tt.MultiHeadAttention.__init__
    monkeypatch.setattr(init, "__defaults__", (default, *init.__defaults__[1:]))
    settings = config_demos()["03.5"]["settings"]
    sizes = {k: settings[k] for k in ("d_model", "n_heads", "d_ff", "scale")}
    sizes |= {k: settings[k] for k in ("n_enc_layers", "n_dec_layers")}
    variant = config_demos()["03.5"]["grid"]["variant"][0]  # "看演示 5 的第一行"
    model = pe_ablation_model(variant=variant, vocab_size=VOCAB_SIZE, **sizes)
    blocks = [m for m in model.modules() if isinstance(m, tt.MultiHeadAttention)]
    assert len(blocks) == 3  # encoder self, decoder self and cross (1 + 1 layers)
    return {m.scale for m in blocks}


def test_exercise_9_as_written_edits_the_default_and_03_5s_model_follows(monkeypatch):
    """§13 Ex9: "在 tiny_transformer.py 的 MultiHeadAttention 里把默认的 scale=True 改成 False，
    然后运行 03_positional_encoding.py（看演示 5 的第一行）": 03.5's config leaves the scale to
    that default, so every attention block of its first row's model drops 1/√d_k."""
    from lecture17 import tiny_transformer as tt

    assert tt.MultiHeadAttention.__init__.__defaults__[0] is True  # as committed
    assert _03_5_attention_scales(monkeypatch, True) == {True}
    assert _03_5_attention_scales(monkeypatch, False) == {False}


def test_a_wrong_edit_is_a_clear_error():
    demos = config_demos()
    with pytest.raises(ValueError, match="which the config does not run"):
        apply_edits(demos, {"99.9": {"settings.x": 1}})
    with pytest.raises(ValueError, match="has no 'stepz'"):
        apply_edits(demos, {"05.1": {"settings.train.stepz": 1}})
    with pytest.raises(ValueError, match="expected settings.<name> or grid.<name>"):
        apply_edits(demos, {"05.1": {"seeds": [1]}})


@pytest.mark.slow
def test_a_script_runs_its_demos_and_prints_their_tables():
    done = subprocess.run(
        [sys.executable, "scripts/01_self_attention.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("代码 01 自注意力")
    # 01.1's weights as the lecture prints them (§2.3: l'Afrique gives visite 0.614)
    weights = done.stdout.split("注意力权重 Attention weights")[1]
    assert "l'Afrique  0.083  0.614" in weights


def test_a_script_run_trains_05_1s_models_once_and_05_5_decodes_with_them(tmp_path, monkeypatch):
    """run_script's jobs: 05.1 keeps its models beside its CSV, 05.5 reads them (a second
    training would be the script's slowest part); with no kept file it trains them again."""
    monkeypatch.syspath_prepend(str(ROOT / "tests" / "experiments"))
    from demos import spec

    from lecture17.experiments import transformer_vs_rnn
    from lecture17.pipeline.job import jobs
    from lecture17.scripts import _run_one

    point, work = {"model": "transformer", "seq_len": 32}, str(tmp_path)
    csv = Path(next(c for c, p, s in jobs("05.1", spec("05.1"), work) if p == point and s == 0))
    csv.parent.mkdir(parents=True)
    _run_one("05.1", {**spec("05.1")["settings"], "device": "cpu"}, 0, point, csv, work)
    assert csv.with_name("seed0.models.pt").is_file()

    def no_training(**kwargs):
        raise AssertionError("05.5 trained a model 05.1 had kept")

    monkeypatch.setattr(transformer_vs_rnn, "train_reversal", no_training)
    settings = {**spec("05.5")["settings"], "device": "cpu"}
    read = _run_one("05.5", settings, 0, point, tmp_path / "x.csv", work)
    assert not read[read["quantity"] == "output"].empty
    with pytest.raises(AssertionError, match="had kept"):  # another seed: nothing kept
        _run_one("05.5", settings, 1, point, tmp_path / "y.csv", work)
