import numpy as np
import pytest
import tensorflow as tf

from zoo.text import preprocessing as pp


def _strings(t):
    return [x.decode("utf-8") for x in t.numpy().tolist()]


def test_normalize_nfkc_casefold_and_whitespace():
    out = pp.normalize(tf.constant(["  Ｈéllo\t\tWORLD  ", "Straße ﬁne", "a \n\n  b"]))
    assert _strings(out) == ["héllo world", "strasse fine", "a\nb"]


def test_normalize_keeps_case_when_asked():
    out = pp.normalize(tf.constant(["Hello  World"]), lowercase=False)
    assert _strings(out) == ["Hello World"]


def test_invalid_utf8_is_replaced_not_an_error():
    out = pp.normalize(tf.constant([b"ok \xff\xfe end", b"\xc3"]))
    assert _strings(out) == ["ok \ufffd\ufffd end", "\ufffd"]
    words = pp.word_tokenize(out)
    assert words.to_list()[0] == [b"ok", "\ufffd".encode(), "\ufffd".encode(), b"end"]


def test_truncate_keeps_whole_characters():
    text = tf.constant(["é" * 10, "abc"])  # é is 2 bytes
    out = pp.truncate(text, 5)
    assert _strings(out) == ["éé", "abc"]
    assert len(out.numpy()[0]) == 4


def test_one_megabyte_input_is_truncated_to_limit():
    big = ("word " * 200_000).encode()  # 1 MB
    out = pp.normalize(tf.constant([big, b"short"]))
    assert len(out.numpy()[0]) <= pp.MAX_INPUT_BYTES
    assert _strings(out)[1] == "short"
    assert pp.word_tokenize(out).row_lengths().numpy()[0] == -(-pp.MAX_INPUT_BYTES // 5)


def test_empty_and_whitespace_give_empty_token_lists():
    text = pp.normalize(tf.constant(["", "   \t\n ", "x"]))
    assert pp.word_tokenize(text).to_list() == [[], [], [b"x"]]
    assert pp.split_sentences(text).to_list() == [[], [], [b"x"]]


def test_word_tokenize_punctuation_tokens():
    out = pp.word_tokenize(tf.constant(["don't stop, ok?"]))
    assert out.to_list() == [[b"don", b"'", b"t", b"stop", b",", b"ok", b"?"]]


def test_split_sentences_and_nested_tokenize():
    text = pp.normalize(tf.constant(["Good food. Bad service!\nWhy? e.g.x ok"]))
    sentences = pp.split_sentences(text)
    assert sentences.to_list() == [
        [b"good food.", b"bad service!", b"why?", b"e.g.x ok"]
    ]
    words = pp.word_tokenize(sentences)
    assert words.shape.rank == 3
    assert words.to_list()[0][1] == [b"bad", b"service", b"!"]


def test_pad_ragged_2d_3d_and_empty_batch():
    r = tf.ragged.constant([["a", "b", "c"], []])
    assert pp.pad_ragged(r, 2).numpy().tolist() == [[b"a", b"b"], [b"", b""]]
    r3 = tf.ragged.constant([[[1, 2, 3], [4]], []], dtype=tf.int64)
    dense = pp.pad_ragged(r3, (3, 2))
    np.testing.assert_array_equal(
        dense.numpy(), [[[1, 2], [4, 0], [0, 0]], [[0, 0], [0, 0], [0, 0]]]
    )
    empty = pp.word_tokenize(pp.normalize(tf.constant([], dtype=tf.string)))
    assert pp.pad_ragged(empty, 4).shape == (0, 4)


def test_works_inside_tf_function_with_unknown_batch():
    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def f(text):
        return pp.pad_ragged(pp.word_tokenize(pp.normalize(text)), 3)

    assert f(tf.constant(["A b"])).numpy().tolist() == [[b"a", b"b", b""]]


def test_bad_arguments_name_value():
    with pytest.raises(ValueError, match="max_bytes=0"):
        pp.truncate(tf.constant(["a"]), 0)
    with pytest.raises(ValueError, match="max_len=0"):
        pp.pad_ragged(tf.ragged.constant([["a"]]), 0)
    with pytest.raises(TypeError, match="dtype"):
        pp.normalize(tf.constant([1]))


CONTROL_TEXT = b"Hello\x00World is\x01a \x1bfine\x7ffilm\xc2\x85ok.\x0bNext one."


def test_nul_and_control_characters_are_spaces_not_the_end_of_the_text():
    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def serve(text):  # as in an exported signature: graph mode, unknown batch
        normalized = pp.normalize(text)
        return (
            normalized,
            pp.word_tokenize(normalized).to_tensor(),
            pp.split_sentences(normalized).to_tensor(),
        )

    normalized, words, sentences = serve(tf.constant([CONTROL_TEXT, b"\x00", b"a"]))
    assert normalized.numpy()[0] == b"hello world is a fine film ok. next one."
    assert [w for w in words.numpy()[0] if w] == [
        b"hello",
        b"world",
        b"is",
        b"a",
        b"fine",
        b"film",
        b"ok",
        b".",
        b"next",
        b"one",
        b".",
    ]
    assert sentences.numpy()[0].tolist() == [
        b"hello world is a fine film ok.",
        b"next one.",
    ]
    assert normalized.numpy()[1] == b"" and not any(words.numpy()[1])


def test_tokenizers_split_at_nul_without_normalize():
    raw = tf.constant(["before\x00after tail", "a\x01b"])
    assert pp.word_tokenize(raw).to_list() == [
        [b"before", b"after", b"tail"],
        [b"a", b"b"],
    ]
    sentences = pp.split_sentences(tf.constant(["One.\x00Two. Three"]))
    assert sentences.to_list() == [[b"One.", b"Two.", b"Three"]]
    ragged = pp.word_tokenize(tf.ragged.constant([["x\x00y"], ["z"]]))
    assert ragged.to_list() == [[[b"x", b"y"]], [[b"z"]]]
