"""`HANTextClassifierPreprocessor`: raw documents -> word ids `(B, S, W)`, in the graph.

The same layer runs in the `tf.data` training pipeline, in `predict` and inside the
exported serving signatures, so training and serving preprocess identically.
"""

import keras
import tensorflow as tf

from zoo.layers.arguments import check_positive_ints
from zoo.models.preprocessor import Preprocessor, pad_batch
from zoo.text.preprocessing import normalize, pad_ragged, split_sentences, word_tokenize

MAX_SENTENCES = 30
"""Default limit on sentences per document (later sentences are dropped)."""
MAX_WORDS = 50
"""Default limit on words per sentence (later words are dropped)."""


@keras.saving.register_keras_serializable(package="zoo")
class HANTextClassifierPreprocessor(Preprocessor):
    """Raw documents -> `{"token_ids" (B, S, W), "sentences", "words"}`, in the graph.

    Steps (all in-graph, tensorflow-text):

    1. HTML line breaks (`<br />`, as in IMDB reviews) become line breaks;
    2. `zoo.text.preprocessing.normalize`: invalid UTF-8 replaced, inputs longer
       than `MAX_INPUT_BYTES` (64 KiB) truncated at a character boundary, NFKC,
       case folding, whitespace collapsed;
    3. `split_sentences` (on `.`, `!`, `?` + space and on line breaks), then
       `word_tokenize` (words, punctuation as separate tokens);
    4. limits: the first `max_sentences` sentences of a document and the first
       `max_words` words of each sentence are kept; longer documents are truncated,
       never rejected;
    5. vocabulary lookup (`VocabularyLookup`: unknown words -> 1, padding -> 0),
       padded to the longest document / sentence of the batch (at least 1 x 1, so
       an empty document is a single padded word: fully masked, finite output).

    The word vocabulary is the layer's asset (`vocabulary.txt`): learned with
    `adapt(texts)`, or given as `assets={"vocabulary.txt": path}`; an export of the
    task carries it as `assets/vocab.txt`.

    Args:
        max_sentences: sentences kept per document (the recipe's with `--data`).
        max_words: words kept per sentence (the recipe's with `--data`).
        lowercase: case-fold the text.
        assets: `{"vocabulary.txt": path}` or None.
        **kwargs: `keras.layers.Layer` keyword arguments.

    Call arguments:
        text: string tensor or list `[B]`.
        pad_to_limits: pad every batch to the fixed shape `(B, max_sentences,
            max_words)` (one graph trace for all batches) instead of the batch's
            longest document and sentence.

    Returns:
        A dict: `"token_ids"` int32 `(B, S, W)`, `"sentences"` string `(B, S)` and
        `"words"` string `(B, S, W)` ("" where padded); `S`, `W` are the batch
        maxima after truncation, at least 1.

    Example:

    >>> pre = HANTextClassifierPreprocessor(max_sentences=8, max_words=20)
    >>> pre.adapt(["A fine film. I liked it.", "Dull. Too long."])
    >>> pre(["Fine."])["token_ids"].shape
    TensorShape([1, 1, 2])
    """

    def __init__(
        self,
        max_sentences=MAX_SENTENCES,
        max_words=MAX_WORDS,
        lowercase=True,
        assets=None,
        **kwargs,
    ):
        check_positive_ints(max_sentences=max_sentences, max_words=max_words)
        self.max_sentences = max_sentences
        self.max_words = max_words
        self.lowercase = lowercase
        super().__init__(assets=assets, **kwargs)

    def tokenize(self, text):
        """The words `[B, S, W]` (ragged strings) of the documents `text` `[B]`,
        within the limits: what the vocabulary is learned from."""
        return tokenize_documents(
            text, self.max_sentences, self.max_words, self.lowercase
        )[1]

    def call(self, text, pad_to_limits=False):
        self.check_vocabulary()
        sentences, words = tokenize_documents(
            text, self.max_sentences, self.max_words, self.lowercase
        )
        ids = tf.cast(self.lookup(words), tf.int32)  # ragged (B, S, W)
        if pad_to_limits:
            limits = (self.max_sentences, self.max_words)
            return {
                "token_ids": pad_ragged(ids, limits, pad=0),
                "sentences": pad_ragged(sentences, self.max_sentences, pad=""),
                "words": pad_ragged(words, limits, pad=""),
            }
        return {
            "token_ids": pad_batch(ids, 0),
            "sentences": pad_batch(sentences, ""),
            "words": pad_batch(words, ""),
        }

    def document_ids(self, texts, max_sentences=200, max_words=200, chunk=500):
        """Yields each document's word ids (1-D int32 NumPy, sentences concatenated).

        The tokenization and vocabulary are this layer's, with generous limits: word
        vectors (`zoo.text.word2vec`) learn from the whole document, not only from
        the part the classifier reads.
        """
        self.check_vocabulary()
        texts = list(texts)
        for start in range(0, len(texts), chunk):
            _, words = tokenize_documents(
                tf.constant(texts[start : start + chunk]),
                max_sentences,
                max_words,
                self.lowercase,
            )
            ids = tf.cast(self.lookup(words.merge_dims(1, 2)), tf.int32)
            yield from (row.numpy() for row in ids)

    def adapt(self, texts, vocab_size=30000, min_count=2):
        """Learns the word vocabulary of `texts` (most frequent first, `[PAD]` and
        `[UNK]` included in `vocab_size`; words seen fewer than `min_count` times
        map to `[UNK]`); the defaults are the recipe's with `--data`. Returns the
        `zoo.text.vocabulary.Vocabulary`."""
        return self.learn_word_vocabulary(texts, self.tokenize, vocab_size, min_count)

    def get_config(self):
        return {
            **super().get_config(),
            "max_sentences": self.max_sentences,
            "max_words": self.max_words,
            "lowercase": self.lowercase,
        }


def tokenize_documents(
    text, max_sentences=MAX_SENTENCES, max_words=MAX_WORDS, lowercase=True
):
    """Splits raw documents into (truncated) sentences and words, in the graph.

    Args:
        text: string tensor `[B]`.
        max_sentences, max_words: limits (see `HANTextClassifierPreprocessor`).
        lowercase: whether to case fold.

    Returns:
        `(sentences, words)`: ragged string tensors `[B, S]` and `[B, S, W]`.
    """
    text = tf.convert_to_tensor(text, dtype=tf.string)
    text = tf.strings.regex_replace(text, r"(?i)<br\s*/?>", "\n")
    text = normalize(text, lowercase=lowercase)
    sentences = split_sentences(text)[:, :max_sentences]  # (B, S)
    words = word_tokenize(sentences)[:, :, :max_words]  # (B, S, W)
    # A sentence of punctuation only still has tokens; one with none is dropped so
    # that no padded sentence sits between real ones.
    keep = words.row_lengths(axis=2) > 0
    words = tf.ragged.boolean_mask(words, keep)
    sentences = tf.ragged.boolean_mask(sentences, keep)
    return sentences, words
