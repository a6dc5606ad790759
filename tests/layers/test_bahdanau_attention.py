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
    to_numpy,
)
from zoo.layers.bahdanau_attention import BahdanauAttention

B, TQ, TV, DQ, DV, DK, UNITS = 2, 3, 5, 4, 6, 7, 8


def _data(seed=0):
    rng = np.random.default_rng(seed)
    query = rng.normal(size=(B, TQ, DQ)).astype("float32")
    value = rng.normal(size=(B, TV, DV)).astype("float32")
    key = rng.normal(size=(B, TV, DK)).astype("float32")
    value_mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)
    query_mask = np.array([[1, 1, 0], [1, 1, 1]], bool)
    return query, value, key, query_mask, value_mask


def _numpy_bahdanau(layer, query, value, key, value_mask=None, query_mask=None):
    """Independent reference: e = v^T tanh(W_q q + W_k k + b), masked softmax."""
    w = {v.name: to_numpy(v) for v in layer.weights}
    vec = w["attention_v"]
    bias = np.zeros(layer.units, "float32")
    if layer.use_bias:
        bias += w["key_bias"]
    if layer.normalize:
        vec = w["attention_g"] * vec / np.linalg.norm(vec)
        bias += w["attention_b"]
    pq = query @ w["query_kernel"]
    pk = key @ w["key_kernel"] + bias
    scores = np.tanh(pq[:, :, None, :] + pk[:, None, :, :]) @ vec  # (B, Tq, Tv)
    if value_mask is not None:
        scores = np.where(value_mask[:, None, :], scores, -np.inf)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights = weights / weights.sum(-1, keepdims=True)
    if query_mask is not None:
        weights = weights * query_mask[:, :, None]
    return weights @ value, weights


@pytest.mark.parametrize(
    "config",
    [
        {"units": 8},
        {
            "units": 4,
            "normalize": True,
            "probability": "gumbel",
            "use_bias": True,
            "seed": 3,
            "name": "att",
        },
    ],
)
def test_config_roundtrip(config):
    assert_config_roundtrip(BahdanauAttention, config)


def test_invalid_arguments_name_received_value():
    with pytest.raises(ValueError, match="Received: units=0"):
        BahdanauAttention(0)
    with pytest.raises(ValueError, match="Received: probability='max'"):
        BahdanauAttention(4, probability="max")
    with pytest.raises(ValueError, match="Received: inputs="):
        BahdanauAttention(4)(np.zeros((1, 2, 3), "float32"))
    layer = BahdanauAttention(4)
    with pytest.raises(ValueError, match="before project_keys"):
        layer.project_keys(np.zeros((1, 2, 3), "float32"))


