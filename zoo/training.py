"""Training shared by every recipe: flags, seeds, distribution, callbacks, resumption.

A recipe uses it like this:

```python
parser = argparse.ArgumentParser()
add_training_args(parser, epochs=10, batch_size=32, learning_rate=1e-3)
cfg = TrainingConfig.from_args(parser.parse_args(argv))
set_seed(cfg.seed)
strategy = get_strategy(cfg.distribute)
with strategy.scope():
    model = build_model(...)
    model.compile(...)
history = fit(model, train_ds, val_ds, cfg)
```

Extra callbacks go in `fit(..., callbacks=[...])` and run before the built-in ones, so
one that adds a metric to the epoch logs (the translation recipe's `val_bleu`) can be
the `cfg.monitor` of the checkpoint and of early stopping. `Throughput` is such a
callback: training tokens per second per epoch, tracing and validation excluded.

`fit` adds, under `cfg.run_dir`:

- `backup/`: `keras.callbacks.BackupAndRestore` state, written at every epoch end. A
  run that is killed and started again with the same command resumes at the first
  epoch that had not completed, so at most the current epoch is lost. The backup is
  removed when training finishes.
- `best.keras`: the best model so far (`ModelCheckpoint(save_best_only=True)` on
  `cfg.monitor`); after a resume its "best so far" is read back from the CSV log.
- `log.csv`: one row per epoch (a resumed run appends to it, a fresh run restarts it).
- `tensorboard/`: TensorBoard logs (when the `tensorboard` package is installed;
  TensorFlow 2.21 no longer installs it).
- early stopping on `cfg.monitor` with `patience` and `restore_best_weights=True`.
- with `decay_factor` < 1, learning-rate decay on a plateau: the learning rate is
  multiplied by `decay_factor` after `decay_patience` epochs without a better
  `cfg.monitor` (`keras.callbacks.ReduceLROnPlateau`), and logged as `learning_rate`.
  A resumed run replays the monitor values of `log.csv` from `learning_rate`, so it
  continues with the rate and the count of waiting epochs of the killed run.
- a NaN guard: a non-finite loss stops training with `NonFiniteLossError`, and the
  backup of the last completed epoch is kept.
- with `ema` > 0, weight averaging (Polyak averaging, as in Marian's
  `--exponential-smoothing`): the optimizer, built with `**averaging(cfg)`
  (`use_ema=True`), keeps after every step `a <- ema * a + (1 - ema) * w` of each
  trainable weight. Validation (the loss and any metric an extra callback adds), the
  best checkpoint and early stopping see the averaged weights; training continues
  from the raw ones, and the backup holds both, so a resumed run continues exactly.
  When training ends the model holds the average (or, with early stopping, the
  average of the best epoch). `best.keras` holds the averaged weights and, in its
  optimizer state, the raw weights of the same epoch (`swap_weight_average`).
  `fit_average_to_run` shortens the window of a short run to a fifth of it.
- with `schedule="cosine"` and an optimizer built with
  `scheduled_learning_rate(cfg)`, cosine decay of the learning rate from
  `cfg.learning_rate` to zero at the last step (`CosineToZero`), logged as
  `learning_rate`; `fit` sets the run's length from the training data's cardinality,
  or `fit_schedule_to_run` does when it is unknown. The schedule follows the
  optimizer's step count, which the backup keeps, so a resumed run continues on it.

Distribution uses TensorFlow's own engine: `--distribute mirrored` builds a
`tf.distribute.MirroredStrategy` over all local GPUs (or all logical CPU devices when
there is no GPU); `--distribute multi-worker` builds a
`tf.distribute.MultiWorkerMirroredStrategy` from the `TF_CONFIG` environment variable
(create it at program start, before other TensorFlow work). With several workers,
worker 0 (the chief) writes to `run_dir`, every other worker to
`run_dir/worker-<index>`, so their checkpoints never collide.
"""

import csv
import dataclasses
import importlib.util
import json
import math
import os
import time

import keras
import tensorflow as tf

DISTRIBUTE_CHOICES = ("none", "mirrored", "multi-worker")
SCHEDULE_CHOICES = ("constant", "cosine")


class NonFiniteLossError(RuntimeError):
    """Raised by `fit` when the training loss becomes NaN or infinite."""


