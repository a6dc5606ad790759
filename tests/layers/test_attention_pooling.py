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
from zoo.layers.attention_pooling import AttentionPooling


def _numpy_reference(x, w, b, u, mask=None):
    hidden = np.tanh(x @ w + b)  # (B, T, units)
    scores = hidden @ u  # (B, T)
    if mask is None:
        mask = np.ones(scores.shape, bool)
    scores = np.where(mask, scores, -np.inf)
    out_w = np.zeros_like(scores)
    for i in range(scores.shape[0]):
        if mask[i].any():
            e = np.exp(scores[i] - scores[i][mask[i]].max())
            out_w[i] = np.where(mask[i], e, 0.0) / np.where(mask[i], e, 0.0).sum()
    pooled = (out_w[..., None] * x).sum(axis=1)
    return pooled, out_w


def test_config_roundtrip():
    restored = assert_config_roundtrip(
        AttentionPooling, {"units": 7, "use_bias": False, "name": "pool"}
    )
    assert restored.units == 7 and restored.use_bias is False


def test_shapes():
    x = np.random.rand(3, 5, 4).astype("float32")
    assert_shapes(lambda: AttentionPooling(6), x, (3, 4))
    assert_shapes(
        lambda: AttentionPooling(6),
        x,
        [(3, 4), (3, 5)],
        return_attention_scores=True,
    )
    # Leading axes are kept: (B, S, T, D) -> (B, S, D).
    x4 = np.random.rand(2, 3, 5, 4).astype("float32")
    pooled, weights = AttentionPooling(6)(x4, return_attention_scores=True)
    assert tuple(pooled.shape) == (2, 3, 4) and tuple(weights.shape) == (2, 3, 5)


def test_values_match_numpy_reference_with_padding():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 5, 4)).astype("float32")
    mask = np.array([[1, 1, 1, 1, 1], [1, 1, 0, 0, 0], [0, 0, 0, 0, 0]], dtype=bool)
    layer = AttentionPooling(6)
    layer.build(x.shape)
    w = rng.normal(size=(4, 6)).astype("float32")
    b = rng.normal(size=(6,)).astype("float32")
    u = rng.normal(size=(6,)).astype("float32")
    layer.set_weights([w, b, u])
    pooled, weights = to_numpy(layer(x, mask=mask, return_attention_scores=True))
    ref_pooled, ref_weights = _numpy_reference(x, w, b, u, mask)
    np.testing.assert_allclose(weights, ref_weights, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(pooled, ref_pooled, rtol=1e-5, atol=1e-6)
    # Padded positions get exactly zero, rows sum to one, the fully masked row is 0.
    assert np.all(weights[1, 2:] == 0.0)
    np.testing.assert_allclose(weights[:2].sum(-1), [1.0, 1.0], rtol=1e-6)
    assert np.all(weights[2] == 0.0) and np.all(pooled[2] == 0.0)
    assert np.all(np.isfinite(pooled))


def test_hand_computed_two_positions():
    # units=1, W=1, b=0, u=1: scores are tanh(x), so weights = softmax(tanh(x)).
    x = np.array([[[0.0], [1.0]]], dtype="float32")
    layer = AttentionPooling(1)
    layer.build(x.shape)
    layer.set_weights([np.ones((1, 1)), np.zeros(1), np.ones(1)])
    pooled, weights = to_numpy(layer(x, return_attention_scores=True))
    e = np.exp([0.0, np.tanh(1.0)])
    expected = e / e.sum()
    np.testing.assert_allclose(weights[0], expected, rtol=1e-6)
    np.testing.assert_allclose(pooled[0, 0], expected[1], rtol=1e-6)


def test_padding_values_do_not_change_output():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 4, 3)).astype("float32")
    mask = np.array([[1, 1, 0, 0], [1, 1, 1, 0]], dtype=bool)
    layer = AttentionPooling(5)
    a = to_numpy(layer(x, mask=mask))
    x2 = x.copy()
    x2[~mask] = 1e4  # garbage in padded slots
    b = to_numpy(layer(x2, mask=mask))
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_mask_from_embedding_and_compute_mask_is_none():
    ids = np.array([[3, 4, 0, 0], [0, 0, 0, 0]])
    inputs = keras.Input((None,), dtype="int32")
    emb = keras.layers.Embedding(10, 4, mask_zero=True)(inputs)
    pooled, weights = AttentionPooling(3)(emb, return_attention_scores=True)
    model = keras.Model(inputs, [pooled, weights])
    out_pooled, out_weights = to_numpy(model(ids))
    np.testing.assert_array_equal(out_weights[0, 2:], [0.0, 0.0])
    np.testing.assert_allclose(out_weights[0].sum(), 1.0, rtol=1e-6)
    np.testing.assert_array_equal(out_weights[1], np.zeros(4))
    np.testing.assert_array_equal(out_pooled[1], np.zeros(4))
    assert AttentionPooling(3).compute_mask(emb, mask=np.ones((1, 4), bool)) is None


def _model():
    inputs = keras.Input((5, 4))
    pooled = AttentionPooling(6)(inputs)
    return keras.Model(inputs, keras.layers.Dense(2)(pooled))


def test_keras_file_roundtrip(tmp_path):
    x = np.random.rand(3, 5, 4).astype("float32")
    loaded, out = assert_keras_file_roundtrip(_model(), x, tmp_path)
    assert out.shape == (3, 2)
    assert isinstance(loaded.layers[1], AttentionPooling)


def test_fit_step_updates_every_weight():
    x = np.random.rand(8, 5, 4).astype("float32")
    y = np.random.rand(8, 2).astype("float32")
    loss = assert_one_fit_step(_model(), x, y, all_weights=True)
    assert loss > 0


def test_float16_finite_with_fully_masked_row():
    x = np.random.rand(2, 5, 4).astype("float32") * 100
    mask = np.array([[1, 1, 1, 0, 0], [0, 0, 0, 0, 0]], dtype=bool)
    pooled, weights = assert_float16_finite(
        lambda: AttentionPooling(6), x, mask=mask, return_attention_scores=True
    )
    assert np.all(weights[1] == 0) and np.all(weights[0, 3:] == 0)
    np.testing.assert_allclose(float(weights[0].sum()), 1.0, atol=2e-3)


@pytest.mark.parametrize("units", [0, -3, 2.5, None, True])
def test_invalid_units_name_the_value(units):
    with pytest.raises(ValueError, match="units"):
        AttentionPooling(units)
