import keras
import numpy as np
import pytest
import tensorflow as tf

from zoo.layers.structured_self_attention import orthogonality_penalty
from zoo.models.self_attentive_encoder import (
    SelfAttentiveClassifier,
    SelfAttentiveEncoder,
    SentencePreprocessor,
)
from zoo.text.vocabulary import Vocabulary

IDS = np.array([[5, 6, 7, 0, 0], [8, 9, 10, 11, 12], [0, 0, 0, 0, 0]], "int32")


def _encoder(**kwargs):
    args = dict(
        vocabulary_size=20,
        embedding_dim=8,
        lstm_units=6,
        attention_units=5,
        num_hops=3,
    )
    args.update(kwargs)
    return SelfAttentiveEncoder(**args)


def test_encoder_shapes_masking_and_penalty():
    encoder = _encoder()
    out = encoder(IDS)
    emb, att = out["embedding"].numpy(), out["attention"].numpy()
    assert emb.shape == (3, 3, 12) and att.shape == (3, 3, 5)
    assert np.all(att[0, :, 3:] == 0.0)  # padding gets exactly zero weight
    np.testing.assert_allclose(att[:2].sum(-1), np.ones((2, 3)), rtol=1e-5)
    assert np.all(att[2] == 0.0) and np.all(emb[2] == 0.0)  # empty sentence
    assert np.all(np.isfinite(emb))
    expected = np.mean(orthogonality_penalty(att, IDS != 0).numpy())
    assert len(encoder.losses) == 1
    np.testing.assert_allclose(encoder.losses[0].numpy(), expected, rtol=1e-5)
    assert encoder.output_dim == 12
    # symbolic shapes
    sym = encoder(keras.Input((None,), dtype="int32"))
    assert tuple(sym["embedding"].shape) == (None, 3, 12)
    assert tuple(sym["attention"].shape) == (None, 3, None)


def test_encoder_and_classifier_keras_roundtrip(tmp_path):
    encoder = _encoder(penalty=0.5)
    model = SelfAttentiveClassifier(encoder, num_classes=4, hidden_units=7)
    probs = model(IDS).numpy()
    assert probs.shape == (3, 4)
    np.testing.assert_allclose(probs.sum(-1), np.ones(3), rtol=1e-5)
    model.save(tmp_path / "c.keras")
    loaded = keras.saving.load_model(tmp_path / "c.keras")
    assert type(loaded) is SelfAttentiveClassifier
    assert isinstance(loaded.encoder, SelfAttentiveEncoder)
    assert loaded.encoder.penalty == 0.5 and loaded.get_config()["hidden_units"] == 7
    np.testing.assert_allclose(loaded(IDS).numpy(), probs, atol=1e-6)
    encoder.save(tmp_path / "e.keras")
    reloaded = keras.saving.load_model(tmp_path / "e.keras")
    assert type(reloaded) is SelfAttentiveEncoder
    for key in ("embedding", "attention"):
        np.testing.assert_allclose(
            reloaded(IDS)[key].numpy(), encoder(IDS)[key].numpy(), atol=1e-6
        )


def test_classifier_fit_steps_train_every_weight():
    encoder = _encoder()
    model = SelfAttentiveClassifier(encoder, num_classes=3, hidden_units=8, dropout=0)
    model.compile(keras.optimizers.Adam(0.01), "sparse_categorical_crossentropy")
    x = np.random.randint(1, 20, (16, 6)).astype("int32")
    y = (x[:, 0] % 3).astype("int32")
    before = [w.numpy().copy() for w in model.trainable_weights]
    loss = model.fit(x, y, batch_size=16, epochs=6, verbose=0).history["loss"]
    assert np.all(np.isfinite(loss)) and loss[-1] < loss[0]
    assert all(
        not np.array_equal(b, w.numpy())
        for b, w in zip(before, model.trainable_weights, strict=True)
    )
    # the training loss holds the penalty: it is above the cross entropy alone
    probs = model(x).numpy()
    ce = -np.mean(np.log(probs[np.arange(16), y]))
    pen = np.mean(orthogonality_penalty(encoder(x)["attention"]).numpy())
    assert pen > 0.1 and loss[-1] > ce


def test_set_embedding_matrix():
    encoder = _encoder()
    matrix = np.random.randn(20, 8).astype("float32")
    encoder.set_embedding_matrix(matrix)
    np.testing.assert_array_equal(encoder.token_embedding.embeddings.numpy(), matrix)
    with pytest.raises(ValueError, match=r"matrix.shape=\(20, 7\)"):
        encoder.set_embedding_matrix(np.zeros((20, 7), "float32"))


def test_invalid_arguments():
    with pytest.raises(ValueError, match="vocabulary_size=0"):
        SelfAttentiveEncoder(0)
    with pytest.raises(ValueError, match="num_hops=0"):
        _encoder(num_hops=0)
    with pytest.raises(ValueError, match="num_classes=1"):
        SelfAttentiveClassifier(_encoder(), num_classes=1)


def test_preprocessor_truncates_pads_and_handles_empty(tmp_path):
    vocab = Vocabulary(["[PAD]", "[UNK]", "good", "film", "."])
    path = vocab.save(tmp_path / "vocab.txt")
    pre = SentencePreprocessor(path, max_length=4)
    out = pre(tf.constant(["A  GOOD film.", "", "good good good good good good"]))
    ids, tokens = out["token_ids"].numpy(), out["tokens"].numpy()
    assert ids.dtype == np.int32 and ids.shape == (3, 4)
    assert ids.tolist() == [[1, 2, 3, 4], [0, 0, 0, 0], [2, 2, 2, 2]]
    assert tokens[0].tolist() == [b"a", b"good", b"film", b"."]
    assert tokens[1].tolist() == [b""] * 4
    only_empty = pre(tf.constant(["   "]))["token_ids"].numpy()
    assert only_empty.shape == (1, 1) and only_empty[0, 0] == 0
    none = pre(tf.constant([], tf.string))["token_ids"].numpy()
    assert none.shape == (0, 1)


def test_encoder_mixed_float16_is_finite():
    from tests.layers.layer_test_utils import dtype_policy

    with dtype_policy("mixed_float16"):
        encoder = _encoder()
        model = SelfAttentiveClassifier(encoder, num_classes=2, hidden_units=4)
        out = encoder(IDS)
        probs = model(IDS).numpy()
    assert out["embedding"].dtype == "float16"
    att = out["attention"].numpy()
    assert (
        np.all(np.isfinite(att)) and np.all(att[0, :, 3:] == 0) and np.all(att[2] == 0)
    )
    assert np.all(np.isfinite(out["embedding"].numpy()))
    assert probs.dtype == np.float32 and np.all(np.isfinite(probs))
    assert np.isfinite(float(encoder.losses[0]))
