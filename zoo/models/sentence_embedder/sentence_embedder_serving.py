"""`SentenceEmbedderServing`: the sentence embedder's signatures, and its export.

Signatures of `saved_models/sentence_embedder/VERSION/`:

- `serving_default(text: string [None])` -> `probabilities` float [None, C], `label`
  string [None];
- `embed(text)` -> `embedding` float [None, r, 2u], `attention` float [None, r, T],
  `tokens` string [None, T] (the words the attention columns refer to, "" where
  padded);
- `preprocess(text)` -> `token_ids` int32 [None, T], the Keras model's input.

`T` is the longest (truncated) text of the request, at least 1; an empty or
whitespace-only text gets all-zero attention and embedding and the classifier's output
for the zero embedding, never NaN. A request holds at most `max_batch_size` texts (256
by default; more is refused with InvalidArgument before any work).

Beside the version folder, `export_sentence_embedder` writes `VERSION.keras` (the
classifier), `VERSION.encoder.keras` (the trained `SelfAttentiveEncoder` alone: token
ids `(B, T)` -> `{"embedding", "attention"}`, which `keras.saving.load_model` reads
after `import zoo.models`, no `custom_objects`) and `VERSION.encoder.vocab.txt` (its
vocabulary, for `SentencePreprocessor`).
"""

import shutil

import tensorflow as tf

from zoo.export.serving_module import DEFAULT_MAX_BATCH_SIZE, ServingModule
from zoo.text.preprocessing import MAX_INPUT_BYTES

TEXT_SPEC = tf.TensorSpec([None], tf.string, name="text")


class SentenceEmbedderServing(ServingModule):
    """The string-in signatures of a trained `SelfAttentiveClassifier`.

    Args:
        model: the `SelfAttentiveClassifier` (its `.encoder` serves `embed`).
        preprocessor: its `SentencePreprocessor`.
        label_names: the class names, in class-id order.
        max_batch_size: the most texts one request may hold.
    """

    def __init__(
        self, model, preprocessor, label_names, max_batch_size=DEFAULT_MAX_BATCH_SIZE
    ):
        super().__init__(model, max_batch_size=max_batch_size)
        self.preprocessor = preprocessor
        self.label_names = tf.constant(list(label_names), tf.string)

    @tf.function(input_signature=[TEXT_SPEC])
    def preprocess(self, text):
        text = self.check_batch(text)
        return {"token_ids": self.preprocessor(text)["token_ids"]}

    @tf.function(input_signature=[TEXT_SPEC])
    def serve(self, text):
        text = self.check_batch(text)
        ids = self.preprocessor(text)["token_ids"]
        out = self.model(ids, training=False)
        probabilities = tf.cast(out["probabilities"], tf.float32)
        label = tf.gather(self.label_names, tf.argmax(probabilities, axis=-1))
        return {"probabilities": probabilities, "label": label}

    @tf.function(input_signature=[TEXT_SPEC])
    def embed(self, text):
        text = self.check_batch(text)
        pre = self.preprocessor(text)
        out = self.model.encoder(pre["token_ids"], training=False)
        return {
            "embedding": tf.cast(out["embedding"], tf.float32),
            "attention": tf.cast(out["attention"], tf.float32),
            "tokens": pre["tokens"],
        }

    def serving_signatures(self):
        """`{signature name: tf.function}` for `zoo.export.export_model`."""
        return {
            "serving_default": self.serve,
            "embed": self.embed,
            "preprocess": self.preprocess,
        }


def export_sentence_embedder(
    model,
    preprocessor,
    label_names,
    base_dir="saved_models",
    name="sentence_embedder",
    warmup_texts=None,
    metadata=None,
    max_batch_size=DEFAULT_MAX_BATCH_SIZE,
):
    """Exports `base_dir/name/VERSION/`, `VERSION.keras` and the standalone encoder.

    Args:
        model: the trained `SelfAttentiveClassifier`.
        preprocessor: its `SentencePreprocessor`.
        label_names: the class names, in class-id order.
        base_dir: the TF Serving base folder.
        name: the model name (`saved_models/<name>/`).
        warmup_texts: example sentences for TF Serving's warm-up requests of
            `serving_default` and `embed`; a short example when empty.
        metadata: manifest entries (`"recipe"`, `"data"`, `"metrics"`, ...); the
            labels, the encoder's files and sizes and the limits are added.
        max_batch_size: the most texts one request may hold.

    Returns:
        The version folder (str).
    """
    from zoo.export import export_model

    module = SentenceEmbedderServing(model, preprocessor, label_names, max_batch_size)
    warmup_texts = list(warmup_texts or []) or ["a short example sentence ."]
    return export_model(
        module,
        name=name,
        signatures=module.serving_signatures(),
        base_dir=base_dir,
        keras_model=model,
        warmup={
            "serving_default": {"text": warmup_texts},
            "embed": {"text": warmup_texts},
        },
        keras_check={
            "signature": "serving_default",
            "outputs": {"probabilities": "probabilities"},
        },
        metadata={
            **(metadata or {}),
            "labels": list(label_names),
            "encoder": {
                "file": "../<VERSION>.encoder.keras (beside this version folder)",
                "vocabulary": "../<VERSION>.encoder.vocab.txt",
                "num_hops": model.encoder.num_hops,
                "embedding_width": model.encoder.output_dim,
            },
            "limits": {
                "max_length": preprocessor.max_length,
                "max_input_bytes": MAX_INPUT_BYTES,
            },
        },
        extra_files={
            ".encoder.keras": model.encoder.save,
            ".encoder.vocab.txt": lambda path: shutil.copyfile(
                preprocessor.vocab_file, path
            ),
        },
    )