@pytest.mark.parametrize("normalize,use_bias", [(False, False), (True, True)])
def test_values_match_numpy_reference(normalize, use_bias):
    query, value, key, query_mask, value_mask = _data()
    layer = BahdanauAttention(UNITS, normalize=normalize, use_bias=use_bias)
    layer.build([query.shape, value.shape, key.shape])
    for var in layer.weights:  # non-trivial biases and g
        var.assign(np.random.default_rng(5).normal(size=var.shape).astype("float32"))
    context, weights = layer(
        [query, value, key],
        mask=[query_mask, value_mask],
        return_attention_scores=True,
    )
    ref_c, ref_w = _numpy_bahdanau(layer, query, value, key, value_mask, query_mask)
    np.testing.assert_allclose(to_numpy(weights), ref_w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(to_numpy(context), ref_c, rtol=1e-5, atol=1e-5)


def test_equals_additive_attention_on_dense_projections():
    query, value, key, _, value_mask = _data()
    layer = BahdanauAttention(UNITS)
    context, weights = layer(
        [query, value, key], mask=[None, value_mask], return_attention_scores=True
    )
    q_dense = keras.layers.Dense(UNITS, use_bias=False)
    k_dense = keras.layers.Dense(UNITS, use_bias=False)
    additive = keras.layers.AdditiveAttention(use_scale=True)
    pq, pk = q_dense(query), k_dense(key)
    additive([pq, value, pk])
    q_dense.kernel.assign(layer.query_kernel)
    k_dense.kernel.assign(layer.key_kernel)
    additive.scale.assign(layer.attention_v)
    ref_c, ref_w = additive(
        [q_dense(query), value, k_dense(key)],
        mask=[None, value_mask],
        return_attention_scores=True,
    )
    np.testing.assert_allclose(to_numpy(context), to_numpy(ref_c), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(to_numpy(weights), to_numpy(ref_w), rtol=1e-5, atol=1e-7)


def test_masking_exact_zeros_and_fully_masked_rows():
    query, value, _, query_mask, value_mask = _data()
    value_mask = value_mask.copy()
    value_mask[1, :] = False  # batch 1: every key padded
    context, weights = BahdanauAttention(UNITS)(
        [query, value], mask=[query_mask, value_mask], return_attention_scores=True
    )
    context, weights = to_numpy(context), to_numpy(weights)
    assert np.all(weights[0, :, 3:] == 0.0)  # padded keys: exactly 0
    np.testing.assert_allclose(weights[0, :2].sum(-1), [1.0, 1.0], rtol=1e-6)
    assert np.all(weights[0, 2] == 0.0) and np.all(context[0, 2] == 0.0)  # pad query
    assert np.all(weights[1] == 0.0) and np.all(context[1] == 0.0)  # fully masked
    assert np.all(np.isfinite(context))


def test_shapes_build_symbolic_eager():
    query, value, key, _, _ = _data()
    assert_shapes(lambda: BahdanauAttention(UNITS), [query, value], (B, TQ, DV))
    assert_shapes(lambda: BahdanauAttention(UNITS), [query, value, key], (B, TQ, DV))
    assert_shapes(lambda: BahdanauAttention(UNITS), [query[:, 0], value], (B, DV))
    assert_shapes(
        lambda: BahdanauAttention(UNITS),
        [query, value],
        [(B, TQ, DV), (B, TQ, TV)],
        return_attention_scores=True,
    )
    assert_shapes(
        lambda: BahdanauAttention(UNITS),
        [query[:, 0], value],
        [(B, DV), (B, TV)],
        return_attention_scores=True,
    )
    layer = BahdanauAttention(UNITS)
    layer.build([(None, None, DQ), (None, None, DV)])
    assert [tuple(w.shape) for w in layer.weights] == [(DQ, UNITS), (DV, UNITS), (8,)]


def test_step_mode_equals_call_row_by_row():
    query, value, key, _, value_mask = _data()
    layer = BahdanauAttention(UNITS, normalize=True)
    full_c, full_w = layer(
        [query, value, key], mask=[None, value_mask], return_attention_scores=True
    )
    keys = layer.project_keys(key)  # once per sequence
    for t in range(TQ):
        c, w = layer.attend(query[:, t], keys, value, value_mask=value_mask)
        assert tuple(c.shape) == (B, DV) and tuple(w.shape) == (B, TV)
        np.testing.assert_allclose(to_numpy(c), to_numpy(full_c)[:, t], atol=1e-6)
        np.testing.assert_allclose(to_numpy(w), to_numpy(full_w)[:, t], atol=1e-7)
        # align(): the same weights without the weighted sum
        np.testing.assert_allclose(
            to_numpy(layer.align(query[:, t], keys, value_mask)), to_numpy(w)
        )
    aligned = layer.align(query, keys, value_mask)  # all query steps at once
    np.testing.assert_allclose(to_numpy(aligned), to_numpy(full_w), atol=1e-7)


def _model(normalize=False, probability="softmax"):
    query_in = keras.Input((TQ, DQ), name="query")
    tokens_in = keras.Input((TV,), dtype="int32", name="tokens")
    value = keras.layers.Embedding(11, DV, mask_zero=True)(tokens_in)
    context = BahdanauAttention(
        UNITS, normalize=normalize, use_bias=True, probability=probability
    )([query_in, value])
    return keras.Model([query_in, tokens_in], context)


def _model_inputs():
    query = _data()[0]
    tokens = np.array([[3, 4, 5, 0, 0], [1, 2, 3, 4, 5]], "int32")
    return [query, tokens]


def test_keras_file_roundtrip_with_keras_mask(tmp_path):
    import zoo.layers.bahdanau_attention  # noqa: F401  (registers the class)

    model = _model(normalize=True)
    inputs = _model_inputs()
    _, out = assert_keras_file_roundtrip(model, inputs, tmp_path)
    # The Embedding mask reached the attention: padded tokens got no weight, so
    # changing their embeddings' tokens does not change the context.
    other = [inputs[0], inputs[1].copy()]
    other[1][0, 3:] = 0
    np.testing.assert_allclose(to_numpy(model(other)), out, atol=1e-6)


@pytest.mark.parametrize("normalize", [False, True])
def test_one_fit_step(normalize):
    model = _model(normalize=normalize)
    targets = np.random.default_rng(1).normal(size=(B, TQ, DV)).astype("float32")
    assert_one_fit_step(model, _model_inputs(), targets, all_weights=True)


def test_hardmax_and_gumbel_layers_train_and_select_unmasked():
    query, value, _, _, value_mask = _data()
    for prob in ("hardmax", "gumbel"):
        layer = BahdanauAttention(UNITS, probability=prob, seed=1)
        _, w = layer(
            [query, value],
            mask=[None, value_mask],
            return_attention_scores=True,
            training=True,
        )
        w = to_numpy(w)
        np.testing.assert_array_equal(w.sum(-1), np.ones((B, TQ)))
        assert np.all(w[0, :, 3:] == 0.0)
    model = _model(probability="gumbel")
    targets = np.random.default_rng(1).normal(size=(B, TQ, DV)).astype("float32")
    assert_one_fit_step(model, _model_inputs(), targets, all_weights=True)


def test_mixed_float16_finite():
    query, value, _, query_mask, value_mask = _data()
    value_mask = value_mask.copy()
    value_mask[1] = False
    out = assert_float16_finite(
        lambda: BahdanauAttention(UNITS, normalize=True),
        [query * 100, value],
        mask=[query_mask, value_mask],
        return_attention_scores=True,
    )
    assert np.all(out[1][0, :, 3:] == 0.0)
    assert np.all(out[0][1] == 0.0)


def test_compute_mask_passes_query_mask():
    query, value, _, query_mask, value_mask = _data()
    layer = BahdanauAttention(UNITS)
    mask = layer.compute_mask([query, value], [query_mask, value_mask])
    np.testing.assert_array_equal(ops.convert_to_numpy(mask), query_mask)
    assert layer.compute_mask([query, value], None) is None