@dataclasses.dataclass
class TrainingConfig:
    """Options of `fit` (filled from the flags of `add_training_args`).

    Attributes:
        epochs: number of epochs.
        batch_size: global batch size (split across replicas when distributed).
        learning_rate: optimizer learning rate (read by the recipe's `compile`).
        seed: seed of Python, NumPy, TensorFlow and Keras.
        run_dir: folder for backup, best checkpoint, CSV and TensorBoard logs.
        patience: early-stopping patience in epochs (0 disables early stopping).
        decay_factor: learning-rate factor on a plateau of `monitor` (1 disables it).
        decay_patience: epochs without improvement before the rate is multiplied.
        distribute: "none", "mirrored" or "multi-worker".
        monitor: quantity for the best checkpoint and early stopping.
        mode: "auto", "min" or "max" for `monitor`.
        verbose: Keras progress-bar mode ("auto", 0, 1 or 2).
        tensorboard: whether to write TensorBoard logs.
        ema: momentum of the moving average of the weights that is validated,
            checkpointed and kept (0 disables it; 0.999 averages over about the
            last thousand steps). The model's optimizer must be built with
            `**averaging(cfg)`.
        schedule: "constant" (`learning_rate` throughout, unless decayed on a
            plateau) or "cosine" (from `learning_rate` to zero over the run; the
            optimizer must be built with
            `learning_rate=scheduled_learning_rate(cfg)`).
    """

    epochs: int = 10
    batch_size: int = 32
    learning_rate: float = 1e-3
    seed: int = 1234
    run_dir: str = "runs/default"
    patience: int = 3
    decay_factor: float = 1.0
    decay_patience: int = 1
    distribute: str = "none"
    monitor: str = "val_loss"
    mode: str = "auto"
    verbose: object = "auto"
    tensorboard: bool = True
    ema: float = 0.0
    schedule: str = "constant"

    def __post_init__(self):
        if self.schedule not in SCHEDULE_CHOICES:
            raise ValueError(
                f"`schedule` must be one of {SCHEDULE_CHOICES}. "
                f"Received: schedule={self.schedule!r}"
            )
        if self.schedule != "constant" and self.decay_factor < 1:
            raise ValueError(
                f"`schedule={self.schedule!r}` sets the learning rate of every step; "
                "it cannot be combined with decay on a plateau. Received: "
                f"decay_factor={self.decay_factor!r} (use 1)"
            )
        if self.distribute not in DISTRIBUTE_CHOICES:
            raise ValueError(
                f"`distribute` must be one of {DISTRIBUTE_CHOICES}. "
                f"Received: distribute={self.distribute!r}"
            )
        for name in ("epochs", "batch_size"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(
                    f"`{name}` must be a positive int. Received: {name}={value!r}"
                )
        if not isinstance(self.patience, int) or self.patience < 0:
            raise ValueError(
                f"`patience` must be an int >= 0. Received: patience={self.patience!r}"
            )
        if not isinstance(self.decay_patience, int) or self.decay_patience < 1:
            raise ValueError(
                "`decay_patience` must be an int >= 1. "
                f"Received: decay_patience={self.decay_patience!r}"
            )
        if not 0 < self.decay_factor <= 1:
            raise ValueError(
                "`decay_factor` must be in (0, 1] (1: no decay). "
                f"Received: decay_factor={self.decay_factor!r}"
            )
        if not 0 <= self.ema < 1:
            raise ValueError(
                "`ema` must be in [0, 1) (0: no weight averaging). "
                f"Received: ema={self.ema!r}"
            )
        if not (self.learning_rate > 0 and math.isfinite(self.learning_rate)):
            raise ValueError(
                "`learning_rate` must be a positive number. "
                f"Received: learning_rate={self.learning_rate!r}"
            )

    @classmethod
    def from_args(cls, args, **overrides):
        """Builds a config from an `argparse.Namespace` made by `add_training_args`.

        Fields absent from `args` keep their defaults; `overrides` win over both.
        """
        values = {}
        for field in dataclasses.fields(cls):
            if hasattr(args, field.name):
                values[field.name] = getattr(args, field.name)
        values.update(overrides)
        return cls(**values)


def add_training_args(
    parser,
    epochs=10,
    batch_size=32,
    learning_rate=1e-3,
    run_dir=None,
    decay_factor=TrainingConfig.decay_factor,
    ema=TrainingConfig.ema,
    schedule=None,
):
    """Adds the common training flags to an `argparse.ArgumentParser`.

    Flags: `--epochs --batch-size --learning-rate --seed --run-dir --patience
    --decay-factor --decay-patience --ema --distribute none|mirrored|multi-worker`,
    and `--schedule constant|cosine` when `schedule` is given (for recipes that
    build their optimizer with `scheduled_learning_rate(cfg)`). The defaults are
    the arguments.

    Returns:
        The argument group holding the flags.
    """
    group = parser.add_argument_group("training")
    group.add_argument("--epochs", type=int, default=epochs, help="training epochs")
    group.add_argument(
        "--batch-size", type=int, default=batch_size, help="global batch size"
    )
    group.add_argument(
        "--learning-rate", type=float, default=learning_rate, help="learning rate"
    )
    group.add_argument("--seed", type=int, default=1234, help="random seed")
    group.add_argument(
        "--run-dir",
        default=run_dir or TrainingConfig.run_dir,
        help="checkpoints, backup (resumption) and logs go here",
    )
    group.add_argument(
        "--patience",
        type=int,
        default=TrainingConfig.patience,
        help="early-stopping patience in epochs (0 disables it)",
    )
    group.add_argument(
        "--decay-factor",
        type=float,
        default=decay_factor,
        help="multiply the learning rate by this after --decay-patience epochs "
        "without a better validation metric (1 disables it)",
    )
    group.add_argument(
        "--decay-patience",
        type=int,
        default=TrainingConfig.decay_patience,
        help="epochs without improvement before the learning rate decays",
    )
    group.add_argument(
        "--ema",
        type=float,
        default=ema,
        metavar="MOMENTUM",
        help="validate, checkpoint and keep a moving average of the weights with "
        "this momentum, e.g. 0.999 (0 disables it)",
    )
    if schedule is not None:
        group.add_argument(
            "--schedule",
            choices=SCHEDULE_CHOICES,
            default=schedule,
            help="constant learning rate (with optional decay on a plateau) or "
            "cosine decay from --learning-rate to zero over the run",
        )
    group.add_argument(
        "--distribute",
        choices=DISTRIBUTE_CHOICES,
        default="none",
        help="none, mirrored (local devices) or multi-worker (needs TF_CONFIG)",
    )
    return group


def add_output_args(parser, name):
    """Adds the recipes' output flags: `--export-dir --report-dir --no-export`.

    `--export-dir` (default `saved_models`) is the TF Serving base folder,
    `--report-dir` (default `reports/<name>`) takes metrics, heat maps and HTML
    reports, `--no-export` skips the SavedModel export.

    Returns:
        The argument group holding the flags.
    """
    group = parser.add_argument_group("output")
    group.add_argument(
        "--export-dir", default="saved_models", help="exports go to DIR/NAME/VERSION/"
    )
    group.add_argument(
        "--report-dir", default=f"reports/{name}", help="metrics, plots, reports"
    )
    group.add_argument("--no-export", action="store_true", help="skip the export")
    return group


class Throughput(keras.callbacks.Callback):
    """Training tokens per second, tracing and validation excluded.

    Each epoch is timed from the end of its first batch (which includes tracing and
    pipeline start-up) to the end of its last batch (validation excluded), and
    credited with the matching share of the epoch's tokens.

    Args:
        tokens_per_epoch: the tokens one epoch trains on (count only real tokens,
            not padding, for a rate that compares models padded differently).

    Attributes:
        rates: tokens per second of each completed epoch (epochs of one batch
            have no rate).
    """

    def __init__(self, tokens_per_epoch):
        super().__init__()
        self.tokens_per_epoch = tokens_per_epoch
        self.rates = []

    def on_epoch_begin(self, epoch, logs=None):
        self._steps, self._first, self._last = 0, None, None

    def on_train_batch_end(self, batch, logs=None):
        self._steps += 1
        self._last = time.perf_counter()
        if self._first is None:
            self._first = self._last

    def on_epoch_end(self, epoch, logs=None):
        if self._first is None or self._steps < 2:
            return
        seconds = max(self._last - self._first, 1e-9)
        share = (self._steps - 1) / self._steps
        self.rates.append(self.tokens_per_epoch * share / seconds)


def set_seed(seed):
    """Seeds Python's `random`, NumPy, TensorFlow and Keras (`keras.utils.set_random_seed`)."""
    if not isinstance(seed, int):
        raise ValueError(f"`seed` must be an int. Received: seed={seed!r}")
    keras.utils.set_random_seed(seed)


def parse_tf_config(value=None):
    """Parses and checks `TF_CONFIG` (from the environment when `value` is None).

    Returns:
        The parsed dict: `{"cluster": {"worker": [...], ...}, "task": {"type": ...,
        "index": ...}}`.

    Raises:
        ValueError: when it is missing or malformed, saying what is wrong.
    """
    if value is None:
        value = os.environ.get("TF_CONFIG")
    example = (
        '{"cluster": {"worker": ["host1:12345", "host2:12345"]}, '
        '"task": {"type": "worker", "index": 0}}'
    )
    if not value:
        raise ValueError(
            "--distribute multi-worker needs the TF_CONFIG environment variable, e.g. "
            f"TF_CONFIG='{example}'. Received: TF_CONFIG={value!r}"
        )
    try:
        config = json.loads(value)
    except json.JSONDecodeError as e:
        raise ValueError(
            f"TF_CONFIG is not valid JSON ({e}). Received: TF_CONFIG={value!r}"
        ) from None
    cluster = config.get("cluster") if isinstance(config, dict) else None
    task = config.get("task") if isinstance(config, dict) else None
    if not isinstance(cluster, dict) or not cluster:
        raise ValueError(
            f"TF_CONFIG needs a non-empty 'cluster' dict. Received: TF_CONFIG={value!r}"
        )
    for role, addresses in cluster.items():
        if not isinstance(addresses, list) or not all(
            isinstance(a, str) and ":" in a for a in addresses
        ):
            raise ValueError(
                f"TF_CONFIG cluster[{role!r}] must be a list of 'host:port' strings. "
                f"Received: {addresses!r}"
            )
    if not isinstance(task, dict) or "type" not in task or "index" not in task:
        raise ValueError(
            "TF_CONFIG needs 'task': {'type': ..., 'index': ...}. "
            f"Received: TF_CONFIG={value!r}"
        )
    role, index = task["type"], task["index"]
    if role not in cluster or not isinstance(index, int):
        raise ValueError(
            f"TF_CONFIG task {task!r} does not name a role of the cluster "
            f"{sorted(cluster)!r} with an int index."
        )
    if not 0 <= index < len(cluster[role]):
        raise ValueError(
            f"TF_CONFIG task index {index} is out of range for "
            f"{len(cluster[role])} {role!r} addresses."
        )
    return config


def get_strategy(distribute="none"):
    """Returns the `tf.distribute.Strategy` named by `distribute`.

    Args:
        distribute: "none" (the default strategy: one device), "mirrored" (all local
            GPUs, or all logical CPU devices when there is no GPU) or "multi-worker"
            (`MultiWorkerMirroredStrategy` from `TF_CONFIG`; create it before any
            other TensorFlow work in the process).

    Raises:
        ValueError: for an unknown name, or a missing/invalid `TF_CONFIG`.
    """
    if distribute == "none":
        return tf.distribute.get_strategy()
    if distribute == "mirrored":
        gpus = tf.config.list_logical_devices("GPU")
        devices = gpus or tf.config.list_logical_devices("CPU")
        return tf.distribute.MirroredStrategy(devices=[d.name for d in devices])
    if distribute == "multi-worker":
        parse_tf_config()
        return tf.distribute.MultiWorkerMirroredStrategy()
    raise ValueError(
        f"`distribute` must be one of {DISTRIBUTE_CHOICES}. "
        f"Received: distribute={distribute!r}"
    )


def _is_multi_worker(strategy):
    return (
        isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy)
        and strategy.extended._in_multi_worker_mode()
    )


