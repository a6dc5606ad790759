"""`SelfAttentiveClassifier`: the paper's classifier on a `SelfAttentiveEncoder`."""

import keras

from zoo.layers.arguments import check_dropout_rates, check_positive_ints
from zoo.models.sentence_embedder.self_attentive_encoder import SelfAttentiveEncoder


@keras.saving.register_keras_serializable(package="zoo")
class SelfAttentiveClassifier(keras.Model):
    """The paper's classifier: `SelfAttentiveEncoder` -> flatten `M` -> MLP -> softmax.

    Args:
        encoder: a `SelfAttentiveEncoder`.
        num_classes: number of classes (>= 2).
        hidden_units: the hidden ReLU layer (paper: 3000 for Yelp, 2000 for age;
            1000, the recipe's with `--data`, by default).
        dropout: dropout before the hidden and the output layer (paper: 0.5).
        **kwargs: `keras.Model` keyword arguments (`name`, ...).

    Call arguments:
        token_ids: int tensor `(B, T)`, 0 = padding.

    Returns:
        A dict of float32 tensors: `"probabilities"` `(B, num_classes)` and the
        encoder's `"attention"` `A` `(B, r, T)`. The encoder's penalty is in
        `model.losses`. `SelfAttentiveTextClassifier` (its `"probabilities"` on raw
        text) is the model that is compiled and fit (the penalty is part of its
        training loss).

    Example:

    >>> encoder = SelfAttentiveEncoder(1000, 32, 16, 20, 4)
    >>> model = SelfAttentiveClassifier(encoder, num_classes=5, hidden_units=64)
    >>> out = model(np.array([[5, 6, 7, 0]]))
    >>> out["probabilities"].shape, out["attention"].shape
    (TensorShape([1, 5]), TensorShape([1, 4, 4]))

    Reference:
        Lin et al., "A Structured Self-Attentive Sentence Embedding", ICLR 2017,
        section 4.2 (a 2-layer ReLU MLP on the flattened embedding matrix).
    """

    def __init__(self, encoder, num_classes, hidden_units=1000, dropout=0.5, **kwargs):
        if not isinstance(encoder, SelfAttentiveEncoder):
            raise ValueError(
                "`encoder` must be a SelfAttentiveEncoder. "
                f"Received: encoder={type(encoder).__name__}"
            )
        check_positive_ints(num_classes=num_classes, hidden_units=hidden_units)
        if num_classes < 2:
            raise ValueError(
                f"`num_classes` must be at least 2. Received: num_classes={num_classes!r}"
            )
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
        encoded = self.encoder(token_ids)  # (B, r, 2u), (B, r, T)
        x = self.flatten(encoded["embedding"])  # (B, r * 2u)
        x = self.hidden(self.hidden_dropout(x))
        probabilities = self.output_dense(self.output_dropout(x))
        outputs = {"probabilities": probabilities, "attention": encoded["attention"]}
        super().__init__(inputs=token_ids, outputs=outputs, **kwargs)

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
