"""Structured self-attentive sentence embedding (Lin et al. 2017): encoder, classifier.

`SelfAttentiveEncoder` maps word ids `(B, T)` to the embedding matrix `M` `(B, r, 2u)`
and the attention `A` `(B, r, T)`; it is a standalone Keras model, saved as a `.keras`
file that other programs load with `keras.saving.load_model` (after `import zoo...`,
no `custom_objects`) and put under their own heads. `SelfAttentiveClassifier` is the
paper's classifier: encoder -> flatten `M` -> hidden ReLU layer -> softmax.
`SentencePreprocessor` is the in-graph (tensorflow-text) text -> ids step shared by
the `tf.data` training pipeline and the exported serving signatures.

Preprocessing, step by step (all in-graph):

1. `zoo.text.preprocessing.normalize`: invalid UTF-8 replaced, inputs longer than
   64 KiB truncated at a character boundary, NFKC, case folding, whitespace collapsed;
2. `word_tokenize` (words, punctuation as separate tokens);
3. the first `max_length` tokens are kept (default `MAX_LENGTH` = 128); longer texts
   are truncated, never rejected;
4. vocabulary lookup (`VocabularyLookup`: unknown words -> 1, padding -> 0), padded
   with 0 / "" to the longest text of the batch, at least 1 position, so an empty or
   whitespace-only text is a single padded token: fully masked, zero attention, finite
   outputs.
"""

import keras
import tensorflow as tf

from zoo.layers.arguments import check_dropout_rates, check_positive_ints
from zoo.layers.bidirectional_rnn import BidirectionalRNN
from zoo.layers.structured_self_attention import StructuredSelfAttention
from zoo.text.preprocessing import normalize, word_tokenize
from zoo.text.vocabulary import VocabularyLookup

MAX_LENGTH = 128
"""Default limit on tokens per text (later tokens are dropped)."""


