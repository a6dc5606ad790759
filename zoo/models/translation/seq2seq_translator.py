"""Seq2SeqTranslator: bidirectional RNN encoder + attention decoder (Functional)."""

import keras
from keras import ops

from zoo.layers.arguments import check_dropout_rates, check_positive_ints
from zoo.layers.attention_decoder import AttentionDecoder
from zoo.layers.bidirectional_rnn import BidirectionalRNN

RNNS = ("gru", "lstm")


@keras.saving.register_keras_serializable(package="zoo")
class MaskedSparseCrossentropy(keras.losses.Loss):
    """Token-level cross-entropy over logits that ignores padding (id 0).

    The loss is averaged over the real target tokens of the batch (not over the padded
    positions). With `label_smoothing = e` the target distribution is
    `(1 - e) * one_hot + e / V` (Szegedy et al. 2016).

    Args:
        label_smoothing: float in `[0, 1)`.
        pad_id: the padding id whose positions get no loss.
        **kwargs: base `keras.losses.Loss` arguments.
    """

    def __init__(
        self, label_smoothing=0.0, pad_id=0, name="masked_crossentropy", **kwargs
    ):
        kwargs.pop("reduction", None)
        super().__init__(name=name, reduction="sum", **kwargs)
        if not 0.0 <= float(label_smoothing) < 1.0:
            raise ValueError(
                "`label_smoothing` must be in [0, 1). Received: "
                f"label_smoothing={label_smoothing!r}"
            )
        self.label_smoothing = float(label_smoothing)
        self.pad_id = pad_id

    def call(self, y_true, y_pred):
        y_true = ops.cast(y_true, "int32")
        mask = ops.cast(ops.not_equal(y_true, self.pad_id), "float32")
        weight = mask / ops.maximum(ops.sum(mask), 1.0)  # (B, T)
        # summed by the "sum" reduction
        return _weighted_smoothed_nll(
            ops.cast(y_pred, "float32"), y_true, weight, self.label_smoothing
        )

    def get_config(self):
        config = super().get_config()
        config.pop("reduction", None)
        config.update({"label_smoothing": self.label_smoothing, "pad_id": self.pad_id})
        return config


def _weighted_smoothed_nll(logits, labels, weight, smoothing):
    """`weight * (lse(z) - (1 - e) z_y - e mean(z))` per position, with its gradient
    `weight * (softmax(z) - (1 - e) one_hot(y) - e / V)` written out.

    The same values and gradients as label-smoothed cross-entropy through
    `log_softmax`, whose automatic gradient makes several more passes over the
    `(B, T, V)` logits (the largest tensor of a training step): on a batch of
    64 x 16 positions and 6,900 words, about 25 ms for loss and gradient against 70 ms
    (2-core CPU).
    """
    vocab = ops.shape(logits)[-1]

    @ops.custom_gradient
    def nll(z):
        shifted = z - ops.stop_gradient(ops.max(z, axis=-1, keepdims=True))
        exp = ops.exp(shifted)
        total = ops.sum(exp, axis=-1, keepdims=True)
        target = ops.take_along_axis(shifted, labels[..., None], axis=-1)[..., 0]
        loss = ops.log(total)[..., 0] - (1.0 - smoothing) * target
        if smoothing:
            loss = loss - smoothing * ops.mean(shifted, axis=-1)

        def grad(*args, upstream=None):
            if upstream is None:
                (upstream,) = args
            scale = (upstream * weight)[..., None]
            target_mass = ops.one_hot(labels, vocab, dtype=z.dtype) * (1.0 - smoothing)
            floor = smoothing / ops.cast(vocab, z.dtype)
            return (exp / total - floor - target_mass) * scale

        return loss * weight, grad

    return nll(logits)


