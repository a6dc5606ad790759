"""`HANTextClassifierPreprocessor`: raw documents -> word ids, as a Keras layer."""

import keras

from zoo.models.han.han_preprocessor import (
    MAX_SENTENCES,
    MAX_WORDS,
    HANPreprocessor,
    tokenize_documents,
)
from zoo.models.preprocessor import Preprocessor


@keras.saving.register_keras_serializable(package="zoo")
class HANTextClassifierPreprocessor(Preprocessor):
    """Raw documents -> `{"token_ids" (B, S, W), "sentences", "words"}`.

    The Keras layer of `HANPreprocessor` (its steps and limits: documents truncated
    to `max_sentences` sentences of `max_words` words, never rejected; inputs over
    64 KiB cut first). The word vocabulary is the layer's asset (`vocabulary.txt`):
    learned with `adapt(texts)`, or given as `assets={"vocabulary.txt": path}`.

    Args:
        max_sentences: sentences kept per document (the recipe's with `--data`).
        max_words: words kept per sentence (the recipe's with `--data`).
        lowercase: case-fold the text.
        assets: `{"vocabulary.txt": path}` or None.
        **kwargs: `keras.layers.Layer` keyword arguments.

    Call arguments:
        text: string tensor or list `[B]`.

    Returns:
        `HANPreprocessor`'s dict: `"token_ids"` int32 `(B, S, W)`, `"sentences"`
        `(B, S)` and `"words"` `(B, S, W)` ("" where padded).

    Example:

    >>> pre = HANTextClassifierPreprocessor(max_sentences=8, max_words=20)
    >>> pre.adapt(["A fine film. I liked it.", "Dull. Too long."])
    >>> pre(["Fine."])["token_ids"].shape
    TensorShape([1, 1, 2])
    """

    module_class = HANPreprocessor
    module_arguments = ("max_sentences", "max_words", "lowercase")

    def __init__(
        self,
        max_sentences=MAX_SENTENCES,
        max_words=MAX_WORDS,
        lowercase=True,
        assets=None,
        **kwargs,
    ):
        self.max_sentences = max_sentences
        self.max_words = max_words
        self.lowercase = lowercase
        super().__init__(assets=assets, **kwargs)

    def adapt(self, texts, vocab_size=30000, min_count=2):
        """Learns the word vocabulary of `texts` (most frequent first, `[PAD]` and
        `[UNK]` included in `vocab_size`; words seen fewer than `min_count` times
        map to `[UNK]`); the defaults are the recipe's with `--data`."""
        return self.learn_word_vocabulary(
            texts,
            lambda t: tokenize_documents(
                t, self.max_sentences, self.max_words, lowercase=self.lowercase
            )[1],
            vocab_size,
            min_count,
        )
