import pathlib

import keras
import numpy as np
import pytest

from tests.models.translation.tiny import TINY
from zoo.models.translation import Seq2SeqTextTranslator, Seq2SeqTranslator
from zoo.models.translation.masked_sparse_crossentropy import MaskedSparseCrossentropy

DATA = pathlib.Path(__file__).parent / "data"


def _batch():
    rng = np.random.default_rng(0)
    src = rng.integers(1, 30, (4, 7)).astype("int32")
    src[1, 4:] = 0
    tgt = rng.integers(4, 40, (4, 6)).astype("int32")
    tgt[2, 3:] = 0
    return {"source_ids": src, "target_ids": tgt}, tgt


def _model(**kwargs):
    return Seq2SeqTranslator(30, 40, **{**TINY, **kwargs})


def _logits(model, inputs, **kwargs):
    return keras.ops.convert_to_numpy(model(inputs, **kwargs)["logits"])


def _task(model):
    """The task that is compiled and fit: the network's logits, no preprocessor."""
    return Seq2SeqTextTranslator(model, compile=False)


def test_keras_roundtrip_and_fit(tmp_path):
    model = _model(attention="luong", window="local-p", encoder_layers=2)
    inputs, labels = _batch()
    trainer = _task(model)
    # eager: one step on a tiny batch needs no graph tracing (the graph path is
    # exercised by the recipe test)
    trainer.compile("adam", MaskedSparseCrossentropy(0.1), run_eagerly=True)
    history = trainer.fit(inputs, labels, epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    path = str(tmp_path / "m.keras")
    model.save(path)
    loaded = keras.saving.load_model(path)
    assert type(loaded) is Seq2SeqTranslator
    assert loaded.get_config() == model.get_config()
    got, expected = loaded(inputs), model(inputs)
    for key in ("logits", "attention"):
        np.testing.assert_allclose(got[key], expected[key], atol=1e-6)


def test_outputs_are_logits_and_float32_attention():
    inputs, _ = _batch()
    for attention in ("bahdanau", "luong", "none"):
        outputs = _model(attention=attention)(inputs)
        assert sorted(outputs) == ["attention", "logits"]
        assert tuple(outputs["logits"].shape) == (4, 6, 40)
        weights = keras.ops.convert_to_numpy(outputs["attention"])
        assert weights.shape == (4, 6, 7) and weights.dtype == np.float32
        # a distribution over the real source positions; padding gets exactly 0
        assert np.all(weights[1, :, 4:] == 0.0)
        np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)
    # "none" attends uniformly (the masked mean of the encoder outputs)
    weights = keras.ops.convert_to_numpy(_model(attention="none")(inputs)["attention"])
    np.testing.assert_allclose(weights[1, :, :4], 0.25, atol=1e-6)
    np.testing.assert_allclose(weights[0], 1 / 7, atol=1e-6)


def test_the_task_fits_the_logits_of_the_same_weights(tmp_path):
    model = _model()
    inputs, labels = _batch()
    trainer = _task(model)
    # the task's weights are the network's, in the network's order (a backup or a
    # snapshot of the task loads into the network by order)
    assert [id(w) for w in trainer.weights] == [id(w) for w in model.weights]
    np.testing.assert_array_equal(_logits(model, inputs), trainer(inputs))
    # the task is not a sublayer of the network: nothing extra is saved or listed
    assert trainer not in model.layers
    assert len(model.get_config()) == len(_model().get_config())
    trainer.compile("adam", MaskedSparseCrossentropy())
    before = _logits(model, inputs)
    trainer.fit(inputs, labels, epochs=1, verbose=0)  # no target for the attention
    after = _logits(model, inputs)
    assert np.abs(after - before).max() > 1e-4  # fitting the task trains the network
    # a checkpoint of the task (what training writes) loads into a new translator
    path = str(tmp_path / "best.keras")
    trainer.save(path)
    loaded = keras.saving.load_model(path)
    assert type(loaded) is Seq2SeqTextTranslator and loaded.preprocessor is None
    np.testing.assert_allclose(_logits(loaded.backbone, inputs), after, atol=1e-6)
    fresh = Seq2SeqTranslator.from_config(model.get_config())
    fresh.set_weights(keras.saving.load_model(path).get_weights())
    np.testing.assert_allclose(_logits(fresh, inputs), after, atol=1e-6)


