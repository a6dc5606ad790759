"""A tiny string-in classifier exported with zoo.export, for the export tests.

Embedding (mask_zero) + masked mean pooling + softmax over VocabularyLookup ids. A
leading [UNK] id acts as a start token, so an empty text still has one position and
the mean is defined.
"""

import os

import keras
import numpy as np
import tensorflow as tf

from zoo.export import ServingModule, export_model
from zoo.text.preprocessing import normalize, word_tokenize
from zoo.text.vocabulary import Vocabulary, VocabularyLookup

LABELS = ["negative", "positive"]
POSITIVE = ["good", "great", "fine", "love", "nice"]
NEGATIVE = ["bad", "awful", "poor", "hate", "boring"]
NEUTRAL = ["the", "film", "was", "a", "plot", "and", "acting"]
EXAMPLES = ["The film was good.", "Awful plot, boring acting!", "great", ""]


def corpus(n=128, seed=0):
    rng = np.random.default_rng(seed)
    texts, labels = [], []
    for _ in range(n):
        label = int(rng.integers(2))
        words = list(rng.choice(NEUTRAL, size=3)) + list(
            rng.choice(POSITIVE if label else NEGATIVE, size=2)
        )
        rng.shuffle(words)
        texts.append(" ".join(words))
        labels.append(label)
    return texts, np.array(labels)


def build_model(vocab_size):
    ids = keras.Input((None,), dtype="int64", name="token_ids")
    x = keras.layers.Embedding(vocab_size, 8, mask_zero=True)(ids)
    x = keras.layers.GlobalAveragePooling1D()(x)
    probabilities = keras.layers.Dense(
        len(LABELS), activation="softmax", name="probabilities"
    )(x)
    return keras.Model(ids, probabilities, name="tiny_classifier")


class TinyServing(ServingModule):
    def __init__(self, model, vocab_file, **kwargs):
        super().__init__(model, **kwargs)
        self.lookup = VocabularyLookup(vocab_file)
        self.labels = tf.constant(LABELS)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text")])
    def preprocess(self, text):
        text = self.check_batch(text)
        ids = self.lookup(word_tokenize(normalize(text)))
        start = tf.ones([tf.shape(text)[0], 1], tf.int64)  # [UNK] as a start token
        return {"token_ids": tf.concat([start, ids.to_tensor()], axis=1)}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text")])
    def serve(self, text):
        text = self.check_batch(text)
        probabilities = self.model(self.preprocess(text)["token_ids"], training=False)
        label = tf.gather(self.labels, tf.argmax(probabilities, axis=-1))
        return {"probabilities": probabilities, "label": label}


def train_and_export(base_dir, work_dir, epochs=40):
    texts, labels = corpus()
    tokens = word_tokenize(normalize(tf.constant(texts)))
    vocab = Vocabulary.build(tokens.to_list())
    vocab_file = vocab.save(os.path.join(work_dir, "vocab.txt"))
    keras.utils.set_random_seed(0)
    model = build_model(len(vocab))
    module = TinyServing(model, vocab_file)
    x = module.preprocess(tf.constant(texts))["token_ids"]
    model.compile(
        keras.optimizers.Adam(0.05),
        "sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    history = model.fit(x, labels, epochs=epochs, batch_size=32, verbose=0)
    accuracy = float(history.history["accuracy"][-1])
    version_dir = export_model(
        module,
        name="tiny",
        signatures={"serving_default": module.serve, "preprocess": module.preprocess},
        base_dir=base_dir,
        keras_model=model,
        warmup={
            "serving_default": {"text": EXAMPLES},
            "preprocess": {"text": EXAMPLES},
        },
        keras_check={
            "signature": "serving_default",
            "outputs": {"probabilities": "probabilities"},
        },
        metadata={
            "recipe": "tests.export.tiny_model",
            "data": "generated",
            "metrics": {"train_accuracy": accuracy},
        },
    )
    return version_dir, accuracy
