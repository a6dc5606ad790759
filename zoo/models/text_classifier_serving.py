"""`TextClassifierServing`: the text classifiers' string-in signatures (HAN, the
self-attentive classifier), made by `TextClassifier.serving_module` and written by
`TextClassifier.export`.

Signatures (each family exports those its task lists in `signature_names`):

- `serving_default(text: string [None])` -> `probabilities` float [None, C], `label`
  string [None] and the network's attention maps the task lists in `keras_outputs`
  (HAN: `sentence_attention` [None, S], `word_attention` [None, S, W]);
- `explain(text)` (HAN) -> the same plus the preprocessor's string features, the units
  the weights refer to (HAN: `sentences` [None, S], `words` [None, S, W]; "" where
  padded);
- `embed(text)` (the sentence embedder) -> `embedding` float [None, r, 2u],
  `attention` float [None, r, T] and `tokens` string [None, T] (the words the attention
  columns refer to, "" where padded);
- `preprocess(text)` -> `token_ids` int32, the Keras model's input (which the verifier
  feeds to the `.keras` model).

`S`, `W` and `T` are the longest (truncated) document, sentence or text of the request,
at least 1. An empty or whitespace-only text has no words: all its attention weights
(and its embedding) are 0 and its probabilities are the classifier's output for an
all-zero document vector or embedding (finite, never NaN). A request holds at most
`max_batch_size` texts (256 by default; more is refused with InvalidArgument before any
work).

Beside the sentence embedder's version folder, its export writes `VERSION.keras` (the
`SelfAttentiveTextClassifier` task: raw strings in, `predict`, `explain`, `embed`; its
network, token ids in, is `.backbone`), `VERSION.encoder.keras` (the `SentenceEmbedder`
task: raw strings in, `embed` / `predict` -> the embedding matrices; the trained
`SelfAttentiveEncoder` alone, token ids `(B, T)` -> `{"embedding", "attention"}`, is
its `.backbone`), both read by `keras.saving.load_model` after `import zoo`, no
`custom_objects`, vocabulary included; and `VERSION.encoder.vocab.txt` (the
vocabulary of the encoder's token ids).
"""

import tensorflow as tf

from zoo.export.serving_module import DEFAULT_MAX_BATCH_SIZE, ServingModule

TEXT_SPEC = tf.TensorSpec([None], tf.string, name="text")
"""The input of every text classifier signature: a batch of raw strings."""


class TextClassifierServing(ServingModule):
    """A text classifier's string-in signatures (see the module docstring).

    Every signature calls `self.check_batch(text)` first; `serving_signatures()`
    gives the `tf.function`s of `signature_names` (the methods `serve`,
    `explain`, `embed` and `preprocess` also run eagerly).

    Args:
        model: the trained Keras classifier (`model(token_ids)` -> dict holding
            `"probabilities"`; with `embed`, its `.encoder` gives `"embedding"` and
            `"attention"`).
        preprocessor: its preprocessor layer (string `[B]` -> dict holding
            `"token_ids"`); its lookup tables and vocabulary file are saved with
            the signatures.
        label_names: the class names, in class-id order.
        max_batch_size: the most texts one request may hold.
        signature_names: the exported signatures; `"serving_default"` is `serve`.
        outputs: the network's outputs `serve` returns (float32), beside `label`.

    Example:

    ```python
    module = task.serving_module()
    module.serving_signatures()["serving_default"](tf.constant(["A moving film."]))
    # {"label": [b"pos"], "probabilities": ..., ...}
    ```
    """

    def __init__(
        self,
        model,
        preprocessor,
        label_names,
        max_batch_size=DEFAULT_MAX_BATCH_SIZE,
        signature_names=("serving_default", "preprocess"),
        outputs=("probabilities",),
    ):
        super().__init__(model, max_batch_size=max_batch_size)
        preprocessor.check_vocabulary()
        self.preprocessor = preprocessor
        # A Keras layer is no SavedModel child of the module (`ServingModule`): the
        # layer's lookup table, and its vocabulary file as an asset, are tracked here.
        self.lookup = preprocessor.lookup
        self.label_names = tf.constant(list(label_names), tf.string)
        self.outputs = tuple(outputs)
        # Only the listed signatures become tf.functions: `tf.saved_model.save`
        # traces every tf.function the module holds.
        self.functions = {
            name: tf.function(
                getattr(self, "serve" if name == "serving_default" else name),
                input_signature=[TEXT_SPEC],
            )
            for name in signature_names
        }

    def preprocess(self, text):
        text = self.check_batch(text)
        return {"token_ids": self.preprocessor(text)["token_ids"]}

    def _classify(self, text):
        """`serve`'s outputs, and the preprocessor's string features."""
        text = self.check_batch(text)
        features = self.preprocessor(text)
        out = self.model(features["token_ids"], training=False)
        result = {key: tf.cast(out[key], tf.float32) for key in self.outputs}
        best = tf.argmax(result["probabilities"], axis=-1)
        result["label"] = tf.gather(self.label_names, best)
        strings = {k: v for k, v in features.items() if v.dtype == tf.string}
        return result, strings

    def serve(self, text):
        return self._classify(text)[0]

    def explain(self, text):
        result, strings = self._classify(text)
        return {**result, **strings}

    def embed(self, text):
        text = self.check_batch(text)
        features = self.preprocessor(text)
        out = self.model.encoder(features["token_ids"], training=False)
        return {
            "embedding": tf.cast(out["embedding"], tf.float32),
            "attention": tf.cast(out["attention"], tf.float32),
            "tokens": features["tokens"],
        }

    def serving_signatures(self):
        """`{signature name: tf.function}`, `"serving_default"` included."""
        return dict(self.functions)
