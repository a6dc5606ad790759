"""`HANServing`: the HAN export's signatures (string in), and `export_han_classifier`.

Signatures of `saved_models/han/VERSION/`:

- `serving_default(text: string [None])` -> `probabilities` float [None, C], `label`
  string [None], `sentence_attention` float [None, S], `word_attention` float
  [None, S, W];
- `explain(text)` -> the same plus `sentences` string [None, S] and `words` string
  [None, S, W], the units the weights refer to ("" where padded);
- `preprocess(text)` -> `token_ids` int32 [None, S, W], the Keras model's input.

`S` and `W` are the longest (truncated) document and sentence of the request, at
least 1. An empty or whitespace-only text has no words: all its attention weights are
0 and its probabilities are the classifier's output for an all-zero document vector
(finite, never NaN). A request holds at most `max_batch_size` texts (256 by default;
more is refused with InvalidArgument before any work).
"""

import tensorflow as tf

from zoo.export.serving_module import DEFAULT_MAX_BATCH_SIZE, ServingModule
from zoo.text.preprocessing import MAX_INPUT_BYTES

TEXT_SPEC = tf.TensorSpec([None], tf.string, name="text")


class HANServing(ServingModule):
    """The string-in signatures of a trained `HANClassifier`.

    Args:
        model: the `HANClassifier`.
        preprocessor: its `HANPreprocessor` (vocabulary and limits).
        label_names: the class names, in class-id order.
        max_batch_size: the most texts one request may hold.

    Example:

    ```python
    module = HANServing(model, preprocessor, ["neg", "pos"])
    module.serve(tf.constant(["A moving film."]))["label"]  # [b"pos"]
    ```
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
    def explain(self, text):
        text = self.check_batch(text)
        pre = self.preprocessor(text)
        out = self.model(pre["token_ids"], training=False)
        probabilities = tf.cast(out["probabilities"], tf.float32)
        return {
            "probabilities": probabilities,
            "label": tf.gather(self.label_names, tf.argmax(probabilities, axis=-1)),
            "sentence_attention": tf.cast(out["sentence_attention"], tf.float32),
            "word_attention": tf.cast(out["word_attention"], tf.float32),
            "sentences": pre["sentences"],
            "words": pre["words"],
        }

    @tf.function(input_signature=[TEXT_SPEC])
    def serve(self, text):
        result = self.explain(text)  # one traced model graph (and batch check)
        return {k: v for k, v in result.items() if k not in ("sentences", "words")}

    def serving_signatures(self):
        """`{signature name: tf.function}` for `zoo.export.export_model`."""
        return {
            "serving_default": self.serve,
            "explain": self.explain,
            "preprocess": self.preprocess,
        }


def export_han_classifier(
    model,
    preprocessor,
    label_names,
    base_dir="saved_models",
    name="han",
    warmup_texts=None,
    metadata=None,
    max_batch_size=DEFAULT_MAX_BATCH_SIZE,
):
    """Exports `base_dir/name/VERSION/` (and `VERSION.keras`); returns the folder.

    Args:
        model: the trained `HANClassifier`.
        preprocessor: its `HANPreprocessor`.
        label_names: the class names, in class-id order.
        base_dir: the TF Serving base folder.
        name: the model name (`saved_models/<name>/`).
        warmup_texts: example documents for TF Serving's warm-up requests (and the
            verifier's Keras check); a short example when empty.
        metadata: manifest entries (`"recipe"`, `"data"`, `"metrics"`, ...); the
            labels and the preprocessing limits are added.
        max_batch_size: the most texts one request may hold.
    """
    from zoo.export import export_model

    module = HANServing(model, preprocessor, label_names, max_batch_size)
    warmup_texts = list(warmup_texts or []) or ["a short example document."]
    return export_model(
        module,
        name=name,
        signatures=module.serving_signatures(),
        base_dir=base_dir,
        keras_model=model,
        warmup={"serving_default": {"text": warmup_texts}},
        keras_check={
            "signature": "serving_default",
            "outputs": {
                "probabilities": "probabilities",
                "sentence_attention": "sentence_attention",
                "word_attention": "word_attention",
            },
        },
        metadata={
            **(metadata or {}),
            "labels": list(label_names),
            "limits": {
                "max_sentences": preprocessor.max_sentences,
                "max_words": preprocessor.max_words,
                "max_input_bytes": MAX_INPUT_BYTES,
            },
        },
    )
