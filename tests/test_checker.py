"""`python -m lecture17 check`: the call map, the swap, the properties, and whole checks of
students' files written in other styles, with mistakes, in other conventions, and broken.

A whole check forks a child per block and per demo (~5-25 s a file): CI runs a sample of the
catalogue's mistakes and of the mistakes outside it; `make check-catalogue` runs them all
(mutants/fingerprints.py, and tests/checker_files/other_mistakes.py here with CHECK_ALL=1).
"""

import csv
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from lecture17 import attention_numpy as ref
from lecture17.checker import blocks, explain, judge, properties, run, session
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


def _softmax_offset_lse(x, axis=-1):  # exp(x - lse), lse = m + log Σ: rounds away in float32
    m = np.max(x, axis=axis, keepdims=True)
    return np.exp(x - (m + np.log(np.exp(x - m).sum(axis=axis, keepdims=True))))


def _sdpa_ignores_3d_mask(Q, K, V, mask=None):
    return ref.scaled_dot_product_attention(Q, K, V, None if np.ndim(mask) == 3 else mask)


def _ln_over_axis_1(x, gamma, beta, eps=1e-5):
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def _decoder_ignores_memory_mask(
    y, memory, params, n_heads, self_mask=None, memory_mask=None, norm_first=False
):
    return ref.decoder_layer_forward(y, memory, params, n_heads, self_mask, None, norm_first)


def _in_place(block):
    """The reference's block, which first overwrites its first array argument with zeros."""

    def fn(*args, **kwargs):
        result = blocks.reference(block)(*args, **kwargs)
        np.asarray(args[0])[...] = 0
        return result

    return fn


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
    "softmax.sums_to_one_float32": _softmax_offset_lse,
    # batched: right on one sequence, wrong on (b, n, d) or 4-D inputs
    "softmax.batched": lambda x, axis=-1: (
        ref.softmax(x) if np.ndim(x) < 4 else ref.softmax(x, axis=1)
    ),
    "scaled_dot_product_attention.batched": _sdpa_ignores_3d_mask,
    "feed_forward.batched": lambda x, params: (
        ref.feed_forward(np.asarray(x)[..., :, :], params) * (1 if np.ndim(x) < 3 else 2)
    ),
    "layer_norm.batched": _ln_over_axis_1,
    "encoder_layer_forward.batched": lambda x, params, n_heads, mask=None, norm_first=False: (
        ref.encoder_layer_forward(x, params, n_heads, None, norm_first)
    ),
    "decoder_layer_forward.batched": _decoder_ignores_memory_mask,
} | {f"{block}.keeps_input": _in_place(block) for block in properties.ARRAY_INPUTS}


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


FINGERPRINT_ROWS = explain.load_fingerprints()
SAMPLE = {
    "sdpa_divides_by_d_k",
    "pe_cos_slot_gets_sin",
    "look_ahead_sees_next",
    "layer_norm_over_batch",
}


def test_fingerprints_list_the_student_facing_mistakes():
    names = [m.name for m in FINGERPRINT_ROWS]
    assert names == [m.name for m in student_facing()], "run make check-catalogue"
    assert len(names) == 19
    assert all(m.hint for m in student_facing())
    other = {m.name for m in CATALOGUE if m.file.endswith("attention_numpy.py")} - set(names)
    assert other == {"mha_params_not_transposed", "tiled_no_rescale"}  # converter, beyond


def _probes_of(module, blocks_written):
    return {b: properties.probe(b, getattr(module, b)) for b in blocks_written}


@pytest.mark.parametrize("mistake", FINGERPRINT_ROWS + explain.VARIANTS, ids=lambda m: m.name)
def test_each_known_mistake_is_explained_as_itself_and_only_by_its_equals(mistake):
    """A block that computes a known mistake gets that mistake as its cause; any other cause
    named beside it computes the same numbers on the probe inputs (so it is not wrong)."""
    module = explain.mistake_module(mistake)
    written = mistake.block.split()
    causes = explain.explain(written, _probes_of(module, written), FINGERPRINT_ROWS)
    assert mistake.name in [c.mistake.name for c in causes]
    for c in causes:
        for block in c.blocks:
            theirs = properties.probe(block, getattr(explain.mistake_module(c.mistake), block))
            assert properties.same_probe(theirs, properties.probe(block, getattr(module, block)))


