"""`python -m lecture17 check`: the call map, the swap, the properties, and whole checks of
students' files written in other styles, with mistakes, in other conventions, and broken.

A whole check forks a child per block and per demo (~5-25 s a file): CI runs a sample of the
catalogue's mistakes and of the mistakes outside it; `make check-catalogue` runs them all
(mutants/fingerprints.py, and tests/checker_files/other_mistakes.py here with CHECK_ALL=1).
"""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lecture17 import attention_numpy as ref
from lecture17.checker import blocks, judge, properties, session
from lecture17.checker.patch import mutate_source
from lecture17.checker.run import BROKE, NOTHING, OK, UNUSABLE, check
from lecture17.experiments import DEMOS
from lecture17.pipeline import callmap, yamlio
from lecture17.pipeline.job import run_demo

ROOT = Path(__file__).resolve().parents[1]
FILES = ROOT / "tests" / "checker_files"
sys.path.insert(0, str(FILES))
from other_mistakes import OTHER_MISTAKES  # noqa: E402

sys.path.insert(0, str(ROOT))
from mutants.catalogue import CATALOGUE  # noqa: E402
from mutants.fingerprints import student_facing  # noqa: E402

ALL = os.environ.get("CHECK_ALL") == "1"  # make check-catalogue: every mistake, not a sample
SOURCE = (ROOT / "src" / "lecture17" / "attention_numpy.py").read_text(encoding="utf-8")


def patched(tmp_path, name, function, old, new) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(mutate_source(SOURCE, function, old, new, name), encoding="utf-8")
    return path


def write(tmp_path, name, text) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# -----------------------------------------------------------------------------
# the call map: static, checked against the calls a run makes


def calls_made(demo: str) -> set[str]:
    """The attention_numpy functions one job of `demo` calls (a profile hook)."""
    with open(ROOT / "config" / "config.yaml", encoding="utf-8") as f:
        spec = yamlio.load(f)["demos"][demo]
    target, seen = ref.__file__, set()

    def hook(frame, event, arg):
        if event == "call" and frame.f_code.co_filename == target:
            seen.add(frame.f_code.co_name)

    sys.setprofile(hook)
    try:
        run_demo(demo, spec["settings"], spec["seeds"][0])
    finally:
        sys.setprofile(None)
    return {name for name in seen if name in callmap.numpy_call_graph()}


ANALYTIC = [d for d, demo in DEMOS.items() if demo.kind == "analytic" and d not in ("06.2",)]


@pytest.mark.slow
@pytest.mark.parametrize("demo", ANALYTIC)
def test_call_map_covers_every_call_a_demo_makes(demo):
    missing = calls_made(demo) - callmap.demo_blocks(demo)
    assert not missing, f"{demo} calls {sorted(missing)}, which the static call map misses"


def test_call_map_misses_are_seen(monkeypatch):
    """The cross-check can fail: a call map that forgets softmax's caller misses 02.2's calls."""
    monkeypatch.setattr(callmap, "demo_blocks", lambda demo: frozenset())
    assert calls_made("02.2") - callmap.demo_blocks("02.2")


def test_call_map_follows_the_numpy_call_graph():
    assert "softmax" in callmap.closure({"multi_head_attention"})
    assert "_frequencies" in callmap.closure({"relative_shift_matrix"})
    assert callmap.demo_blocks("02.1") == frozenset()  # numpy only, no block of the lecture
    assert "decoder_layer_forward" in callmap.demo_blocks("04.5")


def test_a_module_import_reaches_every_block(tmp_path):
    """A name the map cannot resolve (`an.softmax` through a module import) over-approximates."""
    src = tmp_path / "src"
    (src / "lecture17" / "experiments").mkdir(parents=True)
    for name in ("__init__.py", "experiments/__init__.py"):
        (src / "lecture17" / name).write_text("")
    (src / "lecture17" / "attention_numpy.py").write_text(
        "def a():\n    return b()\n\ndef b():\n    return 1\n"
    )
    (src / "lecture17" / "experiments" / "m.py").write_text(
        "from lecture17 import attention_numpy as an\n\ndef demo():\n    return an.a()\n"
        "\ndef other():\n    return 2\n"
    )
    callmap.numpy_call_graph.cache_clear()
    try:
        assert callmap.reached("lecture17.experiments.m", frozenset({"demo"}), src) == {"a", "b"}
    finally:
        callmap.numpy_call_graph.cache_clear()


