"""SelfAttention: multi-head scaled dot-product intra-attention over one sequence."""

import math

import keras
from keras import ops

from zoo.layers import arguments
from zoo.layers.initializers import fresh_weights
from zoo.layers.masking import attention_mask, masked_softmax, zero_padded_queries


@keras.saving.register_keras_serializable(package="zoo")
class SelfAttention(keras.layers.Layer):
    """Multi-head scaled dot-product self-attention (intra-attention).

    Each head `h` projects the sequence to queries `Q_h = x W^Q_h`, keys
    `K_h = x W^K_h` and values `V_h = x W^V_h`, attends with
    `softmax(Q_h K_h^T / sqrt(key_dim)) V_h`, and the heads are concatenated and
    projected back by `W^O`. With `causal=True` position `i` attends only to positions
    `j <= i` (a decoder's self-attention).

    The weights are laid out as in `keras.layers.MultiHeadAttention` (query/key/value
    kernels `(D, heads, key_dim)`, output kernel `(heads, value_dim, output_dim)`), so
    weights can be copied between the two; the outputs then agree (see the tests).

    Masking: `mask` is the padding mask `(B, T)` of the sequence (or
    `[query_mask, value_mask]` for `[query, value]` inputs); Keras masks (from
    `Embedding(mask_zero=True)`) are picked up automatically. A padded key gets exactly
    zero weight in every head; a padded query row gets all-zero weights and a zero
    output (no output bias), and the query mask is passed on as the output mask.

    Args:
        num_heads: number of attention heads.
        key_dim: size of each head's queries and keys.
        value_dim: size of each head's values (default `key_dim`).
        causal: mask future positions.
        dropout: dropout rate on the attention weights (training only).
        use_bias: biases in the four projections.
        output_dim: size of the output (default: the query depth `D`).
        kernel_initializer: initializer of the projection kernels.
        bias_initializer: initializer of the biases.
        seed: seed of the dropout.
        **kwargs: base `keras.layers.Layer` arguments.

    Call arguments:
        inputs: `x` `(B, T, D)`, `[x]`, or `[query, value]` (`(B, Tq, D)`,
            `(B, Tv, Dv)`; keys are computed from the value).
        mask: `(B, T)` padding mask, or `[query_mask, value_mask]`; `None` entries
            allowed.
        return_attention_scores: also return the weights `(B, heads, Tq, Tv)`.
        training: Python bool (dropout).

    Returns:
        `(B, Tq, output_dim)`, and the weights `(B, heads, Tq, Tv)` when
        `return_attention_scores=True`.

    Example:

    >>> layer = SelfAttention(num_heads=2, key_dim=4, causal=True)
    >>> x = np.random.rand(3, 5, 8).astype("float32")
    >>> tuple(layer(x).shape)
    (3, 5, 8)

    Reference:
        Vaswani et al., "Attention Is All You Need", NeurIPS 2017 (section 3.2).
        Cheng, Dong and Lapata, "Long Short-Term Memory-Networks for Machine
        Reading", EMNLP 2016 (intra-attention).

    Departures from the paper: padded query rows output zeros instead of the output
    bias, so padding never leaks into later layers.
    """

    def __init__(
        self,
        num_heads,
        key_dim,
        value_dim=None,
        causal=False,
        dropout=0.0,
        use_bias=True,
        output_dim=None,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        seed=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        arguments.check_positive_ints(num_heads=num_heads, key_dim=key_dim)
        arguments.check_optional_positive_ints(
            value_dim=value_dim, output_dim=output_dim
        )
        arguments.check_dropout_rates(dropout=dropout)
        self.num_heads = num_heads
        self.key_dim = key_dim
        self.value_dim = value_dim
        self.causal = bool(causal)
        self.dropout = float(dropout)
        self.use_bias = bool(use_bias)
        self.output_dim = output_dim
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.seed = seed
        self.dropout_layer = keras.layers.Dropout(rate=self.dropout, seed=seed)
        self.supports_masking = True

    def _split_mask(self, inputs, mask):
        pair_of_inputs = isinstance(inputs, (list, tuple)) and len(inputs) == 2
        if pair_of_inputs and mask is not None and not isinstance(mask, (list, tuple)):
            raise ValueError(
                "For [query, value] inputs pass mask=[query_mask, value_mask]. "
                f"Received: mask={mask!r}"
            )
        return _query_and_value(mask, "mask")

    def _shapes(self, input_shape):
        """`(query_shape, value_shape)` from one shape or a list of them."""
        if not isinstance(input_shape[0], (list, tuple)):
            input_shape = [input_shape]
        query_shape, value_shape = _query_and_value(input_shape, "input")
        return tuple(query_shape), tuple(value_shape)

    def build(self, input_shape):
        query_shape, value_shape = self._shapes(input_shape)
        dim, value_in = query_shape[-1], value_shape[-1]
        if dim is None or value_in is None:
            raise ValueError(
                "SelfAttention needs a known feature depth. "
                f"Received: input_shape={input_shape!r}"
            )
        heads, kd, vd = self.num_heads, self.key_dim, self.value_dim or self.key_dim
        out = self.output_dim or dim
        # each weight its own draw, in this order
        add = fresh_weights(self, self.kernel_initializer)

        def bias(name, shape):
            return add(name, shape, self.bias_initializer) if self.use_bias else None

        self.query_kernel = add("query_kernel", (dim, heads, kd))
        self.query_bias = bias("query_bias", (heads, kd))
        self.key_kernel = add("key_kernel", (value_in, heads, kd))
        self.key_bias = bias("key_bias", (heads, kd))
        self.value_kernel = add("value_kernel", (value_in, heads, vd))
        self.value_bias = bias("value_bias", (heads, vd))
        self.output_kernel = add("output_kernel", (heads, vd, out))
        self.output_bias = bias("output_bias", (out,))

    def _project(self, x, kernel, bias):
        y = ops.einsum("btd,dhk->bthk", x, ops.cast(kernel, self.compute_dtype))
        if bias is not None:
            y = y + ops.cast(bias, self.compute_dtype)
        return y  # (B, T, heads, k)

    def call(self, inputs, mask=None, training=None, return_attention_scores=False):
        query_in, value_in = _query_and_value(inputs, "input")
        query_mask, value_mask = self._split_mask(inputs, mask)
        q = self._project(query_in, self.query_kernel, self.query_bias)
        k = self._project(value_in, self.key_kernel, self.key_bias)
        v = self._project(value_in, self.value_kernel, self.value_bias)
        q = q * ops.cast(1.0 / math.sqrt(self.key_dim), q.dtype)
        scores = ops.einsum("bthk,bshk->bhts", q, k)  # (B, heads, Tq, Tv)
        lengths = (ops.shape(q)[1], ops.shape(k)[1])
        mask = attention_mask(query_mask, value_mask, self.causal, *lengths)  # or None
        if mask is not None:
            mask = ops.expand_dims(mask, axis=1)  # (B, 1, Tq, Tv)
        weights = masked_softmax(scores, mask)  # (B, heads, Tq, Tv)
        dropped = self.dropout_layer(weights, training=training)  # rate 0: unchanged
        context = ops.einsum("bhts,bshv->bthv", dropped, v)  # (B, Tq, heads, vd)
        output = ops.einsum(
            "bthv,hvo->bto", context, ops.cast(self.output_kernel, self.compute_dtype)
        )
        if self.output_bias is not None:
            output = output + ops.cast(self.output_bias, self.compute_dtype)
        (output,) = zero_padded_queries(query_mask, output)  # padded query rows -> 0
        if return_attention_scores:
            return output, weights
        return output

    def compute_mask(self, inputs, mask=None):
        query_mask, _ = self._split_mask(inputs, mask)
        return None if query_mask is None else ops.convert_to_tensor(query_mask)

    def compute_output_shape(self, input_shape):
        query_shape, _ = self._shapes(input_shape)
        return (*query_shape[:-1], self.output_dim or query_shape[-1])

    def compute_output_spec(
        self, inputs, mask=None, training=None, return_attention_scores=False
    ):
        query, value = _query_and_value(inputs, "input")
        output = self.compute_output_shape(query.shape)
        scores = (query.shape[0], self.num_heads, query.shape[1], value.shape[1])
        return arguments.output_spec(self, (output, scores), return_attention_scores)

    def get_config(self):
        return {**super().get_config(), **arguments.argument_config(self)}


def _query_and_value(x, name):
    """`x` or `[x]` -> `(x, x)`; `[query, value]` -> `(query, value)`."""
    if not isinstance(x, (list, tuple)):
        return x, x
    if len(x) not in (1, 2):
        raise ValueError(
            f"SelfAttention takes one {name}, [{name}] or [query {name}, value "
            f"{name}]. Received: {len(x)} {name}s"
        )
    return x[0], x[-1]
