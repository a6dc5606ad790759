"""Hierarchical Attention Network document classifier and its in-graph preprocessing.

`HANClassifier` is the Keras model: word ids `(B, S, W)` in, class probabilities and
the sentence and word attention maps out. `HANPreprocessor` is the TensorFlow side that
turns raw strings into those ids inside the graph (tensorflow-text), used both by the
`tf.data` training pipeline and by the exported serving signatures, so training and
serving preprocess identically.

Preprocessing, step by step (all in-graph):

1. HTML line breaks (`<br />`, as in IMDB reviews) become line breaks;
2. `zoo.text.preprocessing.normalize`: invalid UTF-8 replaced, inputs longer than
   `MAX_INPUT_BYTES` (64 KiB) truncated at a character boundary, NFKC, case folding,
   whitespace collapsed;
3. `split_sentences` (on `.`, `!`, `?` + space and on line breaks), then
   `word_tokenize` (words, punctuation as separate tokens);
4. limits: the first `max_sentences` sentences of a document and the first
   `max_words` words of each sentence are kept; longer documents are truncated,
   never rejected;
5. vocabulary lookup (`VocabularyLookup`: unknown words -> 1, padding -> 0), padded to
   the longest document / sentence of the batch (at least 1 x 1, so an empty
   document is a single padded word: fully masked, finite output).
"""

import keras
import tensorflow as tf

from zoo.layers.arguments import check_dropout_rates, check_positive_ints
from zoo.layers.hierarchical_attention import HierarchicalAttentionEncoder
from zoo.text.preprocessing import (
    normalize,
    pad_ragged,
    split_sentences,
    word_tokenize,
)
from zoo.text.vocabulary import VocabularyLookup

MAX_SENTENCES = 30
"""Default limit on sentences per document (later sentences are dropped)."""
MAX_WORDS = 50
"""Default limit on words per sentence (later words are dropped)."""


