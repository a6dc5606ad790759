"""SelfAttentiveTextClassifier and SentenceEmbedder: raw sentences in; fit with the
penalty, predict, explain, embed, saved, preset, exported."""

import os
import shutil

import keras
import numpy as np
import pytest
import tensorflow as tf

from tests.models.task_test_utils import predictions_in_fresh_process, run_task_test
from zoo.layers.structured_self_attention import orthogonality_penalty
from zoo.models.sentence_embedder import (
    SelfAttentiveClassifier,
    SelfAttentiveEncoder,
    SelfAttentiveTextClassifier,
    SelfAttentiveTextClassifierPreprocessor,
    SentenceEmbedder,
)
from zoo.models.sentence_embedder.self_attentive_text_classifier import CLIPNORM

POS = ["a wonderful film .", "great acting , a joy to watch !"]
NEG = ["dull and far too long .", "terrible plot . i hated it"]
TEXTS = (POS + NEG) * 8
LABELS = ["pos", "pos", "neg", "neg"] * 8
PREDICT = ["what a wonderful film", "boring , i hated it .", ""]


def make_preprocessor(texts=TEXTS, max_length=12):
    pre = SelfAttentiveTextClassifierPreprocessor(max_length=max_length)
    pre.adapt(texts)
    return pre


def make_task(pre=None, penalty=1.0, dropout=0.5, label_names=("neg", "pos"), **kw):
    pre = pre or make_preprocessor()
    encoder = SelfAttentiveEncoder(
        pre.vocabulary_size,
        embedding_dim=8,
        lstm_units=6,
        attention_units=5,
        num_hops=3,
        penalty=penalty,
    )
    backbone = SelfAttentiveClassifier(
        encoder, len(label_names), hidden_units=8, dropout=dropout
    )
    return SelfAttentiveTextClassifier(backbone, pre, list(label_names), **kw)


def test_task_contract(tmp_path):
    run_task_test(make_task(), TEXTS, LABELS, PREDICT, tmp_path)


def test_default_compile_is_the_recipes():
    from zoo.recipes.self_attentive_embedding import TRAINING, Config

    task = make_task()
    optimizer = task.optimizer
    assert isinstance(optimizer, keras.optimizers.Adam)
    assert float(optimizer.learning_rate) == pytest.approx(TRAINING["learning_rate"])
    assert optimizer.clipnorm == CLIPNORM == Config.clipnorm
    assert not optimizer.use_ema


def test_adapt_learns_the_words_the_preprocessor_looks_up():
    pre = SelfAttentiveTextClassifierPreprocessor(max_length=4)
    vocab = pre.adapt(["Good film, good.", "Bad film! Good"])
    # [PAD], [UNK], then by frequency: good (3), film (2), ...
    assert vocab.tokens[:4] == ["[PAD]", "[UNK]", "good", "film"]
    assert pre.vocabulary_size == len(vocab)
    out = pre(["good zebra . film and more words"])
    assert out["token_ids"].numpy().tolist() == [
        [
            vocab.token_to_id("good"),
            1,
            vocab.token_to_id("."),
            vocab.token_to_id("film"),
        ]
    ]  # truncated at max_length
    assert out["tokens"].numpy().tolist() == [[b"good", b"zebra", b".", b"film"]]


def test_labels_as_ids_names_and_a_dataset_train_alike():
    for y in (LABELS, [1 if label == "pos" else 0 for label in LABELS]):
        task = make_task()
        _, labels = next(iter(task._pipeline(TEXTS, y, batch_size=32)))
        assert labels.numpy().tolist() == [1, 1, 0, 0] * 8
    task = make_task()
    history = task.fit(TEXTS, LABELS, validation_split=0.25, epochs=1, verbose=0)
    assert np.isfinite(history.history["val_loss"][0])
    task = make_task()
    ds = tf.data.Dataset.from_tensor_slices((TEXTS, LABELS))  # unbatched, names
    assert np.isfinite(task.fit(ds, epochs=1, verbose=0).history["loss"][0])


