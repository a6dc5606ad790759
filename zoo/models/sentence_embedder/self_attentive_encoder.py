"""`SelfAttentiveEncoder`: word ids -> a structured sentence embedding matrix."""

import keras

from zoo.layers.arguments import check_dropout_rates, check_positive_ints
from zoo.layers.bidirectional_rnn import BidirectionalRNN
from zoo.layers.structured_self_attention import StructuredSelfAttention


@keras.saving.register_keras_serializable(package="zoo")
class SelfAttentiveEncoder(keras.Model):
    """Structured self-attentive sentence encoder: word ids -> embedding matrix.

    Word embeddings (id 0 = padding, masked) -> bidirectional LSTM (`u` units per
    direction, all time steps) -> `StructuredSelfAttention` (`d_a` units, `r` hops).
    Padded tokens get exactly zero attention; the penalty
    `penalty * mean ||A A^T - I||_F^2` is added to the model's losses (`add_loss`), so
    it is part of the training loss of any model that contains the encoder.

    The defaults are the recipe's configuration with `--data` (the sizes measured
    best per minute of training on SST, BENCHMARKS.md); the paper's are larger.

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
        A dict: `"embedding"` `M` `(B, r, 2u)` (the compute dtype) and `"attention"`
        `A` `(B, r, T)` (float32).

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
    `embedding_dropout` is an addition (0 by default); the default `penalty` is 0
    (the recipe's measured setting; the paper's 1.0 is a flag).
    """

    def __init__(
        self,
        vocabulary_size,
        embedding_dim=128,
        lstm_units=128,
        attention_units=128,
        num_hops=16,
        penalty=0.0,
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
            "attention": keras.layers.Identity(dtype="float32", name="attention")(
                attention
            ),
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
        from zoo.text.embeddings import assign_embedding_matrix

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