def test_a_correct_block_has_no_cause():
    probes = _probes_of(ref, blocks.BLOCKS)
    assert explain.explain(list(blocks.BLOCKS), probes, FINGERPRINT_ROWS) == []


def test_a_cause_is_matched_with_nan_where_the_mistake_has_nan():
    """softmax without the max shift gives NaN on large scores: NaN = NaN for the match."""
    no_shift = next(m for m in FINGERPRINT_ROWS if m.name == "softmax_no_max_shift")
    probe = _probes_of(explain.mistake_module(no_shift), ["softmax"])
    assert any(np.isnan(p).any() for p in probe["softmax"])
    assert [c.mistake.name for c in explain.explain(["softmax"], probe, FINGERPRINT_ROWS)] == [
        "softmax_no_max_shift"
    ]


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
    assert blind.status == BROKE  # the claims and properties detect
    assert mutant.name not in [c.mistake.name for c in blind.causes]
    named = check(path)
    assert named.status == BROKE and mutant.name in [c.mistake.name for c in named.causes]
    assert named.marks == blind.marks
    row = next(m for m in FINGERPRINT_ROWS if m.name == mutant.name)
    assert set(row.block.split()) & set(run.flagged_blocks(named))  # flagged with its block


@pytest.mark.slow
def test_one_wrong_block_in_another_style_is_named(tmp_path, untouched):
    """A file with only the attention, dividing by d_k: the same cause, shown by behaviour."""
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
    assert report.status == BROKE
    assert [c.mistake.name for c in report.causes] == ["sdpa_divides_by_d_k"]
    assert "√d_k" in report.causes[0].words and "逐数相同" in report.causes[0].words


OTHER_SAMPLE = {"ffn_without_relu", "look_ahead_hides_itself", "shift_matrix_transposed"}


@pytest.mark.slow
@pytest.mark.parametrize(
    "mistake", [m for m in OTHER_MISTAKES if ALL or m[0] in OTHER_SAMPLE], ids=lambda m: m[0]
)
def test_a_mistake_outside_the_catalogue_is_flagged_and_never_misnamed(mistake, tmp_path):
    name, function, old, new, _ = mistake
    report = check(patched(tmp_path, name, function, old, new))
    assert report.status == BROKE
    variant = next((v for v in explain.VARIANTS if v.name == name), None)
    if variant:  # flagged with its block, and, being a known variant, explained as itself
        assert set(variant.block.split()) & set(run.flagged_blocks(report))
        assert name in [c.mistake.name for c in report.causes]
    wrong = [c.mistake.name for c in report.causes if c.mistake.name != name]
    assert not wrong, f"{name} explained as {wrong}"


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
    assert report.status == BROKE and "卡住 hang" in out and "检查性质时" in out
    assert report.blocks["count_mha_params"].failure.kind == "hang"
    assert report.skipped_for and not any(  # a hung block is not run again in the demos
        "count_mha_params" in report.blocks_of_demo(d) for d in report.demos
    )


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
    assert "sdpa_mask_inverted" in [c.mistake.name for c in report.causes]


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


def test_json_of_a_flagged_report_names_its_cause_and_the_schema():
    from lecture17.checker import render
    from lecture17.checker.run import Report

    report = Report(Path("x.py"), status=BROKE, marks=frozenset({"C069", "softmax.stable"}))
    no_shift = next(m for m in FINGERPRINT_ROWS if m.name == "softmax_no_max_shift")
    report.causes = [explain.Cause(no_shift, ("softmax",), 2)]
    data = json.loads(render.json_text(report))
    assert data["schema"] == render.SCHEMA and data["exit"] == BROKE and not data["passed"]
    assert data["causes"][0]["mistake"] == "softmax_no_max_shift"


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


# -----------------------------------------------------------------------------
# students' files written apart from the checker (tests/checker_files/students/MANIFEST.yaml):
# correct files that round differently pass; each mistake is flagged with its block, and a
# cause, when one is named, is one that computes the same numbers as the mistake

