"""The workarounds of Keras internals: the version guard, and that the internals they
use are where they expect them in the installed Keras."""

import keras
import numpy as np
import pytest

from zoo.training import keras_workarounds
from zoo.training.keras_workarounds import UnsupportedKerasError


def test_the_installed_keras_is_in_the_supported_range():
    low, high = keras_workarounds.KERAS_VERSIONS
    assert low <= keras_workarounds.keras_version() < high


@pytest.mark.parametrize("version", ["3.16.0", "3.14.2", "4.0.0"])
def test_a_keras_outside_the_range_fails_loudly(monkeypatch, version):
    monkeypatch.setattr(keras, "__version__", version)
    optimizer = keras.optimizers.SGD(0.1)
    with pytest.raises(UnsupportedKerasError) as caught:
        keras_workarounds.moving_average_pairs(optimizer)
    message = str(caught.value)
    assert "moving_average_pairs" in message and "keras-team/keras#18949" in message
    assert "keras>=3.15,<3.16" in message and f"keras is {version}" in message
    with pytest.raises(UnsupportedKerasError, match="replace_average_momentum"):
        keras_workarounds.replace_average_momentum(optimizer, lambda *a: 0.5)


def test_a_missing_internal_fails_loudly():
    with pytest.raises(UnsupportedKerasError, match="has no attribute '_gone'"):
        keras_workarounds.require("example", "an issue", (object(), "_gone"))


def test_moving_average_pairs_align_weights_and_averages():
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    model.compile(keras.optimizers.SGD(0.1, use_ema=True), "mse")
    model.optimizer.build(model.trainable_variables)
    pairs = keras_workarounds.moving_average_pairs(model.optimizer)
    assert [v.path for v, _ in pairs] == [v.path for v in model.trainable_variables]
    assert [tuple(a.shape) for _, a in pairs] == [(3, 2), (2,)]


def _half(iterations, ema_momentum, dtype):
    return keras.ops.cast(0.5, dtype)


def test_replace_average_momentum_replaces_keras_update_on_one_optimizer():
    # Keras' method exists where the replacement expects it, with the signature it
    # replaces, and is called by every backend's apply
    name = "_update_model_variables_moving_average"
    assert callable(getattr(keras.optimizers.Optimizer, name))
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    optimizer = keras.optimizers.SGD(0.1, use_ema=True, ema_momentum=0.9)
    other = keras.optimizers.SGD(0.1, use_ema=True, ema_momentum=0.9)
    model.compile(optimizer, "mse")
    keras_workarounds.replace_average_momentum(optimizer, _half)
    assert name in vars(optimizer) and name not in vars(other)
    x, y = np.ones((2, 3), "float32"), np.zeros((2, 1), "float32")
    model.train_on_batch(x, y)
    w1 = model.get_weights()
    model.train_on_batch(x, y)
    w2 = model.get_weights()
    pairs = keras_workarounds.moving_average_pairs(optimizer)
    for (_, average), a, b in zip(pairs, w1, w2, strict=True):
        # the average's slots start at zero: 0.5 * (0.5 * 0 + 0.5 w1) + 0.5 w2
        np.testing.assert_allclose(average, 0.25 * a + 0.5 * b, rtol=1e-6)


def test_replace_average_momentum_respects_and_refuses_overrides():
    class WarmsUpItself(keras.optimizers.SGD):
        average_warm_up = True

        def _update_model_variables_moving_average(self, trainable_variables):
            pass

    class Overrides(keras.optimizers.SGD):
        def _update_model_variables_moving_average(self, trainable_variables):
            pass

    own = WarmsUpItself(0.1, use_ema=True)
    keras_workarounds.replace_average_momentum(own, _half)
    assert "_update_model_variables_moving_average" not in vars(own)
    with pytest.raises(ValueError, match="Overrides overrides Keras'"):
        keras_workarounds.replace_average_momentum(Overrides(0.1, use_ema=True), _half)


@pytest.mark.parametrize("known_length", [True, False])
def test_epoch_iterators_counts_what_fit_creates(monkeypatch, known_length):
    import tensorflow as tf

    x = np.zeros((32, 3), "float32")
    ds = tf.data.Dataset.from_tensor_slices((x, x[:, :1])).batch(8)
    if not known_length:
        ds = ds.filter(lambda a, b: True)
    created = []
    real = tf.data.Dataset.__iter__

    def counting(self):
        if self is ds:
            created.append(1)
        return real(self)

    monkeypatch.setattr(tf.data.Dataset, "__iter__", counting)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    model.fit(ds, epochs=3, verbose=0, shuffle=False)
    assert len(created) == keras_workarounds.epoch_iterators(ds, 3)
    assert keras_workarounds.epoch_iterators(ds, 0) == 0
