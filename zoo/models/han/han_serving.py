"""`HANServing`: the HAN export's signatures (string in; written by
`zoo.models.han.export_han_classifier`).

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

from zoo.models.text_classifier_serving import TEXT_SPEC, TextClassifierServing


class HANServing(TextClassifierServing):
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

    signature_names = ("serving_default", "explain", "preprocess")

    @tf.function(input_signature=[TEXT_SPEC])
    def explain(self, text):
        text = self.check_batch(text)
        pre = self.preprocessor(text)
        out = self.model(pre["token_ids"], training=False)
        return {
            **self.classify(out),
            "sentence_attention": tf.cast(out["sentence_attention"], tf.float32),
            "word_attention": tf.cast(out["word_attention"], tf.float32),
            "sentences": pre["sentences"],
            "words": pre["words"],
        }

    @tf.function(input_signature=[TEXT_SPEC])
    def serve(self, text):
        result = self.explain(text)  # one traced model graph (and batch check)
        return {k: v for k, v in result.items() if k not in ("sentences", "words")}
