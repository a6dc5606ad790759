import numpy as np
import pytest
from keras import ops

from tests.layers.layer_test_utils import assert_config_roundtrip
from zoo.layers.attention_decoder import AttentionDecoder

B, TT, TS, DEPTH, UNITS, VOCAB = 2, 5, 6, 8, 8, 11

VARIANTS = [
    {"attention": "bahdanau"},
    {"attention": "luong", "score": "general"},
    {"attention": "luong", "score": "dot"},
    {"attention": "luong", "score": "concat", "window": "local-p", "window_size": 2},
    {"attention": "none", "cell": "lstm"},
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
    if kwargs["attention"] == "none":
        np.testing.assert_allclose(weights[1, :, :4], 0.25, atol=1e-6)


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
        },
    )
    assert restored.num_rnn_states == 2


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"attention": "monotonic"}, "Received: attention='monotonic'"),
        ({"score": "location"}, "Received: score='location'"),
        ({"window": "local-m"}, "Received: window='local-m'"),
        ({"cell": "rnn"}, "Received: cell='rnn'"),
        ({"dropout": 1.0}, "Received: dropout=1.0"),
        ({"embedding_dropout": -0.5}, "Received: embedding_dropout=-0.5"),
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