def worker_run_dir(run_dir, strategy=None):
    """The folder this process writes to: `run_dir` on the chief (or without
    multi-worker training), `run_dir/worker-<index>` on the other workers."""
    strategy = strategy or tf.distribute.get_strategy()
    if not _is_multi_worker(strategy):
        return run_dir
    resolver = strategy.cluster_resolver
    if resolver.task_type in ("chief", None) or (
        resolver.task_type == "worker"
        and resolver.task_id == 0
        and "chief" not in resolver.cluster_spec().as_dict()
    ):
        return run_dir
    return os.path.join(run_dir, f"{resolver.task_type}-{resolver.task_id}")


class _NaNGuard(keras.callbacks.Callback):
    """Raises `NonFiniteLossError` on a NaN/inf loss, keeping the backup."""

    def __init__(self, backup_dir):
        super().__init__()
        self.backup_dir = backup_dir
        self.epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and not math.isfinite(float(loss)):
            raise NonFiniteLossError(
                f"The training loss became {float(loss)} at epoch {self.epoch + 1}, "
                f"batch {batch + 1}. Lower the learning rate or check the inputs; the "
                f"weights of the last completed epoch are kept in {self.backup_dir} "
                "and the same command resumes from there."
            )


def _monitor_history(csv_path, monitor):
    """The finite `monitor` values of an existing CSV log, epoch by epoch."""
    if not os.path.exists(csv_path):
        return []
    values = []
    with open(csv_path, newline="") as f:
        for row in csv.DictReader(f):
            try:
                values.append(float(row[monitor]))
            except (KeyError, TypeError, ValueError):
                continue
    return [v for v in values if math.isfinite(v)]


