"""`SelfAttentiveTextClassifierPreprocessor`: raw sentences -> word ids `(B, T)`, in the
graph.

The same layer runs in the `tf.data` training pipeline, in `predict` / `embed` and
inside the exported serving signatures.
"""

import keras
import tensorflow as tf

from zoo.layers.arguments import check_positive_ints
from zoo.models.preprocessor import Preprocessor, pad_batch
from zoo.text.preprocessing import normalize, word_tokenize

MAX_LENGTH = 128
"""Default limit on tokens per text (later tokens are dropped)."""


@keras.saving.register_keras_serializable(package="zoo")
class SelfAttentiveTextClassifierPreprocessor(Preprocessor):
    """Raw sentences -> `{"token_ids" (B, T), "tokens" (B, T)}`, in the graph.

    Steps (all in-graph, tensorflow-text):

    1. `zoo.text.preprocessing.normalize`: invalid UTF-8 replaced, inputs longer
       than 64 KiB truncated at a character boundary, NFKC, case folding, whitespace
       collapsed;
    2. `word_tokenize` (words, punctuation as separate tokens);
    3. the first `max_length` tokens are kept; longer texts are truncated, never
       rejected;
    4. vocabulary lookup (`VocabularyLookup`: unknown words -> 1, padding -> 0),
       padded with 0 / "" to the longest text of the batch, at least 1 position, so
       an empty or whitespace-only text is a single padded token: fully masked,
       zero attention, finite outputs.

    The word vocabulary is the layer's asset (`vocabulary.txt`): learned with
    `adapt(texts)`, or given as `assets={"vocabulary.txt": path}`; an export of the
    task carries it as `assets/vocab.txt` (and `VERSION.encoder.vocab.txt`). Both
    tasks of the family read text through it: `SelfAttentiveTextClassifier` and
    `SentenceEmbedder`.

    Args:
        max_length: tokens kept per text (later ones are dropped).
        lowercase: case-fold the text.
        assets: `{"vocabulary.txt": path}` or None.
        **kwargs: `keras.layers.Layer` keyword arguments.

    Call arguments:
        text: string tensor or list `[B]`.

    Returns:
        A dict: `"token_ids"` int32 `(B, T)` and `"tokens"` string `(B, T)` ("" where
        padded); `T` is the batch's longest text after truncation, at least 1.

    Example:

    >>> pre = SelfAttentiveTextClassifierPreprocessor(max_length=16)
    >>> pre.adapt(["a fine film .", "dull , too long ."])
    >>> pre(["a fine day ."])["token_ids"].shape
    TensorShape([1, 4])
    """

    def __init__(self, max_length=MAX_LENGTH, lowercase=True, assets=None, **kwargs):
        check_positive_ints(max_length=max_length)
        self.max_length = max_length
        self.lowercase = lowercase
        super().__init__(assets=assets, **kwargs)

    def tokenize(self, text):
        """The words `[B, None]` (ragged strings) of the texts `text` `[B]`, at most
        `max_length` each: what the vocabulary is learned from."""
        text = tf.convert_to_tensor(text, dtype=tf.string)
        words = word_tokenize(normalize(text, lowercase=self.lowercase))
        return words[:, : self.max_length]

    def call(self, text):
        self.check_vocabulary()
        words = self.tokenize(text)
        ids = tf.cast(self.lookup(words), tf.int32)
        return {"token_ids": pad_batch(ids, 0), "tokens": pad_batch(words, "")}

    def adapt(self, texts, vocab_size=30000, min_count=1):
        """Learns the word vocabulary of `texts` (most frequent first, `[PAD]` and
        `[UNK]` included in `vocab_size`; words seen fewer than `min_count` times
        map to `[UNK]`). Returns the `zoo.text.vocabulary.Vocabulary`."""
        return self.learn_word_vocabulary(texts, self.tokenize, vocab_size, min_count)

    def get_config(self):
        return {
            **super().get_config(),
            "max_length": self.max_length,
            "lowercase": self.lowercase,
        }