def test_loads_a_model_saved_before_the_dict_outputs():
    # saved by zoo 0.2.0, whose model returned the logits alone
    model = keras.saving.load_model(DATA / "seq2seq_translator_v0.2.0.keras")
    assert type(model) is Seq2SeqTranslator
    inputs = {
        "source_ids": np.array([[3, 5, 7, 2, 0], [4, 4, 9, 11, 6]], "int32"),
        "target_ids": np.array([[2, 5, 6, 0], [2, 7, 8, 9]], "int32"),
    }
    expected = np.load(DATA / "seq2seq_translator_v0.2.0.logits.npy")
    np.testing.assert_allclose(_logits(model, inputs), expected, atol=1e-6)
    assert model(inputs)["attention"].shape == (2, 4, 5)
    # its config has no `readout`: the papers' tanh readout, no normalization weights
    assert model.readout == "tanh" and model.decoder.readout_type == "tanh"
    assert not any("readout_norm" in w.path for w in model.weights)
    # nor `input_feeding`: the earlier default, not the constructor's today
    assert model.input_feeding is True and model.attention == "bahdanau"


def test_arguments_a_saved_config_does_not_name_take_the_earlier_defaults():
    config = _model(attention="luong", encoder_units=4).get_config()
    for key in ("readout", "input_feeding", "context_dropout", "tie_embeddings"):
        del config[key]
    model = Seq2SeqTranslator.from_config(config)
    assert (model.readout, model.input_feeding) == ("tanh", True)
    assert (model.context_dropout, model.tie_embeddings) == (0.0, False)
    assert (model.attention, model.encoder_units) == ("luong", 4)  # as saved


def test_layer_norm_readout_is_passed_to_the_decoder_and_saved(tmp_path):
    model = _model(readout="layer_norm")
    assert model.get_config()["readout"] == "layer_norm"
    assert model.decoder.readout_type == "layer_norm"
    norm = [w for w in model.weights if "readout_norm" in w.path]
    assert sorted(w.path.rsplit("/", 1)[1] for w in norm) == ["beta", "gamma"]
    inputs, _ = _batch()
    # trained gamma/beta, so the round trip compares values that are not the init
    for weight in norm:
        weight.assign(np.linspace(0.5, 1.5, weight.shape[0], dtype="float32"))
    path = str(tmp_path / "norm.keras")
    model.save(path)
    loaded = keras.saving.load_model(path)
    assert loaded.readout == "layer_norm"
    np.testing.assert_allclose(
        _logits(loaded, inputs), _logits(model, inputs), atol=1e-6
    )


def test_encode_matches_functional_graph():
    model = _model(attention="bahdanau")
    inputs, _ = _batch()
    logits = _logits(model, inputs)
    bundle, state, mask = model.encode(inputs["source_ids"])
    np.testing.assert_array_equal(mask, inputs["source_ids"] != 0)
    for t in range(inputs["target_ids"].shape[1]):
        step, _, state = model.decoder.step(
            inputs["target_ids"][:, t], state, bundle, t
        )
        np.testing.assert_allclose(step, logits[:, t], atol=1e-5)


def test_bad_arguments():
    with pytest.raises(ValueError, match="Received: rnn='rnn'"):
        _model(rnn="rnn")
    with pytest.raises(ValueError, match="Received: encoder_layers=0"):
        _model(encoder_layers=0)
    with pytest.raises(ValueError, match="training_logits_dtype='float16'"):
        _model(training_logits_dtype="float16")