def _maximize(monitor, mode):
    return mode == "max" or (mode == "auto" and "acc" in monitor)


def _best_so_far(csv_path, monitor, mode):
    """Best `monitor` value in an existing CSV log (for resumed runs), or None."""
    values = _monitor_history(csv_path, monitor)
    if not values:
        return None
    return max(values) if _maximize(monitor, mode) else min(values)


class _PlateauDecay(keras.callbacks.ReduceLROnPlateau):
    """`ReduceLROnPlateau` that starts from `learning_rate` and, on a resume, replays
    the monitor values of the epochs already done (`history`), so the rate, the best
    value and the waiting count are those of the interrupted run."""

    def __init__(self, monitor, mode, factor, patience, learning_rate, history=()):
        super().__init__(
            monitor=monitor,
            mode="max" if _maximize(monitor, mode) else "min",
            factor=factor,
            patience=patience,
            min_lr=0.0,
            verbose=1,
        )
        self.learning_rate = learning_rate
        self.history = list(history)

    def on_train_begin(self, logs=None):
        super().on_train_begin(logs)
        if isinstance(
            self.model.optimizer._learning_rate,
            keras.optimizers.schedules.LearningRateSchedule,
        ):
            raise ValueError(
                "`decay_factor` < 1 needs an optimizer with a fixed learning rate; "
                "this one follows a `LearningRateSchedule`."
            )
        self.model.optimizer.learning_rate = self.learning_rate
        verbose, self.verbose = self.verbose, 0
        for epoch, value in enumerate(self.history):
            super().on_epoch_end(epoch, {self.monitor: value})
        self.verbose = verbose


