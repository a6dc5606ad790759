"""HANTextClassifier: fit and predict on raw documents, saved, preset, exported."""

import numpy as np
import pytest
import tensorflow as tf

from tests.models.task_test_utils import run_task_test
from zoo.models.han import (
    HANClassifier,
    HANTextClassifier,
    HANTextClassifierPreprocessor,
)

POS = ["A wonderful film. I loved it.", "Great acting! A joy to watch."]
NEG = ["Dull and far too long. Boring.", "Terrible plot. I hated it."]
TEXTS = (POS + NEG) * 8
LABELS = ["pos", "pos", "neg", "neg"] * 8


def make_task(texts=TEXTS, label_names=("neg", "pos"), **kwargs):
    pre = HANTextClassifierPreprocessor(max_sentences=4, max_words=12)
    pre.adapt(texts, min_count=1)
    backbone = HANClassifier(
        pre.vocabulary_size,
        len(label_names),
        embedding_dim=8,
        rnn_units=4,
        context_units=4,
    )
    return HANTextClassifier(backbone, pre, list(label_names), **kwargs)


def test_task_contract(tmp_path):
    run_task_test(
        make_task(),
        TEXTS,
        LABELS,
        ["What a wonderful film.", "Boring. I hated it.", ""],
        tmp_path,
    )


def test_adapt_learns_the_words_the_preprocessor_looks_up():
    pre = HANTextClassifierPreprocessor(max_sentences=4, max_words=12)
    vocab = pre.adapt(["Good film. Good.", "Bad film!"], min_count=1)
    # [PAD], [UNK], then by frequency: good (2), film (2), ".", then the rest.
    assert vocab.tokens[:4] == ["[PAD]", "[UNK]", ".", "film"]
    assert pre.vocabulary_size == len(vocab)
    ids = pre(["good zebra."])["token_ids"].numpy()
    assert ids.tolist() == [[[vocab.token_to_id("good"), 1, vocab.token_to_id(".")]]]


def test_labels_as_ids_names_and_a_dataset_train_alike():
    for y in (LABELS, [1 if label == "pos" else 0 for label in LABELS]):
        task = make_task()
        ds = task._pipeline(TEXTS, y, batch_size=32)
        _, labels = next(iter(ds))
        assert labels.numpy().tolist() == [1, 1, 0, 0] * 8
    task = make_task()
    history = task.fit(TEXTS, LABELS, validation_split=0.25, epochs=1, verbose=0)
    assert np.isfinite(history.history["val_loss"][0])
    task = make_task()
    ds = tf.data.Dataset.from_tensor_slices((TEXTS, LABELS))  # unbatched, names
    history = task.fit(ds, epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])


def test_bad_inputs_are_one_line_errors():
    task = make_task()
    with pytest.raises(ValueError, match=r"y\[2\] = 'maybe' is none of"):
        task.fit(TEXTS[:3], ["pos", "neg", "maybe"], verbose=0)
    with pytest.raises(ValueError, match=r"y\[0\] = 7 is not a class id"):
        task.fit(TEXTS[:2], [7, 0], verbose=0)
    with pytest.raises(ValueError, match=r"x\[1\] must be a string. Received: int 5"):
        task.predict(["fine", 5], verbose=0)
    with pytest.raises(ValueError, match="not one string"):
        task.predict("A single text.", verbose=0)
    with pytest.raises(ValueError, match="same number of examples"):
        task.fit(TEXTS[:3], LABELS[:2], verbose=0)
    with pytest.raises(ValueError, match="label_names"):
        HANTextClassifier(
            make_task().backbone, make_task().preprocessor, ["only one", "x", "y"]
        )


def test_explain_gives_attention_over_the_words_it_read():
    task = make_task()
    task.fit(TEXTS, LABELS, epochs=1, verbose=0)
    row = task.explain(["Great acting. I loved it!"])[0]
    assert row["label"] in ("neg", "pos")
    assert row["sentences"].tolist() == ["great acting.", "i loved it!"]
    assert row["words"][0][:3].tolist() == ["great", "acting", "."]
    np.testing.assert_allclose(row["sentence_attention"].sum(), 1.0, atol=1e-5)
    np.testing.assert_allclose(
        row["word_attention"].sum(axis=-1), [1.0, 1.0], atol=1e-5
    )
    np.testing.assert_allclose(
        row["probabilities"],
        task.predict(["Great acting. I loved it!"], verbose=0)[0],
        atol=1e-5,
    )
    assert task.predict_labels(["Great acting. I loved it!"]) == [row["label"]]
    with pytest.raises(ValueError, match="not one string"):
        task.explain("Great acting.")


def test_export_writes_the_task_as_its_keras_file(tmp_path):
    import keras

    from zoo.export import load_manifest

    task = make_task()
    task.fit(TEXTS, LABELS, epochs=1, verbose=0)
    version = task.export(tmp_path, warmup_texts=TEXTS[:2])
    loaded = keras.saving.load_model(version + ".keras")
    assert isinstance(loaded, HANTextClassifier)
    assert loaded.compiled  # saved compiled
    # saved uncompiled (as exports made from a network are): loads uncompiled,
    # and fit compiles with the task's defaults
    bare = make_task(compile=False)
    bare.save(tmp_path / "bare.keras")
    reloaded = keras.saving.load_model(tmp_path / "bare.keras")
    assert not reloaded.compiled
    reloaded.fit(TEXTS[:8], LABELS[:8], epochs=1, verbose=0)
    assert reloaded.compiled and reloaded.optimizer.clipnorm == 5.0
    assert loaded.label_names == ["neg", "pos"]
    served = tf.saved_model.load(version).signatures["serving_default"]
    out = served(text=tf.constant(["Great acting. I loved it!", "Boring."]))
    assert sorted(out) == [
        "label",
        "probabilities",
        "sentence_attention",
        "word_attention",
    ]
    np.testing.assert_allclose(
        out["probabilities"].numpy(),
        loaded.predict(["Great acting. I loved it!", "Boring."], verbose=0),
        atol=1e-5,
    )
    assert load_manifest(version)["metadata"]["labels"] == ["neg", "pos"]
