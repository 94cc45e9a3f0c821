"""The synthetic tasks of the training demos, their data and their evaluation (§4.4, §6.6,
§7.5, §9): what lecture17.training trains on and how it scores.

Four tasks, all generated fresh at every step from a seeded torch.Generator (§0.5, §9.1):
- ReversalTask (§9.1, demos 03.5 and 05): L random symbols in, the same symbols reversed out,
  then EOS; an encoder-decoder trained with teacher forcing, evaluated by greedy decoding.
- InplaceReversalTask (§7.5, demo 04.3): an encoder-only classifier outputs, at position i,
  the input at position L-1-i (chance 0.1).
- LookupTask (§4.4, demo 02.3): 16 (key, value) pairs and a query key; answer the value
  paired with it (chance 1/16), with one layer of single-head attention
  (tiny_transformer.LookupAttention).
- KnownLengthTask (beyond the lecture, §6.5, demo 06.7): copy or reverse L symbols, L drawn
  afresh for every batch from a range of lengths, no EOS: the decoder is given the length
  (decodes exactly L tokens), so that a test at an unseen length asks only where to read.

Vocabulary of the reversal tasks: PAD 0, BOS 1, EOS 2, symbols 3..12 (10 symbols).

Evaluation (§8.4): seq2seq models are scored on what greedy decoding from BOS produces, never
on teacher-forced predictions. Per-token accuracy counts the L symbols AND the final EOS, so
L + 1 outputs per sequence: this is the only reading under which the lecture's chance level
0.153 = (16 * 0.1 + 1) / 17 at L = 16 comes out (reading aid, flag F01). symbol_accuracy
counts the L symbols only (chance 0.1); a sequence is right when all L + 1 outputs are.

Chance levels are also measured: simulated_chance scores a random guesser (ValueGuesser,
SymbolGuesser) with the task's own evaluate, the same metric as the models.

Test sets: n_test new samples from a separate generator seeded with seed + 10_000, a stream
apart from the training batches (generator seeded with seed) and fixed for every evaluation.
"""

import statistics
from contextlib import contextmanager
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from lecture17.tiny_transformer import LOOKUP_KEYS

PAD, BOS, EOS = 0, 1, 2
FIRST_SYMBOL, N_SYMBOLS = 3, 10
VOCAB_SIZE = FIRST_SYMBOL + N_SYMBOLS  # 13
TEST_SEED_OFFSET = 10_000

# -----------------------------------------------------------------------------
# data


def random_symbols(generator: torch.Generator, batch: int, L: int) -> torch.Tensor:
    """(batch, L) symbols drawn uniformly from the 10 symbols 3..12."""
    if batch <= 0 or L <= 0:
        raise ValueError(f"batch and L must be positive, got batch={batch}, L={L}")
    high = FIRST_SYMBOL + N_SYMBOLS
    return torch.randint(FIRST_SYMBOL, high, (batch, L), generator=generator)


def reversal_batch(generator: torch.Generator, batch: int, L: int):
    """§9.1: src (b, L); tgt_in (b, L+1) = [BOS, reversed]; tgt_out (b, L+1) = [reversed, EOS]."""
    src = random_symbols(generator, batch, L)  # (b, L)
    reversed_ = src.flip(1)  # (b, L)
    bos = torch.full((batch, 1), BOS)
    eos = torch.full((batch, 1), EOS)
    return src, torch.cat([bos, reversed_], 1), torch.cat([reversed_, eos], 1)  # (b, L+1) x2


KNOWN_LENGTH_TASKS = ("copy", "reversal")


def known_length_batch(generator: torch.Generator, batch: int, L: int, kind: str):
    """§6.5 beyond the lecture: src (b, L); target = src ("copy": output t reads input t) or
    src reversed ("reversal": output t reads input L-1-t); tgt_in (b, L) = [BOS, target[:-1]],
    tgt_out (b, L) = target. No EOS: the length is given to the decoder (it decodes L steps)."""
    if kind not in KNOWN_LENGTH_TASKS:
        raise ValueError(f"unknown task {kind!r}; expected one of {KNOWN_LENGTH_TASKS}")
    src = random_symbols(generator, batch, L)  # (b, L)
    target = src if kind == "copy" else src.flip(1)  # (b, L)
    bos = torch.full((batch, 1), BOS)
    return src, torch.cat([bos, target[:, :-1]], 1), target


