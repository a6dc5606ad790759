import keras
import numpy as np
import pytest
import tensorflow as tf

from tests.training.training_test_utils import Interrupt, RawWeights, logged_rates
from zoo import training
from zoo.errors import ConfigError
from zoo.training import TrainingConfig


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
    recorder = RawWeights(interrupt_at)
    training.fit(model, ds, ds, cfg, callbacks=[recorder])
    return model, recorder.steps, (x, y)


def _cosine(step, total, rate=0.05):
    return rate * 0.5 * (1 + np.cos(np.pi * min(step / total, 1.0)))


def _sgd_steps(start, rates, data, first_step=0):
    """The weights after each SGD step of the 4-batch regression when step i runs at
    `rates[i]`: w <- w - rate * gradient."""
    x, y = data
    weights, out = start, []
    for i, rate in enumerate(rates):
        batch = slice(8 * ((first_step + i) % 4), 8 * ((first_step + i) % 4) + 8)
        kernel, bias = weights
        error = x[batch] @ kernel + bias - y[batch]
        gradient = [2 * x[batch].T @ error / 8, 2 * error.mean(0)]
        weights = [p - rate * g for p, g in zip(weights, gradient, strict=True)]
        out.append(weights)
    return out


def _assert_steps(got_steps, want_steps):
    assert len(got_steps) == len(want_steps)
    for got, want in zip(got_steps, want_steps, strict=True):
        for a, b in zip(got, want, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


ZEROS = [np.zeros((3, 1), "float32"), np.zeros(1, "float32")]


def test_cosine_schedule_sets_every_steps_rate_and_ends_at_zero(tmp_path):
    model, steps, (x, y) = _cosine_run(tmp_path / "run")
    schedule = model.optimizer._learning_rate
    assert isinstance(schedule, training.CosineToZero)
    assert schedule.total_steps == 16  # set by fit: 4 batches x 4 epochs
    # each SGD step used the rate of its step number
    _assert_steps(steps, _sgd_steps(ZEROS, [_cosine(i, 16) for i in range(16)], (x, y)))
    # the log holds the rate at each epoch's end, down to zero
    np.testing.assert_allclose(
        logged_rates(tmp_path / "run"),
        [_cosine(s, 16) for s in (4, 8, 12, 16)],
        atol=1e-7,
    )
    # best.keras keeps the schedule
    best = keras.saving.load_model(tmp_path / "run" / "best.keras")
    assert best.optimizer._learning_rate.get_config() == schedule.get_config()


def test_cosine_schedule_survives_a_resume(tmp_path):
    whole, _, _ = _cosine_run(tmp_path / "whole")
    with pytest.raises(Interrupt):
        _cosine_run(tmp_path / "run", interrupt_at=2)
    resumed, steps, _ = _cosine_run(tmp_path / "run")
    assert len(steps) == 8  # epochs 3 and 4 only
    for a, b in zip(resumed.get_weights(), whole.get_weights(), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5)
    np.testing.assert_allclose(
        logged_rates(tmp_path / "run"), logged_rates(tmp_path / "whole")
    )


def test_cosine_run_is_not_extended_on_resume(tmp_path):
    # every step's rate depends on the run's length: more epochs is another run
    with pytest.raises(Interrupt):
        _cosine_run(tmp_path / "run", interrupt_at=2)
    with pytest.raises(training.RunMismatchError, match="training.epochs: 4 -> 6"):
        _cosine_run(tmp_path / "run", epochs=6)


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


def test_plateau_decay_refuses_a_scheduled_optimizer(tmp_path):
    ds = tf.data.Dataset.from_tensor_slices((np.ones((8, 3)), np.ones((8, 1)))).batch(4)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(keras.optimizers.SGD(training.CosineToZero(0.1, 10)), "mse")
    cfg = TrainingConfig(run_dir=str(tmp_path), verbose=0, decay_factor=0.5)
    with pytest.raises(ValueError, match="fixed learning rate"):
        training.fit(model, ds, ds, cfg)


def test_schedule_flag_and_bad_values():
    from tests.recipe import toy_recipe

    with pytest.raises(SystemExit):
        toy_recipe.parse(["--schedule", "linear"])
    cfg = toy_recipe.parse(["--schedule", "cosine"]).training
    assert cfg.schedule == "cosine"
    assert isinstance(training.scheduled_learning_rate(cfg), training.CosineToZero)
    assert training.scheduled_learning_rate(TrainingConfig(learning_rate=0.3)) == 0.3
    with pytest.raises(ConfigError, match="schedule='linear'"):
        TrainingConfig(schedule="linear")
    # the rate annealed over --time-limit lost on validation and was removed
    for removed in ("time", "auto"):
        with pytest.raises(ConfigError, match=f"schedule='{removed}'"):
            TrainingConfig(schedule=removed, time_limit=5.0)
        with pytest.raises(SystemExit):
            toy_recipe.parse(["--schedule", removed])
    with pytest.raises(ConfigError, match="decay_factor=0.5"):
        TrainingConfig(schedule="cosine", decay_factor=0.5)
