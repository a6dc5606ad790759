import numpy as np
import pytest
import tensorflow as tf

from tests.data.test_babi import SAMPLE
from zoo.data import babi
from zoo.demo.babi import DEMO_TASK, generate_demo_lines, load_demo
from zoo.models.memn2n import MemN2N, MemN2NQuestionAnswererPreprocessor, babi_arrays
from zoo.models.memn2n.babi_arrays import (
    build_arrays,
    concat_arrays,
    error_rate,
    predict,
    select,
)
from zoo.text.babi_example import BabiExample


def _dense(arrays):  # the (N, M, J) story ids
    return arrays["sentences"][arrays["memory"]]


def _demo(num_stories=10, seed=1):
    return babi.parse_babi(generate_demo_lines(num_stories, seed=seed))


def test_concat_arrays_reindexes_sentences():
    examples = _demo()
    vocab, _ = babi_arrays.build_vocabulary(examples)
    a = babi_arrays.vectorize(examples[:5], vocab, 10, 6)
    b = babi_arrays.vectorize(examples[5:], vocab, 10, 6)
    joined = concat_arrays([a, None, b])
    np.testing.assert_array_equal(
        _dense(joined),
        np.concatenate([_dense(a), _dense(b)]),
    )
    np.testing.assert_array_equal(
        joined["answer"], np.concatenate([a["answer"], b["answer"]])
    )
    assert len(joined["sentences"]) == len(a["sentences"]) + len(b["sentences"]) - 1


def test_build_arrays_covers_every_split_and_groups():
    tasks = load_demo(num_stories=30, test_stories=10, memory_size=8)
    vocab, sentence_length, arrays = build_arrays(tasks, memory_size=8)
    demo = arrays[DEMO_TASK]
    for split in ("train", "valid", "test"):
        n = len(getattr(tasks[DEMO_TASK], split))
        assert demo[split]["memory"].shape == (n, 8)
        assert demo[split]["question"].shape == (n, sentence_length)
    assert "mary" in vocab and sentence_length >= 4


def test_vocabulary_and_length_come_from_training_and_validation_only():
    import dataclasses

    tasks = load_demo(num_stories=30, test_stories=10, memory_size=8)
    task = tasks[DEMO_TASK]
    seen, seen_length = babi_arrays.build_vocabulary(task.train + task.valid)
    # a test story with a word, a longer sentence and an answer seen nowhere else
    story = ("zebra went to the hallway and then to the kitchen again .",)
    unseen = BabiExample(
        story, "where is zebra ?", "moon", supporting=(), task=0, source="x:1"
    )
    assert "zebra" not in seen and "moon" not in seen
    test = [*task.test, unseen]
    vocab, length, arrays = build_arrays(
        {0: dataclasses.replace(task, test=test)}, memory_size=8
    )
    assert vocab.tokens == seen.tokens
    assert length == seen_length
    out = arrays[0]["test"]
    assert out["answer"][-1] == 1  # [UNK]: no answer the model can give
    question = out["question"][-1]
    assert question[2] == 1 and (question[:2] > 1).all()  # "where is zebra"
    memory = _dense(out)[-1]
    assert memory.shape == (8, length) and memory[0, 0] == 1  # "zebra", cut
    np.testing.assert_array_equal(
        arrays[0]["train"]["answer"],
        [vocab.token_to_id(ex.answer) for ex in task.train],
    )


def test_predict_and_error_rate_agree_with_the_model():
    examples = _demo(6)
    vocab, _ = babi_arrays.build_vocabulary(examples)
    arrays = babi_arrays.vectorize(examples, vocab, 10, 6)
    model = MemN2N(len(vocab), 10, 6, embedding_dim=8, hops=1)
    predicted, probabilities, attention = predict(model, arrays, batch_size=4)
    n = len(examples)
    assert probabilities.shape == (n, len(vocab)) and attention.shape == (n, 1, 10)
    direct = model({"story": _dense(arrays), "question": arrays["question"]})
    np.testing.assert_allclose(probabilities, direct["probabilities"], rtol=1e-5)
    expected = 100.0 * np.mean(predicted != arrays["answer"])
    assert error_rate(model, arrays) == expected
    first = select(arrays, [0, 1])
    assert (
        first["memory"].shape == (2, 10) and first["sentences"] is arrays["sentences"]
    )


