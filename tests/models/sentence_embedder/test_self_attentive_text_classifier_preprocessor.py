import numpy as np
import pytest
import tensorflow as tf

from zoo.models.sentence_embedder import SelfAttentiveTextClassifierPreprocessor
from zoo.text.vocabulary import Vocabulary


def test_preprocessor_truncates_pads_and_handles_empty(tmp_path):
    vocab = Vocabulary(["[PAD]", "[UNK]", "good", "film", "."])
    path = vocab.save(tmp_path / "vocab.txt")
    pre = SelfAttentiveTextClassifierPreprocessor(
        max_length=4, assets={"vocabulary.txt": path}
    )
    with open(pre.asset_paths["vocabulary.txt"]) as f, open(path) as g:
        assert f.read() == g.read()  # its own copy
    assert pre.vocabulary_size == 5
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
    with pytest.raises(ValueError, match="max_length"):
        SelfAttentiveTextClassifierPreprocessor(max_length=0)


def test_tokenize_normalises_and_truncates():
    pre = SelfAttentiveTextClassifierPreprocessor(max_length=3)  # no vocabulary needed
    words = pre.tokenize(tf.constant(["Ｆｉｌｍ, GOOD!", "a b c d"]))
    assert words.to_list() == [[b"film", b",", b"good"], [b"a", b"b", b"c"]]
