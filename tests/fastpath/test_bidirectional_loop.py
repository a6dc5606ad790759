"""`BidirectionalRNN`'s TensorFlow loop against Keras' `Bidirectional`."""

import keras
import numpy as np
import pytest

if keras.backend.backend() != "tensorflow":
    pytest.skip("the fast paths are TensorFlow code", allow_module_level=True)
tf = pytest.importorskip("tensorflow")

from tests.layers.test_bidirectional_rnn import (  # noqa: E402
    B,
    U,
    _inputs,
    _pair,
)
from zoo import fastpath  # noqa: E402
from zoo.fastpath import bidirectional_loop  # noqa: E402
from zoo.layers.bidirectional_rnn import BidirectionalRNN  # noqa: E402

# The same inputs and weight-sharing pair as the backend-neutral layer tests.


def _spy(monkeypatch):
    """Counts the directions the TensorFlow loop runs (two per call)."""
    calls, real = [], bidirectional_loop._direction

    def spy(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(bidirectional_loop, "_direction", spy)
    return calls


@pytest.mark.parametrize("rnn", [keras.layers.GRU, keras.layers.LSTM])
def test_same_outputs_states_and_gradients_as_keras(rnn, monkeypatch):
    x, mask = _inputs()
    reference, fused = _pair(rnn)
    calls = _spy(monkeypatch)
    expected, got = reference(x, mask=mask), fused(x, mask=mask)
    assert len(calls) == 2, "the fused loop did not run"
    assert len(got) == len(expected) == (3 if rnn is keras.layers.GRU else 5)
    for e, g in zip(expected, got, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), atol=1e-6)
    # masked steps output zeros, as Keras' Bidirectional does for sequences
    outputs = np.asarray(got[0])
    assert np.all(outputs[1, 3:] == 0.0) and np.any(outputs[1, :3] != 0.0)

    xt = tf.constant(x)

    def gradients(layer):
        with tf.GradientTape() as tape:
            tape.watch(xt)
            out = layer(xt, mask=mask)
            loss = sum(tf.reduce_sum(o * (i + 1.5)) for i, o in enumerate(out))
        return tape.gradient(loss, [xt, *layer.trainable_variables])

    for e, g in zip(gradients(reference), gradients(fused), strict=True):
        assert np.max(np.abs(np.asarray(e))) > 0
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), atol=2e-5)


def test_training_dropout_draws_keras_masks(monkeypatch):
    x, mask = _inputs()
    reference, fused = _pair(keras.layers.GRU, dropout=0.5, seed=3)
    # the same seed-generator state in both: the same per-sequence masks
    for a, b in zip(
        (reference.forward_layer, reference.backward_layer),
        (fused.forward_layer, fused.backward_layer),
        strict=True,
    ):
        b.cell.seed_generator.state.assign(a.cell.seed_generator.state)
    calls = _spy(monkeypatch)
    expected = reference(x, mask=mask, training=True)
    got = fused(x, mask=mask, training=True)
    assert len(calls) == 2
    for e, g in zip(expected, got, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), atol=1e-6)
    inference = fused(x, mask=mask, training=False)
    assert not np.allclose(np.asarray(inference[0]), np.asarray(got[0]))


def test_no_mask_and_no_states(monkeypatch):
    x, _ = _inputs()
    reference = keras.layers.Bidirectional(keras.layers.GRU(U, return_sequences=True))
    fused = BidirectionalRNN(keras.layers.GRU(U, return_sequences=True))
    reference(x)
    fused(x)
    fused.set_weights(reference.get_weights())
    calls = _spy(monkeypatch)
    np.testing.assert_allclose(
        np.asarray(fused(x)), np.asarray(reference(x)), atol=1e-6
    )
    assert len(calls) == 2


def test_switched_off_runs_keras(monkeypatch):
    x, mask = _inputs()
    reference, fused = _pair(keras.layers.GRU)
    calls = _spy(monkeypatch)
    with fastpath.scope(False):
        got = fused(x, mask=mask, training=True)
    assert not calls
    for e, g in zip(reference(x, mask=mask), got, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), atol=1e-6)
    monkeypatch.setenv("ZOO_FASTPATH", "0")
    fused(x, mask=mask)
    assert not calls
    monkeypatch.setenv("ZOO_FASTPATH", "1")
    fused(x, mask=mask)
    assert len(calls) == 2


@pytest.mark.parametrize(
    "layer",
    [
        lambda: keras.layers.GRU(U, return_sequences=True, recurrent_dropout=0.1),
        lambda: keras.layers.GRU(U, return_sequences=True, reset_after=False),
        lambda: keras.layers.GRU(U),  # last output only
        lambda: keras.layers.SimpleRNN(U, return_sequences=True),
    ],
    ids=["recurrent_dropout", "reset_before", "last_output", "simple_rnn"],
)
def test_other_configurations_use_keras(layer, monkeypatch):
    x, mask = _inputs()
    fused = BidirectionalRNN(layer())
    calls = _spy(monkeypatch)
    out = fused(x, mask=mask)
    assert not calls
    reference = keras.layers.Bidirectional(layer())
    reference(x, mask=mask)
    reference.set_weights(fused.get_weights())
    np.testing.assert_allclose(
        np.asarray(out), np.asarray(reference(x, mask=mask)), atol=1e-6
    )


def test_initial_state_runs_keras(monkeypatch):
    x, mask = _inputs()
    reference, fused = _pair(keras.layers.GRU)
    calls = _spy(monkeypatch)
    states = [np.full((B, U), 0.5, "float32")] * 2
    got = fused(x, mask=mask, initial_state=states)
    assert not calls
    expected = reference(x, mask=mask, initial_state=states)
    for e, g in zip(expected, got, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), atol=1e-6)
