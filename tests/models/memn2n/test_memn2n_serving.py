import time

import keras
import numpy as np
import pytest
import tensorflow as tf

from zoo.models.memn2n import MAX_STORY_BYTES, MemN2N, MemN2NServing
from zoo.text.vocabulary import Vocabulary

STORY = "Mary moved to the kitchen.\nJohn went to the garden.\nMary went to the office."


def _module(vocab_file, memory_size=10, sentence_length=6, **kwargs):
    vocab = Vocabulary.load(vocab_file)
    model = MemN2N(len(vocab), memory_size, sentence_length, embedding_dim=8, hops=2)
    return MemN2NServing(model, vocab_file, **kwargs), model, vocab


def _np(outputs):
    return {k: v.numpy() for k, v in outputs.items()}


def test_serve_matches_preprocess_then_the_model(demo_vocab_file):
    module, model, vocab = _module(demo_vocab_file)
    stories, questions = [STORY, ""], ["Where is Mary?", "Where is John?"]
    out = _np(module.serve(stories, questions))
    assert sorted(out) == ["answer", "attention", "memory", "probabilities"]
    assert out["probabilities"].shape == (2, len(vocab))
    assert out["attention"].shape == (2, 2, 10)
    assert out["memory"][0][0].decode() == "mary went to the office"
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
    answers = [vocab.id_to_token(i) for i in out["probabilities"].argmax(-1)]
    assert [a.decode() for a in out["answer"]] == answers
    assert module.limits() == {
        "memory_slots": 10,
        "words_per_sentence": 6,
        "max_story_bytes": MAX_STORY_BYTES,
        "story_sentence_separator": "\\n",
    }
    assert set(module.signatures()) == {"serving_default", "preprocess"}


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
    for key in ("answer", "memory"):
        assert got[key].tolist() == expected[key].tolist()
    assert got["memory"][0][0].decode() == "sandra went to the hallway11999"
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
