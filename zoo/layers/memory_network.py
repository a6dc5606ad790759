"""Multi-hop memory attention of end-to-end memory networks (MemN2N)."""

import itertools

import keras
from keras import ops

from zoo.layers import arguments
from zoo.layers.initializers import fresh_initializer
from zoo.layers.masking import masked_softmax, precise_dtype
from zoo.layers.memory_encoding import PositionEncoding, TemporalEncoding


@keras.saving.register_keras_serializable(package="zoo")
class MemoryNetwork(keras.layers.Layer):
    """Multi-hop memory attention (the MemN2N block), with its embeddings.

    The question (word ids) is embedded as the query `u`; every story sentence `x_i`
    (word ids) is embedded twice, as an input memory `m_i` (matrix `A`) and an output
    memory `c_i` (matrix `C`), each a sum of word embeddings (position-weighted with
    `position_encoding=True`, by `PositionEncoding`'s default form: `J` = the padded
    sentence length, as in the authors' code) plus a learned temporal vector
    (`temporal_encoding`).
    Each of the `hops` layers then computes

        p = masked_softmax(u^T m)      (or p = u^T m under linear start)
        o = sum_i p_i c_i
        u = u + o                      (or u = H u + o, `query_update="linear"`)

    Weight tying (paper section 2.2):

    - `"adjacent"`: `A^{k+1} = C^k`, the question embedding `B = A^1`, and, for
      `output_mode="logits"`, the answer matrix `W^T = C^K`. The layer holds `K + 1`
      embedding matrices (`embedding_0` ... `embedding_K`) and as many temporal
      tables; query update defaults to `"add"`.
    - `"layerwise"` (RNN-like): `A^1 = ... = A^K`, `C^1 = ... = C^K`, a separate
      question embedding `B`, a linear map `H` between hops (query update defaults
      to `"linear"`) and, for logits, a separate answer matrix `W`.

    Linear start (LS): a non-trainable variable `softmax_enabled` (0 or 1) selects
    softmax or linear attention. It is read inside the graph, so
    `set_linear_start(False)` (e.g. from a callback) restores the softmax without
    rebuilding or recompiling. The final answer softmax is outside this layer and
    stays. A saved model keeps the current state of the switch (it is a weight);
    the `linear_start` config entry only gives the initial state.

    Empty slots: word id 0 is padding, and a memory slot whose words are all padding
    is an empty slot. With `empty_slots="mask"` it gets exactly zero attention (also
    under linear start). With `empty_slots="nil"` (the authors' code, where empty
    slots hold the nil word whose embeddings are zero) it has the score 0 and output
    vector 0 but competes in the softmax, so attention can go "nowhere"; under
    linear start both modes give the same output. A memory with no sentence at all
    gives `o = 0` (finite) either way. An optional Keras mask
    `[question_mask, memory_mask]` (memory mask `(B, M)`) removes further slots
    (always masked).

    Args:
        vocabulary_size: int, number of word ids (id 0 = padding).
        embedding_dim: int, the embedding size `d`.
        memory_size: int, the number of memory slots `M` (rows of the temporal
            tables).
        hops: int, the number of memory layers `K` (default 3).
        tying: `"adjacent"` or `"layerwise"`.
        position_encoding: bool, PE sentence encoding (else bag of words).
        temporal_encoding: bool, add the learned temporal vectors.
        linear_start: bool, start with linear (softmax-free) attention.
        query_update: `None`, `"add"` (u' = u + o) or `"linear"` (u' = H u + o).
            `None` means `"add"` for adjacent and `"linear"` for layer-wise tying.
        output_mode: `"state"` returns the final `u_{K+1} = u_K + o_K` `(B, d)`;
            `"logits"` returns `W u_{K+1}` `(B, vocabulary_size)` (before softmax).
        embeddings_initializer: initializer of all embedding and temporal matrices
            (default normal, stddev 0.1, as in the paper); each matrix gets a draw
            of its own (`zoo.layers.initializers.fresh_initializer`).
        empty_slots: `"mask"` (empty slots get no attention) or `"nil"` (they
            compete in the softmax with score 0, as in the authors' code).
        **kwargs: base layer keyword arguments.

    Call arguments:
        inputs: list `[question, story]`: int tensors `question (B, Jq)` and
            `story (B, M, J)` of word ids, slot 0 = most recent sentence.
        mask: optional list `[question_mask, memory_mask]`; `memory_mask (B, M)`
            is combined with the empty-slot mask. `question_mask` is not used
            (padding words of the question are id 0).
        return_attention_scores: bool, also return the per-hop attention.
        training: unused (no dropout), accepted for the Keras convention.

    Returns:
        `(B, d)` (state) or `(B, vocabulary_size)` (logits); with
        `return_attention_scores=True` a tuple `(output, attention)`, attention
        `(B, hops, M)`.

    Example:

    >>> layer = MemoryNetwork(vocabulary_size=30, embedding_dim=20, memory_size=10)
    >>> question = keras.ops.ones((4, 6), "int32")
    >>> story = keras.ops.ones((4, 10, 7), "int32")
    >>> u, p = layer([question, story], return_attention_scores=True)
    >>> u.shape, p.shape
    ((4, 20), (4, 3, 10))

    Reference:
        Sukhbaatar, Szlam, Weston, Fergus. End-To-End Memory Networks. NIPS 2015.

    Departures from the paper: with `empty_slots="mask"` (the default) empty
    memories are masked (the paper pads with a nil word whose slot still competes
    in the softmax: `empty_slots="nil"`); `H` may also be used with adjacent tying;
    position encoding uses the padded sentence length and doubled weights
    (the authors' code; see `PositionEncoding`).
    """

    def __init__(
        self,
        vocabulary_size,
        embedding_dim,
        memory_size,
        hops=3,
        tying="adjacent",
        position_encoding=True,
        temporal_encoding=True,
        linear_start=False,
        query_update=None,
        output_mode="state",
        embeddings_initializer=None,
        empty_slots="mask",
        **kwargs,
    ):
        super().__init__(**kwargs)
        arguments.check_positive_ints(
            vocabulary_size=vocabulary_size, memory_size=memory_size
        )
        arguments.check_positive_ints(embedding_dim=embedding_dim, hops=hops)
        arguments.check_one_of(("adjacent", "layerwise"), tying=tying)
        arguments.check_one_of((None, "add", "linear"), query_update=query_update)
        arguments.check_one_of(("state", "logits"), output_mode=output_mode)
        arguments.check_one_of(("mask", "nil"), empty_slots=empty_slots)
        if query_update is None:
            query_update = "add" if tying == "adjacent" else "linear"
        self.empty_slots = empty_slots
        self.vocabulary_size = vocabulary_size
        self.embedding_dim = embedding_dim
        self.memory_size = memory_size
        self.hops = hops
        self.tying = tying
        self.position_encoding = bool(position_encoding)
        self.temporal_encoding = bool(temporal_encoding)
        self.linear_start = bool(linear_start)
        self.query_update = query_update
        self.output_mode = output_mode
        if embeddings_initializer is None:
            embeddings_initializer = keras.initializers.RandomNormal(stddev=0.1)
        self.embeddings_initializer = keras.initializers.get(embeddings_initializer)

        # Under a 16-bit policy the whole memory computation runs in float32
        # (`masking.precise_dtype`): its rounding compounds hop by hop. The layer's
        # outputs are cast back to its compute dtype.
        precise = precise_dtype(self.compute_dtype) == self.compute_dtype
        inner = self.dtype_policy if precise else "float32"

        # Every table gets a draw of its own (`fresh_initializer`): one initializer
        # instance would start A, C and the temporal tables of all hops equal, a
        # symmetry that training does not break.
        draws = itertools.count()

        def table(layer_class, *sizes, name):
            initializer = fresh_initializer(self.embeddings_initializer, next(draws))
            return layer_class(
                *sizes, embeddings_initializer=initializer, dtype=inner, name=name
            )

        # The layer's variables, indexed by role below.
        if tying == "adjacent":
            embeddings = [f"embedding_{k}" for k in range(hops + 1)]
            temporal = [f"temporal_{k}" for k in range(hops + 1)]
        else:
            embeddings = ["question_embedding", "input_embedding", "output_embedding"]
            temporal = ["input_temporal", "output_temporal"]
        self.embeddings = [
            table(keras.layers.Embedding, vocabulary_size, embedding_dim, name=name)
            for name in embeddings
        ]
        self.temporal = [
            table(TemporalEncoding, memory_size, name=name)
            for name in (temporal if self.temporal_encoding else [])
        ]
        self.encoder = PositionEncoding(dtype=inner, name="position")
        self.query_map = self.answer = None
        if query_update == "linear":
            self.query_map = keras.layers.Dense(
                embedding_dim, use_bias=False, dtype=inner, name="query_map"
            )
        if output_mode == "logits" and tying == "layerwise":
            self.answer = keras.layers.Dense(
                vocabulary_size, use_bias=False, dtype=inner, name="answer"
            )

    def build(self, input_shape):
        question_shape, story_shape = input_shape
        if len(story_shape) != 3 or len(question_shape) != 2:
            raise ValueError(
                "MemoryNetwork expects [question (B, Jq), story (B, M, J)]. "
                f"Received: input_shape={input_shape!r}"
            )
        slots = story_shape[1]
        if slots is not None and slots > self.memory_size:
            raise ValueError(
                f"The story has more slots than memory_size={self.memory_size}. "
                f"Received: story shape={tuple(story_shape)!r}"
            )
        for layer in self.embeddings:
            layer.build((None,))
        for layer in self.temporal:
            layer.build((None, self.memory_size, self.embedding_dim))
        for layer in filter(None, (self.query_map, self.answer)):
            layer.build((None, self.embedding_dim))
        start = keras.initializers.Constant(0.0 if self.linear_start else 1.0)
        self.softmax_enabled = self.add_weight(
            name="softmax_enabled", initializer=start, trainable=False, dtype="float32"
        )

    def set_linear_start(self, enabled):
        """Switches linear start on (`True`: no softmax) or off (`False`: softmax)."""
        self.softmax_enabled.assign(0.0 if enabled else 1.0)

    @property
    def linear_start_enabled(self):
        """Whether attention is currently linear (a Python bool, read eagerly)."""
        return float(ops.convert_to_numpy(self.softmax_enabled)) < 0.5

    def _encode(self, ids, word_mask, index, temporal):
        """Sentence vectors of `ids` with `self.embeddings[index]` (and, with
        `temporal`, its temporal table)."""
        words = self.embeddings[index](ids)  # (..., J, d)
        if self.position_encoding:
            sentences = self.encoder(words, mask=word_mask)  # (..., d)
        else:
            maskf = ops.cast(ops.expand_dims(word_mask, -1), words.dtype)
            sentences = ops.sum(words * maskf, axis=-2)
        if temporal and self.temporal:  # layer-wise: no temporal table for B
            sentences = self.temporal[index - (self.tying != "adjacent")](sentences)
        return sentences

    def call(self, inputs, mask=None, return_attention_scores=False, training=None):
        if not isinstance(inputs, (list, tuple)) or len(inputs) != 2:
            raise ValueError(
                "MemoryNetwork expects inputs [question, story]. "
                f"Received: inputs={inputs!r}"
            )
        question = ops.cast(inputs[0], "int32")  # (B, Jq)
        story = ops.cast(inputs[1], "int32")  # (B, M, J)
        question_words = ops.not_equal(question, 0)
        story_words = ops.not_equal(story, 0)
        filled = ops.any(story_words, axis=-1)  # (B, M) non-empty slots
        slot_mask = filled if self.empty_slots == "mask" else ops.ones_like(filled)
        if mask is not None and mask[1] is not None:
            slot_mask = ops.logical_and(slot_mask, ops.cast(mask[1], "bool"))

        # The sublayers compute in float32 under a 16-bit policy (see __init__).
        u = self._encode(question, question_words, 0, False)
        # (A^k, C^k) of each hop: adjacent A^{k+1} = C^k; layer-wise one (A, C)
        used = range(self.hops + 1) if self.tying == "adjacent" else (1, 2)
        memory = [self._encode(story, story_words, i, True) for i in used]
        if self.empty_slots == "nil":  # nil memories: score 0, output vector 0
            filled_f = ops.expand_dims(ops.cast(filled, u.dtype), -1)
            memory = [x * filled_f for x in memory]
        if self.tying == "adjacent":
            hops = zip(memory[:-1], memory[1:], strict=True)
        else:
            hops = [memory] * self.hops

        use_softmax = ops.greater(self.softmax_enabled, 0.5)
        attention = []
        for m, c in hops:  # (B, M, d) each
            scores = ops.einsum("bd,bmd->bm", u, m)  # (B, M)
            soft = masked_softmax(scores, slot_mask)
            linear = ops.where(slot_mask, scores, ops.zeros_like(scores))
            p = ops.where(use_softmax, soft, linear)  # (B, M)
            o = ops.einsum("bm,bmd->bd", p, c)  # (B, d)
            u = (self.query_map(u) if self.query_map is not None else u) + o
            attention.append(p)

        output = u
        if self.output_mode == "logits":
            if self.answer is not None:
                output = self.answer(u)
            else:  # W^T = C^K
                table = ops.cast(self.embeddings[-1].embeddings, u.dtype)  # (V, d)
                output = ops.matmul(u, ops.transpose(table))  # (B, V)
        output = ops.cast(output, self.compute_dtype)
        if return_attention_scores:
            attention = ops.cast(ops.stack(attention, axis=1), self.compute_dtype)
            return output, attention  # (B, hops, M)
        return output

    def compute_mask(self, inputs, mask=None):
        return None

    def compute_output_shape(self, input_shape):
        question_shape, story_shape = input_shape
        width = (
            self.vocabulary_size if self.output_mode == "logits" else self.embedding_dim
        )
        return (question_shape[0], width)

    def compute_output_spec(
        self, inputs, mask=None, return_attention_scores=False, training=None
    ):
        question, story = inputs
        output = self.compute_output_shape([question.shape, story.shape])
        scores = (story.shape[0], self.hops, story.shape[1])
        return arguments.output_spec(self, (output, scores), return_attention_scores)

    def get_config(self):
        return {**super().get_config(), **arguments.argument_config(self)}
