"""`TextClassifierServing`: what the text classifiers' serving modules share (HAN, the
self-attentive classifier)."""

import tensorflow as tf

from zoo.export.serving_module import DEFAULT_MAX_BATCH_SIZE, ServingModule
from zoo.text.preprocessing import MAX_INPUT_BYTES

TEXT_SPEC = tf.TensorSpec([None], tf.string, name="text")
"""The input of every text classifier signature: a batch of raw strings."""


class TextClassifierServing(ServingModule):
    """Base of a text classifier's string-in signatures.

    Holds the model, its in-graph preprocessor and the class names, and defines the
    `preprocess` signature (`text` -> `token_ids`, the Keras model's input, which the
    verifier feeds to the `.keras` model). Subclasses add `serve` and their own
    signatures, each calling `self.check_batch(text)` first, and list them in
    `serving_signatures()`; `export` writes the SavedModel.

    Args:
        model: the trained Keras classifier (`model(token_ids)` -> dict holding
            `"probabilities"`).
        preprocessor: its preprocessor (string `[B]` -> dict holding `"token_ids"`).
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

    def classify(self, outputs):
        """`{"probabilities" (float32), "label"}` of the model's `outputs`."""
        probabilities = tf.cast(outputs["probabilities"], tf.float32)
        label = tf.gather(self.label_names, tf.argmax(probabilities, axis=-1))
        return {"probabilities": probabilities, "label": label}

    signature_names = ("serving_default", "preprocess")
    """The exported signatures; `"serving_default"` is the method `serve`."""

    def serving_signatures(self):
        """`{signature name: tf.function}`, `"serving_default"` included."""
        return {
            name: getattr(self, "serve" if name == "serving_default" else name)
            for name in self.signature_names
        }

    def export(
        self,
        base_dir,
        name,
        warmup_texts,
        metadata=None,
        keras_outputs=("probabilities",),
        warmup_signatures=("serving_default",),
        limits=None,
        extra_files=None,
        keras_model=None,
    ):
        """Exports `base_dir/name/VERSION/` and `VERSION.keras`; returns the folder.

        Args:
            base_dir: the TF Serving base folder.
            name: the model name (`<base_dir>/<name>/`).
            warmup_texts: example texts: TF Serving's warm-up requests of
                `warmup_signatures`, and the input of the verifier's comparison of
                `serving_default` with the `.keras` model on `keras_outputs`.
            metadata: manifest entries (`"recipe"`, `"data"`, `"metrics"`, ...); the
                class names (`labels`) are added.
            keras_outputs: the outputs `serving_default` shares with the model.
            warmup_signatures: the signatures given warm-up requests.
            limits: the preprocessing limits for the manifest (the 64 KiB input
                limit is added).
            extra_files: `{suffix: write(path)}` files beside the version folder.
            keras_model: the model saved as `VERSION.keras` (default: the network;
                the families pass their task, which reads raw strings).
        """
        from zoo.export import export_model

        texts = list(warmup_texts)
        labels = [label.decode("utf-8") for label in self.label_names.numpy()]
        return export_model(
            self,
            name=name,
            signatures=self.serving_signatures(),
            base_dir=base_dir,
            keras_model=self.model if keras_model is None else keras_model,
            warmup={signature: {"text": texts} for signature in warmup_signatures},
            keras_check={
                "signature": "serving_default",
                "outputs": {key: key for key in keras_outputs},
            },
            metadata={
                **(metadata or {}),
                "labels": labels,
                "limits": {**(limits or {}), "max_input_bytes": MAX_INPUT_BYTES},
            },
            extra_files=extra_files,
        )
