"""Small models, data sets and callbacks shared by the zoo.training tests."""

import csv
import os
import subprocess
import sys

import keras
import numpy as np
import tensorflow as tf

from zoo import training
from zoo.training import TrainingConfig

SCRIPT = os.path.join(os.path.dirname(__file__), "tiny_training.py")


def run_script(args, env=None, timeout=180):
    """Runs tiny_training.py in a child process (stdout and stderr captured)."""
    return subprocess.run(
        [sys.executable, SCRIPT, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def epochs_seen(out):
    with open(str(out) + ".epochs") as f:
        return [int(line) for line in f]


def log_rows(run_dir):
    with open(os.path.join(run_dir, "log.csv"), newline="") as f:
        return list(csv.DictReader(f))


def logged_epochs(run_dir):
    return [int(row["epoch"]) for row in log_rows(run_dir)]


def logged_rates(run_dir):
    return [float(row["learning_rate"]) for row in log_rows(run_dir)]


def regression_data(n=32, batch=8, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3)).astype("float32")
    y = x @ np.array([[1.0], [-2.0], [0.5]], "float32")
    return tf.data.Dataset.from_tensor_slices((x, y)).batch(batch), (x, y)


def dense_model(optimizer=None, kernel_initializer="glorot_uniform"):
    model = keras.Sequential(
        [
            keras.Input((3,)),
            keras.layers.Dense(1, kernel_initializer=kernel_initializer),
        ]
    )
    model.compile(optimizer or keras.optimizers.SGD(0.05), "mse")
    return model


class FakeClock:
    """A stand-in for `time.perf_counter` or `time.monotonic`: `step` seconds later at
    every call."""

    def __init__(self, step):
        self.now, self.step = 0.0, step

    def __call__(self):
        self.now += self.step
        return self.now


class Interrupt(Exception):
    """Raised by the test callbacks to stop a run as a kill would."""


class InterruptAt(keras.callbacks.Callback):
    """Raises `Interrupt` when epoch `epoch` (0-based) begins."""

    def __init__(self, epoch=None):
        super().__init__()
        self.epoch = epoch

    def on_epoch_begin(self, epoch, logs=None):
        if epoch == self.epoch:
            raise Interrupt


class Scripted(InterruptAt):
    """Logs `val_score` from a script (an extra callback, run before fit's own) and
    stops the run with `Interrupt` in epoch `interrupt_at`."""

    def __init__(self, scores, interrupt_at=None):
        super().__init__(interrupt_at)
        self.scores = scores

    def on_epoch_end(self, epoch, logs=None):
        logs["val_score"] = self.scores[epoch]


class RawWeights(InterruptAt):
    """Records the model's (raw) weights after every training step."""

    def __init__(self, interrupt_at=None):
        super().__init__(interrupt_at)
        self.steps = []

    def on_train_batch_end(self, batch, logs=None):
        self.steps.append([w.copy() for w in self.model.get_weights()])


def quick_run(run_dir, epochs=4, interrupt_at=None, run_identity=None, **cfg_kwargs):
    """Fits a linear regression (4 batches per epoch) with `zoo.training.fit`;
    returns the model and the history."""
    ds, _ = regression_data()
    keras.utils.set_random_seed(0)
    cfg_kwargs = {"verbose": 0, "patience": 0, "tensorboard": False, **cfg_kwargs}
    cfg = TrainingConfig(epochs=epochs, run_dir=str(run_dir), **cfg_kwargs)
    model = dense_model(keras.optimizers.SGD(cfg.learning_rate))
    history = training.fit(
        model,
        ds,
        ds,
        cfg,
        callbacks=[InterruptAt(interrupt_at)],
        run_identity=run_identity,
    )
    return model, history
