"""BahdanauAttention: additive attention with its own query/key projections."""

import keras
from keras import ops

from zoo.layers import arguments
from zoo.layers import probability as probability_lib
from zoo.layers.initializers import fresh_weights
from zoo.layers.masking import attention_mask, zero_padded_queries
from zoo.layers.scores import concat_score


def weighted_sum(weights, values):
    """`weights @ values` for one step `(B, Tv)` or all steps `(B, Tq, Tv)`, with
    `values` `(B, Tv, D)`: `(B, D)` or `(B, Tq, D)`."""
    if len(weights.shape) == 3:
        return ops.matmul(weights, values)
    return ops.squeeze(ops.matmul(ops.expand_dims(weights, 1), values), 1)


class ProjectedKeyAttention(keras.layers.Layer):
    """Shared call path of attention layers with `project_keys()` / `attend()`.

    Subclasses implement `project_keys(key)` and `attend(query, keys, value,
    value_mask=None, training=None, query_mask=None)`; `call()` goes through both, so
    teacher-forced and step-by-step (decoder) use compute the same thing. The base
    holds what both layers share: the `probability` and `seed` arguments (with the
    Gumbel noise's seed generator), the built check and the weight casts.
    """

    def __init__(self, probability="softmax", seed=None, **kwargs):
        super().__init__(**kwargs)
        arguments.check_one_of(probability_lib.PROBABILITIES, probability=probability)
        self.probability = probability
        self.seed = seed
        self.seed_generator = (
            keras.random.SeedGenerator(seed) if probability == "gumbel" else None
        )
        self.supports_masking = True

    def _weight(self, variable):
        return ops.cast(variable, self.compute_dtype)

    def _unpack(self, inputs):
        """`[query, value]` or `[query, value, key]` -> `(query, value, key)`."""
        if (
            not isinstance(inputs, (list, tuple))
            or len(inputs) not in (2, 3)
            or any(x is None or isinstance(x, int) for x in inputs)
        ):
            raise ValueError(
                f"{self.__class__.__name__} must be called on a list [query, value] "
                f"or [query, value, key]. Received: inputs={inputs!r}"
            )
        return inputs[0], inputs[1], inputs[-1]

    def _check_built(self, method):
        if not self.built:
            raise ValueError(
                f"{self.name}: call build([query_shape, value_shape]) or call the "
                f"layer once before {method}(). Received: built={self.built!r}"
            )

    def _depths(self, input_shape):
        """`(query depth, key depth, value shape)` from `build`'s input shapes; the
        depths must be known."""
        query_shape, value_shape, key_shape = self._unpack(input_shape)
        if query_shape[-1] is None or key_shape[-1] is None:
            raise ValueError(
                f"{self.__class__.__name__} needs known query and key depths. "
                f"Received: input_shape={input_shape!r}"
            )
        return query_shape[-1], key_shape[-1], value_shape

    def _probabilities(self, scores, mask, training):
        """`zoo.layers.probability.attention_probabilities` with this layer's
        `probability` and seed generator."""
        return probability_lib.attention_probabilities(
            scores, mask, self.probability, training, self.seed_generator
        )

    def call(self, inputs, mask=None, training=None, return_attention_scores=False):
        query, value, key = self._unpack(inputs)
        if mask is not None and (
            not isinstance(mask, (list, tuple)) or len(mask) not in (2, 3)
        ):
            raise ValueError(
                f"{self.__class__.__name__} expects mask=[query_mask, value_mask] "
                f"(either may be None). Received: mask={mask!r}"
            )
        q_mask, v_mask = (None, None) if mask is None else mask[:2]
        keys = self.project_keys(key)
        context, weights = self.attend(
            query, keys, value, value_mask=v_mask, training=training, query_mask=q_mask
        )
        if return_attention_scores:
            return context, weights
        return context

    def compute_mask(self, inputs, mask=None):
        return (
            None if mask is None or mask[0] is None else ops.convert_to_tensor(mask[0])
        )

    def compute_output_shape(self, input_shape):
        query_shape, value_shape, _ = self._unpack(input_shape)
        return (*query_shape[:-1], value_shape[-1])

    def compute_output_spec(
        self, inputs, mask=None, training=None, return_attention_scores=False
    ):
        query, value, _ = self._unpack(inputs)
        output = self.compute_output_shape([query.shape, value.shape])
        scores = (*query.shape[:-1], value.shape[-2])
        return arguments.output_spec(self, (output, scores), return_attention_scores)


