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
from zoo.layers.self_attention import SelfAttention

B, T, D, HEADS, KD = 2, 6, 8, 2, 4


def _data(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(B, T, D)).astype("float32")
    mask = np.ones((B, T), bool)
    mask[0, 4:] = False
    return x, mask


def _randomize(layer, seed=3):
    rng = np.random.default_rng(seed)
    for var in layer.weights:
        var.assign(rng.normal(size=var.shape).astype("float32") * 0.5)


def _numpy_mha(layer, query, value, q_mask=None, v_mask=None, causal=False):
    """Independent reference: per-head softmax(Q K^T / sqrt(d)) V, then W^O."""
    w = {v.name: to_numpy(v) for v in layer.weights}
    heads = layer.num_heads
    tq, tv = query.shape[1], value.shape[1]
    out = np.zeros((query.shape[0], tq, w["output_kernel"].shape[-1]))
    all_weights = np.zeros((query.shape[0], heads, tq, tv))
    for b in range(query.shape[0]):
        allowed = np.ones((tq, tv), bool)
        if v_mask is not None:
            allowed &= v_mask[b][None, :]
        if q_mask is not None:
            allowed &= q_mask[b][:, None]
        if causal:
            allowed &= np.tril(np.ones((tq, tv), bool))
        for h in range(heads):
            q = query[b] @ w["query_kernel"][:, h] + w["query_bias"][h]
            k = value[b] @ w["key_kernel"][:, h] + w["key_bias"][h]
            v = value[b] @ w["value_kernel"][:, h] + w["value_bias"][h]
            s = q @ k.T / np.sqrt(q.shape[-1])
            for i in range(tq):
                if allowed[i].any():
                    e = np.exp(s[i] - s[i][allowed[i]].max()) * allowed[i]
                    all_weights[b, h, i] = e / e.sum()
            out[b] += all_weights[b, h] @ v @ w["output_kernel"][h]
        out[b] += w["output_bias"]
        if q_mask is not None:
            out[b] *= q_mask[b][:, None]
    return out, all_weights


def _copy_to_mha(layer, mha):
    pairs = [
        (mha._query_dense, "query"),
        (mha._key_dense, "key"),
        (mha._value_dense, "value"),
        (mha._output_dense, "output"),
    ]
    for dense, name in pairs:
        dense.kernel.assign(getattr(layer, f"{name}_kernel"))
        dense.bias.assign(getattr(layer, f"{name}_bias"))


@pytest.mark.parametrize(
    "config",
    [
        {"num_heads": 2, "key_dim": 4},
        {
            "num_heads": 3,
            "key_dim": 4,
            "value_dim": 5,
            "causal": True,
            "dropout": 0.1,
            "use_bias": False,
            "output_dim": 7,
            "seed": 11,
        },
    ],
)
def test_config_roundtrip(config):
    assert_config_roundtrip(SelfAttention, config)


def test_invalid_arguments_name_received_value():
    with pytest.raises(ValueError, match="Received: num_heads=0"):
        SelfAttention(0, 4)
    with pytest.raises(ValueError, match="Received: dropout=1.5"):
        SelfAttention(2, 4, dropout=1.5)
    with pytest.raises(ValueError, match="Received: value_dim=-1"):
        SelfAttention(2, 4, value_dim=-1)


