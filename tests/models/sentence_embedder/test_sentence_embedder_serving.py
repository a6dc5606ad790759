import json
import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from tests.models.sentence_embedder.tiny import tiny_encoder
from zoo.models.sentence_embedder import (
    SelfAttentiveClassifier,
    SelfAttentiveTextClassifier,
    SelfAttentiveTextClassifierPreprocessor,
)
from zoo.text.vocabulary import Vocabulary

TEXTS = ["a good film .", "", "bad bad film"]
LABELS = ["negative", "positive"]


@pytest.fixture
def parts(tmp_path):
    vocab = Vocabulary.build([["a", "good", "bad", "film", "."]])
    vocab_file = vocab.save(tmp_path / "vocab.txt")
    preprocessor = SelfAttentiveTextClassifierPreprocessor(
        max_length=6, assets={"vocabulary.txt": vocab_file}
    )
    encoder = tiny_encoder(vocabulary_size=len(vocab))
    model = SelfAttentiveClassifier(encoder, num_classes=2, hidden_units=4)
    return model, preprocessor


def signatures(model, preprocessor, **kwargs):
    task = SelfAttentiveTextClassifier(model, preprocessor, LABELS, compile=False)
    return task.serving_module(**kwargs).signatures()


def test_signatures_match_the_keras_model(parts):
    model, preprocessor = parts
    module = signatures(model, preprocessor)
    assert sorted(module) == [
        "embed",
        "preprocess",
        "serving_default",
    ]
    text = tf.constant(TEXTS)
    features = preprocessor(text)
    served, embedded = module["serving_default"](text), module["embed"](text)
    assert sorted(served) == ["label", "probabilities"]
    assert sorted(embedded) == ["attention", "embedding", "tokens"]
    expected = model(features["token_ids"])
    np.testing.assert_allclose(
        served["probabilities"].numpy(), expected["probabilities"].numpy(), atol=1e-6
    )
    encoded = model.encoder(features["token_ids"])
    for key in ("embedding", "attention"):
        np.testing.assert_allclose(
            embedded[key].numpy(), encoded[key].numpy(), atol=1e-6
        )
    probabilities = served["probabilities"].numpy()
    assert [b.decode() for b in served["label"].numpy()] == [
        LABELS[i] for i in probabilities.argmax(-1)
    ]
    assert embedded["tokens"].numpy()[0].tolist() == [b"a", b"good", b"film", b"."]
    assert np.all(embedded["attention"].numpy()[1] == 0)  # the empty text
    np.testing.assert_array_equal(
        module["preprocess"](text)["token_ids"].numpy(), features["token_ids"].numpy()
    )


@pytest.mark.slow
def test_export_writes_the_encoder_beside_the_version(parts, tmp_path):
    model, preprocessor = parts
    task = SelfAttentiveTextClassifier(model, preprocessor, LABELS, compile=False)
    version_dir = task.export(
        base_dir=tmp_path / "saved_models",
        warmup_texts=TEXTS,
        metadata={"recipe": "test"},
    )
    assert version_dir.endswith(os.path.join("sentence_embedder", "1"))
    assert os.listdir(os.path.join(version_dir, "assets")) == ["vocab.txt"]
    with open(os.path.join(version_dir, "assets.extra", "manifest.json")) as f:
        manifest = json.load(f)
    assert manifest["metadata"]["labels"] == LABELS
    assert manifest["metadata"]["encoder"]["num_hops"] == 3
    assert manifest["metadata"]["encoder"]["embedding_width"] == 12
    assert manifest["limits"]["max_length"] == 6
    with (
        open(version_dir + ".encoder.vocab.txt") as f,
        open(preprocessor.asset_paths["vocabulary.txt"]) as g,
    ):
        assert f.read() == g.read()
    # a SentenceEmbedder task (raw strings in); the encoder itself is its .backbone
    embedder = keras.saving.load_model(version_dir + ".encoder.keras")
    assert type(embedder).__name__ == "SentenceEmbedder"
    ids = preprocessor(tf.constant(TEXTS))["token_ids"]
    expected = model.encoder(ids)["embedding"].numpy()
    np.testing.assert_allclose(
        embedder.backbone(ids)["embedding"].numpy(), expected, atol=1e-6
    )
    np.testing.assert_allclose(embedder.embed(TEXTS), expected, atol=1e-5)
    classifier = keras.saving.load_model(version_dir + ".keras")
    assert type(classifier).__name__ == "SelfAttentiveTextClassifier"
    assert classifier.label_names == LABELS
    np.testing.assert_allclose(
        classifier.backbone(ids)["probabilities"].numpy(),
        model(ids)["probabilities"].numpy(),
        atol=1e-6,
    )
    loaded = tf.saved_model.load(version_dir)
    assert sorted(loaded.signatures) == ["embed", "preprocess", "serving_default"]


def test_every_signature_refuses_a_batch_over_the_limit(parts):
    model, preprocessor = parts
    module = signatures(model, preprocessor, max_batch_size=2)
    for fn in module.values():
        assert len(fn(tf.constant(TEXTS[:2]))) >= 1
        with pytest.raises(tf.errors.InvalidArgumentError, match="max_batch_size=2"):
            fn(tf.constant(TEXTS))
