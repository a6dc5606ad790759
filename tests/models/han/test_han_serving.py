import json
import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from zoo.models.han import (
    HANClassifier,
    HANTextClassifier,
    HANTextClassifierPreprocessor,
)
from zoo.text.vocabulary import Vocabulary

TEXTS = ["Good film. Bad plot!", "", "good good good good good good good"]


@pytest.fixture
def parts(tmp_path):
    vocab = Vocabulary.build([["good", "film", ".", "bad", "plot", "!"]])
    vocab_file = vocab.save(tmp_path / "vocab.txt")
    preprocessor = HANTextClassifierPreprocessor(
        max_sentences=3, max_words=4, assets={"vocabulary.txt": vocab_file}
    )
    model = HANClassifier(len(vocab), 2, embedding_dim=8, rnn_units=4, context_units=5)
    return model, preprocessor


def signatures(model, preprocessor, **kwargs):
    task = HANTextClassifier(model, preprocessor, ["neg", "pos"], compile=False)
    return task.serving_module(**kwargs).signatures()


def test_signatures_match_the_keras_model(parts):
    model, preprocessor = parts
    module = signatures(model, preprocessor)
    assert sorted(module) == [
        "explain",
        "preprocess",
        "serving_default",
    ]
    text = tf.constant(TEXTS)
    features = preprocessor(text)
    expected = model(features["token_ids"])
    served, explained = module["serving_default"](text), module["explain"](text)
    assert sorted(served) == [
        "label",
        "probabilities",
        "sentence_attention",
        "word_attention",
    ]
    assert sorted(explained) == sorted([*served, "sentences", "words"])
    for key in ("probabilities", "sentence_attention", "word_attention"):
        want = keras.ops.convert_to_numpy(expected[key])
        np.testing.assert_allclose(served[key].numpy(), want, atol=1e-6)
        np.testing.assert_allclose(explained[key].numpy(), want, atol=1e-6)
    probabilities = served["probabilities"].numpy()
    labels = [b"neg", b"pos"]
    assert served["label"].numpy().tolist() == [
        labels[i] for i in probabilities.argmax(-1)
    ]
    assert explained["words"].numpy()[0, 1].tolist() == [b"bad", b"plot", b"!", b""]
    np.testing.assert_array_equal(
        module["preprocess"](text)["token_ids"].numpy(), features["token_ids"].numpy()
    )
    # The empty document: no words, zero attention, finite probabilities.
    assert np.all(served["sentence_attention"].numpy()[1] == 0)
    assert np.all(np.isfinite(probabilities[1]))


@pytest.mark.slow
def test_export_writes_the_signatures_limits_and_labels(parts, tmp_path):
    model, preprocessor = parts
    task = HANTextClassifier(model, preprocessor, ["neg", "pos"], compile=False)
    version_dir = task.export(
        base_dir=tmp_path / "saved_models",
        warmup_texts=TEXTS,
        metadata={"recipe": "test", "metrics": {"accuracy": 0.5}},
    )
    assert version_dir.endswith(os.path.join("han", "1"))
    assert os.listdir(os.path.join(version_dir, "assets")) == ["vocab.txt"]
    assert isinstance(
        keras.saving.load_model(version_dir + ".keras"), HANTextClassifier
    )
    assert os.path.isfile(version_dir + ".keras")
    with open(os.path.join(version_dir, "assets.extra", "manifest.json")) as f:
        manifest = json.load(f)
    assert manifest["metadata"]["labels"] == ["neg", "pos"]
    assert manifest["recipe"] == "test" and manifest["metrics"] == {"accuracy": 0.5}
    limits = {"max_sentences": 3, "max_words": 4, "max_input_bytes": 65536}
    assert manifest["limits"].items() >= limits.items()
    loaded = tf.saved_model.load(version_dir)
    assert sorted(loaded.signatures) == ["explain", "preprocess", "serving_default"]
    served = loaded.signatures["serving_default"](text=tf.constant(TEXTS))
    expected = model(preprocessor(tf.constant(TEXTS))["token_ids"])
    np.testing.assert_allclose(
        served["probabilities"].numpy(),
        keras.ops.convert_to_numpy(expected["probabilities"]),
        atol=1e-6,
    )


def test_every_signature_refuses_a_batch_over_the_limit(parts):
    model, preprocessor = parts
    module = signatures(model, preprocessor, max_batch_size=2)
    for fn in module.values():
        assert len(fn(tf.constant(TEXTS[:2]))) >= 1
        with pytest.raises(tf.errors.InvalidArgumentError, match="max_batch_size=2"):
            fn(tf.constant(TEXTS))
