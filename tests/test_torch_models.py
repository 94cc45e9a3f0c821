"""torch_models: PyTorch's own models as yardsticks (demo 06.3 times them against ours).

They must take our models' inputs and give their outputs' shape, be causal like ours (§8.1),
and refuse what they cannot mirror.
"""

from dataclasses import replace

import pytest
import torch

from lecture17.tiny_transformer import TransformerConfig
from lecture17.torch_models import PlainGRU, TorchTransformer
from lecture17.training import VOCAB_SIZE, reversal_batch

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


def test_nn_transformer_reads_a_scale_left_to_the_default_as_that_default(monkeypatch):
    """TransformerConfig.scale None is MultiHeadAttention's default (exercise 9 edits it):
    accepted while that default is scale=True, refused once it is False."""
    from lecture17 import tiny_transformer as tt

    TorchTransformer(replace(SMALL, scale=None))
    init = tt.MultiHeadAttention.__init__
    monkeypatch.setattr(init, "__defaults__", (False, *init.__defaults__[1:]))
    with pytest.raises(ValueError, match="TorchTransformer supports only"):
        TorchTransformer(replace(SMALL, scale=None))


def test_nn_transformer_refuses_a_sequence_longer_than_its_pe_table():
    model = TorchTransformer(replace(SMALL, max_len=8))
    src, tgt_in, _ = reversal_batch(torch.Generator().manual_seed(0), 2, 8)  # tgt_in has 9
    with pytest.raises(ValueError, match="sequence length 9 exceeds max_len 8"):
        model(src, tgt_in)