def test_the_penalty_is_part_of_the_loss_the_task_trains_on():
    pre = make_preprocessor()
    ids = pre(TEXTS)["token_ids"]
    y = np.asarray([1, 1, 0, 0] * 8)

    def losses(task):
        """The task's evaluated loss, and its cross-entropy and penalty by hand."""
        out = task.backbone(ids, training=False)
        p = out["probabilities"].numpy()
        ce = -np.mean(np.log(p[np.arange(len(y)), y]))
        penalty = np.mean(orthogonality_penalty(out["attention"], ids != 0).numpy())
        loss = task.evaluate(TEXTS, LABELS, batch_size=64, verbose=0)[0]
        return loss, ce, penalty

    free = make_task(pre, penalty=0.0, dropout=0.0)
    loss, ce, _ = losses(free)
    np.testing.assert_allclose(loss, ce, rtol=1e-5)

    weights = free.backbone.get_weights()
    tasks = {}
    for c in (0.0, 2.0):
        tasks[c] = make_task(pre, penalty=c, dropout=0.0)
        tasks[c].backbone.set_weights(weights)
    loss, ce, penalty = losses(tasks[2.0])
    assert penalty > 0.1
    assert tasks[2.0].losses  # the encoder's add_loss, in the task's losses
    np.testing.assert_allclose(loss, ce + 2.0 * penalty, rtol=1e-5)

    # fit through the task: the penalty's gradient moves the attention
    first = {}
    for c, task in tasks.items():
        history = task.fit(TEXTS, LABELS, epochs=3, shuffle=False, verbose=0)
        first[c] = history.history["loss"][0]
    assert first[2.0] > first[0.0] + 0.1
    w0 = tasks[0.0].backbone.encoder.self_attention.get_weights()
    w2 = tasks[2.0].backbone.encoder.self_attention.get_weights()
    start = free.backbone.encoder.self_attention.get_weights()
    moved = [np.abs(a - s).max() for a, s in zip(w0, start, strict=True)]
    apart = [np.abs(a - b).max() for a, b in zip(w0, w2, strict=True)]
    assert max(apart) > 0.1 * max(moved) > 0


def test_explain_gives_each_hops_attention_over_the_tokens():
    task = make_task()
    task.fit(TEXTS, LABELS, epochs=1, verbose=0)
    texts = ["Great acting, I loved it!", "dull .", ""]
    rows = task.explain(texts)
    assert [sorted(r) for r in rows] == [
        ["attention", "label", "penalty_norm", "probabilities", "tokens"]
    ] * 3
    row = rows[0]
    assert row["label"] in ("neg", "pos")
    words = ["great", "acting", ",", "i", "loved", "it", "!"]
    assert row["tokens"].tolist() == words
    assert row["attention"].shape == (3, len(words))
    np.testing.assert_allclose(row["attention"].sum(axis=-1), 1.0, atol=1e-5)
    np.testing.assert_allclose(
        row["penalty_norm"],
        orthogonality_penalty(row["attention"][None], squared=False).numpy()[0],
        rtol=1e-5,
    )
    assert np.all(rows[2]["attention"] == 0) and rows[2]["penalty_norm"] == 0
    np.testing.assert_allclose(
        [r["probabilities"] for r in rows], task.predict(texts, verbose=0), atol=1e-5
    )
    assert task.predict_labels(texts) == [r["label"] for r in rows]


def test_bad_inputs_are_one_line_errors():
    task = make_task()
    with pytest.raises(ValueError, match=r"y\[2\] = 'maybe' is none of"):
        task.fit(TEXTS[:3], ["pos", "neg", "maybe"], verbose=0)
    with pytest.raises(ValueError, match=r"y\[0\] = 7 is not a class id"):
        task.fit(TEXTS[:2], [7, 0], verbose=0)
    for method in (task.predict, task.explain, task.embed):
        with pytest.raises(ValueError, match=r"x\[1\] must be a string. Received: int"):
            method(["fine", 5])
        with pytest.raises(ValueError, match="not one string"):
            method("A single text.")
    with pytest.raises(ValueError, match="same number of examples"):
        task.fit(TEXTS[:3], LABELS[:2], verbose=0)
    with pytest.raises(ValueError, match="label_names"):
        SelfAttentiveTextClassifier(task.backbone, task.preprocessor, ["a", "b", "c"])
    with pytest.raises(ValueError, match="must be a SelfAttentiveClassifier"):
        SelfAttentiveTextClassifier(task.backbone.encoder, task.preprocessor)
    with pytest.raises(ValueError, match="must be a SelfAttentiveTextClassifierPre"):
        SelfAttentiveTextClassifier(task.backbone, object())
    small = make_preprocessor(["only three words"])
    with pytest.raises(ValueError, match=r"vocabulary_size \(\d+\) words. Received: 5"):
        SelfAttentiveTextClassifier(task.backbone, small)
    with pytest.raises(ValueError, match="must be a SelfAttentiveEncoder"):
        SentenceEmbedder(task.backbone, task.preprocessor)
    with pytest.raises(ValueError, match="has no vocabulary yet"):
        SelfAttentiveTextClassifierPreprocessor()(["text"])
    with pytest.raises(ValueError, match=r"texts\[1\] must be a string"):
        SelfAttentiveTextClassifierPreprocessor().adapt(["a", None])
    assert task.embed([]).shape == (0, 3, 12)


