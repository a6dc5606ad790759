"""AttentionPooling: the context-vector attention of Hierarchical Attention Networks."""

import keras
from keras import ops

from zoo.layers.arguments import argument_config, check_positive_ints, output_spec
from zoo.layers.initializers import fresh_weights
from zoo.layers.masking import masked_softmax


@keras.saving.register_keras_serializable(package="zoo")
class AttentionPooling(keras.layers.Layer):
    """Pools a sequence into one vector with a learned context vector.

    Each position's annotation `h_t` is projected to a hidden representation
    `u_t = tanh(W h_t + b)`, scored against a learned context vector `u_w` ("what is
    the informative word/sentence?"), and the scores are normalised with a masked
    softmax over the time axis:

    ```
    u_t = tanh(W h_t + b)                       # (..., T, units)
    a_t = exp(u_t^T u_w) / sum_k exp(u_k^T u_w)  # (..., T)
    output = sum_t a_t h_t                       # (..., D)
    ```

    Any number of leading axes is accepted: `(B, T, D) -> (B, D)` and
    `(B, S, T, D) -> (B, S, D)`. Masking: positions where `mask` is False get exactly
    zero weight; a row whose positions are all masked gets all-zero weights and a zero
    output vector (never NaN). The output carries no mask (`compute_mask` returns
    `None`), since the time axis is pooled away.

    Args:
        units: size of the hidden projection `u_t` and of the context vector `u_w`
            (100 in the paper).
        use_bias: whether the projection has the bias `b`. Defaults to `True`.
        kernel_initializer: initializer of `W`. Defaults to `"glorot_uniform"`.
        context_initializer: initializer of `u_w` (random in the paper). Defaults to
            `"glorot_uniform"`.
        **kwargs: base layer keyword arguments (`name`, `dtype`, ...).

    Call arguments:
        inputs: float tensor `(..., T, D)`.
        mask: optional bool tensor `(..., T)`; True marks real positions. Passed
            automatically from an upstream `Embedding(mask_zero=True)` or RNN.
        return_attention_scores: if True, also return the weights `(..., T)`.

    Returns:
        The pooled vectors `(..., D)`, or `(pooled, weights)` when
        `return_attention_scores=True`.

    Example:

    >>> x = np.random.rand(2, 5, 8).astype("float32")
    >>> pooled, weights = AttentionPooling(16)(x, return_attention_scores=True)
    >>> pooled.shape, weights.shape
    (TensorShape([2, 8]), TensorShape([2, 5]))

    Reference:
        Yang et al., 2016, "Hierarchical Attention Networks for Document
        Classification", NAACL, equations 5-7 (words) and 8-10 (sentences).
    """

    def __init__(
        self,
        units,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        context_initializer="glorot_uniform",
        **kwargs,
    ):
        super().__init__(**kwargs)
        check_positive_ints(units=units)
        self.units = units
        self.use_bias = use_bias
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.context_initializer = keras.initializers.get(context_initializer)
        self.supports_masking = True

    def build(self, input_shape):
        if len(input_shape) < 2 or input_shape[-1] is None:
            raise ValueError(
                "AttentionPooling expects inputs of shape (..., T, D) with a known D. "
                f"Received: input_shape={input_shape!r}"
            )
        add = fresh_weights(self)
        units = self.units
        self.kernel = add("kernel", (input_shape[-1], units), self.kernel_initializer)
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                name="bias", shape=(units,), initializer="zeros"
            )
        self.context = add("context", (units,), self.context_initializer)

    def call(self, inputs, mask=None, return_attention_scores=False):
        hidden = ops.matmul(inputs, self.kernel)  # (..., T, units)
        if self.bias is not None:
            hidden = hidden + self.bias
        hidden = ops.tanh(hidden)
        scores = ops.matmul(hidden, ops.expand_dims(self.context, -1))  # (..., T, 1)
        scores = ops.squeeze(scores, axis=-1)  # (..., T)
        weights = masked_softmax(scores, mask, axis=-1)  # (..., T)
        pooled = ops.sum(ops.expand_dims(weights, -1) * inputs, axis=-2)  # (..., D)
        if return_attention_scores:
            return pooled, weights
        return pooled

    def compute_mask(self, inputs, mask=None):
        return None

    def compute_output_shape(self, input_shape):
        input_shape = tuple(input_shape)
        return input_shape[:-2] + input_shape[-1:]

    def compute_output_spec(self, inputs, mask=None, return_attention_scores=False):
        shapes = (self.compute_output_shape(inputs.shape), inputs.shape[:-1])
        return output_spec(self, shapes, return_attention_scores)

    def get_config(self):
        return {**super().get_config(), **argument_config(self)}
