"""The callbacks `fit` adds (and `Throughput`, which recipes add themselves).

Keras' own callbacks serve where they do the job (`CSVLogger`, `TensorBoard`, the
progress output); each one here is what Keras lacks, or a Keras callback whose state
must survive a resumed run:

- `ResumableEarlyStopping`: `keras.callbacks.EarlyStopping(restore_best_weights=True)`
  whose best value, best epoch, best weights and waiting count survive a resume
  (Keras' start afresh, so a resumed run would stop later and restore other weights).
- `PlateauDecay`: `keras.callbacks.ReduceLROnPlateau`, likewise resumable (the rate
  and the waiting count of the killed run).
- `NaNGuard`: `keras.callbacks.TerminateOnNaN(raise_error=True)` raises a bare
  `RuntimeError`; this one raises `NonFiniteLossError`, one line that says which
  epoch's weights are kept and what to do.
- `TimedSnapshots`: `keras.callbacks.ModelCheckpoint(save_freq=N)` counts batches;
  this one saves at minutes of training (the averaged weights with `ema`), keeps the
  clock across a resume and ends training at the time limit.
- `ElapsedTime` (seconds of training, continued by a resume), `TrainingCurve` (the
  log drawn as a PNG) and `Throughput` (tokens per second): Keras has none.
"""

import csv
import json
import math
import os
import re
import sys
import time

import keras

from zoo.errors import ZooError
from zoo.io import atomic_path, atomic_write
from zoo.training.checkpoints import numbered_files, read_weights


class NonFiniteLossError(ZooError, RuntimeError):
    """Raised by `fit` when the training loss becomes NaN or infinite (one line
    saying what to do, as every `ZooError`)."""


class Throughput(keras.callbacks.Callback):
    """Training tokens per second, tracing and validation excluded.

    Each epoch is timed from the end of its first batch (which includes tracing and
    pipeline start-up) to the end of its last batch (validation excluded), and
    credited with the matching share of the epoch's tokens.

    Args:
        tokens_per_epoch: the tokens one epoch trains on (count only real tokens,
            not padding, for a rate that compares models padded differently).
        steps_per_epoch: the batches of one epoch, for data whose length Keras does
            not know (e.g. length-bucketed): an epoch that ends with fewer steps
            (cut short by `stop_training`) then has no rate. Keras' own count of
            the epoch's steps, where it has one, comes first.

    Attributes:
        rates: tokens per second of each completed epoch (epochs of one batch,
            and epochs cut short by `stop_training`, have no rate).
    """

    def __init__(self, tokens_per_epoch, steps_per_epoch=None):
        super().__init__()
        self.tokens_per_epoch = tokens_per_epoch
        self.steps_per_epoch = steps_per_epoch
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
        planned = (self.params or {}).get("steps") or self.steps_per_epoch
        if planned and self._steps < planned:  # stopped mid-epoch
            return
        seconds = max(self._last - self._first, 1e-9)
        share = (self._steps - 1) / self._steps
        self.rates.append(self.tokens_per_epoch * share / seconds)


class NaNGuard(keras.callbacks.Callback):
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
            raise NonFiniteLossError(self.message(float(loss), batch))

    def message(self, loss, batch):
        """What happened and what to do. Resuming repeats the same steps exactly, so
        the same command would diverge again: the advice is a new run."""
        where = f"The training loss became {loss} at epoch {self.epoch + 1}, batch "
        advice = (
            "run again with a lower --learning-rate, or check the data for NaN, "
            "infinite or huge values (e.g. in --embeddings)"
        )
        if self.epoch == 0:
            return (
                f"{where}{batch + 1}, before any epoch completed (nothing is kept to "
                f"resume from): {advice}."
            )
        return (
            f"{where}{batch + 1}. The weights after epoch {self.epoch} are kept in "
            f"{self.backup_dir}, but the same command would resume them and diverge "
            f"again: {advice}, with --resume never (or another --run-dir) to start "
            "afresh."
        )


def monitor_values(csv_path, monitor, finite=False):
    """The `monitor` value of every epoch of an existing CSV log, in order: a float
    (NaN and infinities kept, as Keras compared them) or None where the epoch logged
    none; with `finite`, only the finite values."""
    values = []
    if os.path.exists(csv_path):
        with open(csv_path, newline="") as f:
            for row in csv.DictReader(f):
                try:
                    values.append(float(row[monitor]))
                except (KeyError, TypeError, ValueError):
                    values.append(None)
    if finite:
        return [v for v in values if v is not None and math.isfinite(v)]
    return values