@keras.saving.register_keras_serializable(package="zoo")
class SelfAttentiveEncoder(keras.Model):
    """Structured self-attentive sentence encoder: word ids -> embedding matrix.

    Word embeddings (id 0 = padding, masked) -> bidirectional LSTM (`u` units per
    direction, all time steps) -> `StructuredSelfAttention` (`d_a` units, `r` hops).
    Padded tokens get exactly zero attention; the penalty
    `penalty * mean ||A A^T - I||_F^2` is added to the model's losses (`add_loss`), so
    it is part of the training loss of any model that contains the encoder.

    Args:
        vocabulary_size: number of word ids, padding (0) and unknown (1) included.
        embedding_dim: word embedding size (paper: 100 for Yelp, 300 for SNLI).
        lstm_units: `u`, LSTM units per direction (paper: 300).
        attention_units: `d_a` (paper: 350).
        num_hops: `r` (paper: 30).
        penalty: coefficient of the penalty (paper: 1.0); 0 disables it.
        embedding_dropout: dropout on the word embeddings (paper: none).
        **kwargs: `keras.Model` keyword arguments (`name`, ...).

    Call arguments:
        token_ids: int tensor `(B, T)`, 0 = padding.

    Returns:
        A dict: `"embedding"` `M` `(B, r, 2u)` and `"attention"` `A` `(B, r, T)`.

    Example:

    >>> encoder = SelfAttentiveEncoder(1000, embedding_dim=32, lstm_units=16,
    ...                                attention_units=20, num_hops=4)
    >>> out = encoder(np.array([[5, 6, 7, 0]]))
    >>> out["embedding"].shape, out["attention"].shape
    (TensorShape([1, 4, 32]), TensorShape([1, 4, 4]))

    Reference:
        Lin et al., "A Structured Self-Attentive Sentence Embedding", ICLR 2017.

    Departures from the paper: word embeddings are learned from scratch unless
    `set_embedding_matrix` loads pretrained vectors (the paper uses word2vec/GloVe);
    `embedding_dropout` is an addition (0 by default).
    """

    def __init__(
        self,
        vocabulary_size,
        embedding_dim=300,
        lstm_units=300,
        attention_units=350,
        num_hops=30,
        penalty=1.0,
        embedding_dropout=0.0,
        **kwargs,
    ):
        check_positive_ints(
            vocabulary_size=vocabulary_size,
            embedding_dim=embedding_dim,
            lstm_units=lstm_units,
        )
        check_dropout_rates(embedding_dropout=embedding_dropout)
        # === Layers ===
        self.token_embedding = keras.layers.Embedding(
            vocabulary_size, embedding_dim, mask_zero=True, name="token_embedding"
        )
        self.embedding_dropout_layer = keras.layers.Dropout(
            embedding_dropout, name="embedding_dropout"
        )
        self.bilstm = BidirectionalRNN(
            keras.layers.LSTM(lstm_units, return_sequences=True), name="bilstm"
        )
        self.self_attention = StructuredSelfAttention(
            attention_units, num_hops, penalty=penalty, name="self_attention"
        )

        # === Functional Model ===
        token_ids = keras.Input(shape=(None,), dtype="int32", name="token_ids")
        x = self.token_embedding(token_ids)  # (B, T, E), mask (B, T)
        x = self.embedding_dropout_layer(x)
        hidden = self.bilstm(x)  # (B, T, 2u)
        embedding, attention = self.self_attention(
            hidden, return_attention_scores=True
        )  # (B, r, 2u), (B, r, T)
        outputs = {
            "embedding": keras.layers.Identity(name="embedding")(embedding),
            "attention": keras.layers.Identity(name="attention")(attention),
        }
        super().__init__(inputs=token_ids, outputs=outputs, **kwargs)

        # === Config ===
        self.vocabulary_size = vocabulary_size
        self.embedding_dim = embedding_dim
        self.lstm_units = lstm_units
        self.attention_units = attention_units
        self.num_hops = num_hops
        self.penalty = float(penalty)
        self.embedding_dropout = embedding_dropout

    @property
    def output_dim(self):
        """`2u`, the width of each row of the embedding matrix."""
        return 2 * self.lstm_units

    def set_embedding_matrix(self, matrix):
        """Loads pretrained word vectors `(vocabulary_size, embedding_dim)`."""
        from zoo.data.embeddings import assign_embedding_matrix

        assign_embedding_matrix(self.token_embedding, matrix)

    def get_config(self):
        return {
            "name": self.name,
            "trainable": self.trainable,
            "vocabulary_size": self.vocabulary_size,
            "embedding_dim": self.embedding_dim,
            "lstm_units": self.lstm_units,
            "attention_units": self.attention_units,
            "num_hops": self.num_hops,
            "penalty": self.penalty,
            "embedding_dropout": self.embedding_dropout,
        }

    @classmethod
    def from_config(cls, config):
        return cls(**config)