def inplace_reversal_batch(generator: torch.Generator, batch: int, L: int):
    """§7.5: tokens (b, L) and targets (b, L) with targets[:, i] = tokens[:, L-1-i]."""
    tokens = random_symbols(generator, batch, L)
    return tokens, tokens.flip(1)


def lookup_batch(generator: torch.Generator, batch: int, n_pairs: int, d_model: int):
    """§4.4: n_pairs random keys with N(0, 1) components, values a permutation of 0..n_pairs-1
    (each value once, so chance is exactly 1 / n_pairs).

    Returns query (b, d_model) = one of the sample's keys, keys (b, n_pairs, d_model),
    values (b, n_pairs) and target (b,) = the value paired with the query key.
    """
    keys = torch.randn(batch, n_pairs, d_model, generator=generator)  # (b, n_pairs, d_model)
    values = torch.rand(batch, n_pairs, generator=generator).argsort(dim=1)  # (b, n_pairs)
    which = torch.randint(0, n_pairs, (batch,), generator=generator)  # (b,)
    rows = torch.arange(batch)
    return keys[rows, which], keys, values, values[rows, which]


def lookup_symbol_batch(generator: torch.Generator, batch: int, n_pairs: int, vocab: int):
    """§4.4 with keys as symbols (the "embedded" reading): n_pairs distinct symbols of 0..vocab-1
    per sample, which the model embeds; values and target as in lookup_batch.

    Returns query (b,) symbol ids, keys (b, n_pairs) ids, values (b, n_pairs), target (b,).
    """
    if vocab < n_pairs:
        raise ValueError(f"vocab must hold n_pairs distinct keys, got {vocab} < {n_pairs}")
    keys = torch.rand(batch, vocab, generator=generator).argsort(dim=1)[:, :n_pairs]
    values = torch.rand(batch, n_pairs, generator=generator).argsort(dim=1)  # (b, n_pairs)
    which = torch.randint(0, n_pairs, (batch,), generator=generator)  # (b,)
    rows = torch.arange(batch)
    return keys[rows, which], keys, values, values[rows, which]


# -----------------------------------------------------------------------------
# evaluation (§8.4: greedy decoding only)


def greedy_accuracy(model: nn.Module, src, tgt_out) -> dict:
    """Decode greedily from BOS for tgt_out's length (L + 1) and compare with tgt_out.

    token_accuracy: the L symbols and the EOS (flag F01); symbol_accuracy: the L symbols;
    sequence_accuracy: all L + 1 outputs right; position_accuracy: one value per output
    position t = 0..L (0-based; position t copies source position L-1-t, §9.4).
    """
    predicted = model.greedy_decode(src, tgt_out.shape[1], bos_id=BOS)  # (b, L+1)
    correct = (predicted == tgt_out).double()  # (b, L+1)
    return {
        "token_accuracy": correct.mean().item(),
        "symbol_accuracy": correct[:, :-1].mean().item(),
        "sequence_accuracy": correct.min(dim=1).values.mean().item(),
        "position_accuracy": correct.mean(dim=0).tolist(),
    }


def known_length_accuracy(model: nn.Module, src, tgt_out) -> dict:
    """Decode greedily from BOS for exactly tgt_out's length L (no EOS) and compare.

    symbol_accuracy: the L outputs; sequence_accuracy: all L right; position_accuracy: one
    value per output position t = 0..L-1 (0-based).
    """
    predicted = model.greedy_decode(src, tgt_out.shape[1], bos_id=BOS)  # (b, L)
    correct = (predicted == tgt_out).double()  # (b, L)
    return {
        "symbol_accuracy": correct.mean().item(),
        "sequence_accuracy": correct.min(dim=1).values.mean().item(),
        "position_accuracy": correct.mean(dim=0).tolist(),
    }


