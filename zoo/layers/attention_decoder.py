"""AttentionDecoder: an RNN decoder with Bahdanau, Luong or no attention."""

import keras
from keras import ops

from zoo.layers import arguments, recurrence
from zoo.layers import probability as probability_lib
from zoo.layers.bahdanau_attention import BahdanauAttention, weighted_sum
from zoo.layers.luong_attention import LUONG_SCORES, WINDOWS, LuongAttention


@keras.saving.register_keras_serializable(package="zoo")
class AttentionDecoder(keras.layers.Layer):
    """RNN decoder that attends over encoder outputs: teacher forcing and single steps.

    The same step function serves both modes: `call()` runs it over a whole target
    sequence (teacher forcing, for training and scoring), `step()` runs it for one
    token with an explicit state (for greedy and beam search in `zoo.decoding`). The
    attention keys are projected once per source sequence (`prepare_memory`), never
    once per step, and in teacher forcing the target embeddings' share of the RNN
    input gates is one matrix product over the whole sequence, outside the loop. For
    Bahdanau the context's share of the gates is formed from `memory W_x`, computed
    once per source (`c_t W_x = sum_j a_tj m_j W_x`), and the contexts, which only the
    readout reads, are formed for all steps after the loop. The teacher-forced loop is
    `keras.ops.scan` over the step function, unless a backend registers a loop that
    computes the same function (`zoo.layers.recurrence.select_loop`; on TensorFlow,
    `zoo.fastpath` runs the Bahdanau GRU loop with its gradient written out in
    training steps).

    Attention variants (`y` = previous target token, `e` = its embedding, `h` = the
    RNN state, `c` = the context, `a` = the attention weights):

    - `"bahdanau"` (Bahdanau et al. 2015): the previous state queries the source,
      `c_t, a_t = attend(h_{t-1})`; the context is fed into the RNN input,
      `h_t = RNN([e_t; c_t], h_{t-1})`; the readout is
      `o_t = tanh(W_o [h_t; c_t; e_t])`.
    - `"luong"` (Luong et al. 2015): the current state queries,
      `h_t = RNN([e_t; h~_{t-1}], h_{t-1})` (input feeding; with
      `input_feeding=False` `h_t = RNN(e_t, h_{t-1})`, the paper's model without
      "feed input", whose recurrence does not depend on the attention: `call()`
      then runs the RNN over all steps first and attends from all of them in one
      product), `c_t, a_t = attend(h_t)`, and the attentional hidden state
      `h~_t = tanh(W_c [c_t; h_t])` is the readout; `score` is `"dot"`, `"general"`,
      `"concat"`, `"location"` (needs `max_source_length`) or `"cosine"`, `window` is
      `None` (global), `"local-m"` (window around the decoder step `t`) or
      `"local-p"` (predicted position), Gaussian-weighted, of half-width
      `window_size` (`zoo.layers.LuongAttention`).

    Soft or hard attention (`attention_probability`): `"softmax"` (the papers'),
    `"hardmax"` (one source position, straight-through gradient) or `"gumbel"`
    (Gumbel-softmax sampling in training, hardmax at inference), for `"bahdanau"`
    and `"luong"` (`zoo.layers.probability`). `attention_normalize=True` is
    Bahdanau attention with a weight-normalised scoring vector and a score bias.
    - `"none"`: a fixed context, the masked mean of the encoder outputs (uniform
      weights over the source), is fed at every step as in the encoder-decoder of Cho
      et al. 2014; the readout is as for `"bahdanau"`. Its reported attention
      weights are the uniform ones.

    Readout (`readout`): `"tanh"` is the papers' (above). With `"layer_norm"` the
    `tanh` is replaced by layer normalization (Ba et al. 2016), for `"bahdanau"` and
    `"none"` `o_t = LayerNorm(W_o [h_t; c_t; e_t] + b_o)`: the output layer reads
    features of unit scale from the first step on, whereas `tanh` passes on the
    small pre-activations of a freshly initialised model (Keras' embeddings are
    uniform in +-0.05), and training then spends its first hundreds of steps
    growing the weights before the logits depend on the input. For `"luong"`,
    whose `h~_t` is both the readout and the next step's input (input feeding), the
    recurrence keeps the paper's bounded `h~_t = tanh(W_c [c_t; h_t])` and the
    output layer reads `o_t = LayerNorm(h~_t)` (`tanh` is nearly linear for the
    small values of the start, so this rescales what the output layer reads as for
    the other variants, without changing what is fed back). Either way the layer
    normalization acts after the recurrence, on all steps at once in `call()`.

    Logits are `W_s dropout(o_t) + b`. Dropout applies to the target embeddings
    (`embedding_dropout`, by default `dropout`) and to the readout (`dropout`) only,
    outside the recurrence, so `step()` and `call()` compute the
    same function at inference. With `tie_embeddings=True` the output layer shares
    the target embedding matrix, `W_s = E^T` (Press & Wolf 2017; Inan et al. 2017),
    which leaves out `vocab_size x units` weights; the readout `o_t` then has
    `embedding_dim` units (for `"luong"`, whose `h~_t` is fed back, `embedding_dim`
    must equal `units`).

    With `training_logits_dtype="bfloat16"`, the logits product `W_s o_t` of training
    steps (`training=True`) multiplies bfloat16 copies of `o_t` and `W_s` (the weights
    stay float32, the logits are cast back to the compute dtype, float32 unless a
    mixed-precision policy is set, before the bias and the loss):
    mixed precision for the largest product of a training step, fast on CPUs with
    AMX or AVX512-BF16 and on recent GPUs. Inference (validation, decoding, the
    export) computes the logits in float32 either way.

    Args:
        vocab_size: target vocabulary size (id 0 is padding).
        units: RNN units.
        embedding_dim: target embedding size (default `units`).
        attention: `"bahdanau"`, `"luong"` or `"none"`.
        score: Luong score, `"dot"`, `"general"`, `"concat"`, `"location"` or
            `"cosine"` (`"dot"` and `"cosine"` need encoder outputs of depth
            `units`).
        window: Luong window, `None`, `"local-m"` or `"local-p"`.
        window_size: half-width `D` of the local window.
        max_source_length: the longest source, in positions: required by
            `score="location"` (one weight row per source position), unused
            otherwise.
        attention_probability: `"softmax"`, `"hardmax"` or `"gumbel"`.
        attention_normalize: weight-normalised Bahdanau scoring (see above).
        input_feeding: for `"luong"`, feed `h~_{t-1}` into the RNN input (the
            paper's input feeding, default True); False for `h_t = RNN(e_t, h_{t-1})`.
            The other attentions have no attentional state to feed and ignore it.
        attention_units: hidden size of the Bahdanau/concat scorer (default `units`).
        cell: `"gru"` or `"lstm"`.
        dropout: dropout rate on the readout (and on the embeddings when
            `embedding_dropout` is `None`).
        embedding_dropout: dropout rate on the target embeddings (default
            `dropout`).
        training_logits_dtype: `"float32"` or `"bfloat16"`, the precision of the
            logits product in training steps (see above).
        tie_embeddings: bool, the output layer reuses the target embeddings (see
            above).
        readout: `"tanh"` (the papers', the default) or `"layer_norm"` (see
            above).
        **kwargs: base `keras.layers.Layer` arguments.

    Call arguments:
        inputs: `[target_ids, memory, source_mask, *initial_state]`: target ids
            `(B, Tt)` (the decoder input, starting with `[START]`), encoder outputs
            `(B, Ts, De)`, source mask `(B, Ts)` (True = real token) and the initial
            RNN state(s) `(B, units)` (one for GRU, `[h, c]` for LSTM).
        training: Python bool.
        return_attention: also return the attention weights.

    Returns:
        Logits `(B, Tt, vocab_size)` and, with `return_attention=True`, the weights
        `(B, Tt, Ts)`.

    Example:

    >>> decoder = AttentionDecoder(vocab_size=50, units=16, attention="luong")
    >>> logits = decoder([target_ids, memory, source_mask, h0])  # (B, Tt, 50)
    >>> memory_bundle = decoder.prepare_memory(memory, source_mask)
    >>> state = decoder.initial_state([h0])
    >>> logits_t, weights_t, state = decoder.step(ids_t, state, memory_bundle, 0)

    Reference:
        Bahdanau, Cho and Bengio, "Neural Machine Translation by Jointly Learning to
        Align and Translate", ICLR 2015.
        Luong, Pham and Manning, "Effective Approaches to Attention-based Neural
        Machine Translation", EMNLP 2015.

    Departures from the papers: Bahdanau et al. use a maxout readout and initialise
    the decoder from the backward encoder state; here the readout is a `tanh` layer
    (or its layer-normalized form) and the initial state is whatever the model passes (`Seq2SeqTranslator` uses a
    `tanh` bridge over both directions' final states). Luong et al.'s stacked LSTMs
    are one recurrent layer here.
    """

    def __init__(
        self,
        vocab_size,
        units,
        embedding_dim=None,
        attention="bahdanau",
        score="general",
        window=None,
        window_size=10,
        attention_units=None,
        cell="gru",
        dropout=0.0,
        training_logits_dtype="float32",
        tie_embeddings=False,
        embedding_dropout=None,
        readout="tanh",
        max_source_length=None,
        attention_probability="softmax",
        attention_normalize=False,
        input_feeding=True,
        **kwargs,
    ):
        super().__init__(**kwargs)
        arguments.check_positive_ints(vocab_size=vocab_size, units=units)
        arguments.check_optional_positive_ints(max_source_length=max_source_length)
        arguments.check_one_of(
            probability_lib.PROBABILITIES, attention_probability=attention_probability
        )
        if score == "location" and attention == "luong" and max_source_length is None:
            raise ValueError(
                "score='location' needs `max_source_length` (one weight row per "
                "source position). Received: max_source_length=None"
            )
        if attention_normalize and attention != "bahdanau":
            raise ValueError(
                "`attention_normalize` applies to attention='bahdanau' only. "
                f"Received: attention={attention!r}"
            )
        arguments.check_bools(
            input_feeding=input_feeding, tie_embeddings=tie_embeddings
        )
        arguments.check_one_of(("bahdanau", "luong", "none"), attention=attention)
        arguments.check_one_of(LUONG_SCORES, score=score)
        arguments.check_one_of(WINDOWS, window=window)
        arguments.check_one_of(("gru", "lstm"), cell=cell)
        embedding_dropout = dropout if embedding_dropout is None else embedding_dropout
        arguments.check_dropout_rates(
            dropout=dropout, embedding_dropout=embedding_dropout
        )
        arguments.check_one_of(
            ("float32", "bfloat16"), training_logits_dtype=training_logits_dtype
        )
        arguments.check_one_of(("tanh", "layer_norm"), readout=readout)
        embedding_dim = embedding_dim or units
        if tie_embeddings and attention == "luong" and embedding_dim != units:
            raise ValueError(
                "`tie_embeddings` with Luong attention needs `embedding_dim == units` "
                "(the attentional state is both the readout and the next step's input). "
                f"Received: embedding_dim={embedding_dim!r}, units={units!r}"
            )
        self.vocab_size = vocab_size
        self.units = units
        self.embedding_dim = embedding_dim
        self.tie_embeddings = tie_embeddings
        self.attention = attention
        self.score = score
        self.window = window
        self.window_size = window_size
        self.max_source_length = max_source_length
        self.attention_probability = attention_probability
        self.attention_normalize = bool(attention_normalize)
        self.input_feeding = input_feeding
        self.attention_units = attention_units
        self.cell_type = cell
        self.dropout = float(dropout)
        self.embedding_dropout_rate = float(embedding_dropout)
        self.training_logits_dtype = training_logits_dtype
        self.readout_type = readout
        # Masks arrive through `source_mask`; Keras masks of the inputs are not used.
        self.supports_masking = True

        self.embedding = keras.layers.Embedding(
            vocab_size, self.embedding_dim, name="target_embedding"
        )
        cell_class = keras.layers.GRUCell if cell == "gru" else keras.layers.LSTMCell
        self.cell = cell_class(units, name="cell")
        self.attention_layer = self.attentional = self.readout = None
        common = {"probability": attention_probability, "name": "attention"}
        if attention == "bahdanau":
            self.attention_layer = BahdanauAttention(
                attention_units or units, normalize=self.attention_normalize, **common
            )
        elif attention == "luong":
            uses_units = score == "concat" or window == "local-p"
            hidden = attention_units if uses_units else None
            self.attention_layer = LuongAttention(
                score, hidden, window=window, window_size=window_size, **common
            )
            self.attentional = keras.layers.Dense(
                units, activation="tanh", use_bias=False, name="attentional_state"
            )
        if attention != "luong":
            activation = "tanh" if readout == "tanh" else None
            self.readout = keras.layers.Dense(
                self.readout_dim, activation, name="readout"
            )
        # created only when used, so that "tanh" decoders keep their weights
        self.readout_norm = None
        if readout == "layer_norm":
            self.readout_norm = keras.layers.LayerNormalization(name="readout_norm")
        self.embedding_dropout = keras.layers.Dropout(self.embedding_dropout_rate)
        self.readout_dropout = keras.layers.Dropout(self.dropout)
        # with tie_embeddings: E^T and `output_bias` (see build)
        self.output_projection = (
            None if tie_embeddings else keras.layers.Dense(vocab_size, name="logits")
        )

    @property
    def readout_dim(self):
        """Size of the readout `o_t` that the output layer reads."""
        return self.embedding_dim if self.tie_embeddings else self.units

    @property
    def num_rnn_states(self):
        return 1 if self.cell_type == "gru" else 2

    def build(self, input_shape):
        memory_shape = tuple(input_shape[1])
        memory_dim = memory_shape[-1]
        if memory_dim is None:
            raise ValueError(
                "AttentionDecoder needs a known encoder output depth. Received: "
                f"input_shape={input_shape!r}"
            )
        self.embedding.build((None, None))
        feed_dim = memory_dim
        if self.attention == "luong":
            feed_dim = self.units if self.input_feeding else 0
        self.cell.build((None, self.embedding_dim + feed_dim))
        if self.attention_layer is not None:
            source_length = self.max_source_length if self.score == "location" else None
            self.attention_layer.build(
                [(None, None, self.units), (None, source_length, memory_dim)]
            )
        if self.attentional is not None:
            self.attentional.build((None, memory_dim + self.units))
        else:
            self.readout.build((None, self.units + memory_dim + self.embedding_dim))
        if self.readout_norm is not None:
            self.readout_norm.build((None, self.readout_dim))
        if self.tie_embeddings:
            self.output_bias = self.add_weight(
                shape=(self.vocab_size,), initializer="zeros", name="output_bias"
            )
        else:
            self.output_projection.build((None, self.readout_dim))
        self.built = True

    # --- the step function shared by call() and step() -----------------------------

    def prepare_memory(self, memory, source_mask):
        """Projects the attention keys once per source sequence.

        Args:
            memory: encoder outputs `(B, Ts, De)`.
            source_mask: `(B, Ts)`, True/1 for real tokens.

        Returns:
            A tuple `(memory, keys, mask, fixed_context[, input_share])` for `step()`;
            every entry has the batch as its first axis (so beam search can tile it).
            `input_share` is the context's share of the RNN input gates, computed
            once per source: for `"bahdanau"` per source position, `memory W_x`
            `(B, Ts, G)` (the step's share `c_t W_x = sum_j a_tj (m_j W_x)` is then
            its attention weights times this, a product over `Ts` instead of over the
            memory depth); for `"none"` `fixed_context W_x` `(B, G)`. Luong feeds
            the attentional vector, which changes every step, and has none.
        """
        memory = ops.cast(memory, self.compute_dtype)
        mask = ops.cast(source_mask, "bool")
        maskf = ops.cast(mask, memory.dtype)
        count = ops.maximum(ops.sum(maskf, axis=1, keepdims=True), 1.0)  # (B, 1)
        fixed_context = ops.sum(memory * maskf[..., None], axis=1) / count  # (B, De)
        if self.attention_layer is not None:
            keys = self.attention_layer.project_keys(memory)
        else:
            keys = maskf / count  # (B, Ts): the uniform weights of "none"
        bundle = (memory, keys, mask, fixed_context)
        if self.attention == "luong":
            return bundle
        kernel_x = self._rnn_weights()[1]
        source = memory if self.attention == "bahdanau" else fixed_context
        return (*bundle, ops.matmul(source, kernel_x))

    def initial_state(self, rnn_state):
        """The step state from the initial RNN state(s) (a tensor or a list).

        Returns:
            A tuple of `(B, units)` tensors: the RNN state(s), then (Luong) the
            attentional vector fed back as input, initially zeros.
        """
        if not isinstance(rnn_state, (list, tuple)):
            rnn_state = [rnn_state]
        if len(rnn_state) != self.num_rnn_states:
            raise ValueError(
                f"A {self.cell_type} decoder needs {self.num_rnn_states} initial "
                f"state tensor(s). Received: {len(rnn_state)}"
            )
        state = [ops.cast(s, self.compute_dtype) for s in rnn_state]
        if self.attention == "luong":
            state.append(ops.zeros_like(state[0]))
        return tuple(state)

    def _rnn_weights(self):
        """The cell's weights, its kernel split at the embedding.

        The RNN input is `[e_t; x_t]` (`x` = the context, the input feed or the fixed
        context), so `[e_t; x_t] W = e_t W_e + x_t W_x`: the `e_t W_e` share does not
        depend on the recurrence and is computed for all steps in one matrix product
        (`_project_inputs`); only `x_t W_x` runs inside the loop. The weights are the
        Keras cell's own (same variables, same checkpoints), read once per call.

        Returns:
            `(W_e, W_x, input_bias, recurrent_kernel, recurrent_bias)`, the last
            `None` for LSTM (one bias).
        """
        kernel, recurrent, input_bias, recurrent_bias = recurrence.cell_weights(
            self.cell, self.compute_dtype
        )
        e = self.embedding_dim
        return kernel[:e], kernel[e:], input_bias, recurrent, recurrent_bias

    def _project_inputs(self, embedded, memory_bundle, weights):
        """`e W_e + b` for embeddings `(B, E)` or `(B, Tt, E)`; for `"none"` also the
        fixed context's share (the same at every step)."""
        kernel_e, _, input_bias = weights[:3]
        projected = ops.matmul(embedded, kernel_e) + input_bias  # (B, [Tt,] G)
        if self.attention == "none":
            fixed = memory_bundle[4]  # (B, G)
            if len(projected.shape) == 3:
                fixed = ops.expand_dims(fixed, 1)
            projected = projected + fixed
        return projected

    def _rnn(self, projected, extra, rnn_state, weights):
        """One GRU/LSTM step, the Keras cell's math (GRU with `reset_after`).

        Args:
            projected: `(B, G)`, this step's `e_t W_e + b` from `_project_inputs`.
            extra: `(B, Dx)` or `None`, the rest of the RNN input.
            rnn_state: tuple of `(B, units)` tensors.
            weights: from `_rnn_weights`.

        Returns:
            `(output (B, units), new_state tuple)`.
        """
        _, kernel_x, _, recurrent, bias = weights
        gates = projected if extra is None else projected + ops.matmul(extra, kernel_x)
        return recurrence.rnn_step(self.cell, gates, rnn_state, recurrent, bias)

    def _cell_step(
        self, projected, state, memory_bundle, position, weights, training=None
    ):
        """One recurrence step: `(features (B, H), attention (B, Ts), new_state)`.

        `features` leave out what the readout also reads but the recurrence does not
        need: the target embedding and (Bahdanau, no attention) the context;
        `_readout_features` adds the context, `_logits` the embedding. The loop
        thus carries only the RNN output, and the contexts of all steps are formed
        in one product after it.
        """
        keys, mask = memory_bundle[1:3]
        rnn_state = state[: self.num_rnn_states]
        if self.attention == "bahdanau":
            attention = self.attention_layer.align(
                rnn_state[0], keys, value_mask=mask, training=training
            )
            # c_t W_x = sum_j a_tj (m_j W_x)
            share = weighted_sum(attention, memory_bundle[4])  # (B, G)
            output, new_rnn = self._rnn(projected + share, None, rnn_state, weights)
            return output, attention, new_rnn
        if self.attention == "luong":
            feed = state[self.num_rnn_states] if self.input_feeding else None
            output, new_rnn = self._rnn(projected, feed, rnn_state, weights)
            attentional, attention = self._luong_attend(
                output, memory_bundle, position, training
            )
            return attentional, attention, (*new_rnn, attentional)
        output, new_rnn = self._rnn(projected, None, rnn_state, weights)
        attention = ops.cast(keys, output.dtype)  # the uniform weights
        return output, attention, new_rnn

    def _readout_features(self, features, attention, memory_bundle):
        """Appends the context to `_cell_step`'s features (Bahdanau: the attention
        weights times the memory; no attention: the fixed context), for one step
        (`(B, H)`, `(B, Ts)`) or all steps (`(B, Tt, H)`, `(B, Tt, Ts)`)."""
        if self.attention == "luong":
            return features
        memory, fixed_context = memory_bundle[0], memory_bundle[3]
        if self.attention == "bahdanau":
            context = weighted_sum(attention, memory)  # (B, [Tt,] De)
        elif len(features.shape) == 3:  # the fixed context at every step
            context = fixed_context[:, None, :] + ops.zeros_like(features[..., :1])
        else:
            context = fixed_context
        return ops.concatenate([features, context], axis=-1)

    def _logits(self, features, embedded, training=None):
        if self.readout is not None:
            features = self.readout(ops.concatenate([features, embedded], axis=-1))
        if self.readout_norm is not None:
            features = self.readout_norm(features)  # (B, [Tt,] readout_dim)
        features = self.readout_dropout(features, training=training)
        if self.tie_embeddings:
            kernel, bias = ops.transpose(self.embedding.embeddings), self.output_bias
        else:
            kernel, bias = self.output_projection.kernel, self.output_projection.bias
        dtype = product_dtype = self.compute_dtype
        if training and self.training_logits_dtype == "bfloat16":
            # mixed precision: bfloat16 product; bias and logits in the compute dtype
            product_dtype = "bfloat16"
        features = ops.cast(features, product_dtype)
        product = ops.matmul(features, ops.cast(kernel, product_dtype))
        return ops.cast(product, dtype) + ops.cast(bias, dtype)

    def step(self, token_ids, state, memory_bundle, position=0, training=None):
        """Decodes one token for every row.

        Args:
            token_ids: `(B,)` ids of the previous target token.
            state: the tuple from `initial_state` or from the previous `step`.
            memory_bundle: the tuple from `prepare_memory`.
            position: the decoder step `t` (0 for the first token after `[START]`).
            training: Python bool.

        Returns:
            `(logits (B, vocab_size), weights (B, Ts), new_state)`.
        """
        embedded = self.embedding(token_ids)  # (B, E)
        weights = self._rnn_weights()
        projected = self._project_inputs(embedded, memory_bundle, weights)
        features, attention, new_state = self._cell_step(
            projected, state, memory_bundle, position, weights, training=training
        )
        features = self._readout_features(features, attention, memory_bundle)
        logits = self._logits(features, embedded, training=training)
        return logits, attention, new_state

    def call(self, inputs, training=None, return_attention=False):
        target_ids, memory, source_mask = inputs[0], inputs[1], inputs[2]
        memory_bundle = self.prepare_memory(memory, source_mask)
        state = self.initial_state(list(inputs[3:]))
        embedded = self.embedding(target_ids)  # (B, Tt, E)
        embedded = self.embedding_dropout(embedded, training=training)
        weights = self._rnn_weights()
        projected = self._project_inputs(embedded, memory_bundle, weights)  # (B, Tt, G)
        projected = ops.transpose(projected, (1, 0, 2))  # (Tt, B, G)

        # the generic loop, or a registered backend loop that computes its function
        default = type(self)._scan_recurrence
        if self.attention == "luong" and not self.input_feeding:
            default = type(self)._scan_without_feeding
        loop = recurrence.select_loop(recurrence.DECODER_LOOP, self, training, default)
        features, attention = loop(
            self, projected, state, memory_bundle, weights, training
        )
        features = ops.transpose(features, (1, 0, 2))  # (B, Tt, H)
        attention = ops.transpose(attention, (1, 0, 2))  # (B, Tt, Ts)
        features = self._readout_features(features, attention, memory_bundle)
        logits = self._logits(features, embedded, training=training)  # (B, Tt, V)
        if return_attention:
            return logits, attention
        return logits

    def _scan_recurrence(self, projected, state, memory_bundle, weights, training):
        """The step function over all steps: time-major `(features, attention)`."""
        # keras.ops.scan (TensorFlow backend) stacks outputs shaped like the carry, so
        # the step outputs travel in the carry and are read back from the stack.
        batch = ops.shape(projected)[1]
        features0 = ops.zeros((batch, self.units), self.compute_dtype)
        attention0 = ops.zeros_like(ops.cast(memory_bundle[2], self.compute_dtype))

        def body(carry, projected_t):
            step_state, position = carry[0], carry[1]
            features, attention, new_state = self._cell_step(
                projected_t, step_state, memory_bundle, position, weights, training
            )
            carry = (new_state, position + 1, features, attention)
            return carry, carry

        init = (state, ops.convert_to_tensor(0, "int32"), features0, attention0)
        _, (_, _, features, attention) = ops.scan(body, init, projected)
        return features, attention

    def _scan_without_feeding(self, projected, state, memory_bundle, weights, training):
        """`_scan_recurrence` for Luong without input feeding: the RNN over all
        steps, then the attention and the attentional states of all steps at once
        (the same function as `_cell_step` step by step)."""
        batch = ops.shape(projected)[1]
        rnn_state = tuple(state[: self.num_rnn_states])
        output0 = ops.zeros((batch, self.units), self.compute_dtype)

        def body(carry, projected_t):
            output, new_rnn = self._rnn(projected_t, None, carry[0], weights)
            carry = (new_rnn, output)
            return carry, carry

        _, (_, outputs) = ops.scan(body, (rnn_state, output0), projected)
        return self.attend_rnn_outputs(outputs, memory_bundle, training)

    def attend_rnn_outputs(self, outputs, memory_bundle, training=None):
        """Luong without input feeding, after the RNN: the attention and the
        attentional states of all steps at once.

        Args:
            outputs: `(Tt, B, U)`, the RNN outputs of all target steps, time-major.
            memory_bundle: the tuple from `prepare_memory`.
            training: Python bool.

        Returns:
            Time-major `(features (Tt, B, U), attention (Tt, B, Ts))`, what the
            decoder loop returns (a backend loop that runs the RNN its own way ends
            with this).
        """
        outputs = ops.transpose(outputs, (1, 0, 2))  # (B, Tt, U)
        features, attention = self._luong_attend(outputs, memory_bundle, 0, training)
        return ops.transpose(features, (1, 0, 2)), ops.transpose(attention, (1, 0, 2))

    def _luong_attend(self, output, memory_bundle, position, training):
        """Luong after the RNN: `c_t, a_t = attend(h_t)` and the attentional state
        `h~_t = tanh(W_c [c_t; h_t])`, for one step `(B, U)` or all steps
        `(B, Tt, U)`. Returns `(h~, a)`."""
        memory, keys, mask = memory_bundle[:3]
        context, attention = self.attention_layer.attend(
            output, keys, memory, value_mask=mask, position=position, training=training
        )
        return self.attentional(ops.concatenate([context, output], axis=-1)), attention

    def compute_mask(self, inputs, mask=None):
        return None

    def compute_output_shape(self, input_shape, return_attention=False):
        target_shape, memory_shape = tuple(input_shape[0]), tuple(input_shape[1])
        logits = (*target_shape, self.vocab_size)
        if return_attention:
            return logits, (*target_shape, memory_shape[1])
        return logits

    def compute_output_spec(self, inputs, training=None, return_attention=False):
        target, memory = tuple(inputs[0].shape), tuple(inputs[1].shape)
        shapes = ((*target, self.vocab_size), (*target, memory[1]))
        return arguments.output_spec(self, shapes, return_attention)

    def get_config(self):
        renamed = {
            "cell": "cell_type",
            "embedding_dropout": "embedding_dropout_rate",
            "readout": "readout_type",
        }
        return {**super().get_config(), **arguments.argument_config(self, **renamed)}