@keras.saving.register_keras_serializable(package="zoo")
class SelfAttentiveClassifier(keras.Model):
    """The paper's classifier: `SelfAttentiveEncoder` -> flatten `M` -> MLP -> softmax.

    Args:
        encoder: a `SelfAttentiveEncoder`.
        num_classes: number of classes (>= 2).
        hidden_units: the hidden ReLU layer (paper: 3000 for Yelp, 2000 for age).
        dropout: dropout before the hidden and the output layer (paper: 0.5).
        **kwargs: `keras.Model` keyword arguments (`name`, ...).

    Call arguments:
        token_ids: int tensor `(B, T)`, 0 = padding.

    Returns:
        `probabilities` `(B, num_classes)`, float32 (the output layer is named
        `"probabilities"`). The encoder's penalty is in `model.losses`.

    Example:

    >>> encoder = SelfAttentiveEncoder(1000, 32, 16, 20, 4)
    >>> model = SelfAttentiveClassifier(encoder, num_classes=5, hidden_units=64)
    >>> model(np.array([[5, 6, 7, 0]])).shape
    TensorShape([1, 5])

    Reference:
        Lin et al., "A Structured Self-Attentive Sentence Embedding", ICLR 2017,
        section 4.2 (a 2-layer ReLU MLP on the flattened embedding matrix).
    """

    def __init__(self, encoder, num_classes, hidden_units=3000, dropout=0.5, **kwargs):
        if not isinstance(encoder, SelfAttentiveEncoder):
            raise ValueError(
                "`encoder` must be a SelfAttentiveEncoder. "
                f"Received: encoder={type(encoder).__name__}"
            )
        check_positive_ints(num_classes=num_classes)
        if num_classes < 2:
            raise ValueError(
                f"`num_classes` must be at least 2. Received: num_classes={num_classes!r}"
            )
        check_positive_ints(hidden_units=hidden_units)
        check_dropout_rates(dropout=dropout)
        # === Layers ===
        self.encoder = encoder
        self.flatten = keras.layers.Flatten(name="flatten")
        self.hidden_dropout = keras.layers.Dropout(dropout, name="hidden_dropout")
        self.hidden = keras.layers.Dense(hidden_units, activation="relu", name="hidden")
        self.output_dropout = keras.layers.Dropout(dropout, name="output_dropout")
        self.output_dense = keras.layers.Dense(
            num_classes, activation="softmax", dtype="float32", name="probabilities"
        )

        # === Functional Model ===
        token_ids = keras.Input(shape=(None,), dtype="int32", name="token_ids")
        embedding = self.encoder(token_ids)["embedding"]  # (B, r, 2u)
        x = self.flatten(embedding)  # (B, r * 2u)
        x = self.hidden(self.hidden_dropout(x))
        probabilities = self.output_dense(self.output_dropout(x))
        super().__init__(inputs=token_ids, outputs=probabilities, **kwargs)

        # === Config ===
        self.num_classes = num_classes
        self.hidden_units = hidden_units
        self.dropout = dropout

    def get_config(self):
        return {
            "name": self.name,
            "trainable": self.trainable,
            "encoder": keras.saving.serialize_keras_object(self.encoder),
            "num_classes": self.num_classes,
            "hidden_units": self.hidden_units,
            "dropout": self.dropout,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if isinstance(config["encoder"], dict):
            config["encoder"] = keras.saving.deserialize_keras_object(config["encoder"])
        return cls(**config)


def tokenize_sentences(text, max_length=MAX_LENGTH, lowercase=True):
    """Raw strings `[B]` -> ragged words `[B, None]`, at most `max_length` each."""
    text = tf.convert_to_tensor(text, dtype=tf.string)
    words = word_tokenize(normalize(text, lowercase=lowercase))
    return words[:, :max_length]


class SentencePreprocessor(tf.Module):
    """Raw sentences -> padded word ids `(B, T)` in the graph (tensorflow-text).

    See the module docstring for the steps and limits.

    Args:
        vocab_file: vocabulary file (`zoo.text.vocabulary.Vocabulary.save`); tracked
            as an asset, so exports carry it.
        max_length: tokens kept per text (later tokens are dropped).
        lowercase: whether `normalize` case-folds.

    Call arguments:
        text: string tensor `[B]`.

    Returns:
        A dict: `"token_ids"` int32 `(B, T)` and `"tokens"` string `(B, T)` ("" where
        padded); `T` is the batch maximum after truncation, at least 1.
    """

    def __init__(self, vocab_file, max_length=MAX_LENGTH, lowercase=True):
        super().__init__(name="sentence_preprocessor")
        check_positive_ints(max_length=max_length)
        self.max_length = max_length
        self.lowercase = lowercase
        self.lookup = VocabularyLookup(vocab_file)

    def tokenize(self, text):
        """Ragged words `[B, None]` (normalised, truncated)."""
        return tokenize_sentences(text, self.max_length, lowercase=self.lowercase)

    def __call__(self, text):
        words = self.tokenize(text)
        ids = tf.cast(self.lookup(words), tf.int32)
        return {"token_ids": _pad(ids, 0), "tokens": _pad(words, "")}


def _pad(ragged, value):
    dense = ragged.to_tensor(default_value=tf.constant(value, ragged.dtype))
    extra = tf.maximum(1 - tf.shape(dense)[1], 0)
    return tf.pad(dense, [[0, 0], [0, extra]], constant_values=value)
