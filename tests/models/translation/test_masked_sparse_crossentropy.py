import math

import keras
import numpy as np
import pytest

from zoo.models.translation.masked_sparse_crossentropy import MaskedSparseCrossentropy


def test_masked_loss_hand_values():
    y_true = np.array([[1, 2, 0]], "int32")
    logits = np.zeros((1, 3, 4), "float32")  # uniform: -log(1/4) per token
    loss = float(MaskedSparseCrossentropy()(y_true, logits))
    np.testing.assert_allclose(loss, math.log(4), rtol=1e-6)
    logits[0, 2] = [100, -100, 5, 7]  # the padded position must not matter
    np.testing.assert_allclose(
        float(MaskedSparseCrossentropy()(y_true, logits)), math.log(4), rtol=1e-6
    )
    # label smoothing: (1 - e) * nll + e * mean(-log p); equal for uniform logits
    logits = np.log(np.array([[[0.7, 0.1, 0.1, 0.1]]], "float32"))
    got = float(MaskedSparseCrossentropy(0.2)(np.array([[0]], "int32") + 1, logits))
    expected = 0.8 * -math.log(0.1) + 0.2 * -np.mean(np.log([0.7, 0.1, 0.1, 0.1]))
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    with pytest.raises(ValueError, match="Received: label_smoothing=1.0"):
        MaskedSparseCrossentropy(1.0)


def test_all_padding_gives_zero_loss_not_nan():
    loss = MaskedSparseCrossentropy(0.1)(np.zeros((2, 3), "int32"), np.ones((2, 3, 5)))
    assert float(loss) == 0.0


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_masked_loss_gradient_equals_log_softmax_autodiff(smoothing):
    import tensorflow as tf

    rng = np.random.default_rng(1)
    y_true = rng.integers(1, 9, (3, 5)).astype("int32")
    y_true[1, 2:] = 0
    # large logits too: the written-out gradient must not overflow where exp would
    logits = tf.constant(rng.normal(0, 30, (3, 5, 9)).astype("float32"))
    mask = (y_true != 0).astype("float32")

    with tf.GradientTape(persistent=True) as tape:
        tape.watch(logits)
        got = MaskedSparseCrossentropy(smoothing)(y_true, logits)
        log_probs = tf.nn.log_softmax(logits)
        nll = -tf.gather(log_probs, y_true, axis=-1, batch_dims=2)
        smooth = -tf.reduce_mean(log_probs, axis=-1)
        per_token = (1 - smoothing) * nll + smoothing * smooth
        expected = tf.reduce_sum(per_token * mask) / mask.sum()
    np.testing.assert_allclose(float(got), float(expected), rtol=1e-5)
    got_grad = tape.gradient(got, logits).numpy()
    expected_grad = tape.gradient(expected, logits).numpy()
    assert np.all(np.isfinite(got_grad))
    np.testing.assert_allclose(got_grad, expected_grad, atol=1e-6)
    assert np.all(got_grad[1, 2:] == 0)  # padded positions get no gradient


def test_config_round_trip():
    loss = MaskedSparseCrossentropy(0.2, pad_id=3)
    config = keras.saving.serialize_keras_object(loss)
    assert config["registered_name"] == "zoo>MaskedSparseCrossentropy"
    restored = keras.saving.deserialize_keras_object(config)
    assert (restored.label_smoothing, restored.pad_id) == (0.2, 3)
    assert "reduction" not in restored.get_config()