@pytest.mark.parametrize("causal", [False, True])
def test_values_match_numpy_reference(causal):
    x, mask = _data()
    layer = SelfAttention(HEADS, KD, value_dim=3, causal=causal, output_dim=5)
    layer.build(x.shape)
    _randomize(layer)
    out, weights = layer(x, mask=mask, return_attention_scores=True)
    ref_out, ref_w = _numpy_mha(layer, x, x, mask, mask, causal)
    np.testing.assert_allclose(to_numpy(weights), ref_w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(to_numpy(out), ref_out, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("causal", [False, True])
def test_equals_keras_multi_head_attention(causal):
    x, mask = _data()
    mask[0, 4:] = True  # MHA does not zero padded query rows; compare full rows
    mask[1, 5] = False
    layer = SelfAttention(HEADS, KD, causal=causal)
    out, weights = layer(x, mask=[None, mask], return_attention_scores=True)
    mha = keras.layers.MultiHeadAttention(HEADS, KD)
    mha(x, x)
    _copy_to_mha(layer, mha)
    attention_mask = np.broadcast_to(mask[:, None, :], (B, T, T))
    ref_out, ref_w = mha(
        x,
        x,
        attention_mask=attention_mask,
        use_causal_mask=causal,
        return_attention_scores=True,
    )
    np.testing.assert_allclose(to_numpy(out), to_numpy(ref_out), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(to_numpy(weights), to_numpy(ref_w), atol=1e-6)
    # The fused (no-scores) MHA path agrees too.
    fused = mha(x, x, attention_mask=attention_mask, use_causal_mask=causal)
    np.testing.assert_allclose(to_numpy(out), to_numpy(fused), rtol=1e-5, atol=1e-5)


def test_query_value_inputs_equal_mha_cross_attention():
    x, _ = _data()
    y = np.random.default_rng(4).normal(size=(B, 3, 5)).astype("float32")
    layer = SelfAttention(HEADS, KD)
    out = layer([y, x])
    assert tuple(out.shape) == (B, 3, 5)
    mha = keras.layers.MultiHeadAttention(HEADS, KD)
    mha(y, x)
    _copy_to_mha(layer, mha)
    np.testing.assert_allclose(to_numpy(out), to_numpy(mha(y, x)), atol=1e-5)


def test_masking_padding_and_fully_masked_rows():
    x, mask = _data()
    layer = SelfAttention(HEADS, KD, causal=True)
    out, weights = layer(x, mask=mask, return_attention_scores=True)
    out, weights = to_numpy(out), to_numpy(weights)
    assert np.all(weights[0, :, :, 4:] == 0.0)  # padded keys, every head
    assert np.all(weights[0, :, 4:, :] == 0.0)  # padded query rows
    assert np.all(out[0, 4:] == 0.0)
    assert np.all(np.triu(np.ones((T, T)), 1)[None, None] * weights == 0.0)
    np.testing.assert_allclose(weights[1].sum(-1), np.ones((HEADS, T)), rtol=1e-6)
    empty = np.zeros((B, T), bool)
    out = to_numpy(layer(x, mask=empty))
    assert np.all(out == 0.0)


def test_list_inputs_and_mask_forms_agree():
    x, mask = _data()
    layer = SelfAttention(HEADS, KD)
    a = to_numpy(layer(x, mask=mask))
    b = to_numpy(layer([x], mask=[mask]))
    c = to_numpy(layer([x, x], mask=[mask, mask]))
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(a, c, atol=1e-6)
    np.testing.assert_array_equal(to_numpy(layer.compute_mask(x, mask)), mask)


def test_shapes_build_symbolic_eager():
    x, _ = _data()
    assert_shapes(lambda: SelfAttention(HEADS, KD), x, (B, T, D))
    assert_shapes(lambda: SelfAttention(HEADS, KD, output_dim=3), [x], (B, T, 3))
    assert_shapes(
        lambda: SelfAttention(HEADS, KD, causal=True),
        x,
        [(B, T, D), (B, HEADS, T, T)],
        return_attention_scores=True,
    )


def test_dropout_only_in_training():
    x, _ = _data()
    layer = SelfAttention(HEADS, KD, dropout=0.5, seed=1)
    a, b = to_numpy(layer(x)), to_numpy(layer(x))
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(to_numpy(layer(x, training=True)), a)


def _model(causal=True, dropout=0.0):
    tokens = keras.Input((T,), dtype="int32")
    h = keras.layers.Embedding(20, D, mask_zero=True)(tokens)
    h = SelfAttention(HEADS, KD, causal=causal, dropout=dropout)(h)
    return keras.Model(tokens, keras.layers.Dense(3)(h))


def _tokens():
    return np.array([[5, 6, 7, 8, 0, 0], [1, 2, 3, 4, 5, 6]], "int32")


def test_keras_file_roundtrip(tmp_path):
    import zoo.layers.self_attention  # noqa: F401  (registers the class)

    _, out = assert_keras_file_roundtrip(_model(), _tokens(), tmp_path)
    assert np.all(out[0, 4:] == out[0, 4])  # padded rows: zeros -> Dense bias only


def test_one_fit_step():
    targets = np.random.default_rng(0).normal(size=(B, T, 3)).astype("float32")
    assert_one_fit_step(_model(dropout=0.1), _tokens(), targets, all_weights=True)


def test_mixed_float16_finite():
    x, mask = _data()
    mask[1] = False
    out = assert_float16_finite(
        lambda: SelfAttention(HEADS, KD, causal=True),
        x * 30,
        mask=mask,
        return_attention_scores=True,
    )
    assert np.all(out[1][0, :, :, 4:] == 0.0) and np.all(out[0][1] == 0.0)
    assert ops.convert_to_numpy(out[0]).dtype == np.float16
