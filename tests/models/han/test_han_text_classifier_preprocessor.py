import numpy as np
import pytest
import tensorflow as tf

from zoo.models.han import HANTextClassifierPreprocessor
from zoo.models.han.han_text_classifier_preprocessor import tokenize_documents
from zoo.text.vocabulary import Vocabulary


@pytest.fixture
def vocab_file(tmp_path):
    vocab = Vocabulary.build([["good", "film", ".", "bad", "plot", "!", "a"]])
    return vocab.save(tmp_path / "vocab.txt")


def preprocessor(vocab_file, **kwargs):
    return HANTextClassifierPreprocessor(
        **kwargs, assets={"vocabulary.txt": vocab_file}
    )


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
    layer = HANTextClassifierPreprocessor(max_sentences=3, max_words=4)
    assert layer.tokenize(text).to_list() == words.to_list()  # no vocabulary needed


def test_preprocessor_ids_padding_and_limits(vocab_file):
    pre = preprocessor(vocab_file, max_sentences=2, max_words=3)
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
        HANTextClassifierPreprocessor(max_words=0)


def test_document_ids_concatenate_sentences_with_generous_limits(vocab_file):
    pre = preprocessor(vocab_file, max_sentences=1, max_words=2)
    ids = list(pre.document_ids(["Good film. Bad plot!", ""], chunk=1))
    vocab = Vocabulary.load(vocab_file)
    # The classifier's limits (1 x 2) do not apply: the whole document is read.
    assert ids[0].tolist() == vocab.encode(["good", "film", ".", "bad", "plot", "!"])
    assert ids[0].dtype == np.int32 and ids[1].tolist() == []
    with pytest.raises(ValueError, match="has no vocabulary yet"):
        next(HANTextClassifierPreprocessor().document_ids(["Good film."]))
