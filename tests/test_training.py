"""training: the synthetic tasks, the evaluation conventions, seeded training, §9.4 statistics."""

import math

import pytest
import torch
from conftest import requires_cuda, without_cuda

from lecture17 import tiny_transformer as tt
from lecture17 import training as tr
from lecture17.training import TrainSettings

torch.set_num_threads(1)  # §0.5: single-threaded, like the lecture

SEEDS = [0, 1, 2]


def generator(seed):
    return torch.Generator().manual_seed(seed)


def tiny(kind):
    """A build function for train(): §9 model kinds at test sizes."""
    sizes = {"transformer": dict(d_model=16, n_heads=2, d_ff=32, max_len=16)}
    sizes["gru"] = sizes["gru_attention"] = dict(emb_dim=8, hidden=16)
    vocab = tr.VOCAB_SIZE
    return lambda: tt.build_model(kind, src_vocab=vocab, tgt_vocab=vocab, **sizes[kind])


# -----------------------------------------------------------------------------
# data


@pytest.mark.parametrize("seed", SEEDS)
def test_reversal_batch(seed):
    src, tgt_in, tgt_out = tr.reversal_batch(generator(seed), 5, 8)
    assert src.shape == (5, 8) and tgt_in.shape == tgt_out.shape == (5, 9)
    assert src.min() >= tr.FIRST_SYMBOL and src.max() < tr.VOCAB_SIZE
    assert torch.all(tgt_in[:, 0] == tr.BOS) and torch.all(tgt_out[:, -1] == tr.EOS)
    assert torch.equal(tgt_in[:, 1:], src.flip(1)) and torch.equal(tgt_out[:, :-1], src.flip(1))
    again = tr.reversal_batch(generator(seed), 5, 8)
    assert all(torch.equal(a, b) for a, b in zip((src, tgt_in, tgt_out), again, strict=True))


def test_reversal_symbols_cover_all_ten():
    src, _, _ = tr.reversal_batch(generator(0), 100, 16)
    assert sorted(src.unique().tolist()) == list(range(3, 13))


@pytest.mark.parametrize("seed", SEEDS)
def test_inplace_reversal_batch(seed):
    tokens, targets = tr.inplace_reversal_batch(generator(seed), 4, 16)
    L = 16
    for i in range(L):  # §7.5: position i outputs the input at L-1-i
        assert torch.equal(targets[:, i], tokens[:, L - 1 - i])


@pytest.mark.parametrize("seed", SEEDS)
def test_lookup_batch(seed):
    query, keys, values, target = tr.lookup_batch(generator(seed), 6, 16, 32)
    assert query.shape == (6, 32) and keys.shape == (6, 16, 32)
    assert torch.equal(values.sort(dim=1).values, torch.arange(16).expand(6, 16))  # permutations
    for b in range(6):
        (matches,) = torch.nonzero((keys[b] == query[b]).all(dim=1), as_tuple=True)
        assert matches.tolist() and values[b, matches[0]] == target[b]


@pytest.mark.parametrize("kind", ["copy", "reversal"])
@pytest.mark.parametrize("seed", SEEDS)
def test_known_length_batch_has_no_eos_and_the_target_the_task_reads(seed, kind):
    """§6.5: copy reads input t at output t, reversal input L−1−t; the decoder's input is the
    target shifted right behind BOS, and there is no EOS (the length is given)."""
    src, tgt_in, tgt_out = tr.known_length_batch(generator(seed), 5, 7, kind)
    assert src.shape == tgt_in.shape == tgt_out.shape == (5, 7)
    expected = src if kind == "copy" else src.flip(1)
    assert torch.equal(tgt_out, expected)
    assert torch.all(tgt_in[:, 0] == tr.BOS) and torch.equal(tgt_in[:, 1:], expected[:, :-1])
    assert not (tgt_out == tr.EOS).any() and tgt_out.min() >= tr.FIRST_SYMBOL


def test_known_length_task_draws_every_length_of_its_range_one_per_batch():
    task = tr.KnownLengthTask("copy", 2, 5)
    gen = generator(0)
    lengths = [task.sample(gen, 3)[0].shape[1] for _ in range(200)]
    assert set(lengths) == {2, 3, 4, 5}
    again = [task.sample(g, 3)[0].shape[1] for g in [generator(0)] for _ in range(200)]
    assert lengths == again  # from the generator only
    assert tr.KnownLengthTask("reversal", 6, 6).sample(gen, 2)[0].shape == (2, 6)