def test_bfloat16_training_logits_only_change_training_steps():
    import tensorflow as tf

    inputs, labels = _batch()
    keras.utils.set_random_seed(1)
    reference = _model()
    mixed = _model(training_logits_dtype="bfloat16")
    mixed.set_weights(reference.get_weights())
    # inference (validation, decoding, export) is float32 either way: identical
    np.testing.assert_array_equal(_logits(mixed, inputs), _logits(reference, inputs))
    bundle, state, _ = mixed.encode(inputs["source_ids"])
    step_logits, _, _ = mixed.decoder.step(inputs["target_ids"][:, 0], state, bundle)
    np.testing.assert_allclose(step_logits, _logits(reference, inputs)[:, 0], atol=1e-5)

    # training steps: float32 logits from a bfloat16 product, close to float32's
    def loss_and_grads(model):
        with tf.GradientTape() as tape:
            logits = model(inputs, training=True)["logits"]  # dropout is 0
            loss = MaskedSparseCrossentropy()(labels, logits)
        kernel = model.decoder.output_projection.kernel
        return logits, loss, tape.gradient(loss, kernel)

    ref_logits, ref_loss, ref_grad = loss_and_grads(reference)
    logits, loss, grad = loss_and_grads(mixed)
    assert logits.dtype == "float32" and grad.dtype == "float32"
    assert not np.array_equal(logits, ref_logits)  # the bfloat16 product ran
    np.testing.assert_allclose(logits, ref_logits, atol=0.02)
    np.testing.assert_allclose(loss, ref_loss, rtol=0.01)
    np.testing.assert_allclose(grad, ref_grad, atol=0.01 * np.abs(ref_grad).max())
    assert mixed.decoder.output_projection.kernel.dtype == "float32"
    assert mixed.get_config()["training_logits_dtype"] == "bfloat16"
    restored = Seq2SeqTranslator.from_config(mixed.get_config())
    assert restored.decoder.training_logits_dtype == "bfloat16"


@pytest.mark.parametrize(
    "attention, embedding_dim", [("bahdanau", 8), ("none", 8), ("luong", 16)]
)
def test_tied_output_layer_is_the_target_embedding(tmp_path, attention, embedding_dim):
    import tensorflow as tf

    inputs, labels = _batch()

    def build(tie):
        keras.utils.set_random_seed(3)
        kwargs = dict(embedding_dim=embedding_dim, attention=attention)
        return Seq2SeqTranslator(30, 40, **{**TINY, **kwargs, "tie_embeddings": tie})

    tied, untied = build(True), build(False)
    assert tied.decoder.output_projection is None
    # tying leaves out the untied output kernel (units x vocab); for Bahdanau and
    # none the readout shrinks from units to embedding_dim too ([h; c; e] + bias in)
    smaller_readout = (16 + 16 + embedding_dim + 1) * (16 - embedding_dim)
    assert untied.count_params() - tied.count_params() == 16 * 40 + smaller_readout
    assert tied.decoder.readout_dim == embedding_dim
    # logit v = o_t . E[v] + b[v]: zero row 39 of E (id 39 is not among the inputs)
    # and its logit is its bias; scale the row and only that logit changes
    embeddings = tied.decoder.embedding.embeddings
    ids_seen = set(inputs["target_ids"].ravel().tolist())
    assert 39 not in ids_seen
    tied.decoder.output_bias.assign(tf.range(40, dtype="float32") / 10)
    table = embeddings.numpy()
    table[39] = 0.0
    embeddings.assign(table)
    logits = _logits(tied, inputs)
    np.testing.assert_allclose(logits[..., 39], 3.9, atol=1e-6)
    table[39] = table[38] * 2.0
    embeddings.assign(table)
    doubled = _logits(tied, inputs)
    np.testing.assert_allclose(doubled[..., :39], logits[..., :39], atol=1e-6)
    np.testing.assert_allclose(
        doubled[..., 39] - 3.9, 2 * (logits[..., 38] - 3.8), atol=1e-5
    )
    # decoding's step() computes the same logits as teacher forcing
    bundle, state, _ = tied.encode(inputs["source_ids"])
    for t in range(inputs["target_ids"].shape[1]):
        step, _, state = tied.decoder.step(inputs["target_ids"][:, t], state, bundle, t)
        np.testing.assert_allclose(step, doubled[:, t], atol=1e-5)
    # training (graph mode, bfloat16 logits product too) and the .keras round trip
    for dtype in ("float32", "bfloat16"):
        model = build(True)
        if dtype == "bfloat16":
            model = Seq2SeqTranslator.from_config(
                {**model.get_config(), "training_logits_dtype": dtype}
            )
        trainer = _task(model)
        trainer.compile("adam", MaskedSparseCrossentropy(0.1))
        before = model.decoder.embedding.embeddings.numpy()
        history = trainer.fit(inputs, labels, epochs=2, verbose=0)
        assert np.all(np.isfinite(history.history["loss"]))
        after = model.decoder.embedding.embeddings.numpy()
        # the output side updates every row, not only the ids fed as inputs
        assert not np.allclose(before[39], after[39])
    path = str(tmp_path / "tied.keras")
    model.save(path)
    loaded = keras.saving.load_model(path)
    assert loaded.get_config() == model.get_config()
    assert loaded.get_config()["tie_embeddings"] is True
    np.testing.assert_allclose(
        _logits(loaded, inputs), _logits(model, inputs), atol=1e-6
    )