STUDENTS = FILES / "students"
MANIFEST = yamlio.load((STUDENTS / "MANIFEST.yaml").read_text(encoding="utf-8"))["files"]
# the known variants each mistake computes (checker/explain.py); none: no cause may be named
SAME_AS = {
    "ffn_extra_relu.py": {"ffn_relu_after_second_layer"},
    "ln_gamma_beta_swapped.py": {"layer_norm_gamma_beta_swapped"},
    "ln_axis_1.py": {"layer_norm_over_axis_1"},
    "softmax_no_max_shift.py": {"softmax_no_max_shift"},
    "decoder_cross_reads_decoder.py": {"cross_attention_reads_decoder"},
    "sdpa_scale_by_dk.py": {"sdpa_divides_by_d_k"},
    "mask_times_minus_1e9.py": {"sdpa_mask_inverted"},
    "pe_sin_cos_swapped.py": {"pe_sin_cos_swapped"},
    "split_heads_no_transpose.py": {"split_heads_reshape_only"},
}
TOP = [f for f in MANIFEST if "/" not in f["file"] and f["file"].endswith(".py")]
STUDENT_SAMPLE = {"lse_softmax.py", "mask_b_n_1.py", "inplace_softmax.py", "ln_axis_1.py"}


def test_the_manifest_lists_every_students_file():
    listed = {f["file"] for f in MANIFEST}
    present = {p.relative_to(STUDENTS).as_posix() for p in STUDENTS.rglob("*") if p.is_file()}
    assert present - {"MANIFEST.yaml"} == listed
    assert set(SAME_AS) <= {f["file"] for f in TOP if not f["correct"]}


@pytest.mark.slow
@pytest.mark.parametrize(
    "entry", [f for f in TOP if ALL or f["file"] in STUDENT_SAMPLE], ids=lambda f: f["file"]
)
def test_a_students_file_is_judged_as_written(entry, untouched):
    from lecture17.checker import render

    report = check(STUDENTS / entry["file"])
    out = "\n".join(render.lines(report))
    if entry["correct"]:
        assert report.status == OK, out
        return
    assert report.status == BROKE, out
    wrong = {entry["block"]} if entry["block"] != "all" else set(entry["affects"])
    assert wrong & set(run.flagged_blocks(report)), out  # "all": float32 in every block
    named = {c.mistake.name for c in report.causes}
    assert named <= SAME_AS.get(entry["file"], set()), f"wrong cause {named}:\n{out}"
    if entry["file"] in SAME_AS:
        assert named, out  # shown by behaviour: it must be found


def test_a_mask_is_taken_as_written_and_a_query_mask_is_named():
    """(b, n, 1) is not (b, 1, n): refused with its own words; leading 1s broadcast alike."""
    tokens = np.array([[3, 4, 0], [5, 0, 0]])
    swap = blocks.Swap(
        "create_padding_mask", lambda t, pad_id=0: ref.create_padding_mask(t)[:, 0, :, None]
    )
    with pytest.raises(blocks.WrongShape, match=r"\(b, n, 1\) 屏蔽的是 query"):
        swap(tokens)
    alike = blocks.Swap("create_look_ahead_mask", lambda n: ref.create_look_ahead_mask(n)[None])
    assert alike(3).shape == (3, 3)
    prop = next(p for p in properties.PROPERTIES if p.id == "create_padding_mask.marks_real_tokens")
    raw = blocks.Swap(swap.name, swap.student, check_shapes=False)
    assert "屏蔽的是 query" in prop.check(raw, (2, 3))  # never compared after a reshape


def test_a_block_that_changes_its_input_is_found_and_the_caller_keeps_its_array():
    def in_place(x, axis=-1):
        x -= x.max(axis, keepdims=True)
        np.exp(x, out=x)
        x /= x.sum(axis, keepdims=True)
        return x

    swap = blocks.Swap("softmax", in_place)
    scores = np.array([[1.0, 2.0, 3.0]])
    kept = scores.copy()
    assert np.allclose(swap(scores), ref.softmax(kept))
    assert np.array_equal(scores, kept) and swap.mutated == {"x": 1}
    where, before, after = swap.first_change["x"]  # what the message shows, as observed
    assert where == (0, 0) and before == 1.0 and after != before