def test_known_length_accuracy_decodes_exactly_l_tokens():
    class Echo(torch.nn.Module):  # a "model" that decodes the source itself: copy done right
        def greedy_decode(self, src, max_len, bos_id):
            assert max_len == src.shape[1] and bos_id == tr.BOS
            return src

    src, _, tgt_out = tr.known_length_batch(generator(1), 40, 6, "reversal")
    scores = tr.known_length_accuracy(Echo(), src, tgt_out)
    expected = (src == tgt_out).double()
    assert scores["symbol_accuracy"] == pytest.approx(expected.mean().item(), abs=1e-15)
    assert scores["position_accuracy"] == pytest.approx(expected.mean(0).tolist(), abs=1e-15)
    assert scores["sequence_accuracy"] == expected.min(1).values.mean().item()
    src, _, tgt_out = tr.known_length_batch(generator(1), 4, 6, "copy")
    assert tr.known_length_accuracy(Echo(), src, tgt_out)["sequence_accuracy"] == 1.0


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: tr.KnownLengthTask("sort", 1, 4), "unknown task 'sort'"),
        (lambda: tr.KnownLengthTask("copy", 0, 4), "1 <= shortest <= longest"),
        (lambda: tr.KnownLengthTask("copy", 5, 4), "1 <= shortest <= longest"),
        (lambda: tr.known_length_batch(generator(0), 2, 3, "sort"), "unknown task 'sort'"),
    ],
)
def test_known_length_bad_settings_raise(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_empty_batch_is_refused():
    with pytest.raises(ValueError, match="batch and L must be positive"):
        tr.reversal_batch(generator(0), 0, 8)


def test_evaluation_set_is_seeded_apart_from_training():
    task = tr.ReversalTask(8)
    a, b = tr.evaluation_set(task, 3, 50), tr.evaluation_set(task, 3, 50)
    assert torch.equal(a[0], b[0])
    assert torch.equal(a[0], task.sample(generator(3 + tr.TEST_SEED_OFFSET), 50)[0])
    assert not torch.equal(a[0], task.sample(generator(3), 50)[0])


# -----------------------------------------------------------------------------
# evaluation conventions (§8.4, flag F01)


class Oracle(torch.nn.Module):
    """greedy_decode returns prepared predictions: tests the bookkeeping, not a model."""

    def __init__(self, predictions):
        super().__init__()
        self.predictions = predictions

    def greedy_decode(self, src, max_len, bos_id=1):
        assert max_len == self.predictions.shape[1] and bos_id == tr.BOS
        return self.predictions


def test_token_accuracy_counts_the_eos():
    src, _, tgt_out = tr.reversal_batch(generator(0), 4, 5)
    wrong_symbols = tgt_out.clone()
    wrong_symbols[:, :-1] = (wrong_symbols[:, :-1] - 3 + 1) % 10 + 3  # every symbol wrong
    scores = tr.greedy_accuracy(Oracle(wrong_symbols), src, tgt_out)
    assert scores["token_accuracy"] == pytest.approx(1 / 6)  # only the EOS: 1 of L + 1
    assert scores["symbol_accuracy"] == 0.0 and scores["sequence_accuracy"] == 0.0
    assert scores["position_accuracy"] == [0.0] * 5 + [1.0]
    perfect = tr.greedy_accuracy(Oracle(tgt_out), src, tgt_out)
    assert perfect["token_accuracy"] == perfect["sequence_accuracy"] == 1.0


def test_guessing_gives_the_lectures_chance_level():
    """F01: 0.153 = (16 * 0.1 + 1) / 17, a guesser that always ends with EOS, at L = 16."""
    src, _, tgt_out = tr.reversal_batch(generator(0), 4000, 16)
    guesses = torch.cat([tr.random_symbols(generator(1), 4000, 16), tgt_out[:, -1:]], dim=1)
    scores = tr.greedy_accuracy(Oracle(guesses), src, tgt_out)
    assert scores["token_accuracy"] == pytest.approx((16 * 0.1 + 1) / 17, abs=0.005)
    assert scores["symbol_accuracy"] == pytest.approx(0.1, abs=0.005)


# the simulated chance levels (ValueGuesser, SymbolGuesser, simulated_chance)

# (task, guesser, metric, exact chance, share of the outputs that are random draws)
CHANCE_CASES = {
    "lookup": (tr.LookupTask(16, 8), tr.ValueGuesser, "accuracy", 1 / 16, 1),
    "inplace": (tr.InplaceReversalTask(16), tr.SymbolGuesser, "accuracy", 0.1, 1),
    # F01: 16 random symbols and an EOS that is always right
    "reversal_token": (tr.ReversalTask(16), tr.SymbolGuesser, "token_accuracy", 2.6 / 17, 16 / 17),
    "reversal_symbol": (tr.ReversalTask(16), tr.SymbolGuesser, "symbol_accuracy", 0.1, 1),
}


@pytest.mark.parametrize("case", sorted(CHANCE_CASES))
def test_simulated_chance_is_within_0_005_of_the_exact_level(case):
    task, make_guesser, metric, exact, share = CHANCE_CASES[case]
    guesser = make_guesser(generator(0))
    chance = tr.simulated_chance(task, tr.evaluation_set(task, 0, 100), guesser)
    assert guesser.draws >= tr.CHANCE_DRAWS
    p = 1 / 16 if case == "lookup" else 0.1  # one draw's chance of being right
    sigma = share * math.sqrt(p * (1 - p) / tr.CHANCE_DRAWS)  # the standard error
    assert 5 * sigma < 0.005
    assert chance[metric] == pytest.approx(exact, abs=5 * sigma)


def test_simulated_chance_is_the_accuracy_of_its_guesses():
    """Replay the guesser's draws from the same seed and score them by hand."""
    task = tr.ReversalTask(5)
    src, _, tgt_out = tr.evaluation_set(task, 0, 30)
    chance = tr.simulated_chance(task, (src, None, tgt_out), tr.SymbolGuesser(generator(3)), 600)
    replay, right, total = generator(3), 0, 0
    for _ in range(4):  # 4 passes of 30 x 5 symbols: the first to reach 600 draws
        guesses = tr.random_symbols(replay, 30, 5)  # the L symbols; the guesser adds EOS
        right += (guesses == tgt_out[:, :-1]).sum().item() + 30
        total += 30 * 6
    assert chance["token_accuracy"] == pytest.approx(right / total, abs=1e-15)


def test_symbol_guesser_ends_with_eos_and_guesses_only_symbols():
    guesser = tr.SymbolGuesser(generator(0))
    decoded = guesser.greedy_decode(torch.zeros(7, 4, dtype=torch.long), 5)
    assert decoded.shape == (7, 5) and torch.all(decoded[:, -1] == tr.EOS)
    assert decoded[:, :-1].min() >= tr.FIRST_SYMBOL and decoded[:, :-1].max() < tr.VOCAB_SIZE
    logits = guesser(torch.zeros(7, 4, dtype=torch.long))  # the classifier interface (§7.5)
    assert logits.shape == (7, 4, tr.VOCAB_SIZE)
    assert guesser.draws == 7 * 4 + 7 * 4  # EOS is not a draw
    guesses = tr.ValueGuesser(generator(0))(None, None, torch.zeros(9, 16, dtype=torch.long))
    assert guesses.shape == (9, 16) and torch.all(guesses.sum(dim=1) == 1)


# -----------------------------------------------------------------------------
# training


def test_warmup_is_linear_then_flat():
    assert [tr.warmup_lr(1e-3, s, 4) for s in range(6)] == pytest.approx(
        [2.5e-4, 5e-4, 7.5e-4, 1e-3, 1e-3, 1e-3]
    )
    assert tr.warmup_lr(1e-3, 0, 0) == 1e-3


@pytest.mark.parametrize("kind", tt.MODEL_KINDS)
def test_same_seed_same_history(kind):
    """§0.5: same seed, same machine -> identical losses and evaluations (timings aside)."""

    def run():
        task = tr.ReversalTask(6)
        settings = TrainSettings(
            steps=20, lr=1e-3, warmup=5, batch_size=16, eval_every=10, n_test=20
        )
        return tr.train(tiny(kind), task, settings, seed=0)

    first, second = run(), run()
    assert [h["loss"] for h in first.history] == [h["loss"] for h in second.history]
    assert first.evaluations == second.evaluations
    assert [e["step"] for e in first.evaluations] == [10, 20]
    assert [h["lr"] for h in first.history[:5]] == pytest.approx([2e-4, 4e-4, 6e-4, 8e-4, 1e-3])
    assert first.ms_per_step > 0
    settings = TrainSettings(steps=20, lr=1e-3, batch_size=16, n_test=20)
    other = tr.train(tiny(kind), tr.ReversalTask(6), settings, seed=1)
    assert [h["loss"] for h in other.history] != [h["loss"] for h in first.history]


def test_one_train_step_is_train_step():
    """train() and demo 05.4 (step_time) run the same step: one train() step is train_step on
    the seeded init and the first seeded batch (same loss, same weights, bit for bit)."""
    task = tr.ReversalTask(5)
    trained = tr.train(tiny("gru_attention"), task, TrainSettings(1, 1e-3, batch_size=4), seed=0)
    torch.manual_seed(0)
    model = tiny("gru_attention")()
    opt = tr.make_optimizer("adam", model.parameters(), 1e-3)
    loss = tr.train_step(task, model, task.sample(generator(0), 4), opt)
    assert loss.item() == trained.history[0]["loss"]
    for key, value in model.state_dict().items():
        torch.testing.assert_close(trained.model.state_dict()[key], value, rtol=0, atol=0)


def test_train_restores_the_thread_count():
    before = torch.get_num_threads()
    settings = TrainSettings(steps=2, lr=1e-3, batch_size=4, n_test=4)
    tr.train(tiny("gru"), tr.ReversalTask(4), settings, seed=0)
    assert torch.get_num_threads() == before


def test_sgd_and_other_tasks_train():
    sgd = TrainSettings(steps=5, lr=0.1, optimizer="sgd", n_test=50)
    lookup = tr.train(lambda: tt.LookupAttention(16, 8), tr.LookupTask(16, 16), sgd, seed=0)
    assert 0.0 <= lookup.final["accuracy"] <= 1.0 and len(lookup.history) == 5
    # SGD moved the weights: the first loss is not the last, and the same seed repeats it
    losses = [h["loss"] for h in lookup.history]
    assert losses[0] != losses[-1]
    again = tr.train(lambda: tt.LookupAttention(16, 8), tr.LookupTask(16, 16), sgd, seed=0)
    assert [h["loss"] for h in again.history] == losses

    def classifier():
        return tt.EncoderClassifier(
            tt.TransformerConfig(
                tr.VOCAB_SIZE, tr.VOCAB_SIZE, n_enc_layers=2, d_model=16, n_heads=2, d_ff=32
            )
        )

    settings = TrainSettings(steps=5, lr=1e-3, batch_size=8, n_test=20)
    inplace = tr.train(classifier, tr.InplaceReversalTask(8), settings, seed=0)
    assert len(inplace.final["position_accuracy"]) == 8
    mean = sum(inplace.final["position_accuracy"]) / 8  # the positions make up the accuracy
    assert inplace.final["accuracy"] == pytest.approx(mean)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"optimizer": "rmsprop"}, "unknown optimizer 'rmsprop'"),
        ({"steps": 0}, "steps and batch_size must be positive"),
        ({"eval_every": 0}, "eval_every must be positive"),
        ({"lr": math.nan}, "lr must be a number"),  # a demo that sweeps lr did not set it
    ],
)
def test_bad_training_settings_raise_before_any_model_is_built(bad, message):
    def make_model():
        raise AssertionError("the model must not be built for bad settings")

    settings = TrainSettings(**({"steps": 2, "lr": 1e-3} | bad))
    with pytest.raises(ValueError, match=message):
        tr.train(make_model, tr.ReversalTask(4), settings, seed=0)