def averaging(cfg):
    """The optimizer arguments that make it keep the weight average of `cfg.ema`.

    `{"use_ema": True, "ema_momentum": cfg.ema}`, or `{}` when `cfg.ema` is 0: pass
    them to any Keras optimizer, e.g. `keras.optimizers.Adam(1e-3, **averaging(cfg))`.
    """
    return {"use_ema": True, "ema_momentum": cfg.ema} if cfg.ema > 0 else {}


def fit_average_to_run(model, steps):
    """Caps the weight average's window at a fifth of a run of `steps` steps.

    The optimizer's momentum becomes `min(momentum, 1 - 5 / steps)`, so the first
    steps' weights keep a share of at most about e^-5 (0.7%) of the average at the end:
    a momentum of 0.999 (a thousand-step window) is kept for runs of 5,000 steps or
    more, and a short run (a pipeline check, a small sample) gets a shorter window
    instead of an average that is still mostly its first weights. Call it before `fit`
    (the momentum is read when the training step is traced). No-op without averaging.

    Returns:
        The momentum in use.
    """
    optimizer = _averaging_optimizer(model.optimizer)
    if not getattr(optimizer, "use_ema", False):
        return None
    if steps > 0:
        optimizer.ema_momentum = min(optimizer.ema_momentum, max(0.0, 1 - 5 / steps))
    return optimizer.ema_momentum


@keras.saving.register_keras_serializable(package="zoo")
class CosineToZero(keras.optimizers.schedules.LearningRateSchedule):
    """Cosine decay from `learning_rate` to zero over a run of `total_steps` steps.

    `learning_rate * (1 + cos(pi * min(step / total_steps, 1))) / 2` (Loshchilov and
    Hutter's SGDR without restarts). `total_steps` may be left unset when the
    optimizer is built and set before training (`fit_schedule_to_run`, or `fit`
    itself when the training data's length is known), because the number of batches
    of a length-bucketed dataset is only known after a pass over it.
    """

    def __init__(self, learning_rate, total_steps=None):
        if not (learning_rate > 0 and math.isfinite(learning_rate)):
            raise ValueError(
                "`learning_rate` must be a positive number. "
                f"Received: learning_rate={learning_rate!r}"
            )
        self.learning_rate = float(learning_rate)
        self.total_steps = None
        if total_steps is not None:
            self.set_total_steps(total_steps)

    def set_total_steps(self, total_steps):
        if not isinstance(total_steps, int) or total_steps < 1:
            raise ValueError(
                "`total_steps` must be a positive int. "
                f"Received: total_steps={total_steps!r}"
            )
        self.total_steps = total_steps

    def __call__(self, step):
        if self.total_steps is None:
            raise ValueError(
                "The cosine schedule's length is not set: call "
                "`zoo.training.fit_schedule_to_run(model, steps)` before training."
            )
        progress = keras.ops.minimum(
            keras.ops.cast(step, "float32") / float(self.total_steps), 1.0
        )
        return self.learning_rate * 0.5 * (1.0 + keras.ops.cos(math.pi * progress))

    def get_config(self):
        return {"learning_rate": self.learning_rate, "total_steps": self.total_steps}


def scheduled_learning_rate(cfg):
    """The optimizer's `learning_rate` for `cfg`: `cfg.learning_rate` itself, or with
    `cfg.schedule == "cosine"` a `CosineToZero` from it (its length set later by
    `fit_schedule_to_run` or by `fit`)."""
    if cfg.schedule == "cosine":
        return CosineToZero(cfg.learning_rate)
    return cfg.learning_rate


def _schedule(model):
    rate = getattr(_averaging_optimizer(model.optimizer), "_learning_rate", None)
    return rate if isinstance(rate, CosineToZero) else None


def fit_schedule_to_run(model, steps):
    """Sets the length of the optimizer's `CosineToZero` to a run of `steps` steps.

    Call it before `fit` when the training data's length is unknown to TensorFlow
    (e.g. after `bucket_by_length`); `fit` sets it itself from the dataset's
    cardinality otherwise. No-op for a constant learning rate.

    Returns:
        The schedule, or None.
    """
    schedule = _schedule(model)
    if schedule is not None:
        schedule.set_total_steps(int(steps))
    return schedule


