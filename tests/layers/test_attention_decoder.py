import numpy as np
import pytest
from keras import ops

from tests.layers.layer_test_utils import assert_config_roundtrip, loss_and_gradients
from zoo.layers.attention_decoder import AttentionDecoder

B, TT, TS, DEPTH, UNITS, VOCAB = 2, 5, 6, 8, 8, 11

VARIANTS = [
    {"attention": "bahdanau"},
    {"attention": "luong", "score": "general"},
    {"attention": "luong", "score": "dot"},
    {"attention": "luong", "score": "concat", "window": "local-p", "window_size": 2},
    {"attention": "none", "cell": "lstm"},
    {"attention": "bahdanau", "readout": "layer_norm"},
    {"attention": "luong", "score": "general", "readout": "layer_norm"},
    {"attention": "none", "readout": "layer_norm"},
    {"attention": "luong", "score": "general", "window": "local-m", "window_size": 2},
    {"attention": "luong", "score": "location", "max_source_length": TS},
    {"attention": "luong", "score": "cosine"},
    {"attention": "bahdanau", "attention_normalize": True},
    {"attention": "luong", "score": "general", "input_feeding": False},
    {
        "attention": "luong",
        "score": "dot",
        "window": "local-p",
        "window_size": 2,
        "input_feeding": False,
    },
    {"attention": "bahdanau", "attention_probability": "hardmax"},
    {"attention": "luong", "score": "general", "attention_probability": "gumbel"},
    {
        "attention": "luong",
        "score": "dot",
        "window": "local-p",
        "window_size": 2,
        "attention_probability": "hardmax",
    },
]


def _inputs(cell="gru"):
    rng = np.random.default_rng(0)
    target = rng.integers(1, VOCAB, (B, TT)).astype("int32")
    memory = rng.normal(size=(B, TS, DEPTH)).astype("float32")
    mask = np.ones((B, TS), bool)
    mask[1, 4:] = False
    states = [rng.normal(size=(B, UNITS)).astype("float32")]
    if cell == "lstm":
        states.append(rng.normal(size=(B, UNITS)).astype("float32"))
    return target, memory, mask, states


@pytest.mark.parametrize(
    "kwargs", VARIANTS, ids=lambda k: "-".join(map(str, k.values()))
)
def test_step_equals_teacher_forcing(kwargs):
    target, memory, mask, states = _inputs(kwargs.get("cell", "gru"))
    decoder = AttentionDecoder(VOCAB, UNITS, **kwargs)
    logits, weights = decoder([target, memory, mask, *states], return_attention=True)
    assert tuple(logits.shape) == (B, TT, VOCAB)
    assert tuple(weights.shape) == (B, TT, TS)
    bundle = decoder.prepare_memory(memory, mask)
    state = decoder.initial_state(states)
    for t in range(TT):
        step_logits, step_weights, state = decoder.step(target[:, t], state, bundle, t)
        np.testing.assert_allclose(step_logits, logits[:, t], atol=1e-5)
        np.testing.assert_allclose(step_weights, weights[:, t], atol=1e-6)
    # padded source positions get exactly zero weight; real ones sum to <= 1
    weights = ops.convert_to_numpy(weights)
    np.testing.assert_array_equal(weights[1, :, 4:], 0.0)
    assert np.all(weights.sum(-1) <= 1.0 + 1e-5)
    if kwargs["attention"] != "luong" or kwargs.get("window") is None:
        np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)
    if kwargs.get("attention_probability", "softmax") != "softmax":
        # hard attention: one source position per step, weight exactly 1
        assert set(np.unique(weights)) <= {0.0, 1.0}
    if kwargs["attention"] == "none":
        np.testing.assert_allclose(weights[1, :, :4], 0.25, atol=1e-6)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"attention": "bahdanau", "attention_probability": "hardmax"},
        {"attention": "luong", "score": "general", "attention_probability": "gumbel"},
        {"attention": "luong", "score": "cosine", "window": "local-m"},
        {"attention": "luong", "score": "location", "max_source_length": TS},
    ],
    ids=lambda k: "-".join(map(str, k.values())),
)
def test_variants_train_end_to_end(kwargs):
    target, memory, mask, states = _inputs()
    decoder = AttentionDecoder(VOCAB, UNITS, **kwargs)
    decoder([target, memory, mask, *states])  # build
    variables = decoder.attention_layer.trainable_variables

    def fn(memory):
        logits = decoder([target, memory, mask, *states], training=True)
        loss = ops.mean(ops.square(logits))
        return loss, loss

    loss, grads = loss_and_gradients(fn, [memory], variables)
    assert np.isfinite(loss)
    # the attention receives gradients (straight-through for the hard variants)
    assert np.abs(grads[0]).max() > 0
    assert any(np.abs(g).max() > 0 for g in grads[1:])


