import keras
import numpy as np
import pytest
import tensorflow as tf

from tests.training.training_test_utils import (
    Interrupt,
    Scripted,
    dense_model,
    logged_rates,
)
from zoo import training
from zoo.training import TrainingConfig, callbacks


def test_throughput_excludes_tracing_and_validation(monkeypatch):
    clock = iter([100.0, 101.0, 103.0, 105.0])  # ends of batches 1-4
    monkeypatch.setattr(callbacks.time, "perf_counter", lambda: next(clock))
    meter = training.Throughput(tokens_per_epoch=800)
    meter.on_epoch_begin(0)
    for batch in range(4):
        meter.on_train_batch_end(batch)
    meter.on_epoch_end(0)  # after validation: must not read the clock again
    # batches 2-4 (3/4 of the tokens) ran between t = 100 and t = 105
    assert meter.rates == [pytest.approx(800 * 0.75 / 5.0)]
    meter.on_epoch_begin(1)  # an epoch of one batch has no rate
    monkeypatch.setattr(callbacks.time, "perf_counter", lambda: 200.0)
    meter.on_train_batch_end(0)
    meter.on_epoch_end(1)
    assert len(meter.rates) == 1


def test_throughput_gives_no_rate_for_an_epoch_stopped_midway():
    class StopAtBatch(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            if self.stop_at == (self.epoch, batch):
                self.model.stop_training = True

        def on_epoch_begin(self, epoch, logs=None):
            self.epoch = epoch

    x = np.ones((40, 3), "float32")
    ds = tf.data.Dataset.from_tensor_slices((x, np.ones((40, 1), "float32"))).batch(4)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(keras.optimizers.SGD(0.01), "mse")
    meter, stop = training.Throughput(tokens_per_epoch=40), StopAtBatch()
    stop.stop_at = (1, 4)  # the second epoch stops after 5 of its 10 batches
    model.fit(ds, epochs=3, callbacks=[meter, stop], verbose=0)
    assert len(meter.rates) == 1  # the first, complete epoch only
    # Data of unknown length: the epoch's planned steps come from the caller.
    unknown = ds.filter(lambda x, y: True)
    meter, stop = training.Throughput(40, steps_per_epoch=10), StopAtBatch()
    stop.stop_at = (1, 4)
    model.fit(unknown, epochs=3, callbacks=[meter, stop], verbose=0)
    assert len(meter.rates) == 1


def test_nan_loss_raises_clear_error(tmp_path):
    x = np.ones((16, 3), "float32")
    x[5, 0] = np.inf
    ds = tf.data.Dataset.from_tensor_slices((x, np.ones((16, 1), "float32"))).batch(8)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(keras.optimizers.SGD(0.1), "mse")
    cfg = TrainingConfig(epochs=2, run_dir=str(tmp_path / "run"), verbose=0)
    with pytest.raises(training.NonFiniteLossError, match="at epoch 1, batch 1"):
        training.fit(model, ds, ds, cfg)


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
    training.fit(model, ds, ds, cfg, callbacks=[Scripted(scores, interrupt_at)])
    return float(model.optimizer.learning_rate.numpy())


SCORES = [1.0, 2.0, 2.0, 1.0, 3.0, 3.0, 2.5, 2.0]


def test_learning_rate_decays_on_plateau(tmp_path):
    # Each epoch logs the rate it trained with; an epoch without a better score
    # halves the rate for the next (patience 1).
    assert _decay_run(tmp_path / "a", SCORES) == pytest.approx(0.1 / 2**5)
    np.testing.assert_allclose(
        logged_rates(tmp_path / "a"),
        [0.1, 0.1, 0.1, 0.05, 0.025, 0.025, 0.0125, 0.00625],
    )
    # Patience 2: the rate halves after the second epoch in a row without a better
    # score (epochs 2-3 and 5-6).
    assert _decay_run(tmp_path / "b", SCORES, patience=2) == pytest.approx(0.025)
    np.testing.assert_allclose(
        logged_rates(tmp_path / "b"), [0.1] * 4 + [0.05] * 3 + [0.025]
    )


def test_learning_rate_decay_refuses_a_scheduled_optimizer(tmp_path):
    # Keras refuses to set a rate that a `LearningRateSchedule` sets, before any step.
    ds = tf.data.Dataset.from_tensor_slices((np.ones((8, 3)), np.ones((8, 1)))).batch(4)
    model = dense_model(
        keras.optimizers.SGD(keras.optimizers.schedules.ExponentialDecay(0.1, 10, 0.5))
    )
    cfg = TrainingConfig(run_dir=str(tmp_path), verbose=0, decay_factor=0.5)
    with pytest.raises(TypeError, match="its learning rate is not settable"):
        training.fit(model, ds, ds, cfg)
    assert int(model.optimizer.iterations) == 0


def test_learning_rate_decay_survives_a_resume(tmp_path):
    run_dir = tmp_path / "run"
    with pytest.raises(Interrupt):
        _decay_run(run_dir, SCORES, interrupt_at=4)
    assert (run_dir / "backup").is_dir()
    assert logged_rates(run_dir) == pytest.approx([0.1, 0.1, 0.1, 0.05])
    # The same run again, in a fresh model: it resumes at epoch 4 with the rate
    # and the waiting count the interrupted run had.
    assert _decay_run(run_dir, SCORES) == pytest.approx(0.1 / 2**5)
    np.testing.assert_allclose(
        logged_rates(run_dir), [0.1, 0.1, 0.1, 0.05, 0.025, 0.025, 0.0125, 0.00625]
    )


def test_progress_counts_passes_when_validating_more_often(capsys):
    # --epochs 1 --validations-per-epoch 2: Keras runs 2 "epochs", one pass
    from zoo.training.callbacks import RoundsProgress

    progress = RoundsProgress(rounds=2)
    progress.set_params({"verbose": 2, "epochs": 2, "steps": 4})
    for epoch in range(2):
        progress.on_epoch_begin(epoch)
    assert capsys.readouterr().out.splitlines() == [
        "Epoch 0.5/1 (validation round 1/2)",
        "Epoch 1/1 (validation round 2/2)",
    ]
