"""MemN2NQuestionAnswerer: fit and predict on raw stories, saved, preset, exported."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from tests.models.task_test_utils import run_task_test
from zoo.data import babi
from zoo.models.memn2n import (
    MemN2N,
    MemN2NQuestionAnswerer,
    MemN2NQuestionAnswererPreprocessor,
    babi_arrays,
)

PEOPLE = ("Mary", "John", "Sandra")
PLACES = ("kitchen", "garden", "office", "hallway")


def make_examples(n=24):
    """`n` tiny bAbI task-1-like stories: two moves, then "Where is X?"."""
    stories, questions, answers = [], [], []
    for i in range(n):
        a, b = PEOPLE[i % 3], PEOPLE[(i + 1) % 3]
        pa, pb = PLACES[i % 4], PLACES[(i // 4 + 1) % 4]
        stories.append(f"{a} went to the {pa}.\n{b} moved to the {pb}.")
        asked = a if i % 2 == 0 else b
        questions.append(f"Where is {asked}?")
        answers.append(pa if asked == a else pb)
    return stories, questions, answers


STORIES, QUESTIONS, ANSWERS = make_examples()
X = {"story": STORIES, "question": QUESTIONS}
PREDICT_X = {
    "story": [STORIES[0], "Sandra journeyed to the office.", ""],
    "question": ["Where is Mary?", "Where is Sandra?", "Where is John?"],
}


def make_task(memory_size=6, linear_start=False, **kwargs):
    pre = MemN2NQuestionAnswererPreprocessor(memory_size=memory_size)
    pre.adapt(STORIES, QUESTIONS, ANSWERS)
    backbone = MemN2N(
        pre.vocabulary_size, memory_size, pre.sentence_length, embedding_dim=8,
        hops=2, linear_start=linear_start,
    )  # fmt: skip
    return MemN2NQuestionAnswerer(backbone, pre, **kwargs)


def test_task_contract(tmp_path):
    keras.utils.set_random_seed(1)
    run_task_test(make_task(), X, ANSWERS, PREDICT_X, tmp_path)


def test_adapt_builds_the_recipe_vocabulary_and_ids():
    lines = []
    for story, question, answer in zip(STORIES, QUESTIONS, ANSWERS, strict=True):
        sentences = story.split("\n")
        lines += [f"{i} {s}" for i, s in enumerate(sentences, start=1)]
        lines.append(f"{len(sentences) + 1} {question}\t{answer}\t1")
    examples = babi.parse_babi(lines)
    pre = MemN2NQuestionAnswererPreprocessor(memory_size=6)
    vocab = pre.adapt(STORIES, QUESTIONS, [a.upper() for a in ANSWERS])
    # The recipe's vocabulary (`build_arrays`): answers lower-cased, words
    # normalized and tokenized, punctuation dropped.
    assert babi_arrays.build_vocabulary(examples) == (vocab, 5)
    assert pre.sentence_length == 5
    assert "?" not in vocab and "mary" in vocab and "Mary" not in vocab
    assert pre.vocabulary == vocab.tokens and pre.vocabulary_size == len(vocab)
    arrays = babi_arrays.vectorize(examples, vocab, memory_size=6, sentence_length=5)
    ids = pre(X)
    np.testing.assert_array_equal(ids["story"], arrays["sentences"][arrays["memory"]])
    np.testing.assert_array_equal(ids["question"], arrays["question"])


def test_answers_are_the_network_classes():
    task = make_task()
    vocab = task.preprocessor.vocabulary
    ids = task.encode_answers(["office", " Garden", "KITCHEN"])
    assert [vocab[i] for i in ids] == ["office", "garden", "kitchen"]
    assert task.encode_answers([2, 3]).tolist() == [2, 3]
    ds = task._pipeline(X, ANSWERS, batch_size=32)
    features, answers = next(iter(ds))
    assert sorted(features) == ["question", "story"]
    assert [vocab[i] for i in answers.numpy()] == ANSWERS
    ds = tf.data.Dataset.from_tensor_slices((X, ANSWERS))  # unbatched, words
    history = task.fit(ds, epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    for kwargs in ({"validation_split": 0.25}, {"validation_data": (X, ANSWERS)}):
        history = task.fit(X, ANSWERS, epochs=1, verbose=0, **kwargs)
        assert np.isfinite(history.history["val_loss"][0])
    assert np.isfinite(task.evaluate(X, ANSWERS, verbose=0)[0])
    probabilities = task.predict(PREDICT_X, verbose=0)
    assert probabilities.shape == (3, len(vocab))
    np.testing.assert_allclose(probabilities.sum(-1), 1.0, rtol=1e-5)
    # The most probable word (the reserved ids are no answers); the third story is
    # empty: no answer.
    assert task.predict_answers(PREDICT_X) == [
        vocab[i + 2] for i in probabilities[:2, 2:].argmax(-1)
    ] + [""]


def test_fit_learns_the_tiny_task():
    keras.utils.set_random_seed(0)
    task = make_task(compile=False)
    task.default_compile(learning_rate=0.01)  # the paper's rate without LS
    # 40 passes over the examples in one epoch (a dataset of words as answers):
    # the same steps as 40 epochs of lists, without an epoch's overhead each.
    ds = tf.data.Dataset.from_tensor_slices((X, ANSWERS)).shuffle(24, seed=0)
    task.fit(ds.repeat(40).batch(8), epochs=1, verbose=0)
    assert np.mean(np.array(task.predict_answers(X)) == np.array(ANSWERS)) >= 0.9


def test_explain_is_the_answer_and_each_hops_attention_over_the_story():
    task = make_task()
    rows = task.explain(PREDICT_X, batch_size=2)
    assert len(rows) == 3
    row = rows[0]
    assert sorted(row) == [
        "answer", "attention", "memory", "probabilities", "sentences_used",
        "story_truncated",
    ]  # fmt: skip
    assert [(r["sentences_used"], r["story_truncated"]) for r in rows] == [
        (2, False), (1, False), (0, False),
    ]  # fmt: skip
    assert rows[2]["answer"] == ""  # an empty story has no answer
    assert row["memory"].tolist() == [
        "john moved to the garden",
        "mary went to the kitchen",
        "",
        "",
        "",
        "",
    ]
    assert row["attention"].shape == (2, 6)
    np.testing.assert_allclose(row["attention"].sum(-1), [1.0, 1.0], rtol=1e-5)
    np.testing.assert_allclose(
        np.stack([r["probabilities"] for r in rows]),
        task.predict(PREDICT_X, verbose=0),
        atol=1e-6,
    )
    assert [r["answer"] for r in rows] == task.predict_answers(PREDICT_X)
    assert rows[2]["memory"].tolist() == [""] * 6  # empty story: empty memory


def test_predict_equals_the_export_signature(tmp_path):
    from zoo.export import load_manifest
    from zoo.export.verify import verify_export

    keras.utils.set_random_seed(2)
    task = make_task()
    task.fit(X, ANSWERS, epochs=2, verbose=0)
    version = task.export(tmp_path, examples=PREDICT_X)
    loaded = keras.saving.load_model(version + ".keras")
    assert isinstance(loaded, MemN2NQuestionAnswerer)
    assert isinstance(loaded.backbone, MemN2N)
    served = tf.saved_model.load(version).signatures["serving_default"]
    out = served(
        story=tf.constant(PREDICT_X["story"]),
        question=tf.constant(PREDICT_X["question"]),
    )
    assert sorted(out) == [
        "answer", "attention", "memory", "probabilities", "sentences_used",
        "story_truncated",
    ]  # fmt: skip
    np.testing.assert_allclose(
        out["probabilities"].numpy(), task.predict(PREDICT_X, verbose=0), atol=1e-5
    )
    np.testing.assert_allclose(
        out["probabilities"].numpy(), loaded.predict(PREDICT_X, verbose=0), atol=1e-5
    )
    assert [a.decode() for a in out["answer"].numpy()] == task.predict_answers(
        PREDICT_X
    )
    rows = task.explain(PREDICT_X)
    for j, row in enumerate(rows):
        np.testing.assert_allclose(out["attention"][j], row["attention"], atol=1e-5)
        assert [s.decode() for s in out["memory"][j].numpy()] == row["memory"].tolist()
        assert int(out["sentences_used"][j]) == row["sentences_used"]
        assert bool(out["story_truncated"][j]) == row["story_truncated"]
    manifest = load_manifest(version)
    assert manifest["limits"]["memory_slots"] == 6
    report = verify_export(version)
    assert report["ok"], report["errors"]
    assert report["keras_check"]["ok"]


def test_export_holds_the_vocabulary_as_vocab_txt(tmp_path):
    import os

    task = make_task()
    version = task.export(tmp_path)  # default warm-up
    assert os.listdir(os.path.join(version, "assets")) == ["vocab.txt"]
    vocab_file = os.path.join(version, "assets", "vocab.txt")
    loaded = keras.saving.load_model(version + ".keras")
    assert isinstance(loaded, MemN2NQuestionAnswerer)
    assert loaded.preprocessor.vocabulary == task.preprocessor.vocabulary
    served = tf.saved_model.load(version).signatures["serving_default"](
        story=tf.constant(PREDICT_X["story"]),
        question=tf.constant(PREDICT_X["question"]),
    )
    np.testing.assert_allclose(
        served["probabilities"].numpy(), task.predict(PREDICT_X, verbose=0), atol=1e-5
    )
    pre = MemN2NQuestionAnswererPreprocessor(
        6, 5, assets={"vocabulary.txt": vocab_file}
    )
    assert pre.get_config()["sentence_length"] == 5
    np.testing.assert_array_equal(pre(X)["story"], task.preprocessor(X)["story"])


def test_bad_inputs_are_one_line_errors():
    task = make_task()
    lengths = r"same number of examples. Received lengths \{'story': 3, 'question': 2\}"
    with pytest.raises(ValueError, match=lengths):
        task.predict({"story": STORIES[:3], "question": QUESTIONS[:2]}, verbose=0)
    with pytest.raises(ValueError, match=lengths):
        task.explain({"story": STORIES[:3], "question": QUESTIONS[:2]})
    with pytest.raises(
        ValueError, match=r"x\['question'\]\[1\] must be a string. Received: int 5"
    ):
        task.predict({"story": STORIES[:2], "question": ["Where is Mary?", 5]})
    with pytest.raises(ValueError, match="not one string"):
        task.predict({"story": STORIES[0], "question": QUESTIONS[0]}, verbose=0)
    with pytest.raises(ValueError, match=r"must be a dict .* Received: list"):
        task.predict(STORIES, verbose=0)
    with pytest.raises(ValueError, match=r"Received: \['story'\]"):
        task.predict({"story": STORIES}, verbose=0)
    with pytest.raises(ValueError, match=r"y\[2\] = 'zebra' is not a word"):
        task.fit(
            {"story": STORIES[:3], "question": QUESTIONS[:3]},
            ["office", "garden", "zebra"],
            verbose=0,
        )
    with pytest.raises(ValueError, match=r"y\[0\] = '\[UNK\]' is not a word"):
        task.fit({"story": STORIES[:1], "question": QUESTIONS[:1]}, ["[UNK]"])
    with pytest.raises(ValueError, match=r"y\[1\] = 99 is not an answer id"):
        task.fit({"story": STORIES[:2], "question": QUESTIONS[:2]}, [2, 99])
    with pytest.raises(ValueError, match="same number of examples"):
        task.fit(X, ANSWERS[:3], verbose=0)
    for error in (
        lambda: MemN2NQuestionAnswererPreprocessor().adapt(
            STORIES, QUESTIONS[:2], ANSWERS
        ),
        lambda: MemN2NQuestionAnswererPreprocessor().adapt(
            STORIES[:1], [7], ANSWERS[:1]
        ),
    ):
        with pytest.raises(ValueError) as info:
            error()
        assert "\n" not in str(info.value)
        assert "lengths" in str(info.value) or "questions[0]" in str(info.value)


def test_the_preprocessor_must_fit_the_network():
    pre = make_task().preprocessor
    with pytest.raises(ValueError, match="memory_size must be the network's"):
        MemN2NQuestionAnswerer(MemN2N(pre.vocabulary_size, 7, pre.sentence_length), pre)
    with pytest.raises(ValueError, match="vocabulary_size"):
        MemN2NQuestionAnswerer(MemN2N(5, 6, pre.sentence_length), pre)
    with pytest.raises(ValueError, match="must be a MemN2N"):
        MemN2NQuestionAnswerer(keras.Sequential(), pre)
    with pytest.raises(ValueError, match="has no vocabulary yet"):
        MemN2NQuestionAnswererPreprocessor(memory_size=6, sentence_length=5)(X)


def test_a_story_longer_than_the_memory_is_read_from_its_end_and_said():
    """500 sentences for 6 slots: the last 6 are read; `explain` says so and
    `predict_answers` warns, naming how many stories were cut."""
    task = make_task()
    long_story = "\n".join(
        f"{PEOPLE[i % 3]} went to the {PLACES[i % 4]}." for i in range(500)
    )
    x = {"story": [long_story, STORIES[0]], "question": ["Where is Mary?"] * 2}
    rows = task.explain(x)
    assert [(r["sentences_used"], r["story_truncated"]) for r in rows] == [
        (6, True), (2, False),
    ]  # fmt: skip
    assert rows[0]["memory"][0] == "john went to the hallway"  # sentence 499
    with pytest.warns(UserWarning) as caught:
        answers = task.predict_answers(x)
    assert [str(w.message) for w in caught] == [
        "1 of 2 stories were cut to their last 6 sentences (the memory's slots); "
        "their older sentences were not read (explain() gives each story's "
        "sentences_used and story_truncated)"
    ]
    assert answers == [r["answer"] for r in rows] and "" not in answers


def test_an_empty_story_or_question_has_no_answer():
    task = make_task()
    x = {
        "story": ["", " \n...\n", STORIES[0], STORIES[0]],
        "question": ["Where is Mary?", "Where is Mary?", "", "?"],
    }
    assert task.predict_answers(x) == ["", "", "", ""]


def test_fit_ends_linear_start_unless_its_callbacks_do():
    from zoo.models.memn2n.linear_start import LinearStart

    # The rate 0 keeps the loss flat: linear start ends after the first epoch
    # whose loss (no validation data) did not fall, the second.
    task = make_task(linear_start=True, compile=False)
    task.default_compile(learning_rate=0.0)
    memory = task.backbone.memory
    assert memory.linear_start_enabled
    history = task.fit(X, ANSWERS, epochs=3, shuffle=False, verbose=0)
    assert not memory.linear_start_enabled
    assert history.history["loss"][0] == history.history["loss"][1]
    # A LinearStart of the caller's (the recipe's schedule) is the only one.
    memory.set_linear_start(True)
    own = LinearStart(memory, patience=float("inf"), max_epochs=10)
    task.fit(X, ANSWERS, epochs=3, shuffle=False, verbose=0, callbacks=[own])
    assert memory.linear_start_enabled and own.switched_at is None