def test_context_feeding_changes_output_with_memory():
    target, memory, mask, states = _inputs()
    decoder = AttentionDecoder(VOCAB, UNITS, attention="bahdanau")
    a = ops.convert_to_numpy(decoder([target, memory, mask, *states]))
    b = ops.convert_to_numpy(decoder([target, memory * 2.0, mask, *states]))
    assert np.abs(a - b).max() > 1e-4
    # changing a padded source position changes nothing
    memory2 = memory.copy()
    memory2[1, 5] = 100.0
    c = ops.convert_to_numpy(decoder([target, memory2, mask, *states]))
    np.testing.assert_allclose(c, a, atol=1e-6)


@pytest.mark.parametrize("input_feeding", [True, False])
def test_luong_input_feeding(input_feeding):
    """With input feeding the RNN reads the previous attentional state, so its
    outputs depend on the memory; without, they depend on the target words only."""
    target, memory, mask, states = _inputs()
    decoder = AttentionDecoder(
        VOCAB, UNITS, attention="luong", input_feeding=input_feeding
    )
    decoder([target, memory, mask, *states])
    feed = UNITS if input_feeding else 0
    assert tuple(decoder.cell.kernel.shape) == (UNITS + feed, 3 * UNITS)
    outputs = []
    for scale in (1.0, 2.0):
        bundle = decoder.prepare_memory(memory * scale, mask)
        state = decoder.initial_state(states)
        for t in range(TT):
            _, _, state = decoder.step(target[:, t], state, bundle, t)
        outputs.append(ops.convert_to_numpy(state[0]))
    changed = np.abs(outputs[0] - outputs[1]).max()
    if input_feeding:
        assert changed > 1e-4
    else:
        assert changed == 0.0
    restored = AttentionDecoder.from_config(decoder.get_config())
    assert restored.input_feeding is input_feeding


def test_config_roundtrip():
    restored = assert_config_roundtrip(
        AttentionDecoder,
        {
            "vocab_size": VOCAB,
            "units": UNITS,
            "embedding_dim": 4,
            "attention": "luong",
            "score": "concat",
            "window": "local-p",
            "window_size": 3,
            "attention_units": 5,
            "cell": "lstm",
            "dropout": 0.1,
            "readout": "layer_norm",
        },
    )
    assert restored.num_rnn_states == 2
    assert restored.readout_type == "layer_norm"


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"attention": "monotonic"}, "Received: attention='monotonic'"),
        ({"score": "bilinear"}, "Received: score='bilinear'"),
        ({"window": "local-x"}, "Received: window='local-x'"),
        (
            {"attention": "luong", "score": "location"},
            "Received: max_source_length=None",
        ),
        (
            {"attention": "luong", "attention_normalize": True},
            "Received: attention='luong'",
        ),
        ({"attention": "luong", "input_feeding": 0}, "Received: input_feeding=0"),
        ({"attention_probability": "argmax"}, "argmax"),
        ({"cell": "rnn"}, "Received: cell='rnn'"),
        ({"dropout": 1.0}, "Received: dropout=1.0"),
        ({"embedding_dropout": -0.5}, "Received: embedding_dropout=-0.5"),
        ({"readout": "relu"}, "Received: readout='relu'"),
    ],
)
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        AttentionDecoder(VOCAB, UNITS, **kwargs)


def test_wrong_number_of_states():
    decoder = AttentionDecoder(VOCAB, UNITS, cell="lstm")
    with pytest.raises(ValueError, match="Received: 1"):
        decoder.initial_state([np.zeros((1, UNITS), "float32")])


