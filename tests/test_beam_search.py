"""Beam search (§8.4 "或用第 16 讲的 beam search"): its exact properties on random models.

- width 1 is greedy decoding (the same tokens), for the Transformer and both GRU models;
- a beam as wide as the search space returns the brute-force best sequence, and its score is
  that sequence's sum of log-probabilities (float64, to 1e-12);
- the cached and the uncached beams give the same tokens and scores;
- a wider beam is not guaranteed a higher score (a hand-built model where width 2 loses to 1).
"""

import itertools
import math

import pytest
import torch
from torch import nn

from lecture17 import decoding
from lecture17 import tiny_transformer as tt

torch.set_num_threads(1)

BOS, VOCAB = 1, 4  # a tiny vocabulary: 4 ** 3 = 64 sequences of length 3


def random_model(kind, seed, vocab=VOCAB, dtype=torch.float64):
    torch.manual_seed(seed)
    sizes = {
        "transformer": dict(d_model=16, n_heads=2, d_ff=32, n_enc_layers=1, n_dec_layers=2),
        "gru": dict(emb_dim=8, hidden=16),
        "gru_attention": dict(emb_dim=8, hidden=16),
    }[kind]
    model = tt.build_model(kind, src_vocab=vocab, tgt_vocab=vocab, **sizes).to(dtype).eval()
    with torch.no_grad():  # sharper than the init's, not so sharp that greedy is always best
        model.out.weight.mul_(2.0)
    return model


def sources(seed, b=8, n=4, vocab=VOCAB):
    return torch.randint(0, vocab, (b, n), generator=torch.Generator().manual_seed(seed))


KINDS = ["transformer", "gru", "gru_attention"]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("kind", KINDS)
def test_width_one_is_greedy(kind, seed):
    model, src = random_model(kind, seed, vocab=13), sources(seed, b=16, n=7, vocab=13)
    tokens, scores = decoding.beam_search(model, src, 1, 8, bos_id=BOS)
    assert torch.equal(tokens, model.greedy_decode(src, 8, bos_id=BOS))
    torch.testing.assert_close(
        scores, decoding.sequence_log_prob(model, src, tokens, bos_id=BOS), rtol=0, atol=1e-12
    )


def brute_force(model, src, length):
    """Every sequence of `length` tokens, scored: the best (b, length) and its score (b,)."""
    every = torch.tensor(list(itertools.product(range(VOCAB), repeat=length)))  # (V^n, n)
    best, best_score = [], []
    for row in src:
        scores = decoding.sequence_log_prob(model, row.expand(len(every), -1), every, bos_id=BOS)
        best.append(every[scores.argmax()])
        best_score.append(scores.max())
    return torch.stack(best), torch.stack(best_score)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("kind", KINDS)
def test_exhaustive_beam_is_brute_force(kind, seed):
    model, src, length = random_model(kind, seed), sources(seed), 3
    tokens, scores = decoding.beam_search(model, src, VOCAB ** (length - 1), length, bos_id=BOS)
    best, best_score = brute_force(model, src, length)
    assert torch.equal(tokens, best)
    torch.testing.assert_close(scores, best_score, rtol=0, atol=1e-12)


def test_the_search_matters_on_these_models():
    """The exhaustive test is no tautology: on these models greedy misses the best sequence
    for some sources (of each kind of model), so a beam that only repeated greedy would fail."""
    for kind in KINDS:
        missed = 0
        for seed in (0, 1, 2):
            model, src = random_model(kind, seed), sources(seed)
            greedy = decoding.beam_search(model, src, 1, 3, bos_id=BOS)[0]
            missed += int((greedy != brute_force(model, src, 3)[0]).any(dim=1).sum())
        assert missed > 0, kind


