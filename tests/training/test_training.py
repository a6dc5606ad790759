import argparse
import csv
import importlib.util
import json
import os
import socket
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from zoo import training
from zoo.training import TrainingConfig, add_training_args, bucket_by_length

SCRIPT = os.path.join(os.path.dirname(__file__), "tiny_training.py")


def _run(args, env=None, timeout=180):
    return subprocess.run(
        [sys.executable, SCRIPT, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def _epochs_seen(out):
    with open(str(out) + ".epochs") as f:
        return [int(line) for line in f]


def test_flags_and_config():
    parser = argparse.ArgumentParser()
    add_training_args(parser, epochs=7, batch_size=8, learning_rate=0.1)
    args = parser.parse_args(["--run-dir", "r", "--distribute", "mirrored"])
    cfg = TrainingConfig.from_args(args)
    assert (cfg.epochs, cfg.batch_size, cfg.learning_rate) == (7, 8, 0.1)
    assert (cfg.run_dir, cfg.distribute, cfg.seed, cfg.patience) == (
        "r",
        "mirrored",
        1234,
        3,
    )
    with pytest.raises(ValueError, match="distribute='gpu'"):
        TrainingConfig(distribute="gpu")
    with pytest.raises(ValueError, match="epochs=0"):
        TrainingConfig(epochs=0)


@pytest.mark.parametrize(
    "value, message",
    [
        (None, "needs the TF_CONFIG"),
        ("{not json", "not valid JSON"),
        ('{"cluster": {"worker": ["a:1"]}}', "needs 'task'"),
        (
            '{"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 3}}',
            "out of range",
        ),
    ],
)
def test_multi_worker_needs_valid_tf_config(monkeypatch, value, message):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    if value is not None:
        monkeypatch.setenv("TF_CONFIG", value)
    with pytest.raises(ValueError, match=message):
        training.get_strategy("multi-worker")


def test_fit_writes_checkpoint_log_and_restores_best(tmp_path):
    x = np.random.default_rng(0).normal(size=(32, 3)).astype("float32")
    y = x.sum(axis=1, keepdims=True)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(8)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(keras.optimizers.SGD(0.1), "mse")
    cfg = TrainingConfig(epochs=3, run_dir=str(tmp_path / "run"), verbose=0)
    history = training.fit(model, ds, ds, cfg)
    assert history.epoch == [0, 1, 2]
    assert history.history["val_loss"][-1] < history.history["val_loss"][0]
    rows = list(csv.DictReader(open(tmp_path / "run" / "log.csv")))
    assert [int(r["epoch"]) for r in rows] == [0, 1, 2]
    best = keras.saving.load_model(tmp_path / "run" / "best.keras")
    np.testing.assert_allclose(
        best.predict(x, verbose=0), model.predict(x, verbose=0), atol=1e-6
    )
    assert not (tmp_path / "run" / "backup").exists()
    has_tensorboard = importlib.util.find_spec("tensorboard") is not None
    assert (tmp_path / "run" / "tensorboard").is_dir() == has_tensorboard


def test_nan_loss_raises_clear_error(tmp_path):
    x = np.ones((16, 3), "float32")
    x[5, 0] = np.inf
    ds = tf.data.Dataset.from_tensor_slices((x, np.ones((16, 1), "float32"))).batch(8)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(keras.optimizers.SGD(0.1), "mse")
    cfg = TrainingConfig(epochs=2, run_dir=str(tmp_path / "run"), verbose=0)
    with pytest.raises(training.NonFiniteLossError, match="at epoch 1, batch 1"):
        training.fit(model, ds, ds, cfg)


@pytest.mark.slow
def test_killed_mirrored_run_resumes_from_current_epoch(tmp_path):
    """Killed in epoch 2 and started again with the same command, a MirroredStrategy
    run on 2 logical CPU devices continues at epoch 2 and completes."""
    out = tmp_path / "out.json"
    cmd = [
        out,
        "--run-dir",
        tmp_path / "run",
        "--kill-epoch",
        2,
        "--patience",
        0,
        "--distribute",
        "mirrored",
        "--logical-cpus",
        2,
    ]
    first = _run(cmd)
    assert first.returncode == 3, first.stderr[-2000:]
    assert _epochs_seen(out) == [0, 1, 2]
    assert (tmp_path / "run" / "backup").is_dir()
    second = _run(cmd)  # the same command again
    assert second.returncode == 0, second.stderr[-2000:]
    assert _epochs_seen(out) == [0, 1, 2, 2, 3, 4]
    result = json.load(open(out))
    assert result["replicas"] == 2
    assert result["epochs"] == [2, 3, 4]
    rows = list(csv.DictReader(open(tmp_path / "run" / "log.csv")))
    assert [int(r["epoch"]) for r in rows] == [0, 1, 2, 3, 4]
    losses = [float(r["loss"]) for r in rows]
    assert losses[2] < losses[0]  # resumed weights, not a fresh start
    assert losses[4] < losses[2]
    assert not (tmp_path / "run" / "backup").exists()
    assert (tmp_path / "run" / "best.keras").exists()


def test_get_strategy_names():
    assert training.get_strategy("none") is tf.distribute.get_strategy()
    mirrored = training.get_strategy("mirrored")
    assert isinstance(mirrored, tf.distribute.MirroredStrategy)
    assert mirrored.num_replicas_in_sync == len(tf.config.list_logical_devices("CPU"))
    with pytest.raises(ValueError, match="distribute='tpu'"):
        training.get_strategy("tpu")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_multi_worker_two_local_processes(tmp_path):
    ports = [_free_port(), _free_port()]
    cluster = {"worker": [f"127.0.0.1:{p}" for p in ports]}
    procs = []
    for index in range(2):
        env = {
            **os.environ,
            "TF_CONFIG": json.dumps(
                {"cluster": cluster, "task": {"type": "worker", "index": index}}
            ),
        }
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    SCRIPT,
                    str(tmp_path / f"out{index}.json"),
                    "--run-dir",
                    str(tmp_path / "run"),
                    "--distribute",
                    "multi-worker",
                    "--epochs",
                    "2",
                    "--patience",
                    "0",
                ],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    try:
        results = [p.communicate(timeout=150) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    for p, (_, err) in zip(procs, results, strict=True):
        assert p.returncode == 0, err[-3000:]
    data = [json.load(open(tmp_path / f"out{i}.json")) for i in range(2)]
    assert [d["replicas"] for d in data] == [2, 2]
    np.testing.assert_allclose(data[0]["weights"], data[1]["weights"], rtol=1e-5)
    assert (tmp_path / "run" / "log.csv").exists()
    assert (tmp_path / "run" / "worker-1" / "log.csv").exists()


def test_bucket_by_length_groups_similar_lengths():
    lengths = [1, 9, 2, 8, 3, 7, 1, 9]
    ds = tf.data.Dataset.from_generator(
        lambda: ([1] * n for n in lengths),
        output_signature=tf.TensorSpec([None], tf.int32),
    )
    bucketed = bucket_by_length(ds, lambda x: tf.shape(x)[0], [5], batch_size=2)
    # no autotuning thread whose teardown can stall the end of an epoch, also
    # after the recipes' `prefetch(tf.data.AUTOTUNE)`
    assert not bucketed.prefetch(tf.data.AUTOTUNE).options().autotune.enabled
    batches = list(bucketed)
    widths = sorted(b.shape[1] for b in batches)
    assert sum(b.shape[0] for b in batches) == 8
    assert all(b.shape[0] <= 2 for b in batches)
    for b in batches:
        row_lengths = (b.numpy() > 0).sum(axis=1)
        assert (row_lengths < 5).all() or (row_lengths >= 5).all()
    assert widths[0] <= 3
    with pytest.raises(ValueError, match="boundaries=\\[5, 3\\]"):
        bucket_by_length(ds, len, [5, 3], 2)


def test_throughput_excludes_tracing_and_validation(monkeypatch):
    clock = iter([100.0, 101.0, 103.0, 105.0])  # ends of batches 1-4
    monkeypatch.setattr(training.time, "perf_counter", lambda: next(clock))
    meter = training.Throughput(tokens_per_epoch=800)
    meter.on_epoch_begin(0)
    for batch in range(4):
        meter.on_train_batch_end(batch)
    meter.on_epoch_end(0)  # after validation: must not read the clock again
    # batches 2-4 (3/4 of the tokens) ran between t = 100 and t = 105
    assert meter.rates == [pytest.approx(800 * 0.75 / 5.0)]
    meter.on_epoch_begin(1)  # an epoch of one batch has no rate
    monkeypatch.setattr(training.time, "perf_counter", lambda: 200.0)
    meter.on_train_batch_end(0)
    meter.on_epoch_end(1)
    assert len(meter.rates) == 1


class _Scripted(keras.callbacks.Callback):
    """Logs `val_score` from a script (an extra callback, run before fit's own) and
    stops the run with `_Interrupt` in epoch `interrupt_at`."""

    def __init__(self, scores, interrupt_at=None):
        super().__init__()
        self.scores, self.interrupt_at = scores, interrupt_at

    def on_epoch_begin(self, epoch, logs=None):
        if epoch == self.interrupt_at:
            raise _Interrupt

    def on_epoch_end(self, epoch, logs=None):
        logs["val_score"] = self.scores[epoch]


class _Interrupt(Exception):
    pass


def _decay_run(run_dir, scores, interrupt_at=None, patience=1):
    x = np.random.default_rng(0).normal(size=(16, 3)).astype("float32")
    ds = tf.data.Dataset.from_tensor_slices((x, x[:, :1])).batch(8)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(keras.optimizers.SGD(0.1), "mse")
    cfg = TrainingConfig(
        epochs=len(scores),
        run_dir=str(run_dir),
        verbose=0,
        patience=0,
        monitor="val_score",
        mode="max",
        decay_factor=0.5,
        decay_patience=patience,
    )
    training.fit(model, ds, ds, cfg, callbacks=[_Scripted(scores, interrupt_at)])
    return float(model.optimizer.learning_rate.numpy())


def _logged_rates(run_dir):
    with open(run_dir / "log.csv", newline="") as f:
        return [float(row["learning_rate"]) for row in csv.DictReader(f)]


SCORES = [1.0, 2.0, 2.0, 1.0, 3.0, 3.0, 2.5, 2.0]


def test_learning_rate_decays_on_plateau(tmp_path):
    # Each epoch logs the rate it trained with; an epoch without a better score
    # halves the rate for the next (patience 1).
    assert _decay_run(tmp_path / "a", SCORES) == pytest.approx(0.1 / 2**5)
    np.testing.assert_allclose(
        _logged_rates(tmp_path / "a"),
        [0.1, 0.1, 0.1, 0.05, 0.025, 0.025, 0.0125, 0.00625],
    )
    # Patience 2: the rate halves after the second epoch in a row without a better
    # score (epochs 2-3 and 5-6).
    assert _decay_run(tmp_path / "b", SCORES, patience=2) == pytest.approx(0.025)
    np.testing.assert_allclose(
        _logged_rates(tmp_path / "b"), [0.1] * 4 + [0.05] * 3 + [0.025]
    )


def test_learning_rate_decay_survives_a_resume(tmp_path):
    run_dir = tmp_path / "run"
    with pytest.raises(_Interrupt):
        _decay_run(run_dir, SCORES, interrupt_at=4)
    assert (run_dir / "backup").is_dir()
    assert _logged_rates(run_dir) == pytest.approx([0.1, 0.1, 0.1, 0.05])
    # The same run again, in a fresh model: it resumes at epoch 4 with the rate
    # and the waiting count the interrupted run had.
    assert _decay_run(run_dir, SCORES) == pytest.approx(0.1 / 2**5)
    np.testing.assert_allclose(
        _logged_rates(run_dir), [0.1, 0.1, 0.1, 0.05, 0.025, 0.025, 0.0125, 0.00625]
    )


def test_decay_flags_and_bad_values():
    parser = argparse.ArgumentParser()
    add_training_args(parser)
    args = parser.parse_args(["--decay-factor", "0.5", "--decay-patience", "2"])
    cfg = TrainingConfig.from_args(args)
    assert (cfg.decay_factor, cfg.decay_patience) == (0.5, 2)
    assert TrainingConfig().decay_factor == 1.0  # off unless asked for
    with pytest.raises(ValueError, match="decay_factor=1.5"):
        TrainingConfig(decay_factor=1.5)
    with pytest.raises(ValueError, match="decay_factor=0"):
        TrainingConfig(decay_factor=0)
    with pytest.raises(ValueError, match="decay_patience=0"):
        TrainingConfig(decay_patience=0)


class _RawWeights(keras.callbacks.Callback):
    """Records the model's (raw) weights after every training step."""

    def __init__(self, interrupt_at=None):
        super().__init__()
        self.steps, self.interrupt_at = [], interrupt_at

    def on_epoch_begin(self, epoch, logs=None):
        if epoch == self.interrupt_at:
            raise _Interrupt

    def on_train_batch_end(self, batch, logs=None):
        self.steps.append([w.copy() for w in self.model.get_weights()])


def _average_run(
    run_dir, epochs=4, interrupt_at=None, patience=0, ema=0.8, fit_to_steps=None
):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 3)).astype("float32")
    y = x @ np.array([[1.0], [-2.0], [0.5]], "float32")
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(8)
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    cfg = TrainingConfig(
        epochs=epochs, run_dir=str(run_dir), verbose=0, patience=patience, ema=ema
    )
    model.compile(keras.optimizers.SGD(0.05, **training.averaging(cfg)), "mse")
    if fit_to_steps:
        training.fit_average_to_run(model, fit_to_steps)
    recorder = _RawWeights(interrupt_at)
    history = training.fit(model, ds, ds, cfg, callbacks=[recorder])
    return model, history, recorder.steps, (x, y)


