"""`SelfAttentiveTextClassifierPreprocessor`: raw sentences -> word ids, a Keras layer."""

import keras

from zoo.models.preprocessor import Preprocessor
from zoo.models.sentence_embedder.sentence_preprocessor import (
    MAX_LENGTH,
    SentencePreprocessor,
    tokenize_sentences,
)


@keras.saving.register_keras_serializable(package="zoo")
class SelfAttentiveTextClassifierPreprocessor(Preprocessor):
    """Raw sentences -> `{"token_ids" (B, T), "tokens" (B, T)}`.

    The Keras layer of `SentencePreprocessor` (its steps and limits: texts truncated
    to `max_length` tokens, never rejected; inputs over 64 KiB cut first; an empty
    text is one padded position). The word vocabulary is the layer's asset
    (`vocabulary.txt`): learned with `adapt(texts)`, or given as
    `assets={"vocabulary.txt": path}`. Both tasks of the family read text through
    it: `SelfAttentiveTextClassifier` and `SentenceEmbedder`.

    Args:
        max_length: tokens kept per text (later ones are dropped).
        lowercase: case-fold the text.
        assets: `{"vocabulary.txt": path}` or None.
        **kwargs: `keras.layers.Layer` keyword arguments.

    Call arguments:
        text: string tensor or list `[B]`.

    Returns:
        `SentencePreprocessor`'s dict: `"token_ids"` int32 `(B, T)` and `"tokens"`
        string `(B, T)` ("" where padded); `T` is the batch's longest text, at least 1.

    Example:

    >>> pre = SelfAttentiveTextClassifierPreprocessor(max_length=16)
    >>> pre.adapt(["a fine film .", "dull , too long ."])
    >>> pre(["a fine day ."])["token_ids"].shape
    TensorShape([1, 4])
    """

    module_class = SentencePreprocessor
    module_arguments = ("max_length", "lowercase")

    def __init__(self, max_length=MAX_LENGTH, lowercase=True, assets=None, **kwargs):
        self.max_length = max_length
        self.lowercase = lowercase
        super().__init__(assets=assets, **kwargs)

    def adapt(self, texts, vocab_size=30000, min_count=1):
        """Learns the word vocabulary of `texts` (most frequent first, `[PAD]` and
        `[UNK]` included in `vocab_size`; words seen fewer than `min_count` times
        map to `[UNK]`). Returns the `zoo.text.vocabulary.Vocabulary`."""
        return self.learn_word_vocabulary(
            texts,
            lambda t: tokenize_sentences(t, self.max_length, lowercase=self.lowercase),
            vocab_size,
            min_count,
        )