def test_train_settings_defaults_and_lr_required():
    """TrainSettings: train()'s former defaults; lr has none (null in a config that sweeps it,
    and train() refuses it unset before building a model)."""
    settings = TrainSettings(steps=3, lr=None)
    assert (settings.optimizer, settings.warmup, settings.batch_size) == ("adam", 0, 64)
    assert settings.eval_every is None and settings.n_test == 500 and settings.lr is None
    with pytest.raises(TypeError, match="lr"):
        TrainSettings(steps=3)  # lr is required: a forgotten one fails when the config is read
    with pytest.raises(AttributeError):  # frozen: a per-run change is dataclasses.replace
        settings.lr = 1e-3

    def make_model():
        raise AssertionError("the model must not be built with lr unset")

    with pytest.raises(ValueError, match="lr must be a number"):
        tr.train(make_model, tr.ReversalTask(4), settings, seed=0)


# -----------------------------------------------------------------------------
# devices: batches and init drawn on the CPU, then moved


def test_unknown_device_is_refused_before_any_work():
    def make_model():
        raise AssertionError("the model must not be built for a bad device")

    with pytest.raises(ValueError, match=r"unknown device 'gpu'.*'cpu', 'cuda'"):
        tr.train(make_model, tr.ReversalTask(4), TrainSettings(2, 1e-3), seed=0, device="gpu")