def classifier_accuracy(model: nn.Module, tokens, targets) -> dict:
    """Per-position classifier (§7.5): accuracy over all positions, whole sequences, by position."""
    with torch.no_grad():
        correct = (model(tokens).argmax(-1) == targets).double()  # (b, L)
    return {
        "accuracy": correct.mean().item(),
        "sequence_accuracy": correct.min(dim=1).values.mean().item(),
        "position_accuracy": correct.mean(dim=0).tolist(),
    }


# -----------------------------------------------------------------------------
# tasks: how to sample, what loss to train on, how to evaluate


@dataclass(frozen=True)
class ReversalTask:
    """§9.1: reverse L symbols; teacher-forced cross-entropy over the L + 1 outputs."""

    length: int

    def sample(self, generator, batch_size):
        return reversal_batch(generator, batch_size, self.length)

    def loss(self, model, batch):
        src, tgt_in, tgt_out = batch
        logits = model(src, tgt_in)  # (b, L+1, vocab), all positions at once (§8.4)
        return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten())

    def evaluate(self, model, batch):
        src, _, tgt_out = batch
        return greedy_accuracy(model, src, tgt_out)


@dataclass(frozen=True)
class KnownLengthTask:
    """§6.5 beyond the lecture: copy or reverse L symbols, L uniform on shortest..longest, one
    length per batch (so no padding); teacher-forced cross-entropy over the L outputs, scored
    by greedy decoding of exactly L tokens (known_length_accuracy)."""

    kind: str  # "copy" or "reversal"
    shortest: int
    longest: int

    def __post_init__(self):
        if self.kind not in KNOWN_LENGTH_TASKS:
            raise ValueError(f"unknown task {self.kind!r}; expected one of {KNOWN_LENGTH_TASKS}")
        if not 1 <= self.shortest <= self.longest:
            raise ValueError(
                f"need 1 <= shortest <= longest, got shortest={self.shortest}, "
                f"longest={self.longest}"
            )

    def sample(self, generator, batch_size):
        L = self.shortest
        if self.longest > self.shortest:
            L = int(torch.randint(self.shortest, self.longest + 1, (1,), generator=generator))
        return known_length_batch(generator, batch_size, L, self.kind)

    def loss(self, model, batch):
        src, tgt_in, tgt_out = batch
        logits = model(src, tgt_in)  # (b, L, vocab)
        return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten())

    def evaluate(self, model, batch):
        src, _, tgt_out = batch
        return known_length_accuracy(model, src, tgt_out)


@dataclass(frozen=True)
class InplaceReversalTask:
    """§7.5: position i outputs the input at L-1-i (encoder-only, chance 0.1)."""

    length: int

    def sample(self, generator, batch_size):
        return inplace_reversal_batch(generator, batch_size, self.length)

    def loss(self, model, batch):
        tokens, targets = batch
        return F.cross_entropy(model(tokens).flatten(0, 1), targets.flatten())

    def evaluate(self, model, batch):
        return classifier_accuracy(model, *batch)


@dataclass(frozen=True)
class LookupTask:
    """§4.4: n_pairs (key, value) pairs and a query key; chance 1 / n_pairs. keys="random":
    N(0, 1) key vectors (lookup_batch); "embedded": symbol ids of a vocab (lookup_symbol_batch)."""

    n_pairs: int
    d_model: int
    keys: str = "random"
    vocab: int = 64

    def sample(self, generator, batch_size):
        if self.keys == "embedded":
            return lookup_symbol_batch(generator, batch_size, self.n_pairs, self.vocab)
        if self.keys != "random":
            raise ValueError(f"unknown keys {self.keys!r}; expected one of {LOOKUP_KEYS}")
        return lookup_batch(generator, batch_size, self.n_pairs, self.d_model)

    def loss(self, model, batch):
        query, keys, values, target = batch
        return F.cross_entropy(model(query, keys, values), target)

    def evaluate(self, model, batch):
        query, keys, values, target = batch
        with torch.no_grad():
            predicted = model(query, keys, values).argmax(-1)  # (b,)
        return {"accuracy": (predicted == target).double().mean().item()}