def _mse(weights, x, y):
    kernel, bias = weights
    return float(np.mean((x @ kernel + bias - y) ** 2))


@pytest.mark.parametrize("fit_to_steps, ema", [(None, 0.8), (16, 1 - 5 / 16)])
def test_weight_average_is_validated_checkpointed_and_kept(tmp_path, fit_to_steps, ema):
    # with fit_to_steps=16 the configured 0.8 is capped at 1 - 5/16 = 0.6875
    model, history, steps, (x, y) = _average_run(
        tmp_path / "run", ema=0.8, fit_to_steps=fit_to_steps
    )
    assert len(steps) == 16  # 4 epochs of 4 steps
    # The expected average: the first step's weights, then a <- ema a + (1 - ema) w.
    averages, average = [], None
    for weights in steps:
        average = (
            weights
            if average is None
            else [
                ema * a + (1 - ema) * w for a, w in zip(average, weights, strict=True)
            ]
        )
        averages.append(average)
    epoch_ends = averages[3::4]
    # validation scores the average, not the raw weights of the epoch's last step
    np.testing.assert_allclose(
        history.history["val_loss"], [_mse(a, x, y) for a in epoch_ends], rtol=1e-5
    )
    assert not np.allclose(steps[-1][0], epoch_ends[-1][0])
    # the model ends with the average ...
    for kept, expected in zip(model.get_weights(), epoch_ends[-1], strict=True):
        np.testing.assert_allclose(kept, expected, rtol=1e-5)
    # ... and best.keras holds the average of the best epoch
    best_epoch = int(np.argmin(history.history["val_loss"]))
    best = keras.saving.load_model(tmp_path / "run" / "best.keras")
    for kept, expected in zip(best.get_weights(), epoch_ends[best_epoch], strict=True):
        np.testing.assert_allclose(kept, expected, rtol=1e-5)


