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
