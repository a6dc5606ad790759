"""A preprocessor layer without vocabularies: every route to it is the same one-line
error, raised before any graph is traced, never a TensorFlow traceback."""

import pytest
import tensorflow as tf

from zoo.models.han import (
    HANClassifier,
    HANTextClassifier,
    HANTextClassifierPreprocessor,
)
from zoo.models.memn2n import (
    MemN2N,
    MemN2NQuestionAnswerer,
    MemN2NQuestionAnswererPreprocessor,
)
from zoo.models.sentence_embedder import (
    SelfAttentiveClassifier,
    SelfAttentiveEncoder,
    SelfAttentiveTextClassifier,
    SelfAttentiveTextClassifierPreprocessor,
)
from zoo.models.translation import Seq2SeqTranslatorPreprocessor

NO_VOCABULARY = "has no vocabulary yet"
STORY = {"story": ["Mary went to the office."], "question": ["Where is Mary?"]}


def _one_line_error(call):
    with pytest.raises(ValueError, match=NO_VOCABULARY) as info:
        call()
    assert "\n" not in str(info.value)


def _han():
    backbone = HANClassifier(12, 2, embedding_dim=8, rnn_units=4, context_units=5)
    pre = HANTextClassifierPreprocessor(3, 4)
    return HANTextClassifier(backbone, pre, ["neg", "pos"], compile=False)


def _embedder():
    encoder = SelfAttentiveEncoder(
        12, embedding_dim=8, lstm_units=6, attention_units=5, num_hops=3
    )
    backbone = SelfAttentiveClassifier(encoder, 2, hidden_units=8)
    pre = SelfAttentiveTextClassifierPreprocessor()
    return SelfAttentiveTextClassifier(backbone, pre, ["neg", "pos"], compile=False)


def _memn2n():
    backbone = MemN2N(12, 6, 5, embedding_dim=8, hops=2)
    pre = MemN2NQuestionAnswererPreprocessor(6, 5)
    return MemN2NQuestionAnswerer(backbone, pre, compile=False)


def test_the_tasks_say_so_in_one_line():
    han, embedder, memn2n = _han(), _embedder(), _memn2n()
    _one_line_error(lambda: han.explain(["Good film."]))
    _one_line_error(lambda: embedder.embed(["Good film."]))
    _one_line_error(lambda: embedder.explain(["Good film."]))
    _one_line_error(lambda: memn2n.explain(STORY))
    _one_line_error(lambda: memn2n.predict_answers(STORY))
    # answers given as words are looked up before the inputs are preprocessed
    answers = tf.data.Dataset.from_tensor_slices((STORY, ["office"])).batch(1)
    _one_line_error(lambda: memn2n.fit(answers, epochs=1, verbose=0))


def test_the_layers_methods_say_so_in_one_line():
    pre = MemN2NQuestionAnswererPreprocessor(6)
    ones = tf.ones([1], tf.int32)
    features = {"sentences_used": ones, "question_words": ones}
    _one_line_error(lambda: pre.answers(tf.zeros([1, 12]), features))
    translation = Seq2SeqTranslatorPreprocessor()
    ids = tf.constant([[4, 3]])
    _one_line_error(lambda: translation.detokenize(ids))
    _one_line_error(lambda: translation.source_tokens(ids))
    _one_line_error(lambda: translation.target_tokens(ids))


def test_the_translation_layer_has_no_single_vocabulary_size():
    translation = Seq2SeqTranslatorPreprocessor()
    with pytest.raises(ValueError, match="has two vocabularies: read") as info:
        print(translation.vocabulary_size)
    assert "source_vocab_size" in str(info.value) and "\n" not in str(info.value)


def test_a_vocabulary_that_fails_to_load_leaves_the_layer_without_one(tmp_path):
    from zoo.errors import ZooError

    bad = tmp_path / "vocabulary.txt"
    bad.write_text("hello\nworld\n")  # no [PAD] and [UNK] first
    pre = HANTextClassifierPreprocessor(3, 4)
    with pytest.raises((ValueError, ZooError)):
        pre.set_assets({"vocabulary.txt": str(bad)})
    _one_line_error(lambda: pre.vocabulary_size)
    assert pre.asset_paths == {}
