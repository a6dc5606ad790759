import argparse

import keras
import numpy as np
import pytest
import tensorflow as tf

from tests.training.training_test_utils import Interrupt, RawWeights
from zoo import training
from zoo.training import TrainingConfig, add_training_args


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
    recorder = RawWeights(interrupt_at)
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