@keras.saving.register_keras_serializable(package="zoo")
class Seq2SeqTranslator(keras.Model):
    """Attentional encoder-decoder for translation (Bahdanau / Luong / no attention).

    The encoder embeds the source ids (0 = padding, masked) and runs
    `encoder_layers` bidirectional GRU or LSTM layers; a `tanh` bridge maps the final
    forward and backward states to the decoder's initial state; an
    `AttentionDecoder` reads the target ids (teacher forcing) and returns the logits.

    Inputs are a dict `{"source_ids": (B, Ts), "target_ids": (B, Tt)}` of int32 ids,
    where `target_ids` starts with `[START]`; the output is the logits `(B, Tt, V)` for
    the next tokens. For decoding, `encode()` gives the memory and initial state and
    `decoder.step()` advances one token (see `zoo.decoding.seq2seq`).

    Args:
        source_vocab_size, target_vocab_size: vocabulary sizes (id 0 = padding).
        embedding_dim: source and target embedding size.
        encoder_units: units per direction of each encoder layer.
        encoder_layers: number of bidirectional layers.
        decoder_units: decoder RNN units.
        rnn: `"gru"` or `"lstm"` (encoder and decoder).
        attention: `"bahdanau"`, `"luong"` or `"none"`.
        score: Luong score (`"dot"` needs `decoder_units == 2 * encoder_units`).
        window: Luong window, `None` or `"local-p"`.
        window_size: half-width of the local window.
        attention_units: Bahdanau/concat scorer size (default `decoder_units`).
        dropout: dropout of the decoder's readout, of the inputs of encoder layers
            after the first and, unless set apart below, of the embeddings.
        embedding_dropout: dropout of the source embeddings (the first encoder
            layer's inputs) and of the target embeddings (default `dropout`).
        context_dropout: dropout of the encoder outputs that the decoder attends
            to (the annotations; default 0), as the `ctx_dropout` of nmtpy's
            attentive model. Training only; decoding sees them whole.
        training_logits_dtype: `"float32"` or `"bfloat16"`: the precision of the
            decoder's logits product in training steps (`AttentionDecoder`).
        tie_embeddings: the decoder's output layer reuses its target embeddings
            (`AttentionDecoder`).
        **kwargs: `keras.Model` arguments (`name`, ...).

    Example:

    >>> model = Seq2SeqTranslator(100, 120, embedding_dim=16, encoder_units=16,
    ...                           decoder_units=32, attention="luong")
    >>> logits = model({"source_ids": src, "target_ids": tgt_in})  # (B, Tt, 120)

    Reference:
        Bahdanau et al. 2015; Luong et al. 2015 (see `AttentionDecoder`).
    """

    def __init__(
        self,
        source_vocab_size,
        target_vocab_size,
        embedding_dim=128,
        encoder_units=128,
        encoder_layers=1,
        decoder_units=256,
        rnn="gru",
        attention="bahdanau",
        score="general",
        window=None,
        window_size=10,
        attention_units=None,
        dropout=0.0,
        training_logits_dtype="float32",
        tie_embeddings=False,
        embedding_dropout=None,
        context_dropout=0.0,
        **kwargs,
    ):
        if rnn not in RNNS:
            raise ValueError(f"`rnn` must be one of {RNNS}. Received: rnn={rnn!r}")
        check_positive_ints(
            source_vocab_size=source_vocab_size,
            embedding_dim=embedding_dim,
            encoder_units=encoder_units,
            encoder_layers=encoder_layers,
        )
        if embedding_dropout is None:
            embedding_dropout = dropout
        check_dropout_rates(
            dropout=dropout,
            embedding_dropout=embedding_dropout,
            context_dropout=context_dropout,
        )
        # === Layers ===
        rnn_cls = keras.layers.GRU if rnn == "gru" else keras.layers.LSTM
        source_embedding = keras.layers.Embedding(
            source_vocab_size, embedding_dim, mask_zero=True, name="source_embedding"
        )
        encoders = [
            BidirectionalRNN(
                rnn_cls(
                    encoder_units,
                    return_sequences=True,
                    return_state=i == encoder_layers - 1,
                    dropout=embedding_dropout if i == 0 else dropout,
                ),
                name=f"encoder_{i}",
            )
            for i in range(encoder_layers)
        ]
        n_states = 1 if rnn == "gru" else 2
        bridges = [
            keras.layers.Dense(decoder_units, activation="tanh", name=f"bridge_{i}")
            for i in range(n_states)
        ]
        decoder = AttentionDecoder(
            target_vocab_size,
            decoder_units,
            embedding_dim=embedding_dim,
            attention=attention,
            score=score,
            window=window,
            window_size=window_size,
            attention_units=attention_units,
            cell=rnn,
            dropout=dropout,
            embedding_dropout=embedding_dropout,
            training_logits_dtype=training_logits_dtype,
            tie_embeddings=tie_embeddings,
            name="decoder",
        )
        # created only when used: a Dropout layer with a rate draws a seed
        context_dropout_layer = (
            keras.layers.Dropout(context_dropout, name="context_dropout")
            if context_dropout > 0
            else None
        )

        # === Functional Model ===
        source_ids = keras.Input(shape=(None,), dtype="int32", name="source_ids")
        target_ids = keras.Input(shape=(None,), dtype="int32", name="target_ids")
        memory, source_mask, initial_state = _encode(
            source_ids, source_embedding, encoders, bridges, n_states
        )
        if context_dropout_layer is not None:
            memory = context_dropout_layer(memory)
        logits = decoder([target_ids, memory, source_mask, *initial_state])
        super().__init__(
            inputs={"source_ids": source_ids, "target_ids": target_ids},
            outputs=logits,
            **kwargs,
        )

        # === Config ===
        self.source_vocab_size = source_vocab_size
        self.target_vocab_size = target_vocab_size
        self.embedding_dim = embedding_dim
        self.encoder_units = encoder_units
        self.encoder_layers = encoder_layers
        self.decoder_units = decoder_units
        self.rnn = rnn
        self.attention = attention
        self.score = score
        self.window = window
        self.window_size = window_size
        self.attention_units = attention_units
        self.dropout = dropout
        self.embedding_dropout = embedding_dropout
        self.context_dropout = context_dropout
        self.training_logits_dtype = training_logits_dtype
        self.tie_embeddings = tie_embeddings
        self.source_embedding = source_embedding
        self.encoders = encoders
        self.bridges = bridges
        self.decoder = decoder

    def encode(self, source_ids, training=False):
        """Runs the encoder for decoding.

        Args:
            source_ids: `(B, Ts)` int ids (0 = padding).

        Returns:
            `(memory_bundle, state, source_mask)`: the decoder's `prepare_memory`
            tuple, its `initial_state` tuple and the `(B, Ts)` bool mask.
        """
        n_states = 1 if self.rnn == "gru" else 2
        memory, source_mask, initial_state = _encode(
            source_ids,
            self.source_embedding,
            self.encoders,
            self.bridges,
            n_states,
            training=training,
        )
        bundle = self.decoder.prepare_memory(memory, source_mask)
        return bundle, self.decoder.initial_state(initial_state), source_mask

    def get_config(self):
        return {
            "source_vocab_size": self.source_vocab_size,
            "target_vocab_size": self.target_vocab_size,
            "embedding_dim": self.embedding_dim,
            "encoder_units": self.encoder_units,
            "encoder_layers": self.encoder_layers,
            "decoder_units": self.decoder_units,
            "rnn": self.rnn,
            "attention": self.attention,
            "score": self.score,
            "window": self.window,
            "window_size": self.window_size,
            "attention_units": self.attention_units,
            "dropout": self.dropout,
            "embedding_dropout": self.embedding_dropout,
            "context_dropout": self.context_dropout,
            "training_logits_dtype": self.training_logits_dtype,
            "tie_embeddings": self.tie_embeddings,
            "name": self.name,
            "trainable": self.trainable,
        }

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _encode(source_ids, embedding, encoders, bridges, n_states, training=None):
    source_mask = ops.not_equal(source_ids, 0)  # (B, Ts)
    x = embedding(source_ids)  # (B, Ts, E)
    for layer in encoders[:-1]:
        x = layer(x, mask=source_mask, training=training)
    outputs = encoders[-1](x, mask=source_mask, training=training)
    memory, states = outputs[0], outputs[1:]  # (B, Ts, 2U)
    forward, backward = states[:n_states], states[n_states:]
    initial_state = [
        bridge(ops.concatenate([f, b], axis=-1))
        for bridge, f, b in zip(bridges, forward, backward, strict=True)
    ]
    return memory, source_mask, initial_state
