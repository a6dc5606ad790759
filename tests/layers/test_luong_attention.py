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
    to_numpy,
)
from zoo.layers.luong_attention import LuongAttention

B, TQ, TV, D, DV = 2, 4, 9, 6, 5


def _data(seed=0, dk=D):
    rng = np.random.default_rng(seed)
    query = rng.normal(size=(B, TQ, D)).astype("float32")
    value = rng.normal(size=(B, TV, DV)).astype("float32")
    key = rng.normal(size=(B, TV, dk)).astype("float32")
    value_mask = np.ones((B, TV), bool)
    value_mask[0, 6:] = False  # batch 0 has 6 real source positions
    query_mask = np.array([[1, 1, 1, 0], [1, 1, 1, 1]], bool)
    return query, value, key, query_mask, value_mask


def _randomize(layer, seed=5):
    rng = np.random.default_rng(seed)
    for var in layer.weights:
        var.assign(rng.normal(size=var.shape).astype("float32") * 0.7)


def _softmax(scores, mask):
    scores = np.where(mask, scores, -np.inf)
    top = np.max(np.where(mask, scores, -1e30), axis=-1, keepdims=True)
    e = np.where(mask, np.exp(scores - top), 0.0)
    total = e.sum(-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def _numpy_luong(layer, query, value, key, value_mask=None, query_mask=None):
    """Independent reference of Luong et al. (2015), eqs. 8-10, with 0-based positions."""
    w = {v.name: to_numpy(v) for v in layer.weights}
    b, tq, _ = query.shape
    tv = value.shape[1]
    if layer.score == "dot":
        scores = np.einsum("btd,bsd->bts", query, key)
    elif layer.score == "general":
        w_a = w["kernel"].T  # (dq, dk): h_t^T W_a h_s
        scores = np.einsum("btd,de,bse->bts", query, w_a, key)
    elif layer.score == "concat":
        scores = np.zeros((b, tq, tv))
        w_cat = np.concatenate([w["query_kernel"], w["key_kernel"]], axis=0)
        for i in range(b):
            for t in range(tq):
                for s in range(tv):
                    h = np.concatenate([query[i, t], key[i, s]]) @ w_cat
                    scores[i, t, s] = w["attention_v"] @ np.tanh(h)
    else:  # location
        scores = (query @ w["kernel"])[..., :tv]
    if layer.scale:
        scores = scores * w["scale"]
    mask = np.ones((b, tq, tv), bool)
    if value_mask is not None:
        mask &= value_mask[:, None, :]
    gauss = np.ones((b, tq, tv))
    if layer.window is not None:
        d = layer.window_size
        if layer.window == "local-m":
            p = np.broadcast_to(np.arange(tq)[None, :, None], (b, tq, 1)).astype(float)
        else:
            length = value_mask.sum(-1) if value_mask is not None else np.full(b, tv)
            hidden = np.tanh(query @ w["position_kernel"]) @ w["position_v"]
            p = (length[:, None] / (1 + np.exp(-hidden)))[..., None]
        s = np.arange(tv)[None, None, :]
        mask &= np.abs(s - p) <= d
        if layer.window_gaussian:
            sigma = d / 2
            gauss = np.exp(-((s - p) ** 2) / (2 * sigma**2))
    weights = _softmax(scores, mask) * gauss
    if query_mask is not None:
        weights = weights * query_mask[:, :, None]
    return weights @ value, weights


@pytest.mark.parametrize(
    "config",
    [
        {"score": "dot"},
        {"score": "general", "scale": True, "window": "local-m", "window_size": 3},
        {
            "score": "concat",
            "units": 7,
            "window": "local-p",
            "window_size": 2,
            "window_gaussian": False,
            "probability": "gumbel",
            "seed": 9,
        },
        {"score": "location", "probability": "hardmax"},
    ],
)
def test_config_roundtrip(config):
    assert_config_roundtrip(LuongAttention, config)


def test_invalid_arguments_name_received_value():
    with pytest.raises(ValueError, match="Received: score='bilinear'"):
        LuongAttention("bilinear")
    with pytest.raises(ValueError, match="score='cosine' needs query and key"):
        LuongAttention("cosine")([np.zeros((1, 2, 6)), np.zeros((1, 4, 3))])
    with pytest.raises(ValueError, match="Received: window='local'"):
        LuongAttention(window="local")
    with pytest.raises(ValueError, match="Received: window_size=0"):
        LuongAttention(window="local-m", window_size=0)
    with pytest.raises(ValueError, match="Received: units=4"):
        LuongAttention("dot", units=4)
    with pytest.raises(ValueError, match="depth 6, key depth 3"):
        LuongAttention("dot")([np.zeros((1, 2, 6)), np.zeros((1, 4, 3))])
    with pytest.raises(ValueError, match="fixed maximum source length"):
        LuongAttention("location")([keras.Input((2, 6)), keras.Input((None, 3))])
    layer = LuongAttention(window="local-m")
    layer.build([(None, 2, D), (None, TV, D)])
    with pytest.raises(ValueError, match="Received: position=None"):
        layer.attend(
            np.zeros((1, D), "float32"),
            np.zeros((1, TV, D), "float32"),
            np.zeros((1, TV, D), "float32"),
        )


@pytest.mark.parametrize("score", ["dot", "general", "concat", "location"])
@pytest.mark.parametrize("window", [None, "local-m", "local-p"])
def test_values_match_numpy_reference(score, window):
    query, value, key, query_mask, value_mask = _data()
    layer = LuongAttention(score, scale=True, window=window, window_size=2)
    layer.build([query.shape, value.shape, key.shape])
    _randomize(layer)
    context, weights = layer(
        [query, value, key], mask=[query_mask, value_mask], return_attention_scores=True
    )
    ref_c, ref_w = _numpy_luong(layer, query, value, key, value_mask, query_mask)
    np.testing.assert_allclose(to_numpy(weights), ref_w, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(to_numpy(context), ref_c, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("use_scale", [False, True])
def test_dot_equals_keras_attention(use_scale):
    query, value, key, query_mask, value_mask = _data()
    layer = LuongAttention("dot", scale=use_scale)
    ref = keras.layers.Attention(use_scale=use_scale)
    if use_scale:
        layer.build([query.shape, value.shape, key.shape])
        ref.build([query.shape, value.shape, key.shape])
        layer.scale_weight.assign(1.7)
        ref.scale.assign(1.7)
    inputs = [query, value, key]
    mask = [None, value_mask]
    c, w = layer(inputs, mask=mask, return_attention_scores=True)
    rc, rw = ref(inputs, mask=mask, return_attention_scores=True)
    np.testing.assert_allclose(to_numpy(c), to_numpy(rc), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(to_numpy(w), to_numpy(rw), rtol=1e-5, atol=1e-7)
    # With a query mask Keras zeroes the padded query outputs too.
    c = layer(inputs, mask=[query_mask, value_mask])
    rc = ref(inputs, mask=[query_mask, value_mask])
    np.testing.assert_allclose(to_numpy(c), to_numpy(rc), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("window", ["local-m", "local-p"])
def test_local_window_zero_outside_and_exact_gaussian(window):
    query, value, _, _, value_mask = _data(seed=3)
    d = 2
    layer = LuongAttention("general", window=window, window_size=d)
    layer.build([query.shape, value.shape])
    _randomize(layer)
    _, weights = layer(
        [query, value], mask=[None, value_mask], return_attention_scores=True
    )
    weights = to_numpy(weights)
    global_layer = LuongAttention("general")
    global_layer.build([query.shape, value.shape])
    global_layer.kernel.assign(layer.kernel)
    keys = to_numpy(global_layer.project_keys(value))
    scores = np.einsum("btd,bsd->bts", query, keys)
    q = ops.convert_to_tensor(query)
    p = to_numpy(layer.aligned_position(q, value_mask, TV, 0))  # (B|1, Tq, 1)
    if window == "local-m":
        np.testing.assert_array_equal(p[0, :, 0], np.arange(TQ))
    else:
        assert np.all((p[0] >= 0) & (p[0] <= 6)) and np.all(p[1] <= TV)
    s = np.arange(TV)[None, None, :]
    inside = (np.abs(s - p) <= d) & value_mask[:, None, :]
    assert np.all(weights[~inside] == 0.0)  # exactly zero outside window / padding
    soft = _softmax(scores, inside)
    gauss = np.exp(-((s - p) ** 2) / (2 * (d / 2) ** 2))
    np.testing.assert_allclose(weights, soft * gauss, rtol=1e-5, atol=1e-7)
    # Not renormalised (as in the paper): rows sum to less than 1.
    assert np.all(weights.sum(-1) <= 1.0 + 1e-6)
    assert np.any(weights.sum(-1) < 0.99)


def test_local_p_uses_unpadded_source_length():
    query, value, _, _, value_mask = _data()
    layer = LuongAttention("general", window="local-p", window_size=2)
    layer.build([query.shape, value.shape])
    q = ops.convert_to_tensor(query)
    with_mask = to_numpy(layer.aligned_position(q, value_mask, TV))
    without = to_numpy(layer.aligned_position(q, None, TV))
    np.testing.assert_allclose(with_mask[0], without[0] * 6 / TV, rtol=1e-5)
    np.testing.assert_allclose(with_mask[1], without[1], rtol=1e-6)


@pytest.mark.parametrize(
    "score,window",
    [("dot", None), ("general", "local-m"), ("concat", "local-p"), ("location", None)],
)
def test_step_mode_equals_call_row_by_row(score, window):
    query, value, key, _, value_mask = _data()
    layer = LuongAttention(score, window=window, window_size=2, scale=True)
    full_c, full_w = layer(
        [query, value, key], mask=[None, value_mask], return_attention_scores=True
    )
    keys = layer.project_keys(key)
    for t in range(TQ):
        c, w = layer.attend(query[:, t], keys, value, value_mask=value_mask, position=t)
        assert tuple(c.shape) == (B, DV) and tuple(w.shape) == (B, TV)
        np.testing.assert_allclose(to_numpy(c), to_numpy(full_c)[:, t], atol=1e-5)
        np.testing.assert_allclose(to_numpy(w), to_numpy(full_w)[:, t], atol=1e-6)
    # A per-example step tensor works too.
    c, _ = layer.attend(query[:, 2], keys, value, value_mask, position=np.array([2, 2]))
    np.testing.assert_allclose(to_numpy(c), to_numpy(full_c)[:, 2], atol=1e-5)


def test_masking_and_fully_masked_rows():
    query, value, _, query_mask, value_mask = _data()
    value_mask = value_mask.copy()
    value_mask[1] = False
    layer = LuongAttention("general", window="local-m", window_size=1)
    context, weights = layer(
        [query, value], mask=[query_mask, value_mask], return_attention_scores=True
    )
    context, weights = to_numpy(context), to_numpy(weights)
    assert np.all(weights[0, :, 6:] == 0.0)
    assert np.all(weights[0, 3] == 0.0) and np.all(context[0, 3] == 0.0)
    assert np.all(weights[1] == 0.0) and np.all(context[1] == 0.0)
    assert np.all(np.isfinite(context))


@pytest.mark.parametrize("prob", ["hardmax", "gumbel"])
def test_hard_attention_one_hot_inside_window_and_trains(prob):
    query, value, _, _, value_mask = _data()
    layer = LuongAttention(
        "general", window="local-m", window_size=2, probability=prob, seed=2
    )
    layer.build([query.shape, value.shape])

    def loss_fn(q):
        c, w = layer(
            [q, value],
            mask=[None, value_mask],
            return_attention_scores=True,
            training=True,
        )
        return ops.sum(c * np.arange(DV, dtype="float32")), w

    w, grads = loss_and_gradients(loss_fn, [query], [layer.kernel])
    np.testing.assert_array_equal(w.sum(-1), np.ones((B, TQ)))
    assert set(np.unique(w).tolist()) == {0.0, 1.0}
    s = np.arange(TV)[None, None, :]
    inside = (np.abs(s - np.arange(TQ)[None, :, None]) <= 2) & value_mask[:, None, :]
    assert np.all(w[~inside] == 0.0)
    assert all(np.abs(g).sum() > 0 for g in grads)
    # Inference: hard argmax of score + log Gaussian (no noise).
    w_inf = to_numpy(
        layer([query, value], mask=[None, value_mask], return_attention_scores=True)[1]
    )
    assert np.all(w_inf[~inside] == 0.0)
    np.testing.assert_array_equal(w_inf.sum(-1), np.ones((B, TQ)))


def test_shapes_build_symbolic_eager():
    query, value, key, _, _ = _data(dk=3)
    for score in ("general", "concat"):
        assert_shapes(
            lambda s=score: LuongAttention(s), [query, value, key], (B, TQ, DV)
        )
        assert_shapes(
            lambda s=score: LuongAttention(s, window="local-p"),
            [query, value, key],
            [(B, TQ, DV), (B, TQ, TV)],
            return_attention_scores=True,
        )
    assert_shapes(lambda: LuongAttention("location"), [query[:, 0], value], (B, DV))
    layer = LuongAttention("concat", units=7, window="local-p", scale=True)
    layer.build([(None, None, D), (None, None, DV), (None, None, 3)])
    assert {v.name: tuple(v.shape) for v in layer.weights} == {
        "query_kernel": (D, 7),
        "key_kernel": (3, 7),
        "attention_v": (7,),
        "scale": (),
        "position_kernel": (D, 7),
        "position_v": (7,),
    }


def test_location_accepts_shorter_sources():
    query, value, _, _, _ = _data()
    layer = LuongAttention("location")
    layer.build([query.shape, value.shape])
    _, w = layer([query, value[:, :5]], return_attention_scores=True)
    expected = _softmax(query @ to_numpy(layer.kernel)[:, :5], np.ones((1, 1, 5), bool))
    np.testing.assert_allclose(to_numpy(w), expected, rtol=1e-5)
    with pytest.raises(ValueError, match="at most 9"):
        layer([query, np.zeros((B, 12, DV), "float32")])


def _model(score="general", window="local-p"):
    query_in = keras.Input((TQ, D), name="query")
    tokens_in = keras.Input((TV,), dtype="int32", name="tokens")
    value = keras.layers.Embedding(11, D, mask_zero=True)(tokens_in)
    context = LuongAttention(score, window=window, window_size=2, scale=True)(
        [query_in, value]
    )
    return keras.Model([query_in, tokens_in], context)


def _model_inputs():
    tokens = np.array([[3, 4, 5, 6, 7, 8, 0, 0, 0], [1, 2, 3, 4, 5, 6, 7, 8, 9]])
    return [_data()[0], tokens.astype("int32")]


@pytest.mark.parametrize("score,window", [("general", "local-p"), ("location", None)])
def test_keras_file_roundtrip(tmp_path, score, window):
    import zoo.layers.luong_attention  # noqa: F401  (registers the class)

    assert_keras_file_roundtrip(_model(score, window), _model_inputs(), tmp_path)


@pytest.mark.parametrize("score,window", [("general", "local-p"), ("concat", None)])
def test_one_fit_step(score, window):
    targets = np.random.default_rng(1).normal(size=(B, TQ, D)).astype("float32")
    assert_one_fit_step(
        _model(score, window), _model_inputs(), targets, all_weights=True
    )


@pytest.mark.parametrize("score,window", [("concat", "local-p"), ("dot", "local-m")])
def test_mixed_float16_finite(score, window):
    query, value, _, query_mask, value_mask = _data()
    value_mask = value_mask.copy()
    value_mask[1] = False
    out = assert_float16_finite(
        lambda: LuongAttention(score, window=window, window_size=2, scale=True),
        [query * 50, np.concatenate([value, value[:, :, :1]], -1)],
        mask=[query_mask, value_mask],
        return_attention_scores=True,
    )
    assert np.all(out[1][0, :, 6:] == 0.0) and np.all(out[0][1] == 0.0)


@pytest.mark.parametrize("policy", ["mixed_bfloat16", "mixed_float16"])
def test_local_window_positions_exact_under_mixed_precision(policy):
    # bfloat16 holds integers exactly only up to 256: positions and the Gaussian
    # are computed in float32, so the window of query row t is still [t - D, t + D].
    tq, tv, d = 300, 320, 3
    rng = np.random.default_rng(0)
    # Small scores, so no in-window weight underflows in float16.
    query = 0.1 * rng.normal(size=(1, tq, 8)).astype("float32")
    value = rng.normal(size=(1, tv, 8)).astype("float32")
    layer = LuongAttention("dot", window="local-m", window_size=d, dtype=policy)
    _, weights = layer([query, value], return_attention_scores=True)
    weights = to_numpy(ops.cast(weights, "float32"))
    rows = np.arange(tq)[:, None]
    inside = np.abs(np.arange(tv)[None, :] - rows) <= d
    assert np.all(weights[0][~inside] == 0.0)
    assert np.all((weights[0] > 0) == inside)  # every in-window key gets weight
    # The largest Gaussian factor (1 at s = t) sits on the row's own position.
    gauss = np.exp(-((np.arange(tv)[None, :] - rows) ** 2) / (2 * (d / 2) ** 2))
    assert np.all(np.argmax(gauss * inside, axis=-1) == np.arange(tq))


@pytest.mark.parametrize("score", ["dot", "general", "concat", "cosine"])
@pytest.mark.parametrize("window", ["local-m", "local-p"])
@pytest.mark.parametrize("probability", ["softmax", "hardmax"])
def test_gathered_window_equals_masked_full_scores(score, window, probability):
    # The O(D) path scores 2D+1 gathered positions; the reference scores all Tv
    # and masks: same contexts, same (B, Tq, Tv) weights, same gradients.
    rng = np.random.default_rng(7)
    query = rng.normal(size=(3, 5, 8)).astype("float32")
    value = rng.normal(size=(3, 17, 8)).astype("float32")
    value_mask = np.ones((3, 17), bool)
    value_mask[1, 11:] = False
    value_mask[2, 3:] = False  # shorter than the window
    query_mask = np.ones((3, 5), bool)
    query_mask[0, 4] = False
    units = 6 if (score == "concat" or window == "local-p") else None
    gathered = LuongAttention(
        score,
        units=units,
        window=window,
        window_size=3,
        probability=probability,
        window_gather=True,
    )
    gathered.build([query.shape, value.shape])
    full = LuongAttention.from_config({**gathered.get_config(), "window_gather": False})
    full.build([query.shape, value.shape])
    full.set_weights(gathered.get_weights())
    masks = [query_mask, value_mask]
    c1, w1 = gathered([query, value], mask=masks, return_attention_scores=True)
    c2, w2 = full([query, value], mask=masks, return_attention_scores=True)
    np.testing.assert_allclose(to_numpy(c1), to_numpy(c2), atol=1e-5)
    np.testing.assert_allclose(to_numpy(w1), to_numpy(w2), atol=1e-6)
    assert np.all(to_numpy(w1)[~np.broadcast_to(value_mask[:, None], (3, 5, 17))] == 0)
    if probability == "softmax":
        # one decoder step at position t: the same as row t of the full call
        keys = gathered.project_keys(value)
        step, step_w = gathered.attend(
            query[:, 2], keys, value, value_mask=value_mask, position=2
        )
        np.testing.assert_allclose(to_numpy(step), to_numpy(c2)[:, 2], atol=1e-5)
        np.testing.assert_allclose(to_numpy(step_w), to_numpy(w2)[:, 2], atol=1e-6)


def test_gathered_window_config_roundtrip_and_validation():
    layer = LuongAttention("general", window="local-p", window_gather=False)
    assert LuongAttention.from_config(layer.get_config()).window_gather is False
    assert LuongAttention("general").window_gather == "auto"
    with pytest.raises(ValueError, match="window_gather=1.5"):
        LuongAttention("general", window="local-p", window_gather=1.5)


def test_cosine_score_is_sharpened_content_addressing():
    query, value, _, query_mask, value_mask = _data()
    query = query[..., :DV]  # dq == dk
    layer = LuongAttention("cosine")
    _, weights = layer(
        [query, value], mask=[query_mask, value_mask], return_attention_scores=True
    )
    unit_q = query / np.linalg.norm(query, axis=-1, keepdims=True)
    unit_v = value / np.linalg.norm(value, axis=-1, keepdims=True)
    scores = 5.0 * np.einsum("btd,bsd->bts", unit_q, unit_v)  # beta starts at 5
    mask = np.broadcast_to(value_mask[:, None, :], scores.shape)
    expected = _softmax(scores, mask) * query_mask[..., None]
    np.testing.assert_allclose(to_numpy(weights), expected, atol=1e-5)
    assert [v.name for v in layer.trainable_variables] == ["scale"]