def _fit_schedule(model, train_ds, cfg, fit_kwargs):
    """Gives an unset `CosineToZero` the run's length when TensorFlow knows it."""
    schedule = _schedule(model)
    if schedule is None or schedule.total_steps is not None:
        return schedule
    per_epoch = fit_kwargs.get("steps_per_epoch")
    if per_epoch is None:
        cardinality = int(train_ds.cardinality())
        per_epoch = cardinality if cardinality > 0 else None
    if per_epoch is None:
        raise ValueError(
            "The cosine schedule needs the run's length and the training data's "
            "number of batches is unknown: call "
            "`zoo.training.fit_schedule_to_run(model, batches_per_epoch * epochs)` "
            "before `fit`, or pass `steps_per_epoch`."
        )
    schedule.set_total_steps(per_epoch * cfg.epochs)
    return schedule


class _LogLearningRate(keras.callbacks.Callback):
    """Writes a schedule's learning rate at the epoch's end into the epoch logs."""

    def __init__(self, schedule):
        super().__init__()
        self.schedule = schedule

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            optimizer = _averaging_optimizer(self.model.optimizer)
            rate = self.schedule(optimizer.iterations)
            logs["learning_rate"] = float(keras.ops.convert_to_numpy(rate))


def _averages_weights(model, cfg):
    """Whether the model's optimizer keeps a weight average (required by `cfg.ema`)."""
    optimizer = _averaging_optimizer(model.optimizer)
    keeps = bool(getattr(optimizer, "use_ema", False))
    if cfg.ema > 0 and not keeps:
        raise ValueError(
            f"`ema={cfg.ema}` needs an optimizer that keeps the weight average: "
            "build it with `**zoo.training.averaging(cfg)` (use_ema=True). Received: "
            f"{type(optimizer).__name__}(use_ema=False)"
        )
    return keeps


def swap_weight_average(model):
    """Exchanges a model's weights with its optimizer's moving average of them.

    A `best.keras` written by an `ema` run holds the average in the model and the
    raw weights of the same epoch in the optimizer: after loading it, one call puts
    the raw weights in the model (to measure what the averaging gives).

    Raises:
        ValueError: when the model's optimizer keeps no average (`use_ema=False`).
    """
    optimizer = _averaging_optimizer(getattr(model, "optimizer", None))
    if not getattr(optimizer, "use_ema", False) or not optimizer.built:
        raise ValueError(
            "The model's optimizer keeps no weight average (it was not built with "
            f"use_ema=True). Received: optimizer={type(optimizer).__name__}"
        )
    _WeightAverage(model)._swap()


def _averaging_optimizer(optimizer):
    """The optimizer that holds the weight average (inside a loss-scale wrapper)."""
    return getattr(optimizer, "inner_optimizer", optimizer)


class _WeightAverage:
    """Swaps the optimizer's moving average of the weights with the weights.

    `put_average()` puts the average in the model (and the raw weights in the
    average's slots), `put_raw()` swaps them back; each does nothing when its side is
    already in place.
    """

    def __init__(self, model):
        self.optimizer = _averaging_optimizer(model.optimizer)
        self.average_in_model = False

    def _swap(self):
        pairs = zip(
            self.optimizer._trainable_variables,
            self.optimizer._model_variables_moving_average,
            strict=True,
        )
        for variable, average in pairs:
            if average is None:
                continue
            raw = keras.ops.convert_to_numpy(variable)
            variable.assign(average)
            average.assign(raw)
        self.average_in_model = not self.average_in_model

    def put_average(self):
        if not self.average_in_model:
            self._swap()

    def put_raw(self):
        if self.average_in_model:
            self._swap()


class _AverageIn(keras.callbacks.Callback):
    """First callback: validation and the epoch-end callbacks after it see the
    averaged weights."""

    def __init__(self, weights):
        super().__init__()
        self.weights = weights

    def on_test_begin(self, logs=None):
        self.weights.put_average()

    def on_epoch_end(self, epoch, logs=None):
        self.weights.put_average()


class _AverageOut(keras.callbacks.Callback):
    """Puts the raw weights back before the backup is written and training goes on."""

    def __init__(self, weights):
        super().__init__()
        self.weights = weights

    def on_epoch_end(self, epoch, logs=None):
        self.weights.put_raw()


