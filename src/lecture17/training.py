"""The training loop every training demo shares (§4.4, §6.6, §7.5, §9), on the tasks of
lecture17.tasks (whose names are importable from here too: `from lecture17.training import
ReversalTask, train`).

Training: train(make_model, task, settings, seed=...) with a TrainSettings (steps, lr,
optimizer, warmup, batch_size, eval_every, n_test: a training demo's `train:` block in
config/config.yaml), one train_step per fresh batch, evaluated on the task's fixed test set
(tasks.evaluation_set) by the task's own greedy-decoding evaluate.

Devices: train(device="cuda") builds the model on the CPU under the seed and draws every batch
on the CPU from the seeded generator, then moves them to the GPU: the same initialisation and
the same data as a CPU run (its float results may still differ in the last bits: other
kernels). Step timings on cuda wait for the GPU before the clock stops (lecture17.timing).
"""

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch import nn

from lecture17.tasks import (
    BOS as BOS,
)
from lecture17.tasks import (
    CHANCE_DRAWS as CHANCE_DRAWS,
)
from lecture17.tasks import (
    EOS as EOS,
)
from lecture17.tasks import (
    FIRST_SYMBOL as FIRST_SYMBOL,
)
from lecture17.tasks import (
    KNOWN_LENGTH_TASKS as KNOWN_LENGTH_TASKS,
)
from lecture17.tasks import (
    N_SYMBOLS as N_SYMBOLS,
)
from lecture17.tasks import (  # the tasks' names, importable from here as before
    PAD as PAD,
)
from lecture17.tasks import (
    TEST_SEED_OFFSET as TEST_SEED_OFFSET,
)
from lecture17.tasks import (
    VOCAB_SIZE as VOCAB_SIZE,
)
from lecture17.tasks import (
    InplaceReversalTask as InplaceReversalTask,
)
from lecture17.tasks import (
    KnownLengthTask as KnownLengthTask,
)
from lecture17.tasks import (
    LookupTask as LookupTask,
)
from lecture17.tasks import (
    ReversalTask as ReversalTask,
)
from lecture17.tasks import (
    SymbolGuesser as SymbolGuesser,
)
from lecture17.tasks import (
    ValueGuesser as ValueGuesser,
)
from lecture17.tasks import (
    classifier_accuracy as classifier_accuracy,
)
from lecture17.tasks import (
    evaluation_set,
    single_thread,
)
from lecture17.tasks import (
    greedy_accuracy as greedy_accuracy,
)
from lecture17.tasks import (
    guessed_chance as guessed_chance,
)
from lecture17.tasks import (
    inplace_reversal_batch as inplace_reversal_batch,
)
from lecture17.tasks import (
    known_length_accuracy as known_length_accuracy,
)
from lecture17.tasks import (
    known_length_batch as known_length_batch,
)
from lecture17.tasks import (
    lookup_batch as lookup_batch,
)
from lecture17.tasks import (
    lookup_symbol_batch as lookup_symbol_batch,
)
from lecture17.tasks import (
    random_symbols as random_symbols,
)
from lecture17.tasks import (
    reversal_batch as reversal_batch,
)
from lecture17.tasks import (
    simulated_chance as simulated_chance,
)
from lecture17.timing import timed
from lecture17.train_settings import TrainSettings  # torch-free, for the demos

OPTIMIZERS = ("adam", "sgd")
DEVICES = ("cpu", "cuda")


# -----------------------------------------------------------------------------
# training


def check_device(device: str) -> None:
    """Refuse an unknown device, naming the allowed ones, and cuda on a machine without a GPU."""
    if device not in DEVICES:
        raise ValueError(f"unknown device {device!r}; expected one of {DEVICES}")
    if device == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("device 'cuda' was asked for but torch sees no GPU; use device: cpu")


def to_device(batch, device: str) -> tuple:
    """A batch (tensors drawn on the CPU) moved to `device`; on cpu, the very same tensors."""
    return tuple(t.to(device) for t in batch)


