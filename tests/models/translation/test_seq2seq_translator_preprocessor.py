import types

import numpy as np
import pytest
import tensorflow as tf

from zoo.models.translation import Seq2SeqTranslatorPreprocessor
from zoo.models.translation.seq2seq_translator_preprocessor import (
    SOURCE_VOCABULARY,
    vocabulary_cache_key,
)
from zoo.text.subword import END, PAD, START, UNK

# ids: 4 the/der, 5 dog/hund, 6 sees/sieht, 7 a/ein, 8 cat/katze, 9 big/gross, 10 "."


def test_source_ids_truncate_pad_and_keep_one_column(preprocessor):
    ids = preprocessor.source_ids(
        tf.constant(["the dog sees a cat .", "the big big dog sees a cat .", "a zebra"])
    ).numpy()
    assert ids.dtype == np.int32
    np.testing.assert_array_equal(
        ids,
        [[4, 5, 6, 7, 8, 10], [4, 9, 9, 5, 6, 7], [7, UNK, PAD, PAD, PAD, PAD]],
    )  # max_length=6 subwords, padded with 0, unknown words are [UNK]
    assert preprocessor.source_ids(tf.constant([""])).numpy().tolist() == [[PAD]]
    assert preprocessor.source_ids(tf.zeros([0], tf.string)).shape == (0, 1)


def test_encode_pair_adds_markers_and_truncates(preprocessor):
    source, target = preprocessor.encode_pair(
        tf.constant(["the dog .", "the big big dog sees a cat ."]),
        tf.constant(["der hund .", "der hund gross gross sieht ein katze ."]),
    )
    assert source.to_list() == [[4, 5, 10], [4, 9, 9, 5, 6, 7]]
    # [START] subwords [END], at most max_length + 1 = 7 ids; [END] is kept
    assert target.to_list() == [[START, 4, 5, 10, END], [START, 4, 5, 9, 9, 6, END]]


def test_decoder_inputs_detokenize_and_tokens(preprocessor):
    translation = tf.constant([[4, 5, 6, 10, END, PAD], [7, 8, 8, 8, 8, 8]])
    np.testing.assert_array_equal(
        preprocessor.decoder_inputs(translation),
        [[START, 4, 5, 6, 10, PAD], [START, 7, 8, 8, 8, 8]],
    )
    texts = preprocessor.detokenize(translation).numpy().tolist()
    assert texts == [b"der hund sieht.", b"ein katze katze katze katze katze"]
    tokens = preprocessor.target_tokens(tf.constant([[4, PAD]])).numpy().tolist()
    assert tokens == [[b"der", b""]]
    tokens = preprocessor.source_tokens(tf.constant([[9, 10]])).numpy().tolist()
    assert tokens == [[b"big", b"."]]
    assert (preprocessor.source_vocab_size, preprocessor.target_vocab_size) == (11, 11)


def test_lowercase_and_bad_max_length(vocabularies):
    assets = dict(
        zip(Seq2SeqTranslatorPreprocessor.asset_names, vocabularies, strict=True)
    )
    cased = Seq2SeqTranslatorPreprocessor(max_length=64, assets=assets)
    uncased = Seq2SeqTranslatorPreprocessor(True, 64, assets)
    text = tf.constant(["The DOG"])
    assert cased.source_ids(text).numpy().tolist() == [[UNK, UNK]]
    assert uncased.source_ids(text).numpy().tolist() == [[4, 5]]
    for bad in (0, 2.5, True):
        with pytest.raises(ValueError, match=f"Received: max_length={bad!r}"):
            Seq2SeqTranslatorPreprocessor(max_length=bad, assets=assets)


def test_from_corpus_learns_once_and_reuses(tmp_path):
    corpus = types.SimpleNamespace(
        sources=["the dog sees a cat .", "a big dog sees the cat ."] * 20,
        targets=["der hund sieht ein katze .", "ein hund sieht der katze ."] * 20,
    )
    logged = []
    first = Seq2SeqTranslatorPreprocessor.from_corpus(
        corpus, str(tmp_path), ("en", "de"), 100, tag="t1", log=logged.append
    )
    assert len(logged) == 2 and "en subwords" in logged[0]
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["vocab.source.en.t1.txt", "vocab.target.de.t1.txt"]
    learned = (tmp_path / "vocab.source.en.t1.txt").read_text()
    assert open(first.asset_paths[SOURCE_VOCABULARY]).read() == learned
    # the same tag reads the files back; another tag learns again
    other = types.SimpleNamespace(sources=["other text"], targets=["anderer text"])
    again = Seq2SeqTranslatorPreprocessor.from_corpus(
        other,
        str(tmp_path),
        ("en", "de"),
        tag="t1",
        log=logged.append,
    )
    assert len(logged) == 2
    text = tf.constant(["the dog sees a big cat ."])
    np.testing.assert_array_equal(again.source_ids(text), first.source_ids(text))
    Seq2SeqTranslatorPreprocessor.from_corpus(
        corpus, str(tmp_path), ("en", "de"), 100, tag="t2", log=None
    )
    assert len(list(tmp_path.iterdir())) == 4


def test_vocabulary_cache_key_is_stable_and_names_every_field():
    args = (None, "src", "tgt", 200, False, None, 80, 1234)
    # the tags of existing run folders stay valid
    assert vocabulary_cache_key(*args) == "0fbf2d8d"
    changed = [
        ("data/multi30k", "src", "tgt", 200, False, None, 80, 1234),
        (None, "en", "tgt", 200, False, None, 80, 1234),
        (None, "src", "de", 200, False, None, 80, 1234),
        (None, "src", "tgt", 300, False, None, 80, 1234),
        (None, "src", "tgt", 200, True, None, 80, 1234),
        (None, "src", "tgt", 200, False, 500, 80, 1234),
        (None, "src", "tgt", 200, False, None, 40, 1234),
        (None, "src", "tgt", 200, False, None, 80, 1),
    ]
    keys = {vocabulary_cache_key(*a) for a in changed}
    assert len(keys) == len(changed) and "0fbf2d8d" not in keys


def test_max_length_none_is_the_longest_training_text(tmp_path):
    long_target = "ein sehr grosser hund sieht der kleine katze heute ."
    corpus = types.SimpleNamespace(
        sources=["the dog sees a cat .", "a dog ."] * 20,
        targets=["der hund sieht ein katze .", long_target] * 20,
    )
    pre = Seq2SeqTranslatorPreprocessor.from_corpus(
        corpus, str(tmp_path), ("en", "de"), 100, max_length=None, log=None
    )
    target_lengths = [
        int(n)
        for n in pre.target_tokenizer.tokenize(tf.constant(corpus.targets))
        .row_lengths()
        .numpy()
    ]
    source_lengths = [
        int(n)
        for n in pre.source_tokenizer.tokenize(tf.constant(corpus.sources))
        .row_lengths()
        .numpy()
    ]
    assert pre.max_length == max(target_lengths + source_lengths)
    assert pre.max_length == max(target_lengths)  # the long German sentence
