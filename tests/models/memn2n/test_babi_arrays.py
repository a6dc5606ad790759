import numpy as np

from zoo.data import babi
from zoo.models.memn2n import (
    MemN2N,
    build_arrays,
    concat_arrays,
    error_rate,
    predict,
    select,
    training_groups,
)


def _demo(num_stories=10, seed=1):
    return babi.parse_babi(babi.generate_demo_lines(num_stories, seed=seed))


def test_concat_arrays_reindexes_sentences():
    examples = _demo()
    vocab = babi.build_vocabulary(examples)
    a = babi.vectorize(examples[:5], vocab, 10, 6)
    b = babi.vectorize(examples[5:], vocab, 10, 6)
    joined = concat_arrays([a, None, b])
    np.testing.assert_array_equal(
        babi.dense_stories(joined),
        np.concatenate([babi.dense_stories(a), babi.dense_stories(b)]),
    )
    np.testing.assert_array_equal(
        joined["answer"], np.concatenate([a["answer"], b["answer"]])
    )
    assert len(joined["sentences"]) == len(a["sentences"]) + len(b["sentences"]) - 1


def test_build_arrays_covers_every_split_and_groups():
    tasks = babi.load_demo(num_stories=30, test_stories=10, memory_size=8)
    vocab, sentence_length, arrays = build_arrays(tasks, memory_size=8)
    demo = arrays[babi.DEMO_TASK]
    for split in ("train", "valid", "test"):
        n = len(getattr(tasks[babi.DEMO_TASK], split))
        assert demo[split]["memory"].shape == (n, 8)
        assert demo[split]["question"].shape == (n, sentence_length)
    assert "mary" in vocab and sentence_length >= 4
    assert training_groups(tasks, joint=False) == [("task0", [0])]
    assert training_groups(tasks, joint=True) == [("joint", [0])]
    assert training_groups({}, joint=True) == []


def test_vocabulary_and_length_come_from_training_and_validation_only():
    import dataclasses

    tasks = babi.load_demo(num_stories=30, test_stories=10, memory_size=8)
    task = tasks[babi.DEMO_TASK]
    seen = babi.build_vocabulary(task.train + task.valid)
    # a test story with a word, a longer sentence and an answer seen nowhere else
    story = ("zebra went to the hallway and then to the kitchen again .",)
    unseen = babi.BabiExample(
        story, "where is zebra ?", "moon", supporting=(), task=0, source="x:1"
    )
    assert "zebra" not in seen and "moon" not in seen
    test = [*task.test, unseen]
    vocab, length, arrays = build_arrays(
        {0: dataclasses.replace(task, test=test)}, memory_size=8
    )
    assert vocab.tokens == seen.tokens
    assert length == babi.max_sentence_length(task.train + task.valid)
    out = arrays[0]["test"]
    assert out["answer"][-1] == 1  # [UNK]: no answer the model can give
    question = out["question"][-1]
    assert question[2] == 1 and (question[:2] > 1).all()  # "where is zebra"
    memory = babi.dense_stories(out)[-1]
    assert memory.shape == (8, length) and memory[0, 0] == 1  # "zebra", cut
    np.testing.assert_array_equal(
        arrays[0]["train"]["answer"],
        [vocab.token_to_id(ex.answer) for ex in task.train],
    )


def test_predict_and_error_rate_agree_with_the_model():
    examples = _demo(6)
    vocab = babi.build_vocabulary(examples)
    arrays = babi.vectorize(examples, vocab, 10, 6)
    model = MemN2N(len(vocab), 10, 6, embedding_dim=8, hops=1)
    predicted, probabilities, attention = predict(model, arrays, batch_size=4)
    n = len(examples)
    assert probabilities.shape == (n, len(vocab)) and attention.shape == (n, 1, 10)
    direct = model(
        {"story": babi.dense_stories(arrays), "question": arrays["question"]}
    )
    np.testing.assert_allclose(probabilities, direct["probabilities"], rtol=1e-5)
    expected = 100.0 * np.mean(predicted != arrays["answer"])
    assert error_rate(model, arrays) == expected
    first = select(arrays, [0, 1])
    assert (
        first["memory"].shape == (2, 10) and first["sentences"] is arrays["sentences"]
    )