@pytest.fixture
def vocab_and_file(tmp_path):
    examples = babi.parse_babi(SAMPLE.splitlines())
    vocab, _ = babi_arrays.build_vocabulary(examples)
    path = vocab.save(tmp_path / "vocab.txt")
    return examples, vocab, path


def test_vectorize_matches_the_serving_preprocessor(vocab_and_file):
    examples, vocab, path = vocab_and_file
    assert "mary" in vocab and "bathroom" in vocab and "." not in vocab
    arrays = babi_arrays.vectorize(examples, vocab, memory_size=4, sentence_length=5)
    stories = _dense(arrays)
    assert stories.shape == (3, 4, 5)
    # Slot 0 holds the most recent statement.
    np.testing.assert_array_equal(
        stories[1, 0, :5], vocab.encode(["daniel", "went", "back", "to", "the"])
    )
    pre = MemN2NQuestionAnswererPreprocessor(4, 5, assets={"vocabulary.txt": path})
    served = pre(
        {
            "story": ["\n".join(ex.story) for ex in examples],
            "question": [ex.question for ex in examples],
        }
    )
    np.testing.assert_array_equal(served["story"].numpy(), stories)
    np.testing.assert_array_equal(served["question"].numpy(), arrays["question"])
    assert list(arrays["answer"]) == vocab.encode(["bathroom", "hallway", "office"])


def test_random_empty_memories_shift_but_keep_order():
    memory = np.tile(np.arange(1, 21, dtype=np.int32), (64, 1))
    np.testing.assert_array_equal(
        babi_arrays.random_empty_memories(memory, 0.0, seed=(1, 2)), memory
    )
    noisy = babi_arrays.random_empty_memories(memory, 0.1, seed=(1, 2)).numpy()
    assert noisy.shape == memory.shape
    for row in noisy:
        kept = row[row > 0]
        np.testing.assert_array_equal(kept, np.arange(1, len(kept) + 1))
    share_empty = np.mean(noisy == 0)
    assert 0.03 < share_empty < 0.2


def test_make_dataset_fixed_shapes(vocab_and_file):
    examples, vocab, _ = vocab_and_file
    arrays = babi_arrays.vectorize(
        examples * 10, vocab, memory_size=4, sentence_length=5
    )
    ds = babi_arrays.make_dataset(arrays, batch_size=8, shuffle=True, noise_rate=0.1)
    x, y = next(iter(ds))
    assert x["story"].shape == (8, 4, 5) and x["question"].shape == (8, 5)
    assert x["story"].dtype == tf.int32 and y.shape == (8,)
    plain = babi_arrays.make_dataset(arrays, batch_size=30)
    x, y = next(iter(plain))
    np.testing.assert_array_equal(x["story"].numpy(), _dense(arrays))
    np.testing.assert_array_equal(y.numpy(), arrays["answer"])


def test_random_noise_is_seeded_and_changes_every_epoch():
    sentences = np.arange(60 * 3, dtype="int32").reshape(60, 3)
    sentences[0] = 0  # sentence 0 is the empty one
    arrays = {
        "sentences": sentences,
        "memory": np.tile(np.arange(1, 11, dtype="int32"), (40, 1)),
        "question": np.ones((40, 3), "int32"),
        "answer": np.arange(40, dtype="int32"),
    }

    def epochs(ds, n=2):
        return [np.concatenate([x["story"].numpy() for x, _ in ds]) for _ in range(n)]

    first = epochs(
        babi_arrays.make_dataset(arrays, 8, shuffle=True, seed=3, noise_rate=0.3)
    )
    tf.random.uniform([5])  # other random ops in between must not matter
    again = epochs(
        babi_arrays.make_dataset(arrays, 8, shuffle=True, seed=3, noise_rate=0.3)
    )
    other = epochs(
        babi_arrays.make_dataset(arrays, 8, shuffle=True, seed=4, noise_rate=0.3)
    )
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[0], first[1])  # new noise (and order) each epoch
    assert not np.array_equal(first[0], other[0])
    # some memories were shifted by inserted empty slots
    assert (first[0][:, 0, :] == 0).all(axis=-1).any()
