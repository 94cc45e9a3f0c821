"""TrainSettings: how training.train() trains, the `train:` block of a training demo's config.

It lives here, apart from lecture17.training, so that a demo module can annotate its argument
(`train: TrainSettings`) without importing torch (docs/ARCHITECTURE.md: a numpy-only job must not
pay for `import torch`); lecture17.training re-exports it as training.TrainSettings. The job
runner (lecture17.pipeline.job) reads the annotation: it checks the block's keys and types
when the workflow is parsed and passes the demo a TrainSettings.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class TrainSettings:
    """steps: optimizer updates, one fresh batch each; lr: the learning rate, required (null in
    the config of a demo that sweeps it, 02.3 and 04.3, which sets it per run with
    dataclasses.replace, so a forgotten lr fails when the workflow is parsed); optimizer:
    adam or sgd (training.make_optimizer); warmup: steps of linear warmup (0: none, §7.5);
    batch_size: the samples of one step; eval_every: evaluate every so many steps (None: at
    the end only); n_test: the size of the fixed test set (training.evaluation_set).
    """

    steps: int
    lr: float | None
    optimizer: str = "adam"
    warmup: int = 0
    batch_size: int = 64
    eval_every: int | None = None
    n_test: int = 500