def test_a_precise_claim_that_moved_by_rounding_only_keeps_its_verdict():
    """judge.PRECISION: numbers within rounding keep the reference's verdict (and say so); a
    real change does not; only checks that read a float exactly are covered."""
    entry = {
        "id": "X1",
        "class": "exact",
        "demo": "03.4",
        "check": [{"equal": {"value": "v", "to": 0}}],
    }
    assert judge.precise(entry) and not judge.precise({**entry, "check": [{"below": {}}]})
    assert not judge.precise({"class": "precision"})  # its bound is its own, never loosened
    assert judge.within_precision({"v": [0.05 + 6.9e-18, 1.0]}, {"v": [0.05, 1.0]})
    assert judge.within_precision({"v": 2e-15 * (1 + 1e-13)}, {"v": 2e-15})  # relative
    assert not judge.within_precision({"v": 1e-12}, {"v": 2e-15})  # an error 500 times larger
    assert not judge.within_precision({"v": 6.9e-18}, {"v": 0.0})  # a 0 only equals a 0
    assert not judge.within_precision({"v": 0.05 * (1 + 1e-9)}, {"v": 0.05})  # float32's
    assert not judge.within_precision({"v": float("nan")}, {"v": 0.0})


def test_the_docs_list_the_claims_judged_within_precision():
    from lecture17.reporting import ledger as ledger_mod

    entries = ledger_mod.load_ledger(ROOT / "report" / "ledger")
    reached = {d: callmap.demo_blocks(d) for d in DEMOS if DEMOS[d].kind == "analytic"}
    want = {e["id"] for e in judge.precise_claims(entries, reached)}
    text = (ROOT / "docs" / "CHECK.md").read_text(encoding="utf-8")
    listed = text.split("<!-- precise claims:begin")[1].split("<!-- precise claims:end")[0]
    assert set(listed.split("\n", 1)[1].split()) == want, " ".join(sorted(want))
    assert "C069" in want


# -----------------------------------------------------------------------------
# the command line on students' bad files: contained, each its own message and exit code

BAD = STUDENTS / "bad"
# file -> (exit code, words the summary must hold); `make check-catalogue` runs them all
BAD_CASES = {
    "loop_at_import.py": (UNUSABLE, "载入时 while loading · 卡住 hang"),
    "loop_in_block.py": (BROKE, "没有运行 not run"),
    "writes_cwd.py": (OK, "my_debug.csv"),
    "writes_checkout.py": (UNUSABLE, "Read-only file system"),
    "writes_home.py": (OK, "student_was_here.txt"),
    "chdir_up.py": (OK, "../student_was_here.txt"),
    "opens_socket.py": (UNUSABLE, "Network is unreachable"),
    "alloc_20gb.py": (UNUSABLE, "MemoryError"),
    "print_10mb.py": (OK, "还有"),
    "crash_repeats.py": (BROKE, "条性质 properties 在这里崩溃"),
    "sys_exit.py": (UNUSABLE, "SystemExit: 3"),
    "notebook_magics.ipynb": (OK, "cell 2, line 2：!pip install numpy"),
    "notes.txt": (UNUSABLE, "只查 .py 或 .ipynb"),
    "unix_socket.py": (OK, "通过"),  # a listener in /tmp is out of its sight (the test's)
    "remount.py": (UNUSABLE, "Read-only file system"),
    "exit_in_block.py": (BROKE, "SystemExit: 调试"),
    "forge_result.py": (BROKE, "softmax"),  # its own result line is refused
    "odd_name.py": (OK, "debug"),  # a U+2028 in a name splits no line
    "base_exception.py": (BROKE, "Stop: 三维的还没想好"),
}
BAD_SAMPLE = {"writes_checkout.py", "chdir_up.py", "notebook_magics.ipynb", "unix_socket.py"}
BAD_SAMPLE |= {"remount.py", "exit_in_block.py", "forge_result.py", "odd_name.py"}
BAD_SAMPLE |= {"base_exception.py"}


