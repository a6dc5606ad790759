import keras
import numpy as np
import pytest
from keras import ops

from tests.layers.layer_test_utils import (
    assert_config_roundtrip,
    assert_float16_finite,
    assert_keras_file_roundtrip,
    assert_one_fit_step,
    assert_shapes,
    loss_and_gradients,
)
from zoo.layers.structured_self_attention import (
    StructuredSelfAttention,
    orthogonality_penalty,
)


def _reference(h, w1, w2, mask=None):
    """NumPy reference: A, M and the batch-mean penalty, with empty rows handled."""
    scores = np.tanh(h @ w1) @ w2  # (B, T, r)
    scores = np.transpose(scores, (0, 2, 1))  # (B, r, T)
    b, r, t = scores.shape
    if mask is None:
        mask = np.ones((b, t), bool)
    a = np.zeros_like(scores)
    for i in range(b):
        valid = mask[i].astype(bool)
        if not valid.any():
            continue
        s = scores[i][:, valid]
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        a[i][:, valid] = e / e.sum(axis=-1, keepdims=True)
    m = a @ h
    pens = []
    for i in range(b):
        eye = np.eye(r) if mask[i].any() else np.zeros((r, r))
        pens.append(np.sum((a[i] @ a[i].T - eye) ** 2))
    return a, m, np.array(pens)


def _weights(layer):
    return ops.convert_to_numpy(layer.w_s1), ops.convert_to_numpy(layer.w_s2)


def test_config_roundtrip():
    restored = assert_config_roundtrip(
        StructuredSelfAttention, {"units": 8, "num_hops": 3, "penalty": 0.5}
    )
    assert restored.penalty == 0.5 and restored.num_hops == 3 and restored.units == 8


def test_shapes():
    h = np.random.randn(2, 5, 6).astype("float32")
    assert_shapes(lambda: StructuredSelfAttention(4, 3), h, (2, 3, 6))
    assert_shapes(
        lambda: StructuredSelfAttention(4, 3),
        h,
        [(2, 3, 6), (2, 3, 5)],
        return_attention_scores=True,
    )


