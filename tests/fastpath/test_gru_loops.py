"""The GRU loops with written-out gradients against the layers' generic loops."""

import keras
import numpy as np
import pytest

if keras.backend.backend() != "tensorflow":
    pytest.skip("the fast paths are TensorFlow code", allow_module_level=True)
tf = pytest.importorskip("tensorflow")

from zoo import fastpath  # noqa: E402
from zoo.fastpath import bidirectional_loop, gru_loops  # noqa: E402
from zoo.layers.attention_decoder import AttentionDecoder  # noqa: E402
from zoo.layers.bidirectional_rnn import BidirectionalRNN  # noqa: E402

B, TT, TS, D, U = 5, 7, 6, 12, 16


def _decoder_inputs():
    rng = np.random.default_rng(1)
    ids = tf.constant(rng.integers(1, 30, (B, TT)), tf.int32)
    memory = tf.constant(rng.normal(size=(B, TS, D)), tf.float32)
    mask = np.ones((B, TS), bool)
    mask[1, 3:] = False
    mask[2, :] = False  # a fully masked row: zero weights, finite gradients
    mask[4, 5:] = False
    h0 = tf.constant(rng.normal(size=(B, U)), tf.float32)
    return ids, memory, tf.constant(mask), h0


def _decoder_gradients(decoder, fused, inputs, weights):
    ids, memory, mask, h0 = inputs
    w_logits, w_attention = weights
    with fastpath.scope(fused), tf.GradientTape() as tape:
        tape.watch([memory, h0])
        logits, attention = decoder(
            [ids, memory, mask, h0], return_attention=True, training=True
        )
        loss = tf.reduce_sum(logits * w_logits) + tf.reduce_sum(attention * w_attention)
    gradients = tape.gradient(loss, [memory, h0, *decoder.trainable_weights])
    return logits, attention, [tf.convert_to_tensor(g) for g in gradients]