class ResumableEarlyStopping(keras.callbacks.EarlyStopping):
    """`EarlyStopping(restore_best_weights=True)` whose state survives a resume.

    At each improvement the best weights are also written to
    `folder/best-<epoch>.npz` (atomically; the previous best's file is kept until
    the next improvement, so the file of the best epoch of the last backup is there
    after a kill between the two). A resumed run replays the monitor values of the
    epochs already done (`history`, from the CSV log) through Keras' own logic, so
    its best value, best epoch and waiting count are those of the interrupted run,
    and loads the best epoch's weights: it stops at the same epoch and restores the
    same weights as a run that was not interrupted.

    Args:
        monitor, mode, patience: as for `keras.callbacks.EarlyStopping`.
        folder: where the best weights are kept (the run's backup folder).
        history: the monitor values of the completed epochs (`monitor_values`).
    """

    PATTERN = re.compile(r"^best-(\d+)\.npz$")

    def __init__(self, monitor, mode, patience, folder, history=()):
        super().__init__(
            monitor=monitor, mode=mode, patience=patience, restore_best_weights=True
        )
        self.folder = folder
        self.history = list(history)

    def on_train_begin(self, logs=None):
        super().on_train_begin(logs)
        if not self.history:
            return
        self.restore_best_weights = False  # replay the values, not the weights
        try:
            for epoch, value in enumerate(self.history):
                if value is not None:
                    super().on_epoch_end(epoch, {self.monitor: value})
        finally:
            self.restore_best_weights = True
        self.model.stop_training = False
        self.stopped_epoch = 0
        self.best_weights = None  # the best epoch's weights, from its file
        path = numbered_files(self.folder, self.PATTERN).get(self.best_epoch)
        if self.best is None or path is None:
            return
        run_dir = os.path.dirname(os.path.abspath(self.folder))
        advice = f"pass --resume never to start afresh in {run_dir}"
        weights = read_weights(path, advice)
        if [w.shape for w in weights] == [w.shape for w in self.model.get_weights()]:
            self.best_weights = weights

    def on_epoch_end(self, epoch, logs=None):
        before = (self.best_epoch, self.best)
        super().on_epoch_end(epoch, logs)
        improved = self.best_epoch == epoch and (self.best_epoch, self.best) != before
        if not improved or self.best_weights is None:
            return
        import numpy as np

        os.makedirs(self.folder, exist_ok=True)
        previous = numbered_files(self.folder, self.PATTERN)
        with atomic_path(os.path.join(self.folder, f"best-{epoch:05d}.npz")) as tmp:
            np.savez(tmp, *self.best_weights)
        keep = max((e for e in previous if e < epoch), default=None)
        for e, path in previous.items():
            if e not in (epoch, keep):
                os.remove(path)


def maximize(monitor, mode):
    """Whether `monitor` is better high (`mode="max"`, or "auto" for accuracies)."""
    return mode == "max" or (mode == "auto" and "acc" in monitor)


class PlateauDecay(keras.callbacks.ReduceLROnPlateau):
    """`ReduceLROnPlateau` with `cfg`'s decay that starts from `learning_rate` and,
    on a resume, replays the monitor values of the epochs already done (`history`),
    so the rate, the best value and the waiting count are those of the interrupted
    run."""

    def __init__(self, monitor, cfg, learning_rate, history=(), verbose=1):
        super().__init__(
            monitor=monitor,
            mode="max" if maximize(monitor, cfg.mode) else "min",
            factor=cfg.decay_factor,
            patience=cfg.decay_patience,
            min_lr=0.0,
            verbose=verbose,
        )
        self.learning_rate = learning_rate
        self.history = list(history)

    def on_train_begin(self, logs=None):
        super().on_train_begin(logs)
        self.model.optimizer.learning_rate = self.learning_rate
        verbose, self.verbose = self.verbose, 0
        for epoch, value in enumerate(self.history):
            if value is not None:
                super().on_epoch_end(epoch, {self.monitor: value})
        self.verbose = verbose


