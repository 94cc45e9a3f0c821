"""The input checks of the PyTorch models' public entry points (tiny_transformer,
gru_seq2seq, decoding), shared; each names what it expected. MultiHeadAttention's own sizes are
checked in tiny_transformer (check_heads), beside the schemes they name."""

import torch


def check_tokens(**batches: torch.Tensor) -> None:
    """Token batches are (b, n) with b, n > 0; say which one, and what was expected, otherwise.

    E.g. check_tokens(src=src, tgt_in=tgt_in).
    """
    for name, tokens in batches.items():
        if tokens.dim() != 2 or tokens.shape[0] == 0 or tokens.shape[1] == 0:
            raise ValueError(
                f"{name} must be a non-empty (batch, length) tensor of token ids; "
                f"got shape {tuple(tokens.shape)}"
            )


def check_decoding(src: torch.Tensor, max_len: int, embed) -> None:
    """greedy_decode's inputs: a token batch, max_len >= 0, and max_len positions in `embed`'s
    PE table (the last step's input is position max_len - 1)."""
    check_tokens(src=src)
    if max_len < 0:
        raise ValueError(f"max_len must be >= 0, got {max_len}")
    embed.check_length(max_len)