def _spy(monkeypatch, module, name):
    """Counts the calls of `module.name`."""
    calls, real = [], getattr(module, name)

    def spy(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    return calls


def _assert_loop_matches_the_generic_loop(decoder, fast_loop, seed, monkeypatch):
    """Runs `decoder` (built on `_decoder_inputs`) with the fast paths on, checks
    that `gru_loops.<fast_loop>` ran once, and compares logits, attention and every
    gradient with the generic loop's."""
    inputs = _decoder_inputs()
    calls = _spy(monkeypatch, gru_loops, fast_loop)
    rng = np.random.default_rng(seed)
    weights = (
        tf.constant(rng.normal(size=(B, TT, 30)), tf.float32),
        tf.constant(rng.normal(size=(B, TT, TS)), tf.float32),
    )
    fused = _decoder_gradients(decoder, True, inputs, weights)
    assert len(calls) == 1, "the written-out loop did not run"
    generic = _decoder_gradients(decoder, False, inputs, weights)
    assert len(calls) == 1
    np.testing.assert_allclose(fused[0], generic[0], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(fused[1], generic[1], rtol=1e-6, atol=1e-6)
    assert np.all(np.asarray(fused[1])[2] == 0.0)  # the fully masked row
    for got, expected in zip(fused[2], generic[2], strict=True):
        assert np.all(np.isfinite(got))
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    # the gradients are not zero (the comparison above is not vacuous)
    assert all(float(tf.reduce_max(tf.abs(g))) > 0 for g in fused[2])


@pytest.mark.parametrize(
    "normalize, readout", [(False, "tanh"), (True, "tanh"), (False, "layer_norm")]
)
def test_decoder_loop_matches_the_generic_loop(normalize, readout, monkeypatch):
    # the readout (tanh or layer norm) is formed after the loop, from its outputs:
    # the written-out loop serves both
    keras.utils.set_random_seed(0)
    decoder = AttentionDecoder(
        vocab_size=30, units=U, attention_units=10, readout=readout
    )
    decoder.attention_layer.normalize = normalize
    decoder(list(_decoder_inputs()))
    assert gru_loops.applies_to_decoder(decoder, True)
    _assert_loop_matches_the_generic_loop(
        decoder, "bahdanau_gru_recurrence", 2, monkeypatch
    )


@pytest.mark.parametrize("score", ["general", "concat"])
def test_luong_loop_without_feeding_matches_the_generic_loop(score, monkeypatch):
    keras.utils.set_random_seed(0)
    decoder = AttentionDecoder(
        vocab_size=30, units=U, attention="luong", score=score, input_feeding=False
    )
    decoder(list(_decoder_inputs()))
    assert gru_loops.applies_without_feeding(decoder, True)
    assert not gru_loops.applies_to_decoder(decoder, True)
    _assert_loop_matches_the_generic_loop(
        decoder, "masked_gru_recurrence", 3, monkeypatch
    )


@pytest.mark.parametrize(
    "kwargs",
    [
        {"attention": "luong", "input_feeding": True},
        {"attention": "bahdanau"},
        {"attention": "luong", "input_feeding": False, "cell": "lstm"},
        {"attention": "luong", "input_feeding": False, "dtype": "mixed_float16"},
    ],
)
def test_other_decoders_do_not_run_the_luong_loop(kwargs):
    decoder = AttentionDecoder(vocab_size=30, units=U, **kwargs)
    assert not gru_loops.applies_without_feeding(decoder, True)


def test_decoder_loop_in_a_function_and_with_a_persistent_tape(monkeypatch):
    keras.utils.set_random_seed(0)
    decoder = AttentionDecoder(vocab_size=30, units=U)
    ids, memory, mask, h0 = _decoder_inputs()
    decoder([ids, memory, mask, h0])

    @tf.function
    def gradients(memory):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(memory)
            loss = tf.reduce_sum(decoder([ids, memory, mask, h0], training=True) ** 2)
        first = tape.gradient(loss, memory)
        second = tape.gradient(loss, decoder.cell.recurrent_kernel)
        return first, second

    calls = _spy(monkeypatch, gru_loops, "bahdanau_gru_recurrence")
    first, second = gradients(memory)
    assert len(calls) == 1, "the written-out loop did not run"
    with fastpath.scope(False), tf.GradientTape() as tape:
        tape.watch(memory)
        loss = tf.reduce_sum(decoder([ids, memory, mask, h0], training=True) ** 2)
    expected = tape.gradient(loss, [memory, decoder.cell.recurrent_kernel])
    assert len(calls) == 1
    assert float(tf.reduce_max(tf.abs(second))) > 0
    np.testing.assert_allclose(first, expected[0], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(second, expected[1], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"attention": "luong"},
        {"attention": "none"},
        {"cell": "lstm"},
        {"dtype": "mixed_float16"},
    ],
)
def test_other_decoders_use_the_generic_loop(kwargs):
    decoder = AttentionDecoder(vocab_size=30, units=U, **kwargs)
    assert not gru_loops.applies_to_decoder(decoder, True)


def test_encoder_loop_matches_the_generic_loop(monkeypatch):
    keras.utils.set_random_seed(0)
    T, E = 7, 6
    rng = np.random.default_rng(3)
    x = tf.constant(rng.normal(size=(B, T, E)), tf.float32)
    mask = np.ones((B, T), bool)
    mask[1, 3:] = False
    mask[2, :] = False
    mask[4, 6:] = False
    mask = tf.constant(mask)
    layer = BidirectionalRNN(
        keras.layers.GRU(U, return_sequences=True, return_state=True)
    )
    layer(x, mask=mask)
    weights = [
        tf.constant(rng.normal(size=shape), tf.float32)
        for shape in [(B, T, 2 * U), (B, U), (B, U)]
    ]
    calls = _spy(monkeypatch, gru_loops, "masked_gru_recurrence")

    def run():
        with tf.GradientTape() as tape:
            tape.watch(x)
            outputs = layer(x, mask=mask, training=True)
            loss = sum(
                tf.reduce_sum(o * w) for o, w in zip(outputs, weights, strict=True)
            )
        return outputs, tape.gradient(loss, [x, *layer.trainable_weights])

    fused_outputs, fused_gradients = run()
    assert len(calls) == 2  # both directions
    directions = _spy(monkeypatch, bidirectional_loop, "_direction")
    with fastpath.scope(False):
        keras_outputs, keras_gradients = run()  # Keras' Bidirectional
    assert len(calls) == 2 and not directions
    monkeypatch.setattr(gru_loops, "can_use_cell", lambda *args: False)
    # the loop with the input products hoisted, its gradient TensorFlow's own
    generic_outputs, generic_gradients = run()
    assert len(calls) == 2 and len(directions) == 2
    for outputs, gradients in (
        (generic_outputs, generic_gradients),
        (keras_outputs, keras_gradients),
    ):
        for got, expected in zip(fused_outputs, outputs, strict=True):
            np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
        for got, expected in zip(fused_gradients, gradients, strict=True):
            np.testing.assert_allclose(got, expected, rtol=1e-5, atol=2e-5)
    assert all(float(tf.reduce_max(tf.abs(g))) > 0 for g in fused_gradients)
