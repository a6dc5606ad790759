import time

import keras
import numpy as np
import pytest
import tensorflow as tf

from zoo.models.memn2n import MemN2NQuestionAnswererPreprocessor, babi_arrays
from zoo.text.babi_example import BabiExample
from zoo.text.vocabulary import Vocabulary

STORY = "Mary moved to the kitchen.\nJohn went to the garden.\nMary went to the office."


def _texts(tensor):
    return [[s.decode() for s in row] for row in tensor.numpy()]


def _layer(vocab_file, memory_size, sentence_length, **kwargs):
    return MemN2NQuestionAnswererPreprocessor(
        memory_size, sentence_length, assets={"vocabulary.txt": vocab_file}, **kwargs
    )


def _run(pre, stories, questions, return_sentences=False):
    inputs = {"story": stories, "question": questions}
    return pre(inputs, return_sentences=return_sentences)


def _bounded(text, lines, budget):
    """What the preprocessor reads of a valid UTF-8 story or question: its last
    `lines` lines, each cut to its first `budget` bytes (whole characters)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    kept = text.split("\n")[-lines:]
    return "\n".join(x.encode()[:budget].decode("utf-8", "ignore") for x in kept)


def test_ids_most_recent_sentence_first(demo_vocab_file):
    vocab = Vocabulary.load(demo_vocab_file)
    pre = _layer(demo_vocab_file, memory_size=4, sentence_length=5)
    out = _run(pre, ["Mary moved to the kitchen!\r\nZorg went to the garden."],
               ["Where is Mary?"], return_sentences=True)  # fmt: skip
    assert out["story"].dtype == tf.int32 and out["story"].shape == (1, 4, 5)
    expected = np.zeros((1, 4, 5), np.int32)
    expected[0, 0, :5] = vocab.encode(["zorg", "went", "to", "the", "garden"])
    expected[0, 1, :5] = vocab.encode(["mary", "moved", "to", "the", "kitchen"])
    np.testing.assert_array_equal(out["story"].numpy(), expected)
    assert expected[0, 0, 0] == 1  # unknown word -> [UNK]
    np.testing.assert_array_equal(
        out["question"].numpy()[0], vocab.encode(["where", "is", "mary"]) + [0, 0]
    )
    assert _texts(out["memory"]) == [
        ["zorg went to the garden", "mary moved to the kitchen", "", ""]
    ]


def test_lines_without_words_are_skipped_and_the_last_ones_kept(demo_vocab_file):
    # Five word-less lines: with the sentences they fit in the 4 * 3 lines read.
    pre = _layer(demo_vocab_file, memory_size=3, sentence_length=4)
    story = "\n".join(
        ["Mary went to the office."] + [f"John went to room{i}." for i in range(5)]
        + ["...", "  ", "!?", "\u200b", "\t"]
    )  # fmt: skip
    memory = _texts(_run(pre, [story], [""], return_sentences=True)["memory"])
    assert memory == [
        ["john went to room4", "john went to room3", "john went to room2"]
    ]


def test_long_sentences_keep_their_first_words(demo_vocab_file):
    pre = _layer(demo_vocab_file, memory_size=2, sentence_length=3)
    out = _run(pre, ["one two three four five"], ["a b c d e"], True)
    assert _texts(out["memory"])[0][0] == "one two three four five"
    assert out["story"].shape == (1, 2, 3) and out["question"].shape == (1, 3)


def _training_ids(stories, questions, vocab, memory_size, sentence_length):
    """The ids training gives (`babi_arrays.vectorize`) of raw stories' lines."""
    examples = [
        BabiExample(
            story=tuple(line.strip() for line in story.split("\n") if line.strip()),
            question=question, answer="[UNK]", supporting=(), task=0, source="",
        )
        for story, question in zip(stories, questions, strict=True)
    ]  # fmt: skip
    arrays = babi_arrays.vectorize(examples, vocab, memory_size, sentence_length)
    return arrays["sentences"][arrays["memory"]], arrays["question"]


def test_same_ids_as_training(demo_vocab_file):
    # Training tokenizes each whole line of a story; the preprocessor reads only
    # its last lines: on every kind of line break, space and odd character they
    # must agree.
    many = ["Mary went to the office."] * 3 + ["...", "  ", "!?"] * 20 + ["John."]
    stories = [
        STORY.replace("\n", "\r\n", 1).replace("\n", "\r"),
        "   \n\t\n...\n\u200b\nMary\u00a0went to\u2028the office.\n\u2122\n",
        "\n".join(many),
        "x " * 300 + "\nMary moved to the bathroom.\none two three four five six\n",
        "",
        "\n".join(f"Mary went to the hallway{i}." for i in range(40)),
        "a\n" * 30 + "\n\n\n" * 30,
    ]
    questions = ["Where is Mary?"] * len(stories)
    vocab = Vocabulary.load(demo_vocab_file)
    pre = _layer(demo_vocab_file, memory_size=5, sentence_length=4)
    new = _run(pre, stories, questions, return_sentences=True)
    # On what the preprocessor reads of them: the last 4 * 5 lines, the first
    # 64 * 4 bytes of each: `many` and the "a" lines before 90 empty ones lose
    # their first lines, the 600-byte line its end.
    bounded = [_bounded(s, 20, 256) for s in stories]
    story_ids, question_ids = _training_ids(bounded, questions, vocab, 5, 4)
    np.testing.assert_array_equal(new["story"].numpy(), story_ids)
    np.testing.assert_array_equal(new["question"].numpy(), question_ids)
    whole = _training_ids(
        [s.replace("\r\n", "\n").replace("\r", "\n") for s in stories],
        questions, vocab, 5, 4,
    )[0]  # fmt: skip
    for i, (a, b) in enumerate(zip(whole, story_ids, strict=True)):
        assert (a == b).all() == (i not in (2, 6)), i  # the words the model reads
    assert _texts(new["memory"])[2] == ["john", "", "", "", ""]
    assert new["memory"].numpy()[3][2].decode() == " ".join(["x"] * 128)


