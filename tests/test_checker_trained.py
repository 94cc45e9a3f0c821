"""`python -m lecture17 check --trained`: a student's torch classes — their properties, the
adapters that put them in tiny_transformer's place, and which trained jobs rerun.

The trained demos' rebuild itself (minutes, and a control build of `make mutants`) is
`make check-trained`; here: everything before it, and the pieces it is made of.
"""

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest
import torch

from lecture17.checker import adapters, trained
from lecture17.checker.template import trained_template

ROOT = Path(__file__).resolve().parents[1]
FILES = ROOT / "tests" / "checker_files"
CORRECT = FILES / "torch_correct.py"
MISTAKES = FILES / "torch_mistakes.py"
sys.path.insert(0, str(ROOT))
from mutants import student  # noqa: E402


def failing(report) -> set[tuple[str, str]]:
    return {(p.cls, p.name) for p in report.properties if not p.ok}


def test_a_correct_file_in_another_style_passes_every_property():
    report = trained.check_classes(CORRECT)
    assert report.status == 0 and report.classes == list(trained.SIGNATURES)
    assert len(report.properties) >= 10 and not failing(report)


@pytest.mark.parametrize(
    "mistake, cls, words",
    [
        ("peek", "DecoderLayer", "因果"),
        ("tf_mask", "MultiHeadAttention", "mask 为 0"),
        ("cross_reads_decoder", "DecoderLayer", "交叉注意力读编码器的输出"),
    ],
)
def test_a_slip_is_flagged_by_the_property_it_breaks(mistake, cls, words, monkeypatch):
    monkeypatch.setenv("LECTURE17_TORCH_MISTAKE", mistake)
    report = trained.check_classes(MISTAKES)
    assert report.status == 1
    assert any(c == cls and words in name for c, name in failing(report))


def test_no_scale_keeps_every_property_the_trained_demos_judge_it(monkeypatch):
    """Weight-agnostic properties cannot see 1/sqrt(d_k): said here, so a reader knows what
    the build is for."""
    monkeypatch.setenv("LECTURE17_TORCH_MISTAKE", "no_scale")
    assert trained.check_classes(MISTAKES).status == 0


def test_bad_files_get_their_own_exit_code(tmp_path):
    template = tmp_path / "t.py"
    template.write_text(trained_template("t.py"), encoding="utf-8")
    assert trained.check_classes(template).status == 3  # nothing written: never a pass
    broken = tmp_path / "broken.py"
    broken.write_text("import torch\nclass MultiHeadAttention(:\n", encoding="utf-8")
    report = trained.check_classes(broken)
    assert report.status == 2 and report.load_failure.line == 2
    plain = tmp_path / "plain.py"
    plain.write_text("class MultiHeadAttention:\n    def __init__(self, d, h): pass\n")
    assert "nn.Module" in trained.check_classes(plain).problems["MultiHeadAttention"]
    wrong = tmp_path / "wrong.py"
    wrong.write_text(
        "from torch import nn\nclass EncoderLayer(nn.Module):\n"
        "    def __init__(self, d_model): super().__init__()\n"
        "    def forward(self, x, mask=None): return x\n"
    )
    report = trained.check_classes(wrong)
    assert (
        report.status == 2
        and "EncoderLayer(d_model, n_heads, d_ff)" in report.problems["EncoderLayer"]
    )
    crash = tmp_path / "crash.py"
    crash.write_text(
        "from torch import nn\nclass EncoderLayer(nn.Module):\n"
        "    def __init__(self, d_model, n_heads, d_ff): super().__init__()\n"
        "    def forward(self, x, mask=None):\n        return x.nope\n"
    )
    report = trained.check_classes(crash)
    assert report.status == 1 and report.failures["EncoderLayer"].line == 5


def test_the_template_lists_the_classes_and_their_arguments():
    text = trained_template("my_layers.py")
    for name, (init_args, forward_args) in trained.SIGNATURES.items():
        assert f"class {name}(nn.Module)" in text
        assert ", ".join(init_args) in text and ", ".join(forward_args) in text
    compile(text, "my_layers.py", "exec")


# -----------------------------------------------------------------------------
# the adapters: a fresh tiny_transformer with the student's classes in it


