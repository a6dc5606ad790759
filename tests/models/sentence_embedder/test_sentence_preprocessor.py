import numpy as np
import tensorflow as tf

from zoo.models.sentence_embedder import SentencePreprocessor
from zoo.models.sentence_embedder.sentence_preprocessor import tokenize_sentences
from zoo.text.vocabulary import Vocabulary


def test_preprocessor_truncates_pads_and_handles_empty(tmp_path):
    vocab = Vocabulary(["[PAD]", "[UNK]", "good", "film", "."])
    path = vocab.save(tmp_path / "vocab.txt")
    pre = SentencePreprocessor(path, max_length=4)
    assert pre.vocab_file == str(path)
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


def test_tokenize_sentences_normalises_and_truncates():
    words = tokenize_sentences(tf.constant(["Ｆｉｌｍ, GOOD!", "a b c d"]), 3)
    assert words.to_list() == [[b"film", b",", b"good"], [b"a", b"b", b"c"]]