def test_only_the_last_lines_and_first_bytes_are_read(demo_vocab_file):
    # Word-less lines before the last 4 * memory_size lines are never normalized:
    # a long story of them, long lines and a 64 KiB question take little time and
    # give the outputs of their bounded equivalent.
    pre = _layer(demo_vocab_file, memory_size=3, sentence_length=4)
    assert (pre.max_lines, pre.max_sentence_bytes) == (12, 256)
    long_line = "Mary went to the garden. " + "x" * 40000
    story = "\n".join(
        ["John went to the office."] + ["."] * 60000
        + [long_line, "!?", "Sandra moved to the kitchen.", long_line]
    )  # fmt: skip
    question = "Where is Mary? " * 4400  # 66000 bytes
    stories = [story, "\n".join(["Daniel went to the hallway."] + ["."] * 12), "a"]
    questions = [question, "Where is Daniel?", question[:300]]
    _run(pre, [STORY], ["q"])  # the first call builds the lookup tables
    start = time.perf_counter()
    got = _run(pre, stories, questions, return_sentences=True)
    seconds = time.perf_counter() - start
    expected = _run(
        pre,
        [_bounded(s, 12, 256) for s in stories],
        [_bounded(q, 1, 256) for q in questions],
        return_sentences=True,
    )
    for key in ("story", "question", "memory"):
        np.testing.assert_array_equal(got[key].numpy(), expected[key].numpy())
    cut = "mary went to the garden " + "x" * (256 - 25)
    assert _texts(got["memory"]) == [
        [cut, "sandra moved to the kitchen", cut],
        ["", "", ""],
        ["a", "", ""],
    ]
    vocab = Vocabulary.load(demo_vocab_file)
    np.testing.assert_array_equal(
        got["question"].numpy()[0], vocab.encode(["where", "is", "mary", "where"])
    )
    # Normalizing every line and the whole question took seconds (generous bound:
    # shared CPUs).
    assert seconds < 3.0, seconds


def test_a_story_over_the_byte_limit_keeps_its_last_whole_lines(demo_vocab_file):
    pre = _layer(demo_vocab_file, memory_size=4, sentence_length=4, max_story_bytes=30)
    story = "Mary went to the garden.\nJohn went to the office.\nSandra left."
    memory = _texts(_run(pre, [story], ["q"], return_sentences=True)["memory"])
    # The last 30 bytes start inside the second line: it is dropped whole.
    assert memory == [["sandra left", "", "", ""]]


def test_empty_inputs_and_batches(demo_vocab_file):
    pre = _layer(demo_vocab_file, memory_size=3, sentence_length=4)
    out = _run(pre, ["", "   \n\n"], ["", "?"], return_sentences=True)
    assert not out["story"].numpy().any() and not out["question"].numpy().any()
    assert _texts(out["memory"]) == [["", "", ""], ["", "", ""]]
    empty = _run(pre, tf.constant([], tf.string), tf.constant([], tf.string), True)
    assert empty["story"].shape == (0, 3, 4) and empty["memory"].shape == (0, 3)
    with pytest.raises(tf.errors.InvalidArgumentError, match="same number"):
        _run(pre, ["a", "b"], ["q"])


def test_arguments_are_checked(demo_vocab_file):
    with pytest.raises(ValueError, match="memory_size=0"):
        _layer(demo_vocab_file, memory_size=0, sentence_length=4)


def test_config_round_trip_and_vocabulary_from_the_assets(demo_vocab_file, tmp_path):
    pre = _layer(demo_vocab_file, memory_size=3, sentence_length=4, max_story_bytes=99)
    config = pre.get_config()
    layer_keys = set(keras.layers.Layer().get_config())
    settings = {k: v for k, v in config.items() if k not in layer_keys}
    assert settings == {"memory_size": 3, "sentence_length": 4, "max_story_bytes": 99}
    loaded = MemN2NQuestionAnswererPreprocessor.from_config(config)
    assert loaded.get_config() == config
    with pytest.raises(ValueError, match="has no vocabulary yet"):
        loaded.vocabulary_size  # noqa: B018
    pre.save_assets(tmp_path)
    loaded.load_assets(tmp_path)
    vocab = Vocabulary.load(demo_vocab_file)
    assert loaded.vocabulary_size == len(vocab) and loaded.vocabulary == vocab.tokens
    inputs = {"story": [STORY], "question": ["Where is Mary?"]}
    np.testing.assert_array_equal(loaded(inputs)["story"], pre(inputs)["story"])
