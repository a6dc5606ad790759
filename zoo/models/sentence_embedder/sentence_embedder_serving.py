"""`SentenceEmbedderServing`: the sentence embedder's signatures (written by
`zoo.models.sentence_embedder.export_sentence_embedder`).

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
`SelfAttentiveTextClassifier` task: raw strings in, `predict`, `explain`, `embed`; its
network, token ids in, is `.backbone`), `VERSION.encoder.keras` (the `SentenceEmbedder`
task: raw strings in, `embed` / `predict` -> the embedding matrices; the trained
`SelfAttentiveEncoder` alone, token ids `(B, T)` -> `{"embedding", "attention"}`, is
its `.backbone`), both read by `keras.saving.load_model` after `import zoo`, no
`custom_objects`, vocabulary included; and `VERSION.encoder.vocab.txt` (the
vocabulary, for `SentencePreprocessor` on the encoder's token ids).
"""

import tensorflow as tf

from zoo.models.text_classifier_serving import TEXT_SPEC, TextClassifierServing


class SentenceEmbedderServing(TextClassifierServing):
    """The string-in signatures of a trained `SelfAttentiveClassifier`.

    Args:
        model: the `SelfAttentiveClassifier` (its `.encoder` serves `embed`).
        preprocessor: its `SentencePreprocessor`.
        label_names: the class names, in class-id order.
        max_batch_size: the most texts one request may hold.
    """

    signature_names = ("serving_default", "embed", "preprocess")

    @tf.function(input_signature=[TEXT_SPEC])
    def serve(self, text):
        text = self.check_batch(text)
        ids = self.preprocessor(text)["token_ids"]
        return self.classify(self.model(ids, training=False))

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
