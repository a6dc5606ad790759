import os
import time

import keras
import numpy as np
import pytest
import tensorflow as tf

from zoo.models.memn2n import (
    MemN2N,
    MemN2NQuestionAnswerer,
    MemN2NQuestionAnswererPreprocessor,
)
from zoo.models.memn2n.memn2n_question_answerer_preprocessor import MAX_STORY_BYTES
from zoo.text.vocabulary import Vocabulary

STORY = "Mary moved to the kitchen.\nJohn went to the garden.\nMary went to the office."


class _Module:
    """A task's serving module, its signatures as `serve` and `preprocess`."""

    def __init__(self, task, **kwargs):
        self.module = task.serving_module(**kwargs)
        self.preprocessor = task.preprocessor
        signatures = self.module.signatures()
        self.serve = signatures["serving_default"]
        self.preprocess = signatures["preprocess"]


def _task(vocab_file, memory_size=10, sentence_length=6):
    vocab = Vocabulary.load(vocab_file)
    model = MemN2N(len(vocab), memory_size, sentence_length, embedding_dim=8, hops=2)
    pre = MemN2NQuestionAnswererPreprocessor(
        memory_size, sentence_length, assets={"vocabulary.txt": vocab_file}
    )
    return MemN2NQuestionAnswerer(model, pre, compile=False), model, vocab


def _module(vocab_file, **kwargs):
    task, model, vocab = _task(vocab_file)
    return _Module(task, **kwargs), model, vocab


def _np(outputs):
    return {k: v.numpy() for k, v in outputs.items()}


def test_serve_matches_preprocess_then_the_model(demo_vocab_file):
    module, model, vocab = _module(demo_vocab_file)
    stories, questions = [STORY, ""], ["Where is Mary?", "Where is John?"]
    out = _np(module.serve(stories, questions))
    assert sorted(out) == [
        "answer", "attention", "memory", "probabilities", "sentences_used",
        "story_truncated",
    ]  # fmt: skip
    assert out["probabilities"].shape == (2, len(vocab))
    assert out["attention"].shape == (2, 2, 10)
    assert out["memory"][0][0].decode() == "mary went to the office"
    assert out["sentences_used"].tolist() == [3, 0]
    assert out["story_truncated"].tolist() == [False, False]
    features = _np(module.preprocess(stories, questions))
    expected = model(features)
    np.testing.assert_allclose(
        out["probabilities"], keras.ops.convert_to_numpy(expected["probabilities"]),
        rtol=1e-5, atol=1e-6,
    )  # fmt: skip
    np.testing.assert_allclose(
        out["attention"], keras.ops.convert_to_numpy(expected["attention"]),
        rtol=1e-5, atol=1e-6,
    )  # fmt: skip
    # The most probable word (reserved ids aside); the empty story has no answer.
    best = out["probabilities"][0, 2:].argmax() + 2
    assert [a.decode() for a in out["answer"]] == [vocab.id_to_token(best), ""]
    assert list(module.module.signatures()) == ["serving_default", "preprocess"]


@pytest.mark.slow
def test_export_records_the_limits_and_serves_the_tasks_preprocessor(
    demo_vocab_file, tmp_path
):
    from zoo.export import load_manifest

    task, _, _ = _task(demo_vocab_file)
    version = task.export(tmp_path, max_batch_size=8)
    assert load_manifest(version)["limits"] == {
        "memory_slots": 10,
        "words_per_sentence": 6,
        "max_story_bytes": MAX_STORY_BYTES,
        "story_sentence_separator": "\\n",
        "max_batch_size": 8,
    }
    assert sorted(os.listdir(os.path.join(version, "assets"))) == ["vocab.txt"]
    loaded = tf.saved_model.load(version)
    served = loaded.signatures["serving_default"](
        story=tf.constant([STORY]), question=tf.constant(["Where is Mary?"])
    )
    assert served["answer"].numpy().tolist() == [
        task.predict_answers({"story": [STORY], "question": ["Where is Mary?"]})[
            0
        ].encode()
    ]


