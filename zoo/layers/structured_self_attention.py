"""StructuredSelfAttention: Lin et al.'s multi-hop self-attentive pooling with penalty."""

import keras
from keras import ops

from zoo.layers.arguments import argument_config, check_positive_ints, output_spec
from zoo.layers.initializers import fresh_weights
from zoo.layers.masking import attention_mask, masked_softmax


def orthogonality_penalty(attention, mask=None, squared=True):
    """Per-example `||A A^T - I||_F^2` (or `||A A^T - I||_F`) of attention matrices.

    The identity term is kept only for examples with at least one unmasked token:
    an empty sentence has `A = 0`, and its penalty is 0 rather than the constant `r`
    (which carries no gradient and would only shift the loss).

    Args:
        attention: float tensor `(B, r, T)`, each row a distribution over tokens
            (or all zeros for an empty sentence).
        mask: optional bool/int tensor `(B, T)`; used only to find empty sentences.
            Without it, an example counts as empty when all of its weights are 0.
        squared: if True (default) returns the squared Frobenius norm (the paper's
            penalty `P`), else the norm itself.

    Returns:
        A float32 tensor `(B,)`.
    """
    a = ops.cast(attention, "float32")
    num_hops = ops.shape(a)[1]
    gram = ops.matmul(a, ops.transpose(a, (0, 2, 1)))  # (B, r, r)
    if mask is not None:
        present = ops.any(ops.cast(mask, "bool"), axis=-1)  # (B,)
    else:
        present = ops.any(ops.not_equal(a, 0.0), axis=(1, 2))  # (B,)
    present = ops.cast(present, "float32")[:, None, None]  # (B, 1, 1)
    eye = ops.eye(num_hops, dtype="float32")[None, :, :]  # (1, r, r)
    diff = gram - eye * present
    sq = ops.sum(ops.square(diff), axis=(1, 2))  # (B,)
    return sq if squared else ops.sqrt(sq)


@keras.saving.register_keras_serializable(package="zoo")
class StructuredSelfAttention(keras.layers.Layer):
    """Structured self-attention: `r` attention hops over a sequence, with penalty.

    Given hidden states `H` `(B, T, D)` (e.g. BiLSTM outputs) the layer computes

        A = softmax(W_s2 tanh(W_s1 H^T))    # (B, r, T), softmax over tokens
        M = A H                             # (B, r, D), the sentence embedding

    and adds `penalty * mean_b ||A_b A_b^T - I||_F^2` to the layer's losses with
    `add_loss`, which pushes the `r` hops to attend to different words. The penalty is
    added on every call where `penalty > 0`, so `model.losses` and the training loss
    include it; `orthogonality_penalty(A, mask)` (module level) gives the per-example
    value for reporting.

    Masking: a `(B, T)` mask (passed explicitly or propagated from
    `Embedding(mask_zero=True)`) gives padded tokens exactly zero weight, through
    `zoo.layers.masking.masked_softmax`; `A A^T` therefore involves only real tokens.
    A sentence whose tokens are all masked gets `A = 0` and `M = 0` (finite, never NaN),
    and its identity term is dropped, so it contributes 0 to the penalty instead of the
    constant `r`. The output has no time axis, so `compute_mask` returns `None`. The
    penalty is computed in float32 also under mixed precision.

    Short texts: `A A^T` has rank at most `T`, so for a text of `T < r` tokens it cannot
    equal `I` and the penalty has a floor above 0 (a one-token text always gives
    `r^2 - r`, with zero gradient). On short inputs (e.g. phrase-level SST) this floor
    dominates the loss; use fewer hops or a smaller `penalty` there.

    Args:
        units: `d_a`, the width of the hidden projection `W_s1` (paper: 350).
        num_hops: `r`, the number of attention rows (paper: 30).
        penalty: the coefficient of `||A A^T - I||_F^2` (paper: 1.0); 0 disables it.
        kernel_initializer: initializer of `W_s1` and `W_s2`.
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Call arguments:
        inputs: hidden states `H`, float tensor `(B, T, D)`.
        mask: optional bool/int tensor `(B, T)`, True for real tokens.
        return_attention_scores: if True, also return `A`.
        training: unused (no dropout); accepted for the Keras call convention.

    Returns:
        `M` `(B, r, D)`, or `(M, A)` with `A` `(B, r, T)` when
        `return_attention_scores=True`.

    Example:

    >>> h = keras.random.normal((2, 7, 16))
    >>> layer = StructuredSelfAttention(units=8, num_hops=3)
    >>> m, a = layer(h, return_attention_scores=True)
    >>> tuple(m.shape), tuple(a.shape)
    ((2, 3, 16), (2, 3, 7))

    Reference:
        Lin et al., "A Structured Self-Attentive Sentence Embedding", ICLR 2017
        (https://arxiv.org/abs/1703.03130), section 2.

    Departures from the paper: the penalty is averaged over the batch (the paper's
    formula is per example; its released code also averages), and empty sentences
    contribute 0 to it (see Masking). `W_s1` and `W_s2` have no bias, as in the paper.
    """

    def __init__(
        self,
        units,
        num_hops,
        penalty=1.0,
        kernel_initializer="glorot_uniform",
        **kwargs,
    ):
        super().__init__(**kwargs)
        check_positive_ints(units=units, num_hops=num_hops)
        if not isinstance(penalty, (int, float)) or penalty < 0:
            raise ValueError(
                f"`penalty` must be a number >= 0. Received: penalty={penalty!r}"
            )
        self.units = units
        self.num_hops = num_hops
        self.penalty = float(penalty)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.supports_masking = True

    def build(self, input_shape):
        if len(input_shape) != 3 or input_shape[-1] is None:
            raise ValueError(
                "StructuredSelfAttention expects inputs of shape (batch, time, "
                f"features) with a known feature size. Received: input_shape="
                f"{input_shape!r}"
            )
        add = fresh_weights(self)
        self.w_s1 = add("w_s1", (input_shape[-1], self.units), self.kernel_initializer)
        self.w_s2 = add("w_s2", (self.units, self.num_hops), self.kernel_initializer)

    def call(self, inputs, mask=None, return_attention_scores=False, training=None):
        if isinstance(mask, (list, tuple)):
            mask = next((m for m in reversed(mask) if m is not None), None)
        hidden = ops.tanh(ops.matmul(inputs, self.w_s1))  # (B, T, d_a)
        scores = ops.matmul(hidden, self.w_s2)  # (B, T, r)
        scores = ops.transpose(scores, (0, 2, 1))  # (B, r, T)
        token_mask = attention_mask(value_mask=mask)  # (B, 1, T) or None
        attention = masked_softmax(scores, token_mask, axis=-1)  # (B, r, T)
        embedding = ops.matmul(attention, inputs)  # (B, r, D)
        if self.penalty > 0:
            per_example = orthogonality_penalty(attention, mask)  # (B,)
            self.add_loss(self.penalty * ops.mean(per_example))
        if return_attention_scores:
            return embedding, attention
        return embedding

    def compute_mask(self, inputs, mask=None):
        return None

    def compute_output_shape(self, input_shape):
        batch, steps, dim = input_shape
        return (batch, self.num_hops, dim)

    def compute_output_spec(
        self, inputs, mask=None, return_attention_scores=False, training=None
    ):
        batch, steps, dim = inputs.shape
        shapes = ((batch, self.num_hops, dim), (batch, self.num_hops, steps))
        return output_spec(self, shapes, return_attention_scores)

    def get_config(self):
        return {**super().get_config(), **argument_config(self)}