def make_optimizer(name: str, params, lr: float) -> torch.optim.Optimizer:
    """Adam (PyTorch's defaults, fused kernel) or plain SGD (no momentum)."""
    if name == "adam":
        return torch.optim.Adam(params, lr=lr, fused=True)  # one kernel for all parameters
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr)
    raise ValueError(f"unknown optimizer {name!r}; expected one of {OPTIMIZERS}")


def warmup_lr(lr: float, step: int, warmup: int) -> float:
    """Linear warmup (§7.5): lr * min(1, (step + 1) / warmup), step counted from 0."""
    return lr * min(1.0, (step + 1) / warmup) if warmup > 0 else lr


def check_train_settings(settings: TrainSettings) -> None:
    """Refuse settings train() cannot run, before any model is built."""
    if settings.optimizer not in OPTIMIZERS:
        raise ValueError(f"unknown optimizer {settings.optimizer!r}; expected one of {OPTIMIZERS}")
    if settings.steps <= 0 or settings.batch_size <= 0:
        raise ValueError(
            f"steps and batch_size must be positive, got {settings.steps}, {settings.batch_size}"
        )
    if settings.eval_every is not None and settings.eval_every <= 0:
        raise ValueError(f"eval_every must be positive or None, got {settings.eval_every}")
    if settings.lr is None or not settings.lr >= 0:  # None: a demo sweeping lr did not set it
        raise ValueError(f"lr must be a number >= 0, got {settings.lr}")


@dataclass
class TrainResult:
    """What train() returns. history: one {"step", "lr", "loss"} per step (step = 1..steps,
    the number of updates done); evaluations: {"step", metrics...} at every eval_every steps
    and at the end; ms_per_step: median wall time of one step (forward, backward, optimizer
    step), single-threaded, on cuda until the GPU has finished it — machine-dependent."""

    model: nn.Module
    history: list[dict] = field(default_factory=list)
    evaluations: list[dict] = field(default_factory=list)
    ms_per_step: float = math.nan

    @property
    def final(self) -> dict:
        return self.evaluations[-1]


def train_step(task, model: nn.Module, batch, optimizer: torch.optim.Optimizer) -> torch.Tensor:
    """One training step (§9.1): the task's loss on the batch, backward, the optimizer's step.

    Returns the loss. train() and demo 05.4 (step_time) time exactly this.
    """
    loss = task.loss(model, batch)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return loss


def train(
    make_model: Callable[[], nn.Module],
    task,
    settings: TrainSettings,
    *,
    seed: int,
    device: str = "cpu",
) -> TrainResult:
    """Build a model under torch.manual_seed(seed) and train it on fresh batches of `task`.

    Training batches come from torch.Generator().manual_seed(seed), the test set from
    seed + 10_000 (evaluation_set). The same arguments give the same history on the same machine.
    The model is built and every batch drawn on the CPU, then moved to `device` (cpu or cuda).
    """
    check_device(device)
    check_train_settings(settings)
    with single_thread():
        torch.manual_seed(seed)  # the model's initialisation, on the CPU whatever the device
        model = make_model().to(device)
        opt = make_optimizer(settings.optimizer, model.parameters(), settings.lr)
        data = torch.Generator().manual_seed(seed)
        test = to_device(evaluation_set(task, seed, settings.n_test), device)
        result, seconds = TrainResult(model), []
        for step in range(settings.steps):
            for group in opt.param_groups:
                group["lr"] = warmup_lr(settings.lr, step, settings.warmup)
            batch = to_device(task.sample(data, settings.batch_size), device)
            # the clock starts once the batch is on the device: its copy is not the step
            loss, elapsed = timed(train_step, task, model, batch, opt, device=device)
            seconds.append(elapsed)
            done = step + 1
            result.history.append(
                {"step": done, "lr": opt.param_groups[0]["lr"], "loss": loss.item()}
            )
            every = settings.eval_every
            if done == settings.steps or (every is not None and done % every == 0):
                result.evaluations.append({"step": done, **task.evaluate(model, test)})
        result.ms_per_step = 1e3 * statistics.median(seconds)
    return result