class RoundsProgress(keras.callbacks.ProgbarLogger):
    """Keras' progress output, whose epoch line counts passes over the training data
    when each pass is cut into `rounds` validation rounds (`--validations-per-epoch`):
    `Epoch 0.5/2 (validation round 1/4)` where Keras would say `Epoch 1/4`."""

    def __init__(self, rounds):
        super().__init__()
        self.rounds = rounds

    def on_epoch_begin(self, epoch, logs=None):
        epochs, self.epochs = self.epochs, 1  # Keras' own line is replaced
        super().on_epoch_begin(epoch, logs)
        self.epochs = epochs
        if self.verbose:
            passes = f"{(epoch + 1) / self.rounds:g}/{epochs / self.rounds:g}"
            print(f"Epoch {passes} (validation round {epoch + 1}/{epochs})", flush=True)


class ElapsedTime(keras.callbacks.Callback):
    """Logs `elapsed_seconds`: wall-clock seconds of training since the run started.

    The clock runs from the beginning of each epoch to its end, as the callbacks
    before this one see it: training steps (the first epoch's tracing included) and
    validation. Not counted: what happens between epochs (the callbacks after this
    one, which write the checkpoints, the backup and the log), the setup of `fit`
    before the first epoch, and the seconds `pauses` report (the snapshots that
    `TimedSnapshots` writes during an epoch). A resumed run starts from the value
    the interrupted run logged for its last completed epoch. The clock is
    `time.monotonic`.

    Args:
        previous: seconds of training before this `fit` (0 for a fresh run).
        pauses: objects with a `paused_seconds` attribute (a growing count of
            seconds spent on something else than training), e.g. `TimedSnapshots`.
    """

    def __init__(self, previous=0.0, pauses=()):
        super().__init__()
        self.seconds = float(previous or 0.0)
        self.pauses = list(pauses)

    def _clock(self):
        """The monotonic time less the pauses so far."""
        return time.monotonic() - sum(p.paused_seconds for p in self.pauses)

    def on_epoch_begin(self, epoch, logs=None):
        self._start = self._clock()

    def on_epoch_end(self, epoch, logs=None):
        self.seconds += max(self._clock() - self._start, 0.0)
        if logs is not None:
            logs["elapsed_seconds"] = round(self.seconds, 3)


class TrainingCurve(keras.callbacks.Callback):
    """Draws the CSV log's curves as a PNG (`zoo.viz.training_curve`).

    The PNG is drawn at most every `every_seconds` at an epoch's end (so a long run
    shows its progress) and whenever `draw()` is called (`fit` calls it when its
    training ends, also when it ends with an error). Place it after the
    `keras.callbacks.CSVLogger` that writes the log. A failure to draw never stops
    training: it is reported in one line on standard error.

    Args:
        csv_path: the log.
        path: the PNG.
        monitor: the monitored value drawn besides the losses, or None.
        rounds_per_epoch: validation rounds per pass over the training data.
        every_seconds: the least seconds between two drawings at epoch ends.
    """

    def __init__(
        self, csv_path, path, monitor=None, rounds_per_epoch=1, every_seconds=300.0
    ):
        super().__init__()
        self.csv_path = csv_path
        self.path = path
        self.monitor = monitor
        self.rounds_per_epoch = rounds_per_epoch
        self.every_seconds = every_seconds

    def on_train_begin(self, logs=None):
        self._last = time.monotonic()

    def on_epoch_end(self, epoch, logs=None):
        if time.monotonic() - self._last >= self.every_seconds:
            self.draw()

    def draw(self):
        """Draws the PNG; returns the plotted series (None when it failed or no
        epoch is logged yet)."""
        self._last = time.monotonic()
        if not os.path.exists(self.csv_path) or os.path.getsize(self.csv_path) == 0:
            return None  # no epoch logged yet
        try:
            from zoo.viz import training_curve

            args = (self.csv_path, self.path, self.monitor, self.rounds_per_epoch)
            return training_curve(*args)
        except Exception as e:  # a drawing never fails the training
            message = f"{type(e).__name__}: {' '.join(str(e).split())[:200]}"
            print(f"warning: could not draw {self.path}: {message}", file=sys.stderr)
            return None