def test_a_huge_story_costs_its_last_lines_only(demo_vocab_file):
    module, _, _ = _module(demo_vocab_file)
    lines = [f"Sandra went to the hallway{i}." for i in range(12000)]
    huge = "\n".join(lines)
    assert len(huge) > MAX_STORY_BYTES  # cut to its last 256 KiB as well
    last = "\n".join(lines[-10:])
    batch = 16
    module.serve([STORY], ["Where is Mary?"])  # traced once
    start = time.perf_counter()
    got = _np(module.serve([huge] * batch, ["Where is Sandra?"] * batch))
    seconds = time.perf_counter() - start
    expected = _np(module.serve([last] * batch, ["Where is Sandra?"] * batch))
    for key in ("probabilities", "attention"):
        np.testing.assert_array_equal(got[key], expected[key])
    for key in ("answer", "memory", "sentences_used"):
        assert got[key].tolist() == expected[key].tolist()
    assert got["memory"][0][0].decode() == "sandra went to the hallway11999"
    assert got["sentences_used"].tolist() == [10] * batch
    assert got["story_truncated"].tolist() == [True] * batch  # said, not silent
    assert expected["story_truncated"].tolist() == [False] * batch
    # Tokenizing and densifying every line took seconds for such a batch; the last
    # lines alone take a small fraction of a second (generous bound: shared CPUs).
    assert seconds < 4.0, seconds


def test_requests_over_the_batch_limit_or_of_unequal_batches_are_refused(
    demo_vocab_file,
):
    module, _, _ = _module(demo_vocab_file, max_batch_size=2)
    assert module.serve([STORY] * 2, ["Where is Mary?"] * 2)["answer"].shape == (2,)
    for signature in (module.serve, module.preprocess):
        with pytest.raises(tf.errors.InvalidArgumentError, match="max_batch_size=2"):
            signature([STORY] * 3, ["Where is Mary?"] * 3)
        with pytest.raises(tf.errors.InvalidArgumentError, match="same batch size"):
            signature([STORY] * 2, ["Where is Mary?"])


def test_a_long_story_says_how_many_sentences_it_kept(demo_vocab_file):
    """500 sentences for 10 slots: the last 10 are read, and the outputs say so."""
    module, _, _ = _module(demo_vocab_file)
    lines = [f"Mary went to the kitchen{i}." for i in range(500)]
    stories = [
        "\n".join(lines),  # more sentences than slots
        "\n".join(lines[-10:]),  # exactly the slots
        " \n.\n" * 30 + "\n".join(lines[-9:]),  # lines not read hold no words
        "John moved to the garden.\n" + "\n" * 60 + "\n".join(lines[-9:]),
        ".\n\n  \n",  # no sentence with words
    ]
    out = _np(module.serve(stories, ["Where is Mary?"] * 5))
    assert out["sentences_used"].tolist() == [10, 10, 9, 9, 0]
    # The fourth story's first line lies beyond the 40 lines read: left out.
    assert out["story_truncated"].tolist() == [True, False, False, True, False]
    assert out["memory"][0][0].decode() == "mary went to the kitchen499"
    assert out["memory"][0][9].decode() == "mary went to the kitchen490"


def test_an_empty_story_or_question_answers_nothing_never_a_reserved_token(
    demo_vocab_file,
):
    module, _, vocab = _module(demo_vocab_file)
    stories = [STORY, "", STORY, "...", ""]
    questions = ["Where is Mary?", "Where is Mary?", "", "Where is Mary?", " ?! "]
    out = _np(module.serve(stories, questions))
    answers = [a.decode() for a in out["answer"]]
    assert answers[1:] == ["", "", "", ""]
    assert answers[0] == vocab.id_to_token(out["probabilities"][0, 2:].argmax() + 2)
    # Probabilities whose largest are [PAD]'s, then [UNK]'s: the answer is the most
    # probable word of the vocabulary all the same.
    pre = module.preprocessor
    inputs = {"story": [STORY, STORY], "question": ["Where is Mary?", ""]}
    features = pre(inputs, return_sentences=True)
    probabilities = np.full((2, len(vocab)), 0.01, "float32")
    probabilities[:, :3] = [0.5, 0.3, 0.1]
    got = pre.answers(tf.constant(probabilities), features).numpy().tolist()
    assert got == [vocab.id_to_token(2).encode(), b""]
