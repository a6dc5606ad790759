"""A resumed run sees each epoch's shuffled data in the order of a run that was not
interrupted, so it ends with the same weights."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from tests.training.training_test_utils import Interrupt, InterruptAt
from zoo import training
from zoo.training import TrainingConfig


class Batches(keras.callbacks.Callback):
    """Records the training loss of every batch."""

    def __init__(self):
        super().__init__()
        self.losses = []

    def on_train_batch_end(self, batch, logs=None):
        self.losses.append(float(logs["loss"]))


def _run(run_dir, interrupt_at=None, dropout=0.0, known_length=True):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 3)).astype("float32")
    y = x @ np.array([[1.0], [-2.0], [0.5]], "float32")
    keras.utils.set_random_seed(0)
    ds = (
        tf.data.Dataset.from_tensor_slices((x, y))
        .shuffle(64, seed=5, reshuffle_each_iteration=True)
        .batch(8)
    )
    if not known_length:  # Keras learns the number of batches in the first epoch
        ds = ds.filter(lambda x, y: True)
    layers = [keras.Input((3,)), keras.layers.Dense(8)]
    if dropout:
        layers.append(keras.layers.Dropout(dropout, seed=1))
    model = keras.Sequential([*layers, keras.layers.Dense(1)])
    model.compile(keras.optimizers.SGD(0.05), "mse")
    cfg = TrainingConfig(
        epochs=5, run_dir=str(run_dir), verbose=0, tensorboard=False, patience=0
    )
    losses = Batches()
    val = tf.data.Dataset.from_tensor_slices((x[:16], y[:16])).batch(8)
    training.fit(model, ds, val, cfg, callbacks=[InterruptAt(interrupt_at), losses])
    return model, losses.losses


@pytest.mark.parametrize("known_length", [True, False])
@pytest.mark.parametrize("interrupt_at", [1, 3])
def test_a_resumed_run_shuffles_as_an_uninterrupted_one(
    tmp_path, interrupt_at, known_length
):
    kw = dict(known_length=known_length)
    whole, whole_losses = _run(tmp_path / "whole", **kw)
    with pytest.raises(Interrupt):
        _run(tmp_path / "run", interrupt_at=interrupt_at, **kw)
    resumed, losses = _run(tmp_path / "run", **kw)
    np.testing.assert_allclose(losses, whole_losses[interrupt_at * 8 :], rtol=1e-5)
    for a, b in zip(resumed.get_weights(), whole.get_weights(), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def test_dropout_after_a_resume(tmp_path):
    whole, whole_losses = _run(tmp_path / "whole", dropout=0.3)
    with pytest.raises(Interrupt):
        _run(tmp_path / "run", interrupt_at=2, dropout=0.3)
    resumed, losses = _run(tmp_path / "run", dropout=0.3)
    np.testing.assert_allclose(losses, whole_losses[16:], rtol=1e-5)
    for a, b in zip(resumed.get_weights(), whole.get_weights(), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