# -----------------------------------------------------------------------------
# the swap: a student's block in the reference's namespace


def test_swap_maps_positional_names_and_falls_back_on_arguments_it_lacks():
    def student_softmax(z):  # another name, no axis
        e = np.exp(z - z.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    swap = blocks.Swap("softmax", student_softmax)
    x = np.array([[1.0, 2.0], [3.0, 5.0]])
    assert np.allclose(swap(x), ref.softmax(x)) and swap.calls == 1
    swap(x, axis=0)  # not the default, and the student's softmax takes no axis: the reference
    assert swap.fallbacks == {"参数 axis": 1}
    out = np.zeros_like(x)
    assert swap(x, out=out) is out and np.allclose(out, ref.softmax(x))  # §3.4's in-place call
    assert swap.calls == 2


def test_swap_runs_the_reference_for_not_implemented():
    def todo(x, axis=-1):
        raise NotImplementedError

    swap = blocks.Swap("softmax", todo)
    assert np.allclose(swap(np.ones((2, 2))), 0.5)
    assert swap.fallbacks == {"NotImplementedError": 1}


def test_swap_names_a_wrong_shape():
    swap = blocks.Swap("softmax", lambda x, axis=-1: ref.softmax(x).T)
    with pytest.raises(blocks.WrongShape, match=r"softmax 返回的形状 shape 是 \(3, 2\)"):
        swap(np.ones((2, 3)))


def test_signature_problems():
    assert blocks.signature_problem("softmax", lambda x, axis=-1: x) == ""
    assert blocks.signature_problem("scaled_dot_product_attention", lambda q, k, v, mask: q) == ""
    assert "讲义的是 positional_encoding(max_len, d_model)" in blocks.signature_problem(
        "positional_encoding", lambda d_model: d_model
    )
    assert blocks.signature_problem("softmax", lambda x, axis, temperature: x)  # one too many


# -----------------------------------------------------------------------------
# properties: each holds for the reference and fails for a block that breaks it


def _sdpa(fn):
    return lambda Q, K, V, mask=None: fn(np.asarray(Q), np.asarray(K), np.asarray(V), mask)


def _weights_times_two(Q, K, V, mask=None):
    out, w = ref.scaled_dot_product_attention(Q, K, V, mask)
    return out, 2 * w


def _ignores_mask(Q, K, V, mask=None):
    return ref.scaled_dot_product_attention(Q, K, V)


def _positional_attention(Q, K, V, mask=None):  # adds a position term: not equivariant
    n_q, n_k = Q.shape[-2], K.shape[-2]
    bias = -np.abs(np.arange(n_q)[:, None] - np.arange(n_k)[None, :]) * 0.5
    return ref.scaled_dot_product_attention(Q, K, V, mask, bias=bias)


def _mha_first_token_special(x_q, x_kv, params, n_heads, mask=None):
    out, w = ref.multi_head_attention(x_q, x_kv, params, n_heads, mask)
    out = out.copy()
    out[..., 0, :] += 1
    return out, w


def _pe_from_one(max_len, d_model):
    return ref.positional_encoding(max_len + 1, d_model)[1:]


def _ln_over_batch(x, gamma, beta, eps=1e-5):
    mean, var = x.mean(0, keepdims=True), x.var(0, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def _encoder_with_positions(x, params, n_heads, mask=None, norm_first=False):
    x = np.asarray(x) + ref.positional_encoding(len(x), x.shape[-1])
    return ref.encoder_layer_forward(x, params, n_heads, mask, norm_first)


def _decoder_sees_all(
    y, memory, params, n_heads, self_mask=None, memory_mask=None, norm_first=False
):
    return ref.decoder_layer_forward(y, memory, params, n_heads, None, memory_mask, norm_first)


def _decoder_ignores_memory(
    y, memory, params, n_heads, self_mask=None, memory_mask=None, norm_first=False
):
    return ref.decoder_layer_forward(y, y, params, n_heads, self_mask, memory_mask, norm_first)


BROKEN = {
    "softmax.sums_to_one": lambda x, axis=-1: np.exp(x - x.max(-1, keepdims=True)),
    "softmax.stable": lambda x, axis=-1: np.exp(x) / np.exp(x).sum(-1, keepdims=True),
    "softmax.matches": lambda x, axis=-1: ref.softmax(1.01 * np.asarray(x)),
    "scaled_dot_product_attention.rows_sum_to_one": _weights_times_two,
    "scaled_dot_product_attention.weighted_values": _weights_times_two,
    "scaled_dot_product_attention.permutation_equivariant": _positional_attention,
    "scaled_dot_product_attention.mask_zeroes": _ignores_mask,
    "scaled_dot_product_attention.matches": lambda Q, K, V, mask=None: (
        ref.scaled_dot_product_attention(Q, K, V, mask, scale=False)
    ),
    "split_heads.matches": lambda x, n_heads: x.reshape(x.shape[0], n_heads, x.shape[1], -1),
    "combine_heads.inverts_split": lambda x: x.reshape(x.shape[0], x.shape[2], -1),
    "multi_head_attention.permutation_equivariant": _mha_first_token_special,
    "multi_head_attention.matches": _mha_first_token_special,
    "count_mha_params.formula": lambda d_model: 4 * d_model**2,
    "positional_encoding.starts_at_zero": _pe_from_one,
    "positional_encoding.norm": lambda max_len, d_model: (
        2 * ref.positional_encoding(max_len, d_model)
    ),
    "positional_encoding.shift_is_linear": lambda max_len, d_model: (
        ref.positional_encoding(max_len, d_model) ** 3
    ),
    "positional_encoding.matches": _pe_from_one,
    "relative_shift_matrix.moves_pe": lambda k, d_model: ref.relative_shift_matrix(-k, d_model),
    "relative_shift_matrix.orthogonal": lambda k, d_model: (
        2 * ref.relative_shift_matrix(k, d_model)
    ),
    "feed_forward.relu": lambda x, params: (
        (x @ params["W_1"] + params["b_1"]) @ params["W_2"] + params["b_2"]
    ),
    "feed_forward.biases": lambda x, params: (
        np.maximum(x @ params["W_1"] + params["b_1"], 0) @ params["W_2"]
    ),
    "feed_forward.matches": lambda x, params: x @ params["W_1"] @ params["W_2"],
    "layer_norm.unit_variance": lambda x, gamma, beta, eps=1e-5: (
        (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, ddof=1, keepdims=True) + eps) * gamma
        + beta
    ),
    "layer_norm.per_token": _ln_over_batch,
    "layer_norm.matches": lambda x, gamma, beta, eps=1e-5: ref.layer_norm(x, gamma, beta, 1e-2),
    "encoder_layer_forward.permutation_equivariant": _encoder_with_positions,
    "encoder_layer_forward.matches": lambda x, params, n_heads, mask=None, norm_first=False: (
        ref.encoder_layer_forward(x, params, n_heads, mask, not norm_first)
    ),
    "create_look_ahead_mask.sees_itself": lambda n: np.tril(np.ones((n, n)), k=-1),
    "create_look_ahead_mask.no_future": lambda n: np.tril(np.ones((n, n)), k=1),
    "create_look_ahead_mask.lower_triangular": lambda n: np.tril(np.ones((n, n)), k=1),
    "create_padding_mask.marks_real_tokens": lambda tokens, pad_id=0: np.ones(np.shape(tokens))[
        :, None
    ],
    "decoder_layer_forward.causal": _decoder_sees_all,
    "decoder_layer_forward.reads_memory": _decoder_ignores_memory,
    "decoder_layer_forward.matches": _decoder_ignores_memory,
}


def _holds(prop, fn) -> bool:
    swap = blocks.Swap(prop.block, fn)
    return all(not prop.check(swap, size) for size in prop.sizes)


@pytest.mark.parametrize("prop", properties.PROPERTIES, ids=lambda p: p.id)
def test_property_holds_for_the_reference_and_fails_for_a_broken_block(prop):
    assert _holds(prop, blocks.reference(prop.block))
    assert prop.id in BROKEN, f"no broken block shows that {prop.id} can fail"
    assert not _holds(prop, BROKEN[prop.id])


def test_every_block_has_properties():
    assert {p.block for p in properties.PROPERTIES} == set(blocks.BLOCKS)


# -----------------------------------------------------------------------------
# whole checks


@pytest.fixture(scope="module")
def untouched():
    """results/ and report/ hash the same before and after this module's checks."""

    def digest() -> str:
        h = hashlib.sha256()
        for folder in ("results", "report"):
            for path in sorted((ROOT / folder).rglob("*")):
                if path.is_file():
                    h.update(str(path.relative_to(ROOT)).encode() + path.read_bytes())
        return h.hexdigest()

    before = digest()
    yield
    assert digest() == before, "a check wrote into results/ or report/"


CORRECT = ["einsum_blocks.py", "loop_blocks.py", "coursera_blocks.py"]


@pytest.mark.slow
@pytest.mark.parametrize("name", CORRECT)
def test_correct_files_in_other_styles_pass(name, untouched):
    report = check(FILES / name)
    assert report.status == OK, "\n".join(
        __import__("lecture17.checker.render", fromlist=["x"]).lines(report)
    )
    assert not report.changes and report.kept
    assert all(r.ran for r in report.demos.values())
    assert len(report.replaced) >= 4


@pytest.mark.slow
def test_the_reference_itself_passes(untouched):
    report = check(ROOT / "src" / "lecture17" / "attention_numpy.py")
    assert report.status == OK and len(report.replaced) == len(blocks.BLOCKS)


FINGERPRINT_ROWS = judge.load_fingerprints()
SAMPLE = {
    "sdpa_divides_by_d_k",
    "pe_cos_slot_gets_sin",
    "look_ahead_sees_next",
    "layer_norm_over_batch",
}


def test_fingerprints_list_the_student_facing_mistakes():
    names = [m.name for m in student_facing()]
    assert [m.name for m in FINGERPRINT_ROWS] == names, "run make check-catalogue"
    assert len(names) == 19
    assert all(m.hint for m in student_facing())
    other = {m.name for m in CATALOGUE if m.file.endswith("attention_numpy.py")} - set(names)
    assert other == {"mha_params_not_transposed", "tiled_no_rescale"}  # converter, beyond


@pytest.mark.parametrize("mistake", FINGERPRINT_ROWS, ids=lambda m: m.name)
def test_each_catalogued_mistake_names_itself(mistake):
    assert mistake.marks, f"{mistake.name} was not flagged"
    assert judge.closest(mistake.marks, FINGERPRINT_ROWS)[0] == mistake
    assert mistake.marks_block, f"{mistake.name}'s block alone was not flagged"
    assert judge.closest(mistake.marks_block, FINGERPRINT_ROWS)[0] == mistake


@pytest.mark.slow
@pytest.mark.parametrize(
    "mutant",
    [m for m in student_facing() if ALL or m.name in SAMPLE],
    ids=lambda m: m.name,
)
def test_a_catalogued_mistake_is_flagged_without_the_catalogue_and_named_with_it(
    mutant, tmp_path, untouched
):
    path = patched(tmp_path, mutant.name, mutant.function, mutant.old, mutant.new)
    blind = check(path, fingerprints=[])
    assert blind.status == BROKE and blind.mistake is None  # the claims and properties detect
    named = check(path)
    assert named.status == BROKE and named.mistake.name == mutant.name
    assert named.marks == blind.marks


@pytest.mark.slow
def test_one_wrong_block_in_another_style_is_named(tmp_path, untouched):
    """A file with only the attention, dividing by d_k: a smaller fingerprint, the same name."""
    path = write(
        tmp_path,
        "attention_only.py",
        "import numpy as np\n\n"
        "def scaled_dot_product_attention(q, k, v, mask=None):\n"
        "    s = np.einsum('...qd,...kd->...qk', q, k) / q.shape[-1]\n"
        "    if mask is not None:\n"
        "        s = s + (1 - mask) * -1e9\n"
        "    w = np.exp(s - s.max(-1, keepdims=True))\n"
        "    w = w / w.sum(-1, keepdims=True)\n"
        "    return w @ v, w\n",
    )
    report = check(path)
    assert report.status == BROKE and report.mistake.name == "sdpa_divides_by_d_k"
    assert "√d_k" in report.mistake.hint


OTHER_SAMPLE = {"ffn_without_relu", "look_ahead_hides_itself", "shift_matrix_transposed"}


@pytest.mark.slow
@pytest.mark.parametrize(
    "mistake", [m for m in OTHER_MISTAKES if ALL or m[0] in OTHER_SAMPLE], ids=lambda m: m[0]
)
def test_a_mistake_outside_the_catalogue_is_flagged_and_not_misnamed(mistake, tmp_path):
    name, function, old, new, _ = mistake
    report = check(patched(tmp_path, name, function, old, new))
    assert report.status == BROKE
    assert report.mistake is None, f"named {report.mistake.name} at {report.score:.2f}"


# -----------------------------------------------------------------------------
# files that cannot be used, crash, hang, or follow another convention


@pytest.mark.slow
def test_bad_files_get_their_own_message_and_exit_code(tmp_path, untouched):
    from lecture17.checker import render

    cases = {
        "syntax.py": ("def softmax(x, axis=-1):\n    return x +\n", UNUSABLE, "SyntaxError", 2),
        "imports.py": ("import numpy_but_misspelt\n", UNUSABLE, "ModuleNotFoundError", 1),
        "signature.py": (
            "def positional_encoding(d_model):\n    return 0\n",
            UNUSABLE,
            "讲义的是 positional_encoding(max_len, d_model)",
            None,
        ),
        "empty.py": ("x = 1\n", NOTHING, "一个积木 block 都没有替换", None),
    }
    for name, (text, status, words, line) in cases.items():
        report = check(write(tmp_path, name, text), timeout=20)
        out = "\n".join(render.lines(report))
        assert report.status == status, out
        assert words in out, out
        if line:
            assert f"第 {line} 行" in out, out


@pytest.mark.slow
def test_a_crash_names_the_line_and_a_hang_is_stopped(tmp_path, untouched):
    from lecture17.checker import render

    crash = write(
        tmp_path,
        "crash.py",
        "import numpy as np\n\ndef create_look_ahead_mask(n):\n"
        "    if n > 6:\n        raise ValueError('too long')\n"
        "    return np.tril(np.ones((n, n)))\n",
    )
    report = check(crash, timeout=30)
    out = "\n".join(render.lines(report))
    assert report.status == BROKE and "崩溃 crash: ValueError: too long" in out and "第 5 行" in out
    assert any(r.failure and r.failure.kind == "crash" for r in report.demos.values())
    hang = write(
        tmp_path,
        "hang.py",
        "def count_mha_params(d_model):\n    while d_model > 100:\n        pass\n"
        "    return 4 * d_model**2 + 4 * d_model\n",
    )
    report = check(hang, timeout=3)
    out = "\n".join(render.lines(report))
    assert report.status == BROKE and "卡住 hang" in out
    assert any(r.failure and r.failure.kind == "hang" for r in report.demos.values())


@pytest.mark.slow
def test_a_wrong_shape_is_named(tmp_path):
    path = write(
        tmp_path,
        "shape.py",
        "import numpy as np\n\ndef create_look_ahead_mask(n):\n"
        "    return np.tril(np.ones((n, n + 1)))\n",
    )
    report = check(path, timeout=30)
    assert report.status == BROKE
    failed = report.blocks["create_look_ahead_mask"].failed
    assert failed and any("形状" in seen or "shape" in seen for _, seen in failed.values())


TF_FILE = """import numpy as np

def scaled_dot_product_attention(q, k, v, mask=None):
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        s = s + mask * -1e9          # TensorFlow's old tutorial: 1 = masked
    w = np.exp(s - s.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    return w @ v, w

def create_look_ahead_mask(n):
    return 1 - np.tril(np.ones((n, n)))
"""


@pytest.mark.slow
def test_another_mask_convention_gets_one_message_not_a_wall_of_claims(tmp_path):
    report = check(write(tmp_path, "tf.py", TF_FILE), timeout=30)
    assert report.status == BROKE
    assert not report.changes  # the adapters judge the maths: every claim keeps its verdict
    found = {(b, c.id) for b, r in report.blocks.items() for c in r.conventions}
    assert found == {
        ("scaled_dot_product_attention", "mask_one_is_blocked"),
        ("create_look_ahead_mask", "mask_one_is_blocked"),
    }
    assert report.mistake is not None and report.mistake.name == "sdpa_mask_inverted"


@pytest.mark.slow
def test_attention_returning_only_its_output_is_adapted(tmp_path):
    text = TF_FILE.split("def create_look_ahead_mask")[0].replace(
        "mask * -1e9", "(1 - mask) * -1e9"
    )
    text = text.replace("return w @ v, w", "return w @ v")
    report = check(write(tmp_path, "output_only.py", text), timeout=30)
    ids = [c.id for c in report.blocks["scaled_dot_product_attention"].conventions]
    assert ids == ["returns_output_only"] and not report.changes and report.status == BROKE


# -----------------------------------------------------------------------------
# the command line: the template, JSON, exit codes


@pytest.mark.slow
def test_template_is_a_file_every_block_of_which_is_to_be_written(tmp_path):
    path = tmp_path / "mine.py"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    made = subprocess.run(
        [sys.executable, "-m", "lecture17", "check", "--template", str(path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert made.returncode == 0, made.stderr
    text = path.read_text(encoding="utf-8")
    for name, (section, _) in blocks.BLOCKS.items():
        assert f"def {blocks.signature_text(name)}:" in text and section in text
    assert text.count("    raise NotImplementedError\n") == len(blocks.BLOCKS)
    done = subprocess.run(
        [sys.executable, "-m", "lecture17", "check", str(path), "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == NOTHING, done.stderr
    data = json.loads(done.stdout)
    assert data["exit"] == NOTHING and not any(b["implemented"] for b in data["blocks"].values())


def test_json_of_a_flagged_report_names_the_claims_and_the_mistake():
    from lecture17.checker import render
    from lecture17.checker.run import Report

    report = Report(Path("x.py"), status=BROKE, marks=frozenset({"C069", "softmax.stable"}))
    report.mistake, report.score = judge.closest(report.marks, FINGERPRINT_ROWS)
    data = json.loads(render.json_text(report))
    assert data["closest_mistake"]["mutant"] == "softmax_no_max_shift"
    assert data["exit"] == BROKE


def test_a_demo_of_a_timing_never_runs_a_students_block():
    with open(ROOT / "report" / "reference" / "config.yaml", encoding="utf-8") as f:
        config = yamlio.load(f)["demos"]
    chosen = session.analytic_demos(list(blocks.BLOCKS), config)
    assert not {d for d in chosen if DEMOS[d].alone}
    assert {"01.1", "02.2", "04.5", "13.1"} <= set(chosen)


def test_catches_lists_the_catalogued_mistakes_a_claim_catches(capsys):
    from lecture17.checker import cli

    assert cli.catches("C015") == 0
    out = capsys.readouterr().out
    assert out.startswith("C015:") and "sdpa_divides_by_d_k" in out
    cli.catches("C999")
    assert "0 个已知错误" in capsys.readouterr().out