def _build_for_multi_worker(model, strategy, train_ds):
    """Works around Keras 3 failing to start `fit` under MultiWorkerMirroredStrategy.

    Keras' `_maybe_symbolic_build` averages the first distributed batch with
    `strategy.reduce`, which MultiWorkerMirroredStrategy rejects for nested batches
    (keras-team/keras#20585). The model is built here from one local batch, the same
    thing `_maybe_symbolic_build` does afterwards, and that step is skipped.
    """
    if getattr(model, "_zoo_multi_worker_built", False):
        return
    batch = next(iter(train_ds))
    with strategy.scope():
        model._symbolic_build(data_batch=batch)
    model._maybe_symbolic_build = lambda iterator=None, data_batch=None: None
    model._zoo_multi_worker_built = True
    _patch_multi_worker_reduce()


def _patch_multi_worker_reduce():
    """Works around Keras 3 reducing per-replica scalar logs over `axis=0`.

    Under MultiWorkerMirroredStrategy Keras' `reduce_per_replica` calls
    `strategy.reduce("MEAN", v, axis=0)` on scalar metric values, which fails
    ("Invalid reduction dimension 0 for input with 0 dimensions"). Scalars are averaged
    over replicas instead (`axis=None`); every other case is left to Keras.
    """
    from keras.src.backend.tensorflow import trainer as tf_trainer

    original = tf_trainer.reduce_per_replica
    if getattr(original, "_zoo_patched", False):
        return

    def reduce_per_replica(values, strategy, reduction):
        if reduction in (
            "auto",
            "mean",
        ) and tf_trainer._collective_all_reduce_multi_worker(strategy):

            def _reduce(v):
                if not tf_trainer._is_per_replica_instance(v):
                    return v
                if v.values[0].shape.rank == 0:
                    return strategy.reduce("MEAN", v, axis=None)
                return strategy.reduce("MEAN", v, axis=0)

            return tf_trainer.tree.map_structure(_reduce, values)
        return original(values, strategy, reduction)

    reduce_per_replica._zoo_patched = True
    tf_trainer.reduce_per_replica = reduce_per_replica


def fit(model, train_ds, val_ds, cfg, callbacks=None, **fit_kwargs):
    """Fits a compiled model with resumption, checkpoints, logs and early stopping.

    Args:
        model: a compiled, built `keras.Model` (built so a backup can be restored
            into it; Functional models always are).
        train_ds: training `tf.data.Dataset` of batches (shuffled by the caller).
        val_ds: validation dataset, or None (then `cfg.monitor` falls back to
            `"loss"`).
        cfg: a `TrainingConfig`.
        callbacks: extra Keras callbacks, run before the built-in ones.
        **fit_kwargs: passed to `model.fit` (e.g. `steps_per_epoch`).

    Returns:
        The `keras.callbacks.History` of this run (epochs completed before a resume
        are in `log.csv`, not in the history).

    Raises:
        NonFiniteLossError: when the loss becomes NaN or infinite.
    """
    strategy = (
        model.distribute_strategy if hasattr(model, "distribute_strategy") else None
    )
    run_dir = worker_run_dir(cfg.run_dir, strategy)
    os.makedirs(run_dir, exist_ok=True)
    monitor = cfg.monitor if val_ds is not None else cfg.monitor.removeprefix("val_")
    backup_dir = os.path.join(run_dir, "backup")
    csv_path = os.path.join(run_dir, "log.csv")

    if strategy is not None and _is_multi_worker(strategy):
        options = tf.data.Options()
        options.experimental_distribute.auto_shard_policy = (
            tf.data.experimental.AutoShardPolicy.DATA
        )
        train_ds = train_ds.with_options(options)
        if val_ds is not None:
            val_ds = val_ds.with_options(options)
        _build_for_multi_worker(model, strategy, train_ds)

    checkpoint = keras.callbacks.ModelCheckpoint(
        os.path.join(run_dir, "best.keras"),
        monitor=monitor,
        mode=cfg.mode,
        save_best_only=True,
    )
    # A backup means this run resumes a killed one: continue its CSV log and its
    # "best so far". Otherwise it is a fresh run: start both afresh.
    resuming = os.path.exists(os.path.join(backup_dir, "training_metadata.json"))
    best = _best_so_far(csv_path, monitor, cfg.mode) if resuming else None
    if best is not None:
        checkpoint.best = best
    # With weight averaging the average is put in the model first (for validation
    # and the epoch-end callbacks up to the early stopping) and the raw weights are
    # put back before the backup.
    weights = _WeightAverage(model) if _averages_weights(model, cfg) else None
    schedule = _fit_schedule(model, train_ds, cfg, fit_kwargs)
    all_callbacks = [_AverageIn(weights)] if weights else []
    all_callbacks += list(callbacks or [])
    all_callbacks.append(checkpoint)
    if cfg.patience > 0:
        all_callbacks.append(
            keras.callbacks.EarlyStopping(
                monitor=monitor,
                mode=cfg.mode,
                patience=cfg.patience,
                restore_best_weights=True,
            )
        )
    if weights:
        all_callbacks.append(_AverageOut(weights))
    all_callbacks += [
        keras.callbacks.BackupAndRestore(backup_dir, double_checkpoint=True),
        _NaNGuard(backup_dir),
    ]
    if cfg.decay_factor < 1:
        # After the backup's restore (train begin), before the CSV log (epoch end).
        # The starting rate is the compiled one, read before a backup is restored.
        all_callbacks.append(
            _PlateauDecay(
                monitor,
                cfg.mode,
                cfg.decay_factor,
                cfg.decay_patience,
                float(keras.ops.convert_to_numpy(model.optimizer.learning_rate)),
                _monitor_history(csv_path, monitor) if resuming else (),
            )
        )
    if schedule is not None:
        all_callbacks.append(_LogLearningRate(schedule))
    all_callbacks.append(keras.callbacks.CSVLogger(csv_path, append=resuming))
    if cfg.tensorboard and importlib.util.find_spec("tensorboard") is not None:
        all_callbacks.append(
            keras.callbacks.TensorBoard(os.path.join(run_dir, "tensorboard"))
        )
    fit_kwargs.setdefault("verbose", cfg.verbose)
    return model.fit(
        train_ds,
        validation_data=val_ds,
        epochs=cfg.epochs,
        callbacks=all_callbacks,
        **fit_kwargs,
    )


