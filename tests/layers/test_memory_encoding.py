import keras
import numpy as np
import pytest

from tests.layers.layer_test_utils import (
    assert_config_roundtrip,
    assert_float16_finite,
    assert_keras_file_roundtrip,
    assert_one_fit_step,
    assert_shapes,
    to_numpy,
)
from zoo.layers.memory_encoding import PositionEncoding, TemporalEncoding


def reference_pe(length, depth):
    """The paper's l_kj, j = 1..J, k = 1..d, as a (J, d) NumPy array."""
    out = np.zeros((length, depth))
    for j in range(1, length + 1):
        for k in range(1, depth + 1):
            out[j - 1, k - 1] = (1 - j / length) - (k / depth) * (1 - 2 * j / length)
    return out


PAPER = {"length": "words", "scale": 1.0}


def test_position_weights_match_the_paper_formula():
    mask = np.array([[True, True, True, True, False, False]])
    weights = to_numpy(PositionEncoding(**PAPER).weights_for(mask, 5))[0]  # (6, 5)
    np.testing.assert_allclose(weights[:4], reference_pe(4, 5), rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(weights[4:], np.zeros((2, 5)))


def test_position_encoding_sums_weighted_words_and_ignores_padding():
    rng = np.random.default_rng(0)
    words = rng.normal(size=(2, 3, 5, 4)).astype("float32")  # (B, M, J, d)
    lengths = np.array([[5, 2, 0], [3, 1, 4]])
    mask = np.arange(5)[None, None, :] < lengths[..., None]
    out = to_numpy(PositionEncoding(**PAPER)(words, mask=mask))
    assert out.shape == (2, 3, 4)
    for b in range(2):
        for m in range(3):
            n = lengths[b, m]
            expected = (
                (reference_pe(n, 4) * words[b, m, :n]).sum(0) if n else np.zeros(4)
            )
            np.testing.assert_allclose(out[b, m], expected, rtol=1e-5, atol=1e-6)
    # Padding values do not leak into the result.
    noisy = words.copy()
    noisy[~mask] = 1e3
    np.testing.assert_allclose(
        to_numpy(PositionEncoding(**PAPER)(noisy, mask=mask)),
        out,
        rtol=1e-5,
        atol=1e-5,
    )


def test_position_encoding_mask_propagates_to_slots():
    words = np.ones((1, 3, 4, 2), "float32")
    mask = np.array([[[1, 1, 0, 0], [0, 0, 0, 0], [1, 0, 0, 0]]], bool)
    slot_mask = to_numpy(PositionEncoding().compute_mask(words, mask))
    np.testing.assert_array_equal(slot_mask, [[True, False, True]])
    assert PositionEncoding().compute_mask(words, None) is None


def test_position_encoding_without_mask_uses_full_length():
    words = np.ones((1, 3, 2), "float32")
    out = to_numpy(PositionEncoding(**PAPER)(words))
    np.testing.assert_allclose(out[0], reference_pe(3, 2).sum(0), rtol=1e-6)
    # The default form: J = padded length (3 here too), weights doubled.
    out = to_numpy(PositionEncoding()(words))
    np.testing.assert_allclose(out[0], 2 * reference_pe(3, 2).sum(0), rtol=1e-6)


def test_default_position_weights_use_the_padded_length_and_double():
    # Real words at positions 0, 1, 3 of 6: j = 1, 2, 3 with J = 6 for all.
    mask = np.array([[True, True, False, True, False, False]])
    weights = to_numpy(PositionEncoding().weights_for(mask, 4))[0]  # (6, 4)
    expected = 2 * reference_pe(6, 4)[:3]
    np.testing.assert_allclose(weights[[0, 1, 3]], expected, rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(weights[[2, 4, 5]], np.zeros((3, 4)))
    # 1 + 4 (j/J - 1/2)(k/d - 1/2), the form of the authors' code.
    j = np.arange(1, 4)[:, None] / 6
    k = np.arange(1, 5)[None, :] / 4
    np.testing.assert_allclose(
        weights[[0, 1, 3]], 1 + 4 * (j - 0.5) * (k - 0.5), rtol=1e-6, atol=1e-6
    )
    # A word's weights do not depend on its sentence's length.
    short = np.array([[True, True, False, False, False, False]])
    weights_short = to_numpy(PositionEncoding().weights_for(short, 4))[0]
    np.testing.assert_allclose(weights_short[:2], weights[:2], rtol=1e-6)


def test_position_encoding_rejects_bad_arguments():
    with pytest.raises(ValueError, match="length='sentence'"):
        PositionEncoding(length="sentence")
    with pytest.raises(ValueError, match="scale=0"):
        PositionEncoding(scale=0)


def test_position_encoding_shapes_and_config():
    assert_shapes(PositionEncoding, np.ones((2, 5, 7, 3), "float32"), (2, 5, 3))
    assert_config_roundtrip(PositionEncoding, {"name": "pe"})
    assert_config_roundtrip(PositionEncoding, {"name": "pe", **PAPER})


def test_temporal_encoding_adds_slot_vectors():
    layer = TemporalEncoding(4)
    x = np.zeros((2, 3, 5), "float32")
    out = to_numpy(layer(x))
    table = to_numpy(layer.embeddings)
    assert table.shape == (4, 5)
    np.testing.assert_allclose(out[0], table[:3])
    np.testing.assert_allclose(out[1], table[:3])
    assert_shapes(lambda: TemporalEncoding(4), x, (2, 3, 5))


def test_temporal_encoding_rejects_bad_sizes():
    with pytest.raises(ValueError, match="memory_size=0"):
        TemporalEncoding(0)
    with pytest.raises(ValueError, match="shape"):
        TemporalEncoding(2)(np.zeros((1, 3, 4), "float32"))


def test_temporal_encoding_config_keras_file_fit_float16(tmp_path):
    assert_config_roundtrip(TemporalEncoding, {"memory_size": 6})
    inputs = keras.Input((6, 4))
    pooled = keras.layers.GlobalAveragePooling1D()(TemporalEncoding(6)(inputs))
    model = keras.Model(inputs, keras.layers.Dense(1)(pooled))
    x = np.random.default_rng(1).normal(size=(4, 6, 4)).astype("float32")
    assert_keras_file_roundtrip(model, x, tmp_path)
    assert_one_fit_step(model, x, np.ones((4, 1), "float32"), all_weights=True)
    assert_float16_finite(lambda: TemporalEncoding(6), x)


def test_position_encoding_float16_finite():
    x = np.random.default_rng(2).normal(size=(2, 3, 5, 4)).astype("float32")
    mask = np.ones((2, 3, 5), bool)
    mask[0, 1] = False
    out = assert_float16_finite(PositionEncoding, x, mask=mask)
    np.testing.assert_array_equal(out[0, 1], np.zeros(4))