def _cli(*args, cwd):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run(
        [sys.executable, "-m", "lecture17", "check", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
    )


def _strays():
    return [
        p
        for p in (
            ROOT / "student_was_here.txt",
            ROOT / "results" / "student_was_here.csv",
            Path.home() / "student_was_here.txt",
            BAD / "my_debug.csv",
            BAD.parent / "student_was_here.txt",
        )
        if p.exists()
    ]


@pytest.mark.slow
@pytest.mark.parametrize(
    "name", [n for n in BAD_CASES if ALL or n in BAD_SAMPLE] + ["nothing_here.py", "."]
)
def test_a_bad_file_gets_its_own_message_and_nothing_lands_outside(name, untouched):
    import socket
    import time

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    address = Path(tempfile.mkdtemp()) / "lecture17-test.sock"  # a service on this machine
    listener.bind(str(address))
    listener.listen(4)
    start = time.monotonic()
    try:
        done = _cli(name, cwd=BAD)
    finally:
        listener.close()
        address.unlink()
    seconds = time.monotonic() - start
    out = done.stdout + done.stderr
    status, words = BAD_CASES.get(name, (UNUSABLE, "找不到文件" if name != "." else "是文件夹"))
    assert done.returncode == status, out
    assert words in out, out
    assert seconds < 30, f"{name}: {seconds:.1f} s"
    assert not _strays(), _strays()
    if sandbox_required():
        assert "没有沙箱" not in out


def sandbox_required() -> bool:
    from lecture17.checker import sandbox

    if os.environ.get("LECTURE17_REQUIRE_SANDBOX") == "1":
        assert sandbox.available() == "", sandbox.available()
        return True
    return sandbox.available() == ""


@pytest.mark.slow
def test_a_class_is_graded_into_a_csv_a_json_and_a_page_per_file(tmp_path, untouched):
    """Two students whose files have the same name, one notebook, a points table."""
    from lecture17.checker import grade

    class_dir = tmp_path / "class"
    for who, source in (
        ("alice", STUDENTS / "ln_gamma_beta_swapped.py"),
        ("bob", STUDENTS / "einsum_attention.py"),
    ):
        (class_dir / who).mkdir(parents=True)
        (class_dir / who / "my_blocks.py").write_bytes(source.read_bytes())
    (class_dir / "carol.ipynb").write_bytes((BAD / "notebook_magics.ipynb").read_bytes())
    (tmp_path / "points.yaml").write_text("layer_norm: 3\nsoftmax: 2\n", encoding="utf-8")
    done = _cli(
        "--grade",
        class_dir,
        "--out",
        tmp_path / "out",
        "--points",
        tmp_path / "points.yaml",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = tmp_path / "out"
    with open(out / "grades.csv", encoding="utf-8", newline="") as f:
        rows = {r["file"]: r for r in csv.DictReader(f)}
    assert set(rows) == {"alice/my_blocks.py", "bob/my_blocks.py", "carol.ipynb"}
    alice, bob, carol = rows["alice/my_blocks.py"], rows["bob/my_blocks.py"], rows["carol.ipynb"]
    assert alice["layer_norm_pass"] == "0" and float(alice["layer_norm_points"]) == 0
    assert bob["layer_norm_pass"] == "1" and float(bob["layer_norm_points"]) == 3
    assert float(bob["total"]) == float(bob["max"]) == 2 + 3 + len(blocks.BLOCKS) - 2
    assert carol["layer_norm_pass"] == "" and carol["softmax_pass"] == "1"
    data = json.loads((out / "grades.json").read_text(encoding="utf-8"))
    assert data["schema"] == grade.SCHEMA and len(data["files"]) == 3
    pages = {f["page"] for f in data["files"]}
    assert pages == {"alice__my_blocks.py.html", "bob__my_blocks.py.html", "carol.ipynb.html"}
    assert all((out / p).is_file() for p in pages)
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "layer_norm" in index and "γ 和 β 对调" in index  # the mistake in words


def test_a_points_table_with_an_unknown_block_is_refused_before_any_file(tmp_path):
    from lecture17.checker import grade

    (tmp_path / "p.yaml").write_text("softmaks: 2\n", encoding="utf-8")
    with pytest.raises(ValueError, match="softmaks"):
        grade.points_table(tmp_path / "p.yaml")


def test_a_notebook_becomes_python_with_its_cells_and_lines(tmp_path):
    from lecture17.checker import notebook

    code, where, notes = notebook.to_python(BAD / "notebook_magics.ipynb", tmp_path / "nb.py")
    text = code.read_text(encoding="utf-8").splitlines()
    assert len(text) == len(where) and "def softmax" in "\n".join(text)
    assert any("%matplotlib" in n for n in notes) and not any(
        line.lstrip().startswith(("%", "!")) for line in text
    )
    continued = tmp_path / "continued.ipynb"  # a `%` inside brackets is Python's modulo
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None}
    doc = 'def f():\n    """shape (..., n) (the lecture\'s §2.2)\n    % not a magic\n    """\n'
    cell |= {"id": "a", "source": "%time\nx = (7\n% 2)\ny = 9 \\\n% 4\n!ls\n" + doc + "%timeit f()"}
    continued.write_text(
        json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    )
    code, where, notes = notebook.to_python(continued, tmp_path / "c.py")
    scope = {}
    exec(code.read_text(encoding="utf-8"), scope)  # noqa: S102 - our own test notebook
    assert (scope["x"], scope["y"]) == (1, 9 % 4) and len(notes) == 3  # %time, !ls, %timeit
    assert "% not a magic" in scope["f"].__doc__


def test_a_keyword_only_argument_is_passed_by_name_and_leading_ones_broadcast_in_tuples():
    def keyword_mask(Q, K, V, *, mask=None):
        return ref.scaled_dot_product_attention(Q, K, V, mask)

    swap = blocks.Swap("scaled_dot_product_attention", keyword_mask)
    Q = np.arange(12.0).reshape(3, 4) / 10
    swap(Q, Q, Q, np.tril(np.ones((3, 3))))
    assert swap.fallbacks == {} and swap.calls == 1

    def leading_one(Q, K, V, mask=None):
        out, w = ref.scaled_dot_product_attention(Q, K, V, mask)
        return out[None], w[None]

    shapes = [r.shape for r in blocks.Swap("scaled_dot_product_attention", leading_one)(Q, Q, Q)]
    assert shapes == [(3, 4), (3, 3)]


def test_a_child_returns_though_the_students_code_left_a_thread_running():
    import time

    from lecture17.checker import child

    def leaves_a_thread():
        import threading

        threading.Thread(target=time.sleep, args=(30,)).start()  # not a daemon
        return 1

    start = time.monotonic()
    assert child.run(leaves_a_thread, timeout=20) == ("ok", 1)
    assert time.monotonic() - start < 5


def test_a_class_folder_may_be_named_from_above_and_hidden_folders_are_left_out(tmp_path):
    from lecture17.checker import grade

    (tmp_path / "subs" / ".ipynb_checkpoints").mkdir(parents=True)
    (tmp_path / "subs" / "a.py").write_text("x = 1\n")
    (tmp_path / "subs" / ".ipynb_checkpoints" / "a.py").write_text("x = 1\n")
    (tmp_path / "here").mkdir()
    found = grade.files_of(tmp_path / "here" / ".." / "subs")
    assert [p.name for p in found] == ["a.py"]


HELPER_AND_PARTIAL = """import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x, dtype=np.float64)
    if x.ndim > 3:
        raise NotImplementedError("four axes: not yet")
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _rows(x):
    if np.ndim(x) > 2:
        raise ValueError("rows only")
    return x


def layer_norm(x, gamma, beta, eps=1e-5):
    x = _rows(np.asarray(x, dtype=np.float64))
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta
"""


@pytest.mark.slow
def test_a_helpers_crash_is_its_blocks_and_a_partly_written_block_is_judged(tmp_path):
    """A demo that crashes in layer_norm's helper fails layer_norm only; a softmax that says
    NotImplementedError on 4-D input is written, and that input is its finding."""
    from lecture17.checker import render

    report = check(write(tmp_path, "helper.py", HELPER_AND_PARTIAL), timeout=30)
    rows = {r["block"]: r for r in render.block_rows(report)}
    assert report.blocks["softmax"].implemented
    assert "softmax.batched" in report.blocks["softmax"].failed
    assert "NotImplementedError" in report.blocks["softmax"].failed["softmax.batched"][1]
    assert not rows["layer_norm"]["passed"]
    crashed = [d for d, r in report.demos.items() if r.failure]
    assert crashed and all(render.failed_in(report, d) == ["layer_norm"] for d in crashed)


def test_written_files_leave_out_the_checkers_folder_and_what_is_bound_read_only(
    tmp_path, monkeypatch
):
    """In the sandbox /tmp holds the work folder, the checker's folder and, bound read-only,
    the checkout when it lives under /tmp (a clean clone there): only the first is listed."""
    from lecture17.checker import sandbox

    for name in ("work/out.csv", "left.txt", "checker/tmp.bin", "clone/src/x.py", "mine/a.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("1")
    monkeypatch.setattr(sandbox, "_needed", lambda: [(tmp_path / "clone").resolve()])
    found = sandbox._written(tmp_path, [tmp_path / "mine" / "a.py"])
    assert found == ["../left.txt", "out.csv"]