def test_weight_average_survives_a_resume(tmp_path):
    whole, _, _, _ = _average_run(tmp_path / "whole")
    with pytest.raises(_Interrupt):
        _average_run(tmp_path / "run", interrupt_at=2)
    assert (tmp_path / "run" / "backup").is_dir()
    resumed, history, _, _ = _average_run(tmp_path / "run")
    assert history.epoch == [2, 3]
    # the backup held the raw weights and the average: the same end as one run
    for a, b in zip(resumed.get_weights(), whole.get_weights(), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5)


def test_weight_average_with_early_stopping_keeps_the_best_epochs_average(tmp_path):
    model, history, _, _ = _average_run(tmp_path / "run", patience=2)
    best = keras.saving.load_model(tmp_path / "run" / "best.keras")
    for kept, saved in zip(model.get_weights(), best.get_weights(), strict=True):
        np.testing.assert_allclose(kept, saved, rtol=1e-6)


def test_weight_average_flag_and_bad_values(tmp_path):
    parser = argparse.ArgumentParser()
    add_training_args(parser)
    cfg = TrainingConfig.from_args(parser.parse_args(["--ema", "0.999"]))
    assert cfg.ema == 0.999
    assert training.averaging(cfg) == {"use_ema": True, "ema_momentum": 0.999}
    assert training.averaging(TrainingConfig()) == {}
    for value in (1.0, -0.1):
        with pytest.raises(ValueError, match=f"ema={value}"):
            TrainingConfig(ema=value)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(keras.optimizers.SGD(0.1), "mse")
    ds = tf.data.Dataset.from_tensor_slices((np.ones((8, 3)), np.ones((8, 1)))).batch(4)
    with pytest.raises(ValueError, match="use_ema=True"):
        training.fit(
            model, ds, ds, TrainingConfig(run_dir=str(tmp_path), verbose=0, ema=0.9)
        )