def _decoder_with_random_weights(cell, seed, attention_weights=False):
    """A built decoder whose cell (and attention) weights, biases too, are random."""
    rng = np.random.default_rng(seed)
    decoder = AttentionDecoder(VOCAB, UNITS, embedding_dim=5, cell=cell)
    target, memory, mask, states = _inputs(cell)
    decoder([target, memory, mask, *states])
    variables = decoder.cell.weights
    if attention_weights:
        variables = variables + decoder.attention_layer.weights
    for variable in variables:
        variable.assign(rng.normal(size=variable.shape, scale=0.5))
    embedded = rng.normal(size=(B, 5)).astype("float32")
    return decoder, rng, embedded, (memory, mask, states)


def _assert_keras_cell(decoder, cell, rnn_input, states, output, state):
    """`output`, `state` equal the Keras cell's on `rnn_input` from `states`."""
    expected, expected_state = decoder.cell(rnn_input, list(states))
    np.testing.assert_allclose(output, expected, atol=1e-5)
    expected_state = expected_state if cell == "lstm" else [expected_state[0]]
    for got, want in zip(state, expected_state, strict=True):
        np.testing.assert_allclose(got, want, atol=1e-5)


@pytest.mark.parametrize("cell", ["gru", "lstm"])
def test_split_input_projection_equals_the_keras_cell(cell):
    # The recurrence computes e_t W_e for all steps outside the loop and adds
    # x_t W_x inside it; the result must be the Keras cell's on [e_t; x_t].
    decoder, rng, embedded, (_, _, states) = _decoder_with_random_weights(cell, 1)
    extra = rng.normal(size=(B, DEPTH)).astype("float32")
    weights = decoder._rnn_weights()
    projected = decoder._project_inputs(embedded, None, weights)
    output, state = decoder._rnn(projected, extra, list(states), weights)
    rnn_input = ops.concatenate([embedded, extra], axis=-1)
    _assert_keras_cell(decoder, cell, rnn_input, states, output, state)


@pytest.mark.parametrize("cell", ["gru", "lstm"])
def test_bahdanau_step_equals_attention_then_keras_cell(cell):
    # The step feeds the context's share of the gates as attention weights times
    # `memory W_x` (computed once per source); it must equal the attention layer's
    # own align() on h_{t-1} followed by the Keras cell on [e_t; c_t].
    decoder, _, embedded, (memory, mask, states) = _decoder_with_random_weights(
        cell, 2, attention_weights=True
    )
    bundle = decoder.prepare_memory(memory, mask)
    weights = decoder._rnn_weights()
    projected = decoder._project_inputs(embedded, bundle, weights)
    state = decoder.initial_state(states)
    output, attention, new_state = decoder._cell_step(
        projected, state, bundle, 0, weights
    )
    expected_attention = decoder.attention_layer.align(
        states[0], bundle[1], value_mask=mask
    )
    np.testing.assert_allclose(attention, expected_attention, atol=1e-6)
    assert np.all(np.asarray(attention)[1, 4:] == 0.0)  # masked source positions
    context = np.einsum("bs,bsd->bd", np.asarray(expected_attention), memory)
    rnn_input = ops.concatenate([embedded, context], axis=-1)
    _assert_keras_cell(decoder, cell, rnn_input, states, output, new_state)


# --- the readout: "tanh" (the papers') and "layer_norm" ---------------------------

# vocab_size == units: with the output layer set to the identity the logits are the
# readout o_t itself
RU = 8


def _identity_output_pair(attention):
    """Two built decoders, "tanh" and "layer_norm" readouts, with the same weights
    and an identity output layer (logits = the readout), and their inputs."""
    rng = np.random.default_rng(4)
    target = rng.integers(1, RU, (B, TT)).astype("int32")
    memory = rng.normal(size=(B, TS, DEPTH)).astype("float32")
    mask = np.ones((B, TS), bool)
    mask[1, 4:] = False
    states = [rng.normal(size=(B, RU)).astype("float32")]
    inputs = [target, memory, mask, *states]
    decoders = {}
    for readout in ("tanh", "layer_norm"):
        decoder = AttentionDecoder(
            RU, RU, attention=attention, readout=readout, name="decoder"
        )
        decoder(inputs)
        decoders[readout] = decoder
    values = {w.path: w for w in decoders["layer_norm"].weights}
    for weight in decoders["tanh"].weights:
        if weight.path.endswith("logits/kernel"):
            weight.assign(np.eye(RU, dtype="float32"))
        values[weight.path].assign(weight)
    return decoders["tanh"], decoders["layer_norm"], inputs