def test_tied_embeddings_bad_arguments():
    with pytest.raises(ValueError, match="embedding_dim=8, units=16"):
        _model(attention="luong", tie_embeddings=True)
    with pytest.raises(ValueError, match="tie_embeddings='yes'"):
        _model(tie_embeddings="yes")


def _encoder_inputs_dropout(model):
    return [encoder.forward_layer.dropout for encoder in model.encoders]


def test_dropout_rates_default_to_dropout_and_can_be_set_apart(tmp_path):
    model = _model(dropout=0.3, encoder_layers=2)
    assert _encoder_inputs_dropout(model) == [0.3, 0.3]
    assert model.decoder.embedding_dropout.rate == 0.3
    assert model.decoder.readout_dropout.rate == 0.3
    assert "context_dropout" not in [layer.name for layer in model.layers]

    model = _model(
        dropout=0.4, embedding_dropout=0.2, context_dropout=0.5, encoder_layers=2
    )
    # the first encoder layer reads the embeddings, the second the first's outputs
    assert _encoder_inputs_dropout(model) == [0.2, 0.4]
    assert model.decoder.embedding_dropout.rate == 0.2
    assert model.decoder.readout_dropout.rate == 0.4
    assert model.get_layer("context_dropout").rate == 0.5
    path = str(tmp_path / "m.keras")
    model.save(path)
    loaded = keras.saving.load_model(path)
    assert loaded.get_config() == model.get_config()
    assert loaded.get_layer("context_dropout").rate == 0.5


def test_context_dropout_acts_on_the_encoder_outputs_in_training_only():
    inputs, _ = _batch()
    model = _model(context_dropout=0.5)
    plain = _model()
    plain.set_weights(model.get_weights())  # no weights of its own
    inference = _logits(model, inputs, training=False)
    np.testing.assert_allclose(
        inference, _logits(plain, inputs, training=False), atol=1e-6
    )
    # all other rates are 0: the plain model's training step is its inference
    np.testing.assert_allclose(
        _logits(plain, inputs, training=True), inference, atol=1e-6
    )
    training = _logits(model, inputs, training=True)
    assert np.abs(training - inference).max() > 1e-3
    # decoding (encode + step) sees the whole annotations
    bundle, state, _ = model.encode(inputs["source_ids"])
    step, _, _ = model.decoder.step(inputs["target_ids"][:, 0], state, bundle, 0)
    np.testing.assert_allclose(step, inference[:, 0], atol=1e-5)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"embedding_dropout": 1.0}, "Received: embedding_dropout=1.0"),
        ({"context_dropout": -0.1}, "Received: context_dropout=-0.1"),
        ({"context_dropout": "high"}, "Received: context_dropout='high'"),
        ({"dropout": True}, "Received: dropout=True"),
    ],
)
def test_bad_dropout_rates(kwargs, match):
    with pytest.raises(ValueError, match=match):
        _model(**kwargs)