def test_swap_weight_average_gives_the_best_epochs_raw_weights(tmp_path):
    model, history, steps, _ = _average_run(tmp_path / "run", epochs=3)
    best_epoch = int(np.argmin(history.history["val_loss"]))
    best = keras.saving.load_model(tmp_path / "run" / "best.keras")
    averaged = best.get_weights()
    training.swap_weight_average(best)
    raw = steps[4 * best_epoch + 3]  # the last step of the best epoch
    for kept, expected in zip(best.get_weights(), raw, strict=True):
        np.testing.assert_allclose(kept, expected, rtol=1e-5)
    training.swap_weight_average(best)  # and back
    for kept, expected in zip(best.get_weights(), averaged, strict=True):
        np.testing.assert_allclose(kept, expected, rtol=1e-6)
    plain = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    plain.compile(keras.optimizers.SGD(0.1), "mse")
    with pytest.raises(ValueError, match="keeps no weight average"):
        training.swap_weight_average(plain)


def test_fit_average_to_run_caps_the_window_at_a_fifth_of_the_run():
    def momentum(ema, steps):
        model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
        model.compile(keras.optimizers.SGD(0.1, use_ema=True, ema_momentum=ema), "mse")
        return training.fit_average_to_run(model, steps)

    assert momentum(0.999, 9160) == 0.999  # long runs keep their momentum
    assert momentum(0.999, 5000) == pytest.approx(0.999)
    assert momentum(0.999, 31) == pytest.approx(1 - 5 / 31)
    assert momentum(0.999, 3) == 0.0  # under 5 steps: the last weights
    plain = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    plain.compile(keras.optimizers.SGD(0.1), "mse")
    assert training.fit_average_to_run(plain, 100) is None