@pytest.mark.parametrize("width", [1, 2, 4, 8])
@pytest.mark.parametrize("seed", [0, 1])
def test_cached_beam_equals_uncached(seed, width):
    model, src = random_model("transformer", seed, vocab=13), sources(seed, b=8, n=6, vocab=13)
    cached = decoding.beam_search(model, src, width, 7, bos_id=BOS, use_cache=True)
    uncached = decoding.beam_search(model, src, width, 7, bos_id=BOS, use_cache=False)
    assert torch.equal(cached[0], uncached[0])
    torch.testing.assert_close(cached[1], uncached[1], rtol=0, atol=1e-12)


def test_scores_never_fall_as_the_beam_becomes_exhaustive():
    """A beam as wide as the space is an upper bound for every width (not monotone between)."""
    model, src = random_model("transformer", 3), sources(3, b=32)
    top = decoding.beam_search(model, src, VOCAB**2, 3, bos_id=BOS)[1]
    for width in (1, 2, 3, 4, 8):
        assert (decoding.beam_search(model, src, width, 3, bos_id=BOS)[1] <= top + 1e-12).all()


class TreeModel(tt.GRUSeq2Seq):
    """A hand-built next-token table (no training): p(y_t | y_<t) read off TREE by prefix.

    Step 1: a 0.40, b 0.35, c 0.25. After a: uniform over a, b, c (greedy keeps a, then any of
    its 1/3 children: 0.133). After b: a 0.5, b 0.5, so both of b's children (0.175) beat
    every child of a, and a beam of width 2 keeps them and drops a. Step 3: after a·a, a for
    sure (greedy ends at 0.133); after b·a or b·b, uniform (0.175 / 3 = 0.058).
    """

    TREE = {
        (): [0.40, 0.35, 0.25],
        (0,): [1 / 3, 1 / 3, 1 / 3],
        (1,): [0.5, 0.5, 0.0],
        (0, 0): [1.0, 0.0, 0.0],
        (1, 0): [1 / 3, 1 / 3, 1 / 3],
        (1, 1): [1 / 3, 1 / 3, 1 / 3],
    }

    def __init__(self):
        super().__init__(3, 3, emb_dim=2, hidden=2)
        self.prefix = None

    def encode(self, src):
        b = src.shape[0]
        return torch.zeros(b, 1, 2, dtype=torch.float64), None, torch.zeros(1, b, 2)

    def decode_step(self, token, state, attended, enc_states, keys):
        # the state carries the prefix's ids (as floats), one column per step so far
        state = torch.cat([state, token.T[..., None].to(state.dtype)], dim=2)
        rows = []
        for i in range(state.shape[1]):
            prefix = tuple(int(v) for v in state[0, i, 3:])  # skip the 2 zeros and BOS
            rows.append(self.TREE.get(prefix, [1 / 3, 1 / 3, 1 / 3]))
        probs = torch.tensor(rows, dtype=torch.float64).clamp_min(1e-300)
        return probs.log()[:, None], state, attended


def test_a_wider_beam_can_score_lower():
    model, src = TreeModel(), torch.zeros(1, 1, dtype=torch.long)
    greedy = decoding.beam_search(model, src, 1, 3, bos_id=BOS)
    wide = decoding.beam_search(model, src, 2, 3, bos_id=BOS)
    assert greedy[0].tolist() == [[0, 0, 0]]
    assert math.isclose(greedy[1].exp().item(), 0.40 / 3, rel_tol=1e-12)
    assert wide[0][0, :2].tolist() in ([1, 0], [1, 1])
    assert math.isclose(wide[1].exp().item(), 0.35 * 0.5 / 3, rel_tol=1e-12)
    assert wide[1] < greedy[1]


def test_bad_width_and_model_are_refused():
    model, src = random_model("gru", 0), sources(0)
    with pytest.raises(ValueError, match="width"):
        decoding.beam_search(model, src, 0, 3)
    with pytest.raises(TypeError, match="Transformer or a GRUSeq2Seq"):
        decoding.beam_search(nn.Linear(2, 2), src, 2, 3)
