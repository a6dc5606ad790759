import keras
import numpy as np
import pytest
import tensorflow as tf

from tests.training.training_test_utils import Interrupt, RawWeights
from zoo import training
from zoo.training import TrainingConfig, keras_workarounds
from zoo.training.weight_averaging import average_momentum


def _average_run(run_dir, epochs=4, interrupt_at=None, patience=0, ema=0.8):
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
    recorder = RawWeights(interrupt_at)
    history = training.fit(model, ds, ds, cfg, callbacks=[recorder])
    return model, history, recorder.steps, (x, y)


def _mse(weights, x, y):
    kernel, bias = weights
    return float(np.mean((x @ kernel + bias - y) ** 2))


def _expected_averages(steps, ema):
    """The average after each step: the first step's weights, then
    a <- m_t a + (1 - m_t) w with the warmed-up m_t = min(ema, (1 + t) / (10 + t))."""
    averages, average = [], None
    for t, weights in enumerate(steps):
        m = min(ema, (1 + t) / (10 + t))
        average = (
            weights
            if average is None
            else [m * a + (1 - m) * w for a, w in zip(average, weights, strict=True)]
        )
        averages.append(average)
    return averages


@pytest.mark.parametrize("ema", [0.8, 0.3])
def test_weight_average_is_validated_checkpointed_and_kept(tmp_path, ema):
    # 0.8: the warm-up (1 + t) / (10 + t) < 0.8 holds the momentum for all 16 steps;
    # 0.3: the warm-up reaches 0.3 at t = 3 and the momentum stays 0.3 from then on
    model, history, steps, (x, y) = _average_run(tmp_path / "run", ema=ema)
    assert len(steps) == 16  # 4 epochs of 4 steps
    averages = _expected_averages(steps, ema)
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
    with pytest.raises(Interrupt):
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
    from tests.recipe import toy_recipe

    cfg = toy_recipe.parse(["--ema", "0.999"]).training
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


def test_average_momentum_warms_up_to_ema():
    def momentum(t, ema=0.999):
        return float(average_momentum(t, ema))

    assert momentum(0) == 0.0  # the first step copies the weights
    assert momentum(1) == pytest.approx(2 / 11)
    assert momentum(2) == pytest.approx(3 / 12)
    assert momentum(458) == pytest.approx(459 / 468)  # after one translation epoch
    assert momentum(8989) == pytest.approx(8990 / 8999)  # just under 0.999
    assert momentum(8990) == pytest.approx(0.999)
    assert momentum(10**6) == pytest.approx(0.999)
    assert momentum(5, ema=0.3) == pytest.approx(0.3)
    momentum64 = average_momentum(3, 0.9, "float64")
    assert keras.backend.standardize_dtype(momentum64.dtype) == "float64"


class _Averages(keras.callbacks.Callback):
    """Records the kernel and its average after every training step."""

    def __init__(self):
        super().__init__()
        self.steps = []

    def on_train_batch_end(self, batch, logs=None):
        pairs = keras_workarounds.moving_average_pairs(self.model.optimizer)
        kernel, average = (keras.ops.convert_to_numpy(v) for v in pairs[0])
        self.steps.append((kernel, average))


def test_warmed_up_average_after_the_first_steps(tmp_path):
    # `fit` with a plain Keras optimizer: the average after steps 1, 2, 3 against
    # the formula written out by hand
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 3)).astype("float32")
    ds = tf.data.Dataset.from_tensor_slices((x, x @ np.ones((3, 1), "float32")))
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    cfg = TrainingConfig(epochs=1, run_dir=str(tmp_path), verbose=0, ema=0.999)
    model.compile(keras.optimizers.SGD(0.05, **training.averaging(cfg)), "mse")
    recorder = _Averages()
    training.fit(model, ds.batch(8), None, cfg, callbacks=[recorder])
    (w1, a1), (w2, a2), (w3, a3) = recorder.steps[:3]
    np.testing.assert_allclose(a1, w1, rtol=1e-6)  # m_0 = 0: a copy
    np.testing.assert_allclose(a2, 2 / 11 * w1 + 9 / 11 * w2, rtol=1e-6)
    np.testing.assert_allclose(
        a3, 3 / 12 * (2 / 11 * w1 + 9 / 11 * w2) + 9 / 12 * w3, rtol=1e-6
    )
    w4, a4 = recorder.steps[3]
    np.testing.assert_allclose(a4, 4 / 13 * a3 + 9 / 13 * w4, rtol=1e-6)
    # Keras' own average (0.999 from the second step on) would still be ~ w1
    keras_a3 = 0.999 * (0.999 * w1 + 0.001 * w2) + 0.001 * w3
    assert np.abs(a3 - keras_a3).max() > 0.5 * np.abs(w3 - w1).max()


@pytest.mark.parametrize("ema", [0.999, 0.5])
def test_warm_up_average_on_a_plain_keras_optimizer(ema):
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    optimizer = keras.optimizers.Adam(0.1, use_ema=True, ema_momentum=ema)
    model.compile(optimizer, "mse")
    assert training.warm_up_average(model.optimizer) is optimizer
    training.warm_up_average(optimizer)  # idempotent
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(8, 3)), rng.normal(size=(8, 2))
    steps = []
    for _ in range(5):
        model.train_on_batch(x, y)
        steps.append([w.copy() for w in model.get_weights()])
    expected = _expected_averages(steps, ema)[-1]
    got = [
        keras.ops.convert_to_numpy(a) for a in optimizer._model_variables_moving_average
    ]
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-7)
    # without averaging: nothing to do
    plain = keras.optimizers.SGD(0.1)
    assert training.warm_up_average(plain) is plain
    assert "_update_model_variables_moving_average" not in vars(plain)