@keras.saving.register_keras_serializable(package="zoo")
class BahdanauAttention(ProjectedKeyAttention):
    """Additive (Bahdanau) attention with learned query and key projections.

    For a query `s_t` (the decoder state) and keys `h_s` (the encoder states) the score
    is `e_ts = v^T tanh(W_q s_t + W_k h_s (+ b))`; the weights are
    `a_t = softmax_s(e_t)` over the unpadded keys and the context is
    `c_t = sum_s a_ts value_s`. Unlike `keras.layers.AdditiveAttention`, which expects
    already projected inputs, this layer owns `W_q`, `W_k` and `v`.

    With `normalize=True` the scoring vector is weight-normalised,
    `v = g * v / ||v||` with a learned scalar `g` (initialised to `sqrt(1 / units)`),
    and a learned bias `b` is added inside the `tanh` (the "normed_bahdanau" variant of
    TensorFlow NMT / TF-addons).

    Decoders project the keys once per source sequence and attend once per step:

    ```python
    keys = layer.project_keys(encoder_outputs)             # (B, Tv, units), once
    context, weights = layer.attend(state, keys, encoder_outputs, value_mask=mask)
    ```

    `call()` goes through exactly these two methods. The layer must be built (by a
    first call, or `layer.build([query_shape, value_shape])`) before `project_keys`.

    Masking: a padded key (value mask False) gets exactly zero weight; a query whose
    keys are all padded gets all-zero weights and a zero context; padded query rows
    (query mask False) get zero weights and a zero context. The query mask is passed on
    as the output mask.

    Args:
        units: size of the projected space (the `tanh` layer).
        normalize: weight-normalise `v` and add the score bias (see above).
        probability: `"softmax"`, `"hardmax"` or `"gumbel"` (see
            `zoo.layers.probability`).
        use_bias: add a learned bias to the key projection.
        kernel_initializer: initializer of `W_q`, `W_k` and `v`.
        bias_initializer: initializer of the biases.
        seed: seed of the Gumbel noise (`probability="gumbel"`).
        **kwargs: base `keras.layers.Layer` arguments (`name`, `dtype`, ...).

    Call arguments:
        inputs: `[query, value]` or `[query, value, key]`; query `(B, Tq, dq)` or a
            single step `(B, dq)`, value `(B, Tv, dv)`, key `(B, Tv, dk)` (defaults to
            value).
        mask: `[query_mask, value_mask]`, boolean `(B, Tq)` (or `(B,)`) and `(B, Tv)`;
            either may be `None`.
        return_attention_scores: also return the attention weights.
        training: Python bool (matters for `"hardmax"`/`"gumbel"`).

    Returns:
        The context `(B, Tq, dv)` (or `(B, dv)` for a single-step query) and, with
        `return_attention_scores=True`, the weights `(B, Tq, Tv)` (or `(B, Tv)`).

    Example:

    >>> layer = BahdanauAttention(units=8)
    >>> query = np.random.rand(2, 3, 4).astype("float32")
    >>> value = np.random.rand(2, 5, 6).astype("float32")
    >>> context, weights = layer([query, value], return_attention_scores=True)
    >>> tuple(context.shape), tuple(weights.shape)
    ((2, 3, 6), (2, 3, 5))

    Reference:
        Bahdanau, Cho and Bengio, "Neural Machine Translation by Jointly Learning to
        Align and Translate", ICLR 2015 (appendix A.1.2).
        Salimans and Kingma, "Weight Normalization: A Simple Reparameterization to
        Accelerate Training of Deep Neural Networks", NeurIPS 2016 (`normalize`).

    Departures from the paper: the paper scores the previous decoder state `s_{t-1}`;
    which state is passed as the query is the decoder's choice. The paper has no key
    bias; `use_bias=False` is the default.
    """

    def __init__(
        self,
        units,
        normalize=False,
        probability="softmax",
        use_bias=False,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        seed=None,
        **kwargs,
    ):
        super().__init__(probability=probability, seed=seed, **kwargs)
        arguments.check_positive_ints(units=units)
        self.units = units
        self.normalize = bool(normalize)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)

    def build(self, input_shape):
        query_dim, key_dim, _ = self._depths(input_shape)
        add = fresh_weights(self)
        units = self.units
        kernel, bias = self.kernel_initializer, self.bias_initializer
        self.query_kernel = add("query_kernel", (query_dim, units), kernel, 0)
        self.key_kernel = add("key_kernel", (key_dim, units), kernel, 1)
        self.key_bias = add("key_bias", (units,), bias, 3) if self.use_bias else None
        self.attention_v = add("attention_v", (units,), kernel, 2)
        self.attention_g = self.attention_b = None
        if self.normalize:
            g = keras.initializers.Constant((1.0 / units) ** 0.5)
            self.attention_g = self.add_weight(name="attention_g", initializer=g)
            self.attention_b = add("attention_b", (units,), bias, 4)

    def project_keys(self, key):
        """Projects the keys once per sequence: `W_k key (+ b)`, `(B, Tv, units)`."""
        self._check_built("project_keys")
        key = ops.cast(key, self.compute_dtype)
        keys = ops.matmul(key, self._weight(self.key_kernel))  # (B, Tv, units)
        biases = [
            self._weight(b) for b in (self.key_bias, self.attention_b) if b is not None
        ]
        return keys + sum(biases) if biases else keys

    def scoring_vector(self):
        """`v`, or `g * v / ||v||` when `normalize=True`."""
        v = self._weight(self.attention_v)
        if self.normalize:
            norm = ops.sqrt(ops.maximum(ops.sum(ops.square(v)), 1e-12))
            v = self._weight(self.attention_g) * v / norm
        return v

    def attend(
        self, query, keys, value, value_mask=None, training=None, query_mask=None
    ):
        """Attends with precomputed `keys = project_keys(key)`.

        Args:
            query: `(B, dq)` (one decoder step) or `(B, Tq, dq)`.
            keys: `(B, Tv, units)` from `project_keys`.
            value: `(B, Tv, dv)`.
            value_mask: `(B, Tv)` boolean or `None`.
            training: Python bool.
            query_mask: `(B,)` / `(B, Tq)` boolean or `None`.

        Returns:
            `(context, weights)`: `(B, dv)` and `(B, Tv)` for a single-step query,
            `(B, Tq, dv)` and `(B, Tq, Tv)` otherwise.
        """
        weights = self.align(query, keys, value_mask, training=training)
        weights = zero_padded_queries(query_mask, weights)[0]
        context = weighted_sum(weights, ops.cast(value, self.compute_dtype))
        return context, weights

    def align(self, query, keys, value_mask=None, training=None):
        """The attention weights of `attend` without the weighted sum of the values.

        For a caller that needs only the weights at each step (the decoder forms
        the contexts of all its steps in one product afterwards).

        Args:
            query: `(B, dq)` or `(B, Tq, dq)`.
            keys: `(B, Tv, units)` from `project_keys`.
            value_mask: `(B, Tv)` boolean or `None`.
            training: Python bool.

        Returns:
            `(B, Tv)` or `(B, Tq, Tv)` weights.
        """
        single_step = len(query.shape) == 2
        query = ops.cast(query, self.compute_dtype)
        if single_step:
            query = ops.expand_dims(query, axis=1)  # (B, 1, dq)
        processed = ops.matmul(query, self._weight(self.query_kernel))  # (B, Tq, U)
        scores = concat_score(processed, keys, self.scoring_vector())  # (B, Tq, Tv)
        mask = attention_mask(value_mask=value_mask)  # (B, 1, Tv)
        weights = self._probabilities(scores, mask, training)
        return ops.squeeze(weights, axis=1) if single_step else weights

    def get_config(self):
        return {**super().get_config(), **arguments.argument_config(self)}