def test_embed_equals_the_exports_embed_signature(tmp_path):
    from zoo.export import load_manifest

    task = make_task()
    task.fit(TEXTS, LABELS, epochs=1, verbose=0)
    texts = ["Great acting, I loved it!", "dull .", "", "a b c d e f g h i j k l m n"]
    embedded = task.embed(texts, batch_size=2)  # padded otherwise than the request
    assert embedded.shape == (4, 3, 12) and embedded.dtype == np.float32
    assert np.all(embedded[2] == 0)  # the empty text

    version = task.export(tmp_path, warmup_texts=TEXTS[:2], metadata={"recipe": "t"})
    served = tf.saved_model.load(version).signatures
    out = served["embed"](text=tf.constant(texts))
    np.testing.assert_allclose(embedded, out["embedding"].numpy(), atol=1e-5)
    rows = task.explain(texts, batch_size=len(texts))  # one batch: the same padding
    for i, row in enumerate(rows):
        np.testing.assert_allclose(row["attention"], out["attention"][i], atol=1e-5)
        assert row["tokens"].tolist() == [t.decode() for t in out["tokens"][i].numpy()]

    # VERSION.keras: the task, raw strings in
    loaded = keras.saving.load_model(version + ".keras")
    assert isinstance(loaded, SelfAttentiveTextClassifier)
    assert loaded.label_names == ["neg", "pos"]
    probabilities = served["serving_default"](text=tf.constant(texts))["probabilities"]
    np.testing.assert_allclose(
        loaded.predict(texts, verbose=0), probabilities.numpy(), atol=1e-5
    )
    np.testing.assert_allclose(loaded.embed(texts), embedded, atol=1e-5)
    ids = served["preprocess"](text=tf.constant(texts))["token_ids"]
    np.testing.assert_allclose(
        loaded.backbone(ids)["probabilities"], probabilities.numpy(), atol=1e-5
    )

    # VERSION.encoder.keras: a SentenceEmbedder, raw strings in, encoder as .backbone
    embedder = keras.saving.load_model(version + ".encoder.keras")
    assert isinstance(embedder, SentenceEmbedder)
    assert isinstance(embedder.backbone, SelfAttentiveEncoder)
    np.testing.assert_allclose(embedder.embed(texts), embedded, atol=1e-5)
    np.testing.assert_allclose(embedder.predict(texts, verbose=0), embedded, atol=1e-5)
    np.testing.assert_allclose(
        embedder.backbone(ids)["embedding"], out["embedding"], atol=1e-5
    )
    name, fresh = predictions_in_fresh_process(
        version + ".encoder.keras", texts, "embed"
    )
    assert name == "SentenceEmbedder"
    np.testing.assert_allclose(fresh, embedded, atol=1e-5)
    manifest = load_manifest(version)["metadata"]
    assert manifest["labels"] == ["neg", "pos"]
    assert manifest["encoder"]["num_hops"] == 3


def test_export_takes_another_preprocessor_with_the_same_words(tmp_path):
    """The task's export with another layer of the same vocabulary file."""
    task = make_task()
    vocab_file = str(tmp_path / "words.txt")
    shutil.copyfile(task.preprocessor.asset_paths["vocabulary.txt"], vocab_file)
    layer = SelfAttentiveTextClassifierPreprocessor(
        max_length=12, assets={"vocabulary.txt": vocab_file}
    )
    task.preprocessor = layer
    version = task.export(tmp_path, warmup_texts=PREDICT)
    assert sorted(os.listdir(os.path.join(version, "assets"))) == ["vocab.txt"]
    loaded = keras.saving.load_model(version + ".keras")
    assert isinstance(loaded, SelfAttentiveTextClassifier)
    np.testing.assert_allclose(
        loaded.predict(PREDICT, verbose=0), task.predict(PREDICT, verbose=0), atol=1e-5
    )
    embedder = keras.saving.load_model(version + ".encoder.keras")
    np.testing.assert_allclose(embedder.embed(PREDICT), task.embed(PREDICT), atol=1e-5)


def test_sentence_embedder_saves_and_loads_from_a_preset(tmp_path):
    task = make_task()
    embedder = SentenceEmbedder(task.backbone.encoder, task.preprocessor)
    expected = embedder.embed(PREDICT)
    np.testing.assert_allclose(
        embedder.predict(PREDICT, verbose=0), expected, atol=1e-6
    )
    embedder.save_to_preset(tmp_path / "preset")
    loaded = SentenceEmbedder.from_preset(tmp_path / "preset")
    np.testing.assert_allclose(loaded.embed(PREDICT), expected, atol=1e-6)
    with pytest.raises(ValueError, match="not a SelfAttentiveTextClassifier"):
        SelfAttentiveTextClassifier.from_preset(tmp_path / "preset")
