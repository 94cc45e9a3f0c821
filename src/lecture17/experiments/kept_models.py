"""Trained models that one demo's jobs keep for another demo to read (06.6 reads 05.1's).

A demo function never writes files (docs/ARCHITECTURE.md); it calls `keep(model, **description)`
after training. That does nothing, unless the job runs inside `keeping()` — the job runner
(pipeline/job.py) does so for a demo registered with `keeps_models` — and then writes what was
kept to `<out stem>.models.pt` beside the CSV (a list of {"description", "state_dict"}),
written and renamed with the CSVs, so a killed job leaves no model file that a later step
trusts. A demo registered with `reads_models` gets that list as its `trained` argument; its
CSV then reads the very models whose accuracies the other demo's CSV reports, no retraining.

    with keeping() as kept:          # pipeline.job
        table = reversal_comparison(...)
    kept  # [{"description": {"model": "gru", "seq_len": 8, ...}, "state_dict": {...}}]
"""

import contextlib
from contextvars import ContextVar
from pathlib import Path

_KEPT: ContextVar[list | None] = ContextVar("kept_models", default=None)


def keep(net, **description) -> None:
    """Keep a copy of `net`'s weights (on the CPU) and how it was built, if a job asks."""
    kept = _KEPT.get()
    if kept is None:
        return
    state = {name: tensor.detach().cpu().clone() for name, tensor in net.state_dict().items()}
    kept.append({"description": description, "state_dict": state})


@contextlib.contextmanager
def keeping():
    """Collect what `keep` is given while the block runs: yields the list it fills."""
    token = _KEPT.set([])
    try:
        yield _KEPT.get()
    finally:
        _KEPT.reset(token)


def models_path(csv: Path) -> Path:
    """results/05.1/model=gru/seq_len=8/seed0.csv -> …/seed0.models.pt"""
    csv = Path(csv)
    return csv.with_name(f"{csv.stem}.models.pt")


def save(kept: list, path: Path) -> None:
    import torch

    torch.save(kept, path)


def load(path: Path) -> list:
    """What `save` wrote: tensors, and descriptions of str, int, float, bool, dict and list."""
    import torch

    if not Path(path).is_file():
        raise FileNotFoundError(f"no kept models at {path}: run the demo that keeps them first")
    return torch.load(path, weights_only=True)


def the_one(kept: list, **expected) -> dict:
    """The single kept model whose description matches `expected` (a model trained with other
    settings is refused by name: a stale file never passes for this build's model)."""
    found = [k for k in kept if k["description"] == expected]
    if len(found) != 1:
        seen = [k["description"] for k in kept]
        raise ValueError(f"expected one kept model described as {expected}; the file has {seen}")
    return found[0]