def _layer_norm(x, epsilon=1e-3):  # keras.layers.LayerNormalization's default
    x = np.asarray(x, "float64")
    mean = x.mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(x.var(-1, keepdims=True) + epsilon)


@pytest.mark.parametrize("attention", ["bahdanau", "none"])
def test_layer_norm_readout_is_the_normalized_tanh_pre_activation(attention):
    tanh, norm, inputs = _identity_output_pair(attention)
    o_tanh = ops.convert_to_numpy(tanh(inputs))  # tanh(W_o [h; c; e] + b_o)
    o_norm = ops.convert_to_numpy(norm(inputs))  # LayerNorm(W_o [h; c; e] + b_o)
    np.testing.assert_allclose(
        o_norm, _layer_norm(np.arctanh(o_tanh.astype("float64"))), atol=2e-4
    )
    # every position's readout has mean 0 and (nearly) unit variance: the output
    # layer reads features of unit scale whatever the size of the pre-activation
    np.testing.assert_allclose(o_norm.mean(-1), 0.0, atol=1e-5)
    variance = np.arctanh(o_tanh.astype("float64")).var(-1)
    np.testing.assert_allclose(o_norm.var(-1), variance / (variance + 1e-3), rtol=1e-4)
    assert np.all(o_norm.std(-1) > 0.9)
    # ... where tanh passes on the pre-activation's own (here smaller) scale
    assert np.all(o_tanh.std(-1) < 0.9 * o_norm.std(-1))


def test_luong_layer_norm_readout_keeps_the_fed_back_attentional_state():
    tanh, norm, inputs = _identity_output_pair("luong")
    target, memory, mask, states = inputs[0], inputs[1], inputs[2], inputs[3:]
    o_tanh = ops.convert_to_numpy(tanh(inputs))  # h~_t = tanh(W_c [c_t; h_t])
    o_norm = ops.convert_to_numpy(norm(inputs))
    assert o_norm.shape == (B, TT, RU) and np.all(np.isfinite(o_norm))
    # the output layer reads LayerNorm(h~_t) ...
    np.testing.assert_allclose(o_norm, _layer_norm(o_tanh), atol=2e-5)
    # ... and the recurrence (input feeding) is the paper's: same states
    bundles = [d.prepare_memory(memory, mask) for d in (tanh, norm)]
    state_tanh, state_norm = tanh.initial_state(states), norm.initial_state(states)
    for t in range(TT):
        _, _, state_tanh = tanh.step(target[:, t], state_tanh, bundles[0], t)
        _, _, state_norm = norm.step(target[:, t], state_norm, bundles[1], t)
        for a, b in zip(state_tanh, state_norm, strict=True):
            np.testing.assert_allclose(a, b, atol=1e-6)
    np.testing.assert_allclose(state_tanh[-1], o_tanh[:, -1], atol=1e-6)


def test_readout_defaults_to_tanh_and_configs_without_it_load():
    decoder = AttentionDecoder(VOCAB, UNITS)
    assert decoder.readout_type == "tanh" and decoder.readout_norm is None
    target, memory, mask, states = _inputs()
    decoder([target, memory, mask, *states])
    # a config written before the option: the "tanh" decoder, the same weights
    config = decoder.get_config()
    assert config["readout"] == "tanh"
    del config["readout"]
    old = AttentionDecoder.from_config(config)
    assert old.readout_type == "tanh"
    old([target, memory, mask, *states])
    assert [w.path for w in old.weights] == [w.path for w in decoder.weights]
    assert not any("readout_norm" in w.path for w in old.weights)
    norm = AttentionDecoder(VOCAB, UNITS, readout="layer_norm")
    norm([target, memory, mask, *states])
    names = {w.path.split("/", 1)[1] for w in norm.weights}
    assert {"readout_norm/gamma", "readout_norm/beta"} <= names
