"""HierarchicalAttentionEncoder: words -> sentence vectors -> document vector (HAN)."""

import keras
from keras import ops

from zoo.layers import arguments
from zoo.layers.attention_pooling import AttentionPooling
from zoo.layers.bidirectional_rnn import BidirectionalRNN
from zoo.layers.masking import masked_softmax


def _rnn_mask(mask):
    """The mask given to the RNNs: a fully masked row keeps its first step.

    cuDNN (GPU) kernels reject sequences with no unmasked step, and padded sentences
    (and empty documents) are exactly that. Letting the RNN read one padding step of
    such a row changes nothing else: the pooling still uses the true mask, so the row
    gets zero attention and a zero pooled vector.
    """
    empty = ops.logical_not(ops.any(mask, axis=-1, keepdims=True))  # (N, 1)
    first = ops.expand_dims(ops.arange(ops.shape(mask)[-1]) == 0, 0)  # (1, T)
    return ops.logical_or(mask, ops.logical_and(empty, first))


@keras.saving.register_keras_serializable(package="zoo")
class HierarchicalAttentionEncoder(keras.layers.Layer):
    """Encodes a document of embedded words into one vector, with attention maps.

    The encoder of Hierarchical Attention Networks: a bidirectional RNN reads the
    words of each sentence and `AttentionPooling` turns them into a sentence vector;
    a second bidirectional RNN reads the sentence vectors and another
    `AttentionPooling` turns them into the document vector.

    All sentences of a batch are encoded at once: the `(B, S, W, E)` input is reshaped
    to `(B*S, W, E)` for the word level, and the sentence vectors back to `(B, S, 2u)`.
    Masking: the input mask `(B, S, W)` (e.g. from `Embedding(mask_zero=True)`) marks
    real words; the word RNN skips padded words and padded words get exactly zero word
    attention. A sentence with no real word is a padded sentence: it is masked at the
    sentence level and gets exactly zero sentence attention (its word attention row is
    all zeros). A document with no word at all gives a zero vector, never NaN. The
    output carries no mask. Masks must be right-padded (real words first), as
    `Embedding(mask_zero=True)` gives for right-padded ids; the RNNs then also run
    with cuDNN on GPU (a fully padded sentence is shown to its RNN as one padding step
    so that cuDNN accepts it; its pooling still uses the true mask).

    Args:
        rnn_type: `"gru"` (the paper) or `"lstm"`.
        rnn_units: units per direction of both bidirectional RNNs (50 in the paper);
            the document vector has `2 * rnn_units` features.
        word_context_units: size of the word-level context vector (100 in the paper).
        sentence_context_units: size of the sentence-level context vector (100 in the
            paper).
        dropout: input dropout of both RNNs (0 in the paper).
        pooling: `"attention"` (the paper) or `"mean"`: masked mean over words and
            sentences instead of attention (a baseline; its "attention maps" are then
            the uniform weights over real positions).
        **kwargs: base layer keyword arguments.

    Call arguments:
        inputs: float tensor `(B, S, W, E)`: embedded words, `S` sentences of `W` words.
        mask: optional bool tensor `(B, S, W)`; True marks real words.
        return_attention_scores: if True, also return the sentence attention
            `(B, S)` and the word attention `(B, S, W)`.
        training: Python bool, passed to the RNNs (dropout).

    Returns:
        The document vectors `(B, 2 * rnn_units)`, or `(documents,
        sentence_attention, word_attention)` when `return_attention_scores=True`.

    Example:

    >>> words = np.random.rand(2, 3, 4, 8).astype("float32")
    >>> doc, s_att, w_att = HierarchicalAttentionEncoder(rnn_units=6)(
    ...     words, return_attention_scores=True)
    >>> doc.shape, s_att.shape, w_att.shape
    (TensorShape([2, 12]), TensorShape([2, 3]), TensorShape([2, 3, 4]))

    Reference:
        Yang et al., 2016, "Hierarchical Attention Networks for Document
        Classification", NAACL, section 2.

    Departures from the paper: `rnn_type="lstm"`, `dropout` and `pooling="mean"` are
    options; the defaults are the paper's model.
    """

    def __init__(
        self,
        rnn_type="gru",
        rnn_units=50,
        word_context_units=100,
        sentence_context_units=100,
        dropout=0.0,
        pooling="attention",
        **kwargs,
    ):
        super().__init__(**kwargs)
        arguments.check_one_of(("gru", "lstm"), rnn_type=rnn_type)
        arguments.check_one_of(("attention", "mean"), pooling=pooling)
        arguments.check_positive_ints(
            rnn_units=rnn_units, word_context_units=word_context_units
        )
        arguments.check_positive_ints(sentence_context_units=sentence_context_units)
        arguments.check_dropout_rates(dropout=dropout)
        self.rnn_type = rnn_type
        self.rnn_units = rnn_units
        self.word_context_units = word_context_units
        self.sentence_context_units = sentence_context_units
        self.dropout = dropout
        self.pooling = pooling
        self.supports_masking = True

        self.word_rnn = self._bidirectional("word_rnn")
        self.sentence_rnn = self._bidirectional("sentence_rnn")
        self.word_pooling = self.sentence_pooling = None
        if pooling == "attention":
            self.word_pooling = AttentionPooling(
                word_context_units, dtype=self.dtype_policy, name="word_attention"
            )
            self.sentence_pooling = AttentionPooling(
                sentence_context_units,
                dtype=self.dtype_policy,
                name="sentence_attention",
            )

    def _bidirectional(self, name):
        cls = keras.layers.GRU if self.rnn_type == "gru" else keras.layers.LSTM
        dtype = self.dtype_policy
        rnn = cls(
            self.rnn_units, return_sequences=True, dropout=self.dropout, dtype=dtype
        )
        return BidirectionalRNN(rnn, dtype=dtype, name=name)  # merge_mode "concat"

    def build(self, input_shape):
        if len(input_shape) != 4 or input_shape[-1] is None:
            raise ValueError(
                "HierarchicalAttentionEncoder expects embedded words of shape "
                f"(B, S, W, E) with a known E. Received: input_shape={input_shape!r}"
            )
        _, num_sentences, num_words, dim = input_shape
        hidden = 2 * self.rnn_units
        self.word_rnn.build((None, num_words, dim))
        self.sentence_rnn.build((None, num_sentences, hidden))
        if self.word_pooling is not None:
            self.word_pooling.build((None, num_words, hidden))
            self.sentence_pooling.build((None, num_sentences, hidden))

    def _pool(self, layer, values, mask):
        if layer is None:  # masked mean: softmax of equal scores over real positions
            weights = masked_softmax(ops.zeros_like(values[..., 0]), mask, axis=-1)
            pooled = ops.sum(ops.expand_dims(weights, -1) * values, axis=-2)
            return pooled, weights
        return layer(values, mask=mask, return_attention_scores=True)

    def call(self, inputs, mask=None, return_attention_scores=False, training=None):
        batch, num_sentences, num_words, dim = ops.shape(inputs)
        if mask is None:
            mask = ops.ones((batch, num_sentences, num_words), dtype="bool")
        mask = ops.cast(mask, "bool")

        # Word level: every sentence of every document as one sequence.
        words = ops.reshape(inputs, (-1, num_words, dim))  # (B*S, W, E)
        word_mask = ops.reshape(mask, (-1, num_words))  # (B*S, W)
        word_states = self.word_rnn(words, mask=_rnn_mask(word_mask), training=training)
        sentences, word_weights = self._pool(
            self.word_pooling, word_states, word_mask
        )  # (B*S, 2u), (B*S, W)
        hidden = 2 * self.rnn_units
        sentences = ops.reshape(sentences, (batch, num_sentences, hidden))
        word_weights = ops.reshape(word_weights, (batch, num_sentences, num_words))

        # Sentence level: a sentence with no real word is padding.
        sentence_mask = ops.any(mask, axis=-1)  # (B, S)
        sentence_states = self.sentence_rnn(
            sentences, mask=_rnn_mask(sentence_mask), training=training
        )
        documents, sentence_weights = self._pool(
            self.sentence_pooling, sentence_states, sentence_mask
        )  # (B, 2u), (B, S)
        if return_attention_scores:
            return documents, sentence_weights, word_weights
        return documents

    def compute_mask(self, inputs, mask=None):
        return None

    def compute_output_shape(self, input_shape):
        return (tuple(input_shape)[0], 2 * self.rnn_units)

    def compute_output_spec(
        self, inputs, mask=None, return_attention_scores=False, training=None
    ):
        shape = tuple(inputs.shape)
        shapes = (self.compute_output_shape(shape), shape[:2], shape[:3])
        return arguments.output_spec(self, shapes, return_attention_scores)

    def get_config(self):
        return {**super().get_config(), **arguments.argument_config(self)}