@without_cuda
def test_cuda_without_a_gpu_says_so():
    with pytest.raises(RuntimeError, match="no GPU"):
        tr.check_device("cuda")
    with pytest.raises(RuntimeError, match="no GPU"):
        tr.train(tiny("gru"), tr.ReversalTask(4), TrainSettings(2, 1e-3), seed=0, device="cuda")


def test_to_device_keeps_cpu_batches_as_they_are():
    batch = tr.reversal_batch(generator(0), 3, 4)
    moved = tr.to_device(batch, "cpu")
    assert isinstance(moved, tuple) and all(a is b for a, b in zip(batch, moved, strict=True))


def test_explicit_cpu_is_the_default():
    def run(**device):
        settings = TrainSettings(steps=3, lr=1e-3, batch_size=4, n_test=8)
        return tr.train(tiny("gru_attention"), tr.ReversalTask(4), settings, seed=0, **device)

    default, cpu = run(), run(device="cpu")
    assert [h["loss"] for h in default.history] == [h["loss"] for h in cpu.history]
    assert default.evaluations == cpu.evaluations


def classifier():
    return tt.EncoderClassifier(
        tt.TransformerConfig(
            tr.VOCAB_SIZE, tr.VOCAB_SIZE, n_enc_layers=1, d_model=16, n_heads=2, d_ff=32
        )
    )