def test_values_match_numpy_reference_with_padding():
    rng = np.random.default_rng(0)
    h = rng.normal(size=(3, 5, 4)).astype("float32")
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [0, 0, 0, 0, 0]], bool)
    layer = StructuredSelfAttention(units=6, num_hops=3, penalty=2.0)
    m, a = layer(h, mask=mask, return_attention_scores=True)
    ref_a, ref_m, ref_p = _reference(h, *_weights(layer), mask=mask)
    a, m = ops.convert_to_numpy(a), ops.convert_to_numpy(m)
    np.testing.assert_allclose(a, ref_a, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(m, ref_m, rtol=1e-5, atol=1e-5)
    # padded tokens: exactly 0; fully masked sentence: zeros, finite
    assert np.all(a[0, :, 3:] == 0.0)
    np.testing.assert_allclose(a[0].sum(-1), np.ones(3), rtol=1e-6)
    assert np.all(a[2] == 0.0) and np.all(m[2] == 0.0)
    # add_loss holds exactly penalty * mean(reference)
    assert len(layer.losses) == 1
    np.testing.assert_allclose(
        float(ops.convert_to_numpy(layer.losses[0])), 2.0 * ref_p.mean(), rtol=1e-5
    )
    assert ref_p[2] == 0.0  # empty sentence contributes 0, not r
    per_example = ops.convert_to_numpy(orthogonality_penalty(a, mask))
    np.testing.assert_allclose(per_example, ref_p, rtol=1e-5, atol=1e-6)
    norms = ops.convert_to_numpy(orthogonality_penalty(a, mask, squared=False))
    np.testing.assert_allclose(norms, np.sqrt(ref_p), rtol=1e-5, atol=1e-6)


def test_hand_computed_penalty():
    # two hops both on token 0: A A^T = [[1, 1], [1, 1]] -> ||. - I||^2 = 2
    a = np.array([[[1.0, 0.0], [1.0, 0.0]]], dtype="float32")
    assert float(ops.convert_to_numpy(orthogonality_penalty(a))[0]) == 2.0
    # two hops on different tokens: A A^T = I -> 0
    a = np.array([[[1.0, 0.0], [0.0, 1.0]]], dtype="float32")
    assert float(ops.convert_to_numpy(orthogonality_penalty(a))[0]) == 0.0


def test_no_loss_when_penalty_is_zero():
    layer = StructuredSelfAttention(units=4, num_hops=2, penalty=0.0)
    out = layer(np.ones((2, 3, 4), "float32"))
    assert tuple(out.shape) == (2, 2, 4)
    assert layer.losses == []


def test_mask_from_embedding_propagates():
    ids = np.array([[3, 4, 0, 0], [5, 6, 7, 0]])
    inputs = keras.Input((None,), dtype="int32")
    x = keras.layers.Embedding(10, 4, mask_zero=True)(inputs)
    m, a = StructuredSelfAttention(5, 2)(x, return_attention_scores=True)
    model = keras.Model(inputs, [m, a])
    _, att = model(ids)
    att = ops.convert_to_numpy(att)
    assert np.all(att[0, :, 2:] == 0.0) and np.all(att[1, :, 3] == 0.0)
    np.testing.assert_allclose(att.sum(-1), np.ones((2, 2)), rtol=1e-6)
    assert len(model.losses) == 1


def _model(penalty=1.0):
    inputs = keras.Input((5, 4))
    m = StructuredSelfAttention(3, 2, penalty=penalty)(inputs)
    out = keras.layers.Dense(1)(keras.layers.Flatten()(m))
    return keras.Model(inputs, out)


def test_keras_file_roundtrip(tmp_path):
    h = np.random.randn(2, 5, 4).astype("float32")
    loaded, _ = assert_keras_file_roundtrip(_model(), h, tmp_path)
    layer = [x for x in loaded.layers if isinstance(x, StructuredSelfAttention)][0]
    assert layer.penalty == 1.0 and layer.num_hops == 2


def test_fit_step_includes_penalty():
    h = np.random.randn(4, 5, 4).astype("float32")
    y = np.random.randn(4, 1).astype("float32")
    model = _model(penalty=1.0)
    loss = assert_one_fit_step(model, h, y, all_weights=True)
    assert np.isfinite(loss)
    # evaluate's loss = mse + penalty * mean ||A A^T - I||^2 (add_loss is included)
    got = model.evaluate(h, y, batch_size=4, verbose=0)
    layer = model.layers[1]
    _, a = layer(h, return_attention_scores=True)
    pen = float(np.mean(ops.convert_to_numpy(orthogonality_penalty(a))))
    mse = float(np.mean((ops.convert_to_numpy(model(h)) - y) ** 2))
    np.testing.assert_allclose(got, mse + pen, rtol=1e-4)


def test_penalty_gradient_reaches_attention_weights():
    layer = StructuredSelfAttention(units=4, num_hops=3, penalty=1.0)
    h = np.random.randn(2, 6, 4).astype("float32")
    layer(h)

    def loss_fn():
        layer(h)
        penalty = layer.losses[0]
        return penalty, penalty

    penalty, grads = loss_and_gradients(loss_fn, variables=[layer.w_s1, layer.w_s2])
    assert penalty > 0
    assert all(np.abs(g).sum() > 0 for g in grads)


def test_float16_finite():
    h = (np.random.randn(2, 6, 4) * 10).astype("float32")
    mask = np.array([[1, 1, 1, 1, 0, 0], [0, 0, 0, 0, 0, 0]], bool)
    m, a = assert_float16_finite(
        lambda: StructuredSelfAttention(4, 3),
        h,
        mask=mask,
        return_attention_scores=True,
    )
    assert np.all(a[0, :, 4:] == 0) and np.all(a[1] == 0)


@pytest.mark.parametrize(
    "kwargs, word",
    [
        ({"units": 0, "num_hops": 2}, "units=0"),
        ({"units": 4, "num_hops": -1}, "num_hops=-1"),
        ({"units": 4, "num_hops": 2, "penalty": -1.0}, "penalty=-1.0"),
    ],
)
def test_invalid_arguments_name_the_value(kwargs, word):
    with pytest.raises(ValueError, match=word):
        StructuredSelfAttention(**kwargs)
