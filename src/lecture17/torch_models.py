"""PyTorch's own sequence models, wrapped to our models' interface: the yardsticks of §9.5.

Speed is only meaningful next to something: our from-scratch tiny_transformer.Transformer is
timed against nn.Transformer of the same sizes, and GRUSeq2Seq against a plain nn.GRU
encoder-decoder. Both wrappers take the same inputs as our models,

    logits = model(src, tgt_in)   # src (b, n_src), tgt_in (b, n_tgt) -> (b, n_tgt, vocab)

with the same embeddings, sinusoidal positional encoding (§6.2) and output layer, so the
difference in a training step is the difference between the two implementations.
TorchTransformer takes the TransformerConfig our Transformer takes; PlainGRU the sizes GRUSeq2Seq
takes. Used by demo 06.3 (ms per training step on a GPU) and bench/step_time.py. They are never
trained for accuracy here; no dropout (as tiny_transformer).
"""

import inspect

from torch import nn

from lecture17.tiny_transformer import MultiHeadAttention, TransformerConfig, sinusoidal_encoding

# -----------------------------------------------------------------------------
# §9.5 yardsticks: nn.Transformer beside our Transformer, nn.GRU beside GRUSeq2Seq


class TorchTransformer(nn.Module):
    """nn.Transformer (Post-LN, 1 + 1 layers by default) with our embeddings, PE and output layer.

    Built from the TransformerConfig our Transformer takes, so both sides of a timing have the
    same sizes and LayerNorm placement by construction; nn.Transformer has no switch for our
    other settings (pe, emb_scale, scale), so only their defaults are accepted.
    The look-ahead mask (§8.1) is built once per target length and cached, and passed with
    `tgt_is_causal=True`: nn.Transformer's most favourable use (its fused kernels may then skip
    the masked blocks).
    """

    def __init__(self, config: TransformerConfig):
        super().__init__()
        check_config(config)
        c = config
        self.src_embed = nn.Embedding(c.src_vocab, c.d_model)
        self.tgt_embed = nn.Embedding(c.tgt_vocab, c.d_model)
        self.register_buffer("pe", sinusoidal_encoding(c.max_len, c.d_model), persistent=False)
        self.transformer = nn.Transformer(
            c.d_model,
            c.n_heads,
            c.n_enc_layers,
            c.n_dec_layers,
            c.d_ff,
            dropout=0.0,
            batch_first=True,
            norm_first=c.norm_first,
        )
        self.out = nn.Linear(c.d_model, c.tgt_vocab)
        self.masks = {}  # (n, device) -> (n, n) float mask, -inf above the diagonal

    def forward(self, src, tgt_in):
        n_src, n_tgt = src.shape[1], tgt_in.shape[1]
        if max(n_src, n_tgt) > self.pe.shape[0]:
            raise ValueError(
                f"sequence length {max(n_src, n_tgt)} exceeds max_len {self.pe.shape[0]} "
                "of the positional-encoding table"
            )
        key = (n_tgt, src.device)
        if key not in self.masks:
            self.masks[key] = nn.Transformer.generate_square_subsequent_mask(
                n_tgt, device=src.device
            )
        x = self.src_embed(src) + self.pe[:n_src]  # (b, n_src, d_model)
        y = self.tgt_embed(tgt_in) + self.pe[:n_tgt]  # (b, n_tgt, d_model)
        y = self.transformer(x, y, tgt_mask=self.masks[key], tgt_is_causal=True)
        return self.out(y)  # (b, n_tgt, tgt_vocab)


class PlainGRU(nn.Module):
    """Embedding -> nn.GRU encoder -> nn.GRU decoder started from its last state -> Linear.

    GRUSeq2Seq without attention, in plain PyTorch (Cho et al. 2014, §9.1).
    """

    def __init__(self, vocab_size, emb_dim=64, hidden=128):
        super().__init__()
        self.src_embed = nn.Embedding(vocab_size, emb_dim)
        self.tgt_embed = nn.Embedding(vocab_size, emb_dim)
        self.encoder = nn.GRU(emb_dim, hidden, batch_first=True)
        self.decoder = nn.GRU(emb_dim, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab_size)

    def forward(self, src, tgt_in):
        _, last = self.encoder(self.src_embed(src))  # (1, b, hidden)
        states, _ = self.decoder(self.tgt_embed(tgt_in), last)  # (b, n_tgt, hidden)
        return self.out(states)  # (b, n_tgt, vocab)


# -----------------------------------------------------------------------------
# input checks


def check_config(config: TransformerConfig) -> None:
    """Refuse the settings nn.Transformer cannot mirror: it always reads sinusoidal PE here,
    unscaled embeddings and 1/sqrt(d_k) attention."""
    mirrored = {"pe": "sinusoidal", "emb_scale": 1.0, "scale": True}
    default_scale = inspect.signature(MultiHeadAttention).parameters["scale"].default
    given = {k: getattr(config, k) for k in mirrored}
    given["scale"] = default_scale if given["scale"] is None else given["scale"]
    differ = {k: v for k, v in given.items() if v != mirrored[k]}
    if differ:
        raise ValueError(f"TorchTransformer supports only {mirrored}; got {differ}")
