"""Seq2SeqTranslator: bidirectional RNN encoder + attention decoder (Functional)."""

import keras
from keras import ops

from zoo.layers.arguments import (
    argument_config,
    check_dropout_rates,
    check_one_of,
    check_positive_ints,
)
from zoo.layers.attention_decoder import AttentionDecoder
from zoo.layers.bidirectional_rnn import BidirectionalRNN

RNNS = ("gru", "lstm")
# The earlier defaults (zoo 0.2.0), before they became the recipe's measured
# configuration: a saved config that does not name an argument was built with these.
SAVED_BEFORE_DEFAULTS = {
    "embedding_dim": 128,
    "encoder_units": 128,
    "attention": "bahdanau",
    "dropout": 0.0,
    "training_logits_dtype": "float32",
    "tie_embeddings": False,
    "embedding_dropout": None,
    "context_dropout": 0.0,
    "readout": "tanh",
    "input_feeding": True,
}


@keras.saving.register_keras_serializable(package="zoo")
class Seq2SeqTranslator(keras.Model):
    """Attentional encoder-decoder for translation (Bahdanau / Luong / no attention).

    The encoder embeds the source ids (0 = padding, masked) and runs
    `encoder_layers` bidirectional GRU or LSTM layers; a `tanh` bridge maps the final
    forward and backward states to the decoder's initial state; an
    `AttentionDecoder` reads the target ids (teacher forcing) and returns the logits
    and the attention weights.

    Inputs are a dict `{"source_ids": (B, Ts), "target_ids": (B, Tt)}` of int32 ids,
    where `target_ids` starts with `[START]`. The output is a dict: `"logits"`
    `(B, Tt, V)` for the next tokens and `"attention"` `(B, Tt, Ts)`, float32, the
    weights each target position gives the source positions (padded source
    positions get 0; uniform weights for `attention="none"`). The model that is
    compiled and fit is the task, `Seq2SeqTextTranslator`, whose single output is
    these logits (the attention weights have no target). For decoding, `encode()` gives the memory and initial state and
    `decoder.step()` advances one token (see `zoo.decoding` and `Translator`).

    The defaults are the configuration the translation recipe trains with `--data`
    and BENCHMARKS.md measures (Multi30k de->en, 42.51 BLEU with beam 5): Luong
    `general` global attention without input feeding, a GRU encoder and decoder of
    256 units, 256-wide embeddings tied to the output layer, a layer-normalized
    readout, dropout 0.4 (embeddings 0.2, encoder outputs 0.4). Only the vocabulary
    sizes come from the data. The recipe's demo overrides them with a small
    Bahdanau model (`python recipes/translation.py --help`).

    Args:
        source_vocab_size, target_vocab_size: vocabulary sizes (id 0 = padding).
        embedding_dim: source and target embedding size (256).
        encoder_units: units per direction of each encoder layer (256).
        encoder_layers: number of bidirectional layers (1).
        decoder_units: decoder RNN units (256; with `tie_embeddings` and
            `"luong"`, `embedding_dim` must equal it).
        rnn: `"gru"` (the default) or `"lstm"` (encoder and decoder).
        attention: `"luong"` (the default), `"bahdanau"` or `"none"`.
        score: Luong score, `"dot"`, `"general"`, `"concat"`, `"location"` or
            `"cosine"` (`"dot"` and `"cosine"` need `decoder_units == 2 *
            encoder_units`; `"location"` needs `max_source_length`).
        window: Luong window, `None`, `"local-m"` or `"local-p"`.
        window_size: half-width of the local window (10 in Luong et al. 2015).
        max_source_length: the longest source in ids (`"location"` only).
        attention_probability: `"softmax"` (soft attention), `"hardmax"` or
            `"gumbel"` (hard attention, trained straight-through).
        attention_normalize: weight-normalised Bahdanau attention.
        input_feeding: Luong input feeding (default False: the paper's model
            without "feed input", whose training steps run the RNN over all
            target positions at once; see `AttentionDecoder`). Bahdanau
            attention ignores it.
        attention_units: Bahdanau/concat scorer size (default `decoder_units`).
        dropout: dropout of the decoder's readout, of the inputs of encoder layers
            after the first and, unless set apart below, of the embeddings (0.4).
        training_logits_dtype: `"auto"` (the default), `"float32"` or
            `"bfloat16"`: the precision of the decoder's logits product in
            training steps (`AttentionDecoder`); `"auto"` is `"bfloat16"` where
            this machine computes bfloat16 products fast
            (`zoo.fastpath.precision.resolve_dtype`), else `"float32"`, and the
            config keeps the resolved value.
        tie_embeddings: the decoder's output layer reuses its target embeddings
            (default True; `AttentionDecoder`).
        embedding_dropout: dropout of the source embeddings (the first encoder
            layer's inputs) and of the target embeddings (0.2; None: `dropout`).
        context_dropout: dropout of the encoder outputs that the decoder attends
            to (the annotations; 0.4), as the `ctx_dropout` of nmtpy's
            attentive model. Training only; decoding sees them whole.
        readout: the decoder's readout, `"layer_norm"` (the default: learns much
            faster in the first epochs) or `"tanh"` (the papers'; models saved
            before this option have it; `AttentionDecoder`).
        **kwargs: `keras.Model` arguments (`name`, ...).

    A saved config that does not name an argument (a file written before the
    argument existed) is rebuilt with the earlier default (`SAVED_BEFORE_DEFAULTS`:
    Bahdanau, tanh readout, input feeding, no dropout, 128-wide embeddings).

    Example:

    >>> model = Seq2SeqTranslator(100, 120)  # the recipe's model for --data
    >>> small = Seq2SeqTranslator(100, 120, embedding_dim=32, encoder_units=32,
    ...                           decoder_units=32)  # tied: embedding_dim = units
    >>> outputs = model({"source_ids": src, "target_ids": tgt_in})
    >>> outputs["logits"].shape, outputs["attention"].shape  # (B, Tt, 120), (B, Tt, Ts)
    >>> task = Seq2SeqTextTranslator(model)  # compiled; fit this one

    Reference:
        Bahdanau, Cho and Bengio 2015; Luong, Pham and Manning 2015 (see
        `AttentionDecoder`, which also lists the departures from the papers).
    """

    def __init__(
        self,
        source_vocab_size,
        target_vocab_size,
        embedding_dim=256,
        encoder_units=256,
        encoder_layers=1,
        decoder_units=256,
        rnn="gru",
        attention="luong",
        score="general",
        window=None,
        window_size=10,
        attention_units=None,
        dropout=0.4,
        training_logits_dtype="auto",
        tie_embeddings=True,
        embedding_dropout=0.2,
        context_dropout=0.4,
        readout="layer_norm",
        max_source_length=None,
        attention_probability="softmax",
        attention_normalize=False,
        input_feeding=False,
        **kwargs,
    ):
        check_one_of(RNNS, rnn=rnn)
        check_positive_ints(
            source_vocab_size=source_vocab_size,
            embedding_dim=embedding_dim,
            encoder_units=encoder_units,
            encoder_layers=encoder_layers,
        )
        if embedding_dropout is None:
            embedding_dropout = dropout
        if training_logits_dtype == "auto":
            from zoo.fastpath.precision import resolve_dtype

            training_logits_dtype = resolve_dtype("auto")[0]
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
        bridges = [
            keras.layers.Dense(decoder_units, activation="tanh", name=f"bridge_{i}")
            for i in range(1 if rnn == "gru" else 2)
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
            readout=readout,
            max_source_length=max_source_length,
            attention_probability=attention_probability,
            attention_normalize=attention_normalize,
            input_feeding=input_feeding,
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
            source_ids, source_embedding, encoders, bridges
        )
        if context_dropout_layer is not None:
            memory = context_dropout_layer(memory)
        logits, weights = decoder(
            [target_ids, memory, source_mask, *initial_state], return_attention=True
        )  # (B, Tt, V), (B, Tt, Ts)
        super().__init__(
            inputs={"source_ids": source_ids, "target_ids": target_ids},
            outputs={"logits": logits, "attention": ops.cast(weights, "float32")},
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
        self.readout = readout
        self.max_source_length = max_source_length
        self.attention_probability = attention_probability
        self.attention_normalize = attention_normalize
        self.input_feeding = input_feeding
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
        parts = (self.source_embedding, self.encoders, self.bridges)
        memory, source_mask, initial_state = _encode(source_ids, *parts, training)
        bundle = self.decoder.prepare_memory(memory, source_mask)
        return bundle, self.decoder.initial_state(initial_state), source_mask

    def get_config(self):
        return {**argument_config(self), "name": self.name, "trainable": self.trainable}

    @classmethod
    def from_config(cls, config):
        # An argument a saved config does not name was saved with its earlier default.
        return cls(**{**SAVED_BEFORE_DEFAULTS, **config})


def _encode(source_ids, embedding, encoders, bridges, training=None):
    source_mask = ops.not_equal(source_ids, 0)  # (B, Ts)
    x = embedding(source_ids)  # (B, Ts, E)
    for layer in encoders[:-1]:
        x = layer(x, mask=source_mask, training=training)
    outputs = encoders[-1](x, mask=source_mask, training=training)
    memory, states = outputs[0], outputs[1:]  # (B, Ts, 2U)
    n_states = len(bridges)  # 1 (GRU) or 2 (LSTM)
    forward, backward = states[:n_states], states[n_states:]
    initial_state = [
        bridge(ops.concatenate([f, b], axis=-1))
        for bridge, f, b in zip(bridges, forward, backward, strict=True)
    ]
    return memory, source_mask, initial_state
