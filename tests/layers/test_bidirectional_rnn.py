"""`BidirectionalRNN` is Keras' `Bidirectional`: outputs, gradients, saving, loops."""

import keras
import numpy as np
import pytest
from keras import ops

from tests.layers.layer_test_utils import (
    assert_config_roundtrip,
    loss_and_gradients,
    to_numpy,
)
from zoo.layers import recurrence
from zoo.layers.bidirectional_rnn import BidirectionalRNN

B, T, E, U = 5, 7, 6, 4
LENGTHS = np.array([7, 3, 1, 5, 6])


def _inputs():
    x = np.random.default_rng(0).normal(size=(B, T, E)).astype("float32")
    mask = np.arange(T)[None, :] < LENGTHS[:, None]  # right padding
    return x, mask


def _pair(rnn, **kwargs):
    """A Keras Bidirectional and a BidirectionalRNN with the same weights."""
    x, mask = _inputs()
    reference = keras.layers.Bidirectional(
        rnn(U, return_sequences=True, return_state=True, **kwargs)
    )
    layer = BidirectionalRNN(rnn(U, return_sequences=True, return_state=True, **kwargs))
    reference(x, mask=mask)
    layer(x, mask=mask)
    layer.set_weights(reference.get_weights())
    return reference, layer


@pytest.mark.parametrize("rnn", [keras.layers.GRU, keras.layers.LSTM])
def test_same_outputs_states_and_gradients_as_keras(rnn):
    x, mask = _inputs()
    reference, layer = _pair(rnn)

    def loss_fn(layer):
        def fn(xt):
            outputs = layer(xt, mask=mask, training=True)
            loss = sum(ops.sum(o * (i + 1.5)) for i, o in enumerate(outputs))
            return loss, outputs

        return fn

    expected, expected_grads = loss_and_gradients(
        loss_fn(reference), [x], reference.trainable_weights
    )
    got, grads = loss_and_gradients(loss_fn(layer), [x], layer.trainable_weights)
    assert len(got) == len(expected) == (3 if rnn is keras.layers.GRU else 5)
    for e, g in zip(expected, got, strict=True):
        np.testing.assert_allclose(g, e, atol=1e-6)
    # masked steps output zeros, as Keras' Bidirectional does for sequences
    assert np.all(got[0][1, 3:] == 0.0) and np.any(got[0][1, :3] != 0.0)
    for e, g in zip(expected_grads, grads, strict=True):
        assert np.max(np.abs(e)) > 0
        np.testing.assert_allclose(g, e, atol=2e-5)


def test_initial_state_and_last_output():
    x, mask = _inputs()
    reference, layer = _pair(keras.layers.GRU)
    states = [np.full((B, U), 0.5, "float32")] * 2
    expected = to_numpy(reference(x, mask=mask, initial_state=states))
    got = to_numpy(layer(x, mask=mask, initial_state=states))
    for e, g in zip(expected, got, strict=True):
        np.testing.assert_allclose(g, e, atol=1e-6)
    last = BidirectionalRNN(keras.layers.LSTM(U))
    assert tuple(last(x, mask=mask).shape) == (B, 2 * U)


class _Recorder:
    """A registered loop that records its calls and returns Keras' outputs."""

    def __init__(self, applies):
        self.calls = []
        self.applies = applies

    def __call__(self, layer, sequences, mask, training):
        self.calls.append(training)
        return keras.layers.Bidirectional.call(
            layer, sequences, mask=mask, training=training
        )


@pytest.fixture
def recorder():
    loop = _Recorder(lambda layer, training: bool(training))
    recurrence.register_loop(recurrence.BIDIRECTIONAL_LOOP, loop, loop.applies)
    yield loop
    recurrence.unregister_loop(recurrence.BIDIRECTIONAL_LOOP, loop)


def test_calls_a_registered_loop_where_it_applies(recorder):
    x, mask = _inputs()
    reference, layer = _pair(keras.layers.GRU)
    # the most recent registration is asked first
    assert recurrence.registered_loops(recurrence.BIDIRECTIONAL_LOOP)[-1] is recorder
    got = to_numpy(layer(x, mask=mask, training=True))
    assert recorder.calls == [True]
    layer(x, mask=mask, training=False)  # `applies` is False
    layer(x, mask=mask, training=True, initial_state=[np.zeros((B, U))] * 2)
    assert recorder.calls == [True]
    expected = to_numpy(reference(x, mask=mask, training=True))
    for e, g in zip(expected, got, strict=True):
        np.testing.assert_allclose(g, e, atol=1e-6)


def test_config_round_trip_and_keras_file(tmp_path):
    x, _ = _inputs()
    assert_config_roundtrip(
        BidirectionalRNN, {"layer": keras.layers.GRU(U, return_sequences=True)}
    )
    inputs = keras.Input((None, E))
    outputs = BidirectionalRNN(keras.layers.LSTM(U, return_sequences=True))(inputs)
    model = keras.Model(inputs, outputs)
    path = tmp_path / "m.keras"
    model.save(path)
    loaded = keras.saving.load_model(path)
    assert isinstance(loaded.layers[1], BidirectionalRNN)
    np.testing.assert_allclose(to_numpy(loaded(x)), to_numpy(model(x)), atol=1e-6)
