import keras
import numpy as np
import pytest
import tensorflow as tf

from zoo.layers.hierarchical_attention import HierarchicalAttentionEncoder
from zoo.models.han_classifier import (
    HANClassifier,
    HANPreprocessor,
    tokenize_documents,
)
from zoo.text.vocabulary import Vocabulary

SMALL = {"embedding_dim": 8, "rnn_units": 4, "context_units": 5}


def _ids():
    ids = np.random.default_rng(0).integers(2, 30, size=(3, 4, 6)).astype("int32")
    ids[0, 2:] = 0  # two padded sentences
    ids[1, :, 3:] = 0  # short sentences
    ids[2] = 0  # an empty document
    return ids


def test_paper_defaults_and_config_roundtrip():
    model = HANClassifier(vocabulary_size=50, num_classes=5)
    assert model.get_layer("embedding").output_dim == 200
    encoder = model.get_layer("encoder")
    assert isinstance(encoder, HierarchicalAttentionEncoder)
    assert (encoder.rnn_type, encoder.rnn_units) == ("gru", 50)
    assert encoder.word_context_units == encoder.sentence_context_units == 100
    config = model.get_config()
    restored = HANClassifier.from_config(config)
    assert type(restored) is HANClassifier and restored.get_config() == config
    assert restored.count_params() == model.count_params()


def test_outputs_shapes_and_masking():
    model = HANClassifier(30, 3, **SMALL)
    out = {k: keras.ops.convert_to_numpy(v) for k, v in model(_ids()).items()}
    assert (
        out["probabilities"].shape == (3, 3) and out["probabilities"].dtype == "float32"
    )
    np.testing.assert_allclose(out["probabilities"].sum(-1), 1.0, rtol=1e-5)
    assert out["sentence_attention"].shape == (3, 4)
    assert out["word_attention"].shape == (3, 4, 6)
    ids = _ids()
    assert np.all(out["word_attention"][ids == 0] == 0.0)
    assert np.all(out["sentence_attention"][0, 2:] == 0.0)
    np.testing.assert_allclose(out["sentence_attention"][:2].sum(-1), 1.0, rtol=1e-5)
    assert np.all(out["sentence_attention"][2] == 0.0)
    assert np.all(np.isfinite(out["probabilities"]))


def test_keras_file_roundtrip_same_outputs(tmp_path):
    model = HANClassifier(30, 2, **SMALL)
    expected = model(_ids())
    path = tmp_path / "han.keras"
    model.save(path)
    loaded = keras.saving.load_model(path)
    assert type(loaded) is HANClassifier
    got = loaded(_ids())
    for key in ("probabilities", "sentence_attention", "word_attention"):
        np.testing.assert_allclose(
            keras.ops.convert_to_numpy(got[key]),
            keras.ops.convert_to_numpy(expected[key]),
            rtol=1e-6,
            atol=1e-7,
        )


def test_probabilities_model_shares_the_weights():
    model = HANClassifier(30, 2, **SMALL)
    trainer = model.probabilities_model()
    assert {id(w) for w in trainer.trainable_weights} == {
        id(w) for w in model.trainable_weights
    }
    classifier = model.get_layer("classifier")
    classifier.bias.assign([3.0, -3.0])  # changing the model changes the trainer
    expected = keras.ops.convert_to_numpy(model(_ids())["probabilities"])
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(trainer(_ids())), expected, rtol=1e-6
    )
    assert np.all(expected[2, 0] > 0.99)  # the empty document: bias only


@pytest.mark.parametrize(
    "kwargs, word",
    [
        ({"vocabulary_size": 0}, "vocabulary_size"),
        ({"num_classes": 1}, "num_classes"),
        ({"pooling": "max"}, "pooling"),
    ],
)
def test_invalid_arguments_name_the_value(kwargs, word):
    args = {"vocabulary_size": 10, "num_classes": 2, **kwargs}
    with pytest.raises(ValueError, match=word):
        HANClassifier(**args)


@pytest.fixture
def vocab_file(tmp_path):
    vocab = Vocabulary.build([["good", "film", ".", "bad", "plot", "!", "a"]])
    return vocab.save(tmp_path / "vocab.txt")


def test_tokenize_documents_splits_and_truncates():
    text = tf.constant(
        [
            "Good film.<br /><br />Bad plot! Third one? Fourth.",
            "",
            "   \n ",
            "a " * 100,
        ]
    )
    sentences, words = tokenize_documents(text, max_sentences=3, max_words=4)
    assert sentences.to_list()[0] == [b"good film.", b"bad plot!", b"third one?"]
    assert words.to_list()[0][1] == [b"bad", b"plot", b"!"]
    assert words.to_list()[1] == [] and words.to_list()[2] == []
    assert words.to_list()[3] == [[b"a"] * 4]  # truncated, not rejected


def test_preprocessor_ids_padding_and_limits(vocab_file):
    pre = HANPreprocessor(vocab_file, max_sentences=2, max_words=3)
    out = pre(tf.constant(["Good film. Bad plot, unknown!", ""]))
    vocab = Vocabulary.load(vocab_file)
    ids = out["token_ids"].numpy()
    assert ids.dtype == np.int32 and ids.shape == (2, 2, 3)
    assert ids[0, 0].tolist() == vocab.encode(["good", "film", "."])
    assert ids[0, 1].tolist() == vocab.encode(["bad", "plot", ","])  # "," -> UNK
    assert ids[0, 1, 2] == 1
    assert np.all(ids[1] == 0)
    assert out["words"].numpy()[0, 0].tolist() == [b"good", b"film", b"."]
    assert out["sentences"].numpy()[1].tolist() == [b"", b""]
    # An empty batch and an all-empty batch still have S, W >= 1.
    assert pre(tf.constant([], tf.string))["token_ids"].shape == (0, 1, 1)
    assert pre(tf.constant([""]))["token_ids"].shape == (1, 1, 1)
    fixed = pre(tf.constant(["Good."]), pad_to_limits=True)["token_ids"]
    assert fixed.shape == (1, 2, 3)
    with pytest.raises(ValueError, match="max_words"):
        HANPreprocessor(vocab_file, max_words=0)
