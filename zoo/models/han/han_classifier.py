"""`HANClassifier`: the Hierarchical Attention Network for document classification."""

import keras

from zoo.layers.arguments import check_dropout_rates, check_positive_ints
from zoo.layers.hierarchical_attention import HierarchicalAttentionEncoder


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
        A dict of float32 tensors: `"probabilities"` `(B, num_classes)`,
        `"sentence_attention"` `(B, S)` and `"word_attention"` `(B, S, W)`.
        `zoo.models.han.HANTextClassifier` (its `"probabilities"` on raw text) is
        the model that is compiled and fit.

    Example:

    >>> model = HANClassifier(vocabulary_size=1000, num_classes=2)
    >>> out = model(np.random.randint(0, 1000, (4, 6, 12)))
    >>> out["probabilities"].shape, out["word_attention"].shape
    (TensorShape([4, 2]), TensorShape([4, 6, 12]))

    Reference:
        Yang et al., 2016, "Hierarchical Attention Networks for Document
        Classification", NAACL.

    The paper initialises the embeddings with word2vec trained on the corpus: load
    such vectors with `set_embedding_matrix` (`zoo.training.text_classification.initial_embeddings`
    trains them with `zoo.text.word2vec` or reads a vector file). `dropout`, `rnn_type` and `pooling` are
    options whose defaults give the paper's model. The defaults are also the
    configuration the recipe trains with `--data` (its flags read them).
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
            "sentence_attention": keras.layers.Identity(
                dtype="float32", name="sentence_attention"
            )(sentence_attention),
            "word_attention": keras.layers.Identity(
                dtype="float32", name="word_attention"
            )(word_attention),
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
        from zoo.text.embeddings import assign_embedding_matrix

        assign_embedding_matrix(self.embedding, matrix)

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