def bucket_by_length(
    ds,
    length_fn,
    boundaries,
    batch_size,
    padded_shapes=None,
    padding_values=None,
    drop_remainder=False,
):
    """Batches examples of similar length together (less compute spent on padding).

    A thin wrapper over `tf.data.Dataset.bucket_by_sequence_length` with one batch
    size for every bucket, with tf.data's autotuning off for the pipeline
    (`Options.autotune.enabled = False`; `prefetch(tf.data.AUTOTUNE)` downstream then
    uses tf.data's fixed default buffer). With autotuning on, a root iterator owns a
    background thread (the autotuner's); on a busy 2-core CPU, deleting an iterator
    at an epoch's end (which Keras does when the next epoch or validation starts)
    waited for that thread for 20-80 s in some epochs. These pipelines are cached
    and have no parallel maps, so there is nothing for it to tune.

    Args:
        ds: unbatched `tf.data.Dataset`.
        length_fn: function of one element returning its length (scalar int32).
        boundaries: increasing list of ints; bucket i holds lengths in
            `[boundaries[i-1], boundaries[i])`.
        batch_size: examples per batch.
        padded_shapes: optional padded shapes (default: pad every dimension to the
            longest element of the batch).
        padding_values: optional padding values (default 0 / "").
        drop_remainder: drop the last smaller batch of each bucket.

    Returns:
        A batched `tf.data.Dataset`.
    """
    boundaries = list(boundaries)
    if any(b <= a for a, b in zip(boundaries, boundaries[1:], strict=False)) or any(
        not isinstance(b, int) or b < 1 for b in boundaries
    ):
        raise ValueError(
            "`boundaries` must be strictly increasing positive ints. "
            f"Received: boundaries={boundaries!r}"
        )
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(
            f"`batch_size` must be a positive int. Received: batch_size={batch_size!r}"
        )
    options = tf.data.Options()
    options.autotune.enabled = False
    return ds.bucket_by_sequence_length(
        element_length_func=length_fn,
        bucket_boundaries=boundaries,
        bucket_batch_sizes=[batch_size] * (len(boundaries) + 1),
        padded_shapes=padded_shapes,
        padding_values=padding_values,
        drop_remainder=drop_remainder,
    ).with_options(options)


def validate_more_often(train_ds, epochs, evals_per_epoch):
    """Validation `evals_per_epoch` times per pass over `train_ds` in `Model.fit`.

    Keras validates (and callbacks such as `EarlyStopping(restore_best_weights=True)`
    or checkpoints choose weights) once per Keras epoch. On a large training set one
    pass can already overfit; this cuts each pass into `evals_per_epoch` Keras epochs
    of equal step counts, over the same batches in the same order.

    Args:
        train_ds: a finite `tf.data.Dataset` of training batches (it is iterated once
            here to count its batches).
        epochs: passes over the data.
        evals_per_epoch: validations per pass (1 returns the inputs unchanged).

    Returns:
        `(dataset, fit_kwargs)`: pass both to `fit` (`fit_kwargs` holds `epochs` and,
        when cut, `steps_per_epoch`).
    """
    for name, value in (("epochs", epochs), ("evals_per_epoch", evals_per_epoch)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"`{name}` must be a positive int. Received: {value!r}")
    if evals_per_epoch == 1:
        return train_ds, {"epochs": epochs}
    batches = sum(1 for _ in train_ds)
    if batches == 0:
        raise ValueError("The training data set holds no batch.")
    return train_ds.repeat(), {
        "epochs": epochs * evals_per_epoch,
        "steps_per_epoch": -(-batches // evals_per_epoch),
    }