@keras.saving.register_keras_serializable(package="zoo")
class HANClassifier(keras.Model):
    """Hierarchical Attention Network for document classification.

    Word embeddings (padding id 0 masked) -> `HierarchicalAttentionEncoder` (word
    BiGRU + word attention per sentence, sentence BiGRU + sentence attention) ->
    softmax classifier. Padded words and padded sentences are masked: they get exactly
    zero attention.

    Args:
        vocabulary_size: number of word ids, padding (0) and unknown (1) included.
        num_classes: number of classes.
        embedding_dim: word embedding size (200 in the paper).
        rnn_type: `"gru"` (the paper) or `"lstm"`.
        rnn_units: units per direction of the word and sentence RNNs (50 in the paper).
        context_units: size of the word and sentence context vectors (100 in the
            paper).
        dropout: dropout on the embeddings and on the document vector (0 in the
            paper).
        pooling: `"attention"` (the paper) or `"mean"` (masked mean pooling, a
            baseline).
        **kwargs: `keras.Model` keyword arguments (`name`, ...).

    Call arguments:
        token_ids: int tensor `(B, S, W)`: `S` sentences of `W` word ids, 0 = padding.

    Returns:
        A dict: `"probabilities"` `(B, num_classes)` (float32),
        `"sentence_attention"` `(B, S)` and `"word_attention"` `(B, S, W)`.

    Example:

    >>> model = HANClassifier(vocabulary_size=1000, num_classes=2)
    >>> out = model(np.random.randint(0, 1000, (4, 6, 12)))
    >>> out["probabilities"].shape, out["word_attention"].shape
    (TensorShape([4, 2]), TensorShape([4, 6, 12]))

    Reference:
        Yang et al., 2016, "Hierarchical Attention Networks for Document
        Classification", NAACL.

    The paper initialises the embeddings with word2vec trained on the corpus: load
    such vectors with `set_embedding_matrix` (`zoo.text.word2vec` trains them; the
    recipe does it with `--word2vec-epochs`). `dropout`, `rnn_type` and `pooling` are
    options whose defaults give the paper's model.
    """

    def __init__(
        self,
        vocabulary_size,
        num_classes,
        embedding_dim=200,
        rnn_type="gru",
        rnn_units=50,
        context_units=100,
        dropout=0.0,
        pooling="attention",
        **kwargs,
    ):
        check_positive_ints(
            vocabulary_size=vocabulary_size,
            num_classes=num_classes,
            embedding_dim=embedding_dim,
        )
        check_dropout_rates(dropout=dropout)
        if num_classes < 2:
            raise ValueError(
                f"`num_classes` must be at least 2. Received: num_classes={num_classes!r}"
            )
        # === Layers ===
        self.embedding = keras.layers.Embedding(
            vocabulary_size, embedding_dim, mask_zero=True, name="embedding"
        )
        self.encoder = HierarchicalAttentionEncoder(
            rnn_type=rnn_type,
            rnn_units=rnn_units,
            word_context_units=context_units,
            sentence_context_units=context_units,
            pooling=pooling,
            name="encoder",
        )
        self.embedding_dropout = keras.layers.Dropout(dropout, name="embedding_dropout")
        self.document_dropout = keras.layers.Dropout(dropout, name="document_dropout")
        self.classifier = keras.layers.Dense(
            num_classes, activation="softmax", dtype="float32", name="classifier"
        )

        # === Functional Model ===
        token_ids = keras.Input(shape=(None, None), dtype="int32", name="token_ids")
        words = self.embedding(token_ids)  # (B, S, W, E), mask (B, S, W)
        words = self.embedding_dropout(words)
        documents, sentence_attention, word_attention = self.encoder(
            words, return_attention_scores=True
        )  # (B, 2u), (B, S), (B, S, W)
        probabilities = self.classifier(self.document_dropout(documents))
        outputs = {
            "probabilities": probabilities,
            "sentence_attention": keras.layers.Identity(name="sentence_attention")(
                sentence_attention
            ),
            "word_attention": keras.layers.Identity(name="word_attention")(
                word_attention
            ),
        }
        super().__init__(inputs=token_ids, outputs=outputs, **kwargs)

        # === Config ===
        self.vocabulary_size = vocabulary_size
        self.num_classes = num_classes
        self.embedding_dim = embedding_dim
        self.rnn_type = rnn_type
        self.rnn_units = rnn_units
        self.context_units = context_units
        self.dropout = dropout
        self.pooling = pooling

    def set_embedding_matrix(self, matrix):
        """Loads pretrained word vectors `(vocabulary_size, embedding_dim)`."""
        from zoo.data.embeddings import assign_embedding_matrix

        assign_embedding_matrix(self.embedding, matrix)

    def probabilities_model(self):
        """A model sharing these layers that outputs only the probabilities.

        Keras' `fit` wants a target for every output that has a metric; train this
        view (`loss="sparse_categorical_crossentropy", metrics=["accuracy"]`) and the
        `HANClassifier` shares its trained weights.
        """
        return keras.Model(
            self.input, self.classifier.output, name=f"{self.name}_probabilities"
        )

    def get_config(self):
        return {
            "name": self.name,
            "trainable": self.trainable,
            "vocabulary_size": self.vocabulary_size,
            "num_classes": self.num_classes,
            "embedding_dim": self.embedding_dim,
            "rnn_type": self.rnn_type,
            "rnn_units": self.rnn_units,
            "context_units": self.context_units,
            "dropout": self.dropout,
            "pooling": self.pooling,
        }

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class HANPreprocessor(tf.Module):
    """Raw documents -> padded word ids `(B, S, W)`, in the graph (tensorflow-text).

    See the module docstring for the steps. Limits: the first `max_sentences`
    sentences and the first `max_words` words of each sentence are kept (longer
    documents are truncated, never rejected); inputs longer than 64 KiB are truncated
    by `normalize` before any other work.

    Args:
        vocab_file: vocabulary file (`zoo.text.vocabulary.Vocabulary.save`); it is
            tracked as an asset, so exports carry it.
        max_sentences: sentences kept per document.
        max_words: words kept per sentence.
        lowercase: whether `normalize` case-folds.

    Call arguments:
        text: string tensor `[B]`.

    Returns:
        A dict: `"token_ids"` int32 `(B, S, W)`, `"sentences"` string `(B, S)` and
        `"words"` string `(B, S, W)` ("" where padded); `S`, `W` are the batch
        maxima after truncation, at least 1.
    """

    def __init__(
        self,
        vocab_file,
        max_sentences=MAX_SENTENCES,
        max_words=MAX_WORDS,
        lowercase=True,
    ):
        super().__init__(name="han_preprocessor")
        check_positive_ints(max_sentences=max_sentences, max_words=max_words)
        self.max_sentences = max_sentences
        self.max_words = max_words
        self.lowercase = lowercase
        self.lookup = VocabularyLookup(vocab_file)

    def tokenize(self, text):
        """Returns `(sentences [B, S], words [B, S, W])` as ragged string tensors."""
        return tokenize_documents(
            text, self.max_sentences, self.max_words, lowercase=self.lowercase
        )

    def __call__(self, text, pad_to_limits=False):
        """Preprocesses `text`; `pad_to_limits=True` pads every batch to the fixed
        shape `(B, max_sentences, max_words)` (one graph trace for all batches)."""
        sentences, words = self.tokenize(text)
        ids = tf.cast(self.lookup(words), tf.int32)  # ragged (B, S, W)
        if pad_to_limits:
            limits = (self.max_sentences, self.max_words)
            return {
                "token_ids": pad_ragged(ids, limits, pad=0),
                "sentences": pad_ragged(sentences, self.max_sentences, pad=""),
                "words": pad_ragged(words, limits, pad=""),
            }
        return {
            "token_ids": _pad3(ids, 0),
            "sentences": _pad2(sentences),
            "words": _pad3(words, ""),
        }


def tokenize_documents(
    text, max_sentences=MAX_SENTENCES, max_words=MAX_WORDS, lowercase=True
):
    """Splits raw documents into (truncated) sentences and words, in the graph.

    Args:
        text: string tensor `[B]`.
        max_sentences, max_words: limits (see `HANPreprocessor`).
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


def _pad2(ragged):
    dense = ragged.to_tensor(default_value="")
    extra = tf.maximum(1 - tf.shape(dense)[1], 0)
    return tf.pad(dense, [[0, 0], [0, extra]], constant_values="")


def _pad3(ragged, value):
    dense = ragged.to_tensor(default_value=tf.constant(value, ragged.dtype))
    shape = tf.shape(dense)
    extra_s = tf.maximum(1 - shape[1], 0)
    extra_w = tf.maximum(1 - shape[2], 0)
    return tf.pad(dense, [[0, 0], [0, extra_s], [0, extra_w]], constant_values=value)