def evaluation_set(task, seed: int, n_test: int = 500):
    """The fixed test set of a task and seed: n_test samples from seed + 10_000."""
    return task.sample(torch.Generator().manual_seed(seed + TEST_SEED_OFFSET), n_test)


@contextmanager
def single_thread():
    """torch.set_num_threads(1) for the lecture's determinism (§0.5), restored afterwards."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


# -----------------------------------------------------------------------------
# chance levels: a random guesser, scored by the same task.evaluate as the models

# Random answers per simulated chance level. At p = 0.1 the standard error is
# sqrt(0.1 * 0.9 / 100_000) = 0.00095 (1/16: 0.00077), so the simulation lands well within
# 0.005 of the exact chance level.
CHANCE_DRAWS = 100_000


class ValueGuesser:
    """§4.4's "瞎猜 1/16": answers the look-up with one of the n_pairs values, uniformly at
    random, whatever the query and keys. Called like LookupAttention: logits (b, n_pairs)."""

    def __init__(self, generator: torch.Generator):
        self.generator, self.draws = generator, 0

    def __call__(self, query, keys, values):
        b, n_pairs = values.shape
        guess = torch.randint(0, n_pairs, (b,), generator=self.generator)  # (b,)
        self.draws += b
        return F.one_hot(guess, n_pairs).double()  # (b, n_pairs): argmax = the guess


class SymbolGuesser:
    """The reversal tasks' "瞎猜": every output one of the N_SYMBOLS symbols, uniformly at
    random, whatever the input (§7.5: chance 0.1).

    As a classifier (§7.5) it is called like EncoderClassifier: logits (b, L, VOCAB_SIZE).
    As a seq2seq model (§6.6, §9) greedy_decode gives L random symbols and then EOS: the
    guesser knows the length, so the EOS position is always right. That is flag F01's
    reading of the lecture's 0.153 = (16 * 0.1 + 1) / 17.
    """

    def __init__(self, generator: torch.Generator):
        self.generator, self.draws = generator, 0

    def __call__(self, tokens):
        guess = random_symbols(self.generator, *tokens.shape)  # (b, L)
        self.draws += guess.numel()
        return F.one_hot(guess, VOCAB_SIZE).double()  # (b, L, vocab): argmax = the guess

    def greedy_decode(self, src, max_len, bos_id=BOS):
        b = src.shape[0]
        guess = random_symbols(self.generator, b, max_len - 1)  # (b, L): the L symbols
        self.draws += guess.numel()
        return torch.cat([guess, torch.full((b, 1), EOS)], dim=1)  # (b, L+1): EOS last


def simulated_chance(task, test, guesser, draws: int = CHANCE_DRAWS) -> dict:
    """task.evaluate(guesser, test), the models' own metrics, averaged over passes of the
    test set until the guesser has drawn at least `draws` random answers.

    Every pass scores the same number of outputs, so the mean over passes is the accuracy
    over all of them. Returns the scalar metrics (position_accuracy lists are left out).
    """
    runs = []
    with single_thread():
        while guesser.draws < draws or not runs:
            runs.append(task.evaluate(guesser, test))
    return {
        name: statistics.fmean(run[name] for run in runs)
        for name, value in runs[0].items()
        if isinstance(value, float)
    }


def guessed_chance(task, guesser, seed: int, n_test: int) -> dict:
    """simulated_chance of a `guesser` class (ValueGuesser, SymbolGuesser) drawing from a
    generator seeded with `seed`, on the test set evaluation_set(task, seed, n_test)."""
    guesser = guesser(torch.Generator().manual_seed(seed))
    return simulated_chance(task, evaluation_set(task, seed, n_test), guesser)