def _cosine_run(run_dir, epochs=4, interrupt_at=None, unknown_length=False):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 3)).astype("float32")
    y = x @ np.array([[1.0], [-2.0], [0.5]], "float32")
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(8)
    if unknown_length:
        ds = ds.filter(lambda a, b: True)
    model = keras.Sequential(
        [keras.Input((3,)), keras.layers.Dense(1, kernel_initializer="zeros")]
    )
    cfg = TrainingConfig(
        epochs=epochs,
        learning_rate=0.05,
        run_dir=str(run_dir),
        verbose=0,
        patience=0,
        schedule="cosine",
    )
    model.compile(keras.optimizers.SGD(training.scheduled_learning_rate(cfg)), "mse")
    recorder = _RawWeights(interrupt_at)
    training.fit(model, ds, ds, cfg, callbacks=[recorder])
    return model, recorder.steps, (x, y)


def _cosine(step, total, rate=0.05):
    return rate * 0.5 * (1 + np.cos(np.pi * min(step / total, 1.0)))


def test_cosine_schedule_sets_every_steps_rate_and_ends_at_zero(tmp_path):
    model, steps, (x, y) = _cosine_run(tmp_path / "run")
    schedule = model.optimizer._learning_rate
    assert isinstance(schedule, training.CosineToZero)
    assert schedule.total_steps == 16  # set by fit: 4 batches x 4 epochs
    # each SGD step used the rate of its step number: w <- w - rate(i) * gradient
    previous = [np.zeros((3, 1), "float32"), np.zeros(1, "float32")]
    for i, weights in enumerate(steps):
        batch = slice(8 * (i % 4), 8 * (i % 4) + 8)
        kernel, bias = previous
        error = x[batch] @ kernel + bias - y[batch]
        gradient = [2 * x[batch].T @ error / 8, 2 * error.mean(0)]
        expected = [
            p - _cosine(i, 16) * g for p, g in zip(previous, gradient, strict=True)
        ]
        for got, want in zip(weights, expected, strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
        previous = weights
    # the log holds the rate at each epoch's end, down to zero
    np.testing.assert_allclose(
        _logged_rates(tmp_path / "run"),
        [_cosine(s, 16) for s in (4, 8, 12, 16)],
        atol=1e-7,
    )
    # best.keras keeps the schedule
    best = keras.saving.load_model(tmp_path / "run" / "best.keras")
    assert best.optimizer._learning_rate.get_config() == schedule.get_config()


def test_cosine_schedule_survives_a_resume(tmp_path):
    whole, _, _ = _cosine_run(tmp_path / "whole")
    with pytest.raises(_Interrupt):
        _cosine_run(tmp_path / "run", interrupt_at=2)
    resumed, steps, _ = _cosine_run(tmp_path / "run")
    assert len(steps) == 8  # epochs 3 and 4 only
    for a, b in zip(resumed.get_weights(), whole.get_weights(), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5)
    np.testing.assert_allclose(
        _logged_rates(tmp_path / "run"), _logged_rates(tmp_path / "whole")
    )


def test_cosine_schedule_of_unknown_length_needs_fit_schedule_to_run(tmp_path):
    with pytest.raises(ValueError, match="fit_schedule_to_run"):
        _cosine_run(tmp_path / "run", unknown_length=True)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(keras.optimizers.SGD(training.CosineToZero(0.1)), "mse")
    assert training.fit_schedule_to_run(model, 40).total_steps == 40
    plain = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    plain.compile(keras.optimizers.SGD(0.1), "mse")
    assert training.fit_schedule_to_run(plain, 40) is None
    with pytest.raises(ValueError, match="total_steps=0"):
        training.CosineToZero(0.1, total_steps=0)
    with pytest.raises(ValueError, match="learning_rate=-1"):
        training.CosineToZero(-1)
    with pytest.raises(ValueError, match="not set"):
        training.CosineToZero(0.1)(3)


def test_schedule_flag_and_bad_values():
    parser = argparse.ArgumentParser()
    add_training_args(parser)  # recipes that do not ask for it get no flag
    with pytest.raises(SystemExit):
        parser.parse_args(["--schedule", "cosine"])
    parser = argparse.ArgumentParser()
    add_training_args(parser, schedule="constant")
    cfg = TrainingConfig.from_args(parser.parse_args(["--schedule", "cosine"]))
    assert cfg.schedule == "cosine"
    assert isinstance(training.scheduled_learning_rate(cfg), training.CosineToZero)
    assert training.scheduled_learning_rate(TrainingConfig(learning_rate=0.3)) == 0.3
    with pytest.raises(ValueError, match="schedule='linear'"):
        TrainingConfig(schedule="linear")
    with pytest.raises(ValueError, match="decay_factor=0.5"):
        TrainingConfig(schedule="cosine", decay_factor=0.5)