def fresh_tiny_transformer(classes=adapters.CLASSES):
    """tiny_transformer loaded again under another name, the student's classes installed."""
    path = ROOT / "src" / "lecture17" / "tiny_transformer.py"
    spec = importlib.util.spec_from_file_location("tt_with_student", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    spec_s = importlib.util.spec_from_file_location("student_torch_correct", CORRECT)
    theirs = importlib.util.module_from_spec(spec_s)
    sys.modules["student_torch_correct"] = theirs
    spec_s.loader.exec_module(theirs)
    assert adapters.install(vars(module), "student_torch_correct", classes) == list(classes)
    return module


def small_model(tt, **options):
    config = tt.TransformerConfig(
        src_vocab=7, tgt_vocab=7, d_model=8, n_heads=2, d_ff=16, n_enc_layers=1, n_dec_layers=2
    )
    if options:
        from dataclasses import replace

        config = replace(config, **options)
    torch.manual_seed(0)
    return tt.Transformer(config).eval()


@pytest.mark.parametrize("classes", [adapters.CLASSES, ("MultiHeadAttention",)])
def test_decoding_with_the_cache_gives_what_decoding_without_it_gives(classes):
    tt = fresh_tiny_transformer(classes)
    model = small_model(tt)
    assert any(getattr(m, "inner", None) is not None for m in model.modules())
    src = torch.randint(2, 7, (3, 5), generator=torch.Generator().manual_seed(1))
    cached = model.greedy_decode(src, 6, use_cache=True)
    plain = model.greedy_decode(src, 6, use_cache=False)
    assert torch.equal(
        cached[0] if isinstance(cached, tuple) else cached,
        plain[0] if isinstance(plain, tuple) else plain,
    )


def test_the_reference_runs_what_a_student_does_not_write():
    tt = fresh_tiny_transformer(("MultiHeadAttention",))
    mha = tt.MultiHeadAttention(8, 2)
    assert mha.inner is not None and isinstance(mha, tt.MultiHeadAttention)
    rope = tt.MultiHeadAttention(8, 2, positions="rope")
    assert rope.inner is None and hasattr(rope, "in_proj")  # beyond the lecture: the reference's
    assert tt.MultiHeadAttention(8, 2, scale=False).inner is not None  # this student takes scale


def test_the_model_table_reads_a_students_model(monkeypatch):
    """05.1's structure() (§9.1's model table) reads the model's config, not a layer's
    attributes that a class in another style need not have."""
    import lecture17.tiny_transformer as reference
    from lecture17.experiments.transformer_vs_rnn import structure

    tt = fresh_tiny_transformer()
    model = small_model(tt)
    monkeypatch.setattr(reference, "Transformer", tt.Transformer)
    sizes = structure(model)
    assert (sizes["d_model"], sizes["n_heads"], sizes["d_ff"]) == (8, 2, 16)
    assert (sizes["encoder_layers"], sizes["decoder_layers"]) == (1, 2)


def test_collect_attention_finds_the_students_weights():
    tt = fresh_tiny_transformer()
    model = small_model(tt)
    src = torch.randint(2, 7, (2, 5), generator=torch.Generator().manual_seed(2))
    with tt.collect_attention(model) as weights:
        model(src, src[:, :4])
    # a student EncoderLayer holds its own attention: the adapter sees the layer, not the
    # block inside it; the decoder's too. Nothing is collected wrongly:
    for w in weights.values():
        assert torch.allclose(w.sum(-1), torch.ones_like(w.sum(-1)))


# -----------------------------------------------------------------------------
# which trained jobs rerun (mutants/student.py)


def test_a_job_that_copies_torchs_weights_keeps_the_controls_numbers(monkeypatch, tmp_path):
    calls = {
        "results/05.1/seed0.csv": [f"{student.TARGET}::MultiHeadAttention.forward"],
        "results/04.1/seed0.csv": [
            f"{student.TARGET}::EncoderLayer.forward",
            f"{student.TARGET}::EncoderLayer.load_from_torch",
        ],
        "results/02.3/seed0.csv": [f"{student.TARGET}::LookupAttention.forward"],
        "results/07.3/seed100.csv": [f"{student.TARGET}::DecoderLayer.forward"],
        "results/09.1/n_heads=4/seed100.csv": [  # the head ablation reads the reference's W^O
            f"{student.TARGET}::MultiHeadAttention.forward",
            "src/lecture17/experiments/beyond.py::heads_zeroed",
            "src/lecture17/experiments/beyond.py::heads_zeroed.<locals>.zero",
        ],
    }
    monkeypatch.setattr(student.campaign, "traces", lambda folder: calls)
    monkeypatch.setattr(student.campaign, "demos_of", lambda build: {})
    lecture, recorded = list(calls)[:3], list(calls)[3:]
    monkeypatch.setattr(
        student.campaign, "run_csvs", lambda demos, rec: recorded if rec else lecture
    )
    chosen = student.select(tmp_path, ["MultiHeadAttention", "EncoderLayer"])
    assert chosen == {
        "rerun": ["results/05.1/seed0.csv"],
        "reference": ["results/04.1/seed0.csv", "results/09.1/n_heads=4/seed100.csv"],
    }
    chosen = student.select(tmp_path, ["DecoderLayer"])
    assert chosen["rerun"] == ["results/07.3/seed100.csv"]
    assert not student.needs_reference("src/lecture17/tiny_transformer.py::Transformer.forward")


def test_the_install_line_names_only_the_classes_written(tmp_path):
    line = student.INSTALL.format(classes=("EncoderLayer",))
    assert "('EncoderLayer',)" in line and "lecture17._student_trained" in line
    json.dumps(student.CLASSES)  # the CLI passes them through


def test_the_scratch_copy_is_one_the_builds_dependency_scan_reads(tmp_path):
    """The copy's tiny_transformer imports lecture17.checker.adapters: the build's code inputs
    (pipeline/deps) must resolve it, from a control whose checker/ had no __init__.py too."""
    from lecture17.pipeline import deps

    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    shutil.copytree(ROOT / "src", tmp_path / "src", ignore=ignore)
    (tmp_path / student.CHECKER_INIT).unlink()
    student.put_in(FILES / "torch_correct.py", ["MultiHeadAttention"], tmp_path)
    files = deps.code_closure("lecture17.tiny_transformer", src=tmp_path / "src")
    assert {tmp_path / student.ADAPTERS, tmp_path / student.CHECKER_INIT} <= files


def test_the_students_build_reruns_by_time_so_reference_jobs_keep_the_controls_files(
    monkeypatch, tmp_path
):
    """The copy's tiny_transformer imports the adapters: Snakemake's input-set trigger would
    rerun every job that imports it (a load_from_torch job on the student's class fails). The
    build reruns by modification time only, and the files put in carry the edit's time."""
    control = tmp_path / "control"
    for path in (student.TARGET, student.ADAPTERS, student.CHECKER_INIT, "results/x.csv"):
        (control / path).parent.mkdir(parents=True, exist_ok=True)
        (control / path).write_text("x\n", encoding="utf-8")
    monkeypatch.setattr(student.campaign, "demos_of", lambda build: {})
    monkeypatch.setattr(student.campaign, "run_csvs", lambda demos, recorded: [])
    build = student.prepare(CORRECT, ["MultiHeadAttention"], control, tmp_path / "b", [])
    assert build.triggers == ("mtime",)
    folder = tmp_path / "b"
    edited = (folder / student.TARGET).stat().st_mtime
    for path in (student.STUDENT, student.ADAPTERS, student.CHECKER_INIT):
        assert (folder / path).stat().st_mtime == edited
    commands = []
    monkeypatch.setattr(type(build), "run", lambda self, command, log: commands.append(command))
    build.snakemake("results/x.csv")
    assert commands[0][-2:] == ["--rerun-triggers", "mtime"]


def test_a_table_without_one_seed_is_recomputed_from_the_others():
    import pandas as pd

    table = pd.DataFrame(
        {
            "quantity": ["acc", "acc", "n"],
            "mean": [0.484, 0.5, 3.0],
            "min": [0.0, 0.5, 3.0],
            "max": [0.968, 0.5, 3.0],
            "std": [0.68, 0.0, 0.0],
            "n_seeds": [2, 1, 1],
            "seeds": ["100:0.968 101:0.0", "101:0.5", ""],
        }
    )
    out = student.without_seed(table, 101)
    assert list(out["quantity"]) == ["acc", "n"]  # the row of seed 101 alone is gone
    first = out.iloc[0]
    assert (first["mean"], first["min"], first["max"], first["n_seeds"]) == (0.968, 0.968, 0.968, 1)
    assert first["seeds"] == "100:0.968" and out.iloc[1]["mean"] == 3.0
    assert student.without_seed(table, 7) is table  # a seed it does not have: unchanged
    entry = {"demo": "07.5", "values": {"tf": {"demo": "07.6"}}, "decide": {"recorded": ["07.7"]}}
    assert student.read_demos(entry) == {"07.5", "07.6", "07.7"}