CUDA_RUNS = {
    "transformer": (tiny("transformer"), tr.ReversalTask(6)),
    "gru_attention": (tiny("gru_attention"), tr.ReversalTask(6)),
    "gru": (tiny("gru"), tr.ReversalTask(6)),
    "encoder_classifier": (classifier, tr.InplaceReversalTask(6)),
    "lookup": (lambda: tt.LookupAttention(16, 8), tr.LookupTask(16, 16)),
}


@pytest.mark.gpu
@requires_cuda
@pytest.mark.parametrize("name", sorted(CUDA_RUNS))
def test_cuda_trains_from_the_cpus_init_on_the_cpus_batches(name):
    make_model, task = CUDA_RUNS[name]
    settings = TrainSettings(steps=5, lr=1e-3, batch_size=8, eval_every=5, n_test=20)
    cpu = tr.train(make_model, task, settings, seed=0)
    gpu = tr.train(make_model, task, settings, seed=0, device="cuda")
    assert all(p.device.type == "cuda" for p in gpu.model.parameters())
    assert gpu.evaluations[-1].keys() == cpu.evaluations[-1].keys() and gpu.ms_per_step > 0
    # step 1's loss is the same init on the same first batch; 1e-3 leaves room for other
    # kernels (cuDNN's GRU may use TF32), far below what another init or batch would give
    assert gpu.history[0]["loss"] == pytest.approx(cpu.history[0]["loss"], rel=1e-3)
    # SGD at lr 0 leaves the weights as built: on cuda, exactly the CPU's seeded init
    frozen = TrainSettings(steps=1, lr=0.0, optimizer="sgd", batch_size=8, n_test=20)
    torch.manual_seed(0)
    init = make_model().state_dict()
    trained = tr.train(make_model, task, frozen, seed=0, device="cuda").model.state_dict()
    for key, value in init.items():
        torch.testing.assert_close(trained[key].cpu(), value, rtol=0, atol=0)


@pytest.mark.slow
def test_transformer_learns_short_reversal():
    """§9.2 in miniature: the §9 Transformer reverses L = 8 after 300 steps (greedy decoding)."""
    vocab = tr.VOCAB_SIZE
    result = tr.train(
        lambda: tt.build_model("transformer", src_vocab=vocab, tgt_vocab=vocab),
        tr.ReversalTask(8),
        TrainSettings(steps=300, lr=1e-3, warmup=50, n_test=200),
        seed=0,
    )
    assert result.final["token_accuracy"] > 0.9