class TimedSnapshots(keras.callbacks.Callback):
    """Weights saved at fixed minutes of training, and training ended at a time limit.

    The clock starts when training begins (at `previous` seconds on a resume) and
    runs through the training steps, validation and the other callbacks (what a
    user waits for), except the time
    spent writing the snapshots themselves. It is read at the end of every training
    batch: at every multiple of `every_minutes` the weights go to
    `folder/minute_<MMMM.MM>.weights.npz` (`model.get_weights()`, in order; read
    them back with `load_snapshot`; the averaged weights when `weights`, a
    `WeightAverage`, is given: the ones the run would keep at that moment), and
    `folder/snapshots.json` lists them (`minutes`, `epoch`, `step`, `file`). At
    `limit_minutes` training stops after the current batch (Keras still validates
    that last, shorter epoch and runs its epoch-end callbacks), and the weights at
    the limit are a snapshot too when snapshots are on.

    Args:
        folder: where the snapshots go (created when the first is written), or None
            when only the limit is wanted.
        every_minutes: minutes between snapshots (0 or None: no snapshots).
        limit_minutes: minutes of training after which it stops (0 or None: none).
        weights: the run's `WeightAverage`, or None.
        previous: seconds of training before this `fit` (a resumed run's clock
            continues from them; the snapshots listed up to then are kept and the
            next one is the next multiple of `every_minutes`).
    """

    def __init__(
        self, folder, every_minutes=None, limit_minutes=None, weights=None, previous=0.0
    ):
        super().__init__()
        minutes = {"every_minutes": every_minutes, "limit_minutes": limit_minutes}
        for name, value in minutes.items():
            if value is not None and not (value >= 0 and math.isfinite(value)):
                raise ValueError(
                    f"`{name}` must be a number >= 0. Received: {name}={value!r}"
                )
        if every_minutes and folder is None:
            raise ValueError("`folder` is needed to write snapshots.")
        self.folder = folder
        self.every = 60.0 * every_minutes if every_minutes else None
        self.limit = 60.0 * limit_minutes if limit_minutes else None
        self.weights = weights
        self.previous = float(previous or 0.0)
        self.snapshots = []
        self.paused_seconds = 0.0  # spent writing snapshots in this `fit` so far

    def on_train_begin(self, logs=None):
        self._start, self.paused_seconds = time.perf_counter(), 0.0
        # A resumed run keeps the snapshots its clock had reached.
        path = os.path.join(self.folder or "", "snapshots.json")
        self.snapshots = []
        if self.previous and self.folder is not None and os.path.exists(path):
            with open(path) as f:
                listed = json.load(f)
            self.snapshots = [s for s in listed if s["minutes"] * 60 <= self.previous]
        self._next = math.inf
        if self.every:
            self._next = (math.floor(self.previous / self.every) + 1) * self.every
        optimizer = getattr(self.model, "optimizer", None)  # None: not compiled
        iterations = getattr(optimizer, "iterations", None)
        self._step = (
            0 if iterations is None else int(keras.ops.convert_to_numpy(iterations))
        )
        self._epoch = 0

    def elapsed(self):
        """Seconds of training so far, in this `fit` and before it (`previous`),
        snapshot writing excluded."""
        return self.previous + time.perf_counter() - self._start - self.paused_seconds

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        self._step += 1
        seconds = self.elapsed()
        while seconds >= self._next:
            self._save(self._next)
            self._next += self.every
        if self.limit is not None and seconds >= self.limit:
            if self.every and not any(
                s["minutes"] * 60 >= self.limit for s in self.snapshots
            ):
                self._save(self.limit)
            self.model.stop_training = True

    def _save(self, seconds):
        import numpy as np

        begin = time.perf_counter()
        os.makedirs(self.folder, exist_ok=True)
        minutes = seconds / 60.0
        name = f"minute_{minutes:07.2f}.weights.npz"
        if self.weights is not None:
            self.weights.put_average()
        try:
            values = self.model.get_weights()
        finally:
            if self.weights is not None:
                self.weights.put_raw()
        with atomic_write(os.path.join(self.folder, name), "wb") as f:
            np.savez(f, *values)
        self.snapshots.append(
            {
                "minutes": round(minutes, 4),
                "epoch": self._epoch + 1,
                "step": self._step,
                "file": name,
            }
        )
        with atomic_write(os.path.join(self.folder, "snapshots.json")) as f:
            json.dump(self.snapshots, f, indent=1)
        self.paused_seconds += time.perf_counter() - begin


def load_snapshot(model, path):
    """Puts the weights of a `TimedSnapshots` file into `model` (the model trained,
    or one built the same way)."""
    model.set_weights(read_weights(path))
    return model
