"""Sentence and time encodings of end-to-end memory networks (MemN2N).

`PositionEncoding` turns the word embeddings of a sentence into one vector that
depends on word order (Sukhbaatar et al. 2015, section 4.1); `TemporalEncoding` adds
a learned vector per memory slot, so the model knows how recent a sentence is.
"""

import keras
from keras import ops

from zoo.layers.arguments import argument_config, check_one_of, check_positive_ints


@keras.saving.register_keras_serializable(package="zoo")
class PositionEncoding(keras.layers.Layer):
    """Position encoding (PE): an order-aware weighted sum of word embeddings.

    A sentence with word embeddings `A x_j` becomes `m = sum_j l_j * A x_j`
    (element-wise product), where the weight of embedding dimension `k` (of `d`) at
    word position `j` (both counted from 1) is

        l_kj = scale * ((1 - j / J) - (k / d) * (1 - 2 j / J)).

    Position `j` counts real words only (read from the mask; padding may sit
    anywhere and gets weight 0). `J` depends on `length`:

    - `"padded"` (default): `J` is the padded sentence length (the last input
      dimension), the same for every sentence and for the question, as in the
      authors' released code. With the default `scale=2` the weights are
      `1 + 4 (j / J - 1/2) (k / d - 1/2)`, the form of that code (up to a
      half-step offset of `j` and `k`).
    - `"words"`: `J` is the number of real words of each sentence, the literal
      formula of the paper's section 4.1 (use `scale=1` for the paper's weights).

    Why the default: with `J` per sentence, a word's weights change with the
    length of its sentence, so "Gertrude" in "what is gertrude afraid of" (5 words)
    and in "gertrude is a mouse" (4 words) are weighted differently, and the
    weights (mean about 0.5) shrink the sentence vectors; a fixed `J` keeps a
    word's weights the same in every sentence (docs/experiments.md compares the
    two on bAbI task 15).

    Without a mask every position is a word. A sentence without words encodes to
    zeros. The layer has no weights. It accepts any number of leading dimensions,
    e.g. `(B, J, d)` for questions or `(B, M, J, d)` for a memory of `M`
    sentences.

    Args:
        length: `"padded"` (default) or `"words"`: what `J` is (see above).
        scale: float, multiplies every weight (default 2.0).
        **kwargs: base layer keyword arguments (`name`, `dtype`, ...).

    Call arguments:
        inputs: float tensor `(..., J, d)`, the word embeddings.
        mask: optional bool tensor `(..., J)`, True for real words. Taken from the
            embedding layer when it has `mask_zero=True`.

    Returns:
        Float tensor `(..., d)`. Its Keras mask (when a mask was given) is
        `any(mask, axis=-1)`: True for sentences with at least one word, so a memory
        `(B, M, J, d)` yields the mask of non-empty memory slots `(B, M)`.

    Example:

    >>> words = keras.random.normal((2, 5, 7, 16))  # (B, M, J, d)
    >>> mask = keras.ops.ones((2, 5, 7), "bool")
    >>> PositionEncoding()(words, mask=mask).shape
    (2, 5, 16)

    Reference:
        Sukhbaatar, Szlam, Weston, Fergus. End-To-End Memory Networks. NIPS 2015,
        section 4.1.

    Departures from the paper: by default `J` is the padded sentence length and
    the weights are doubled (as in the authors' code); `length="words",
    scale=1.0` gives the paper's formula.
    """

    def __init__(self, length="padded", scale=2.0, **kwargs):
        super().__init__(**kwargs)
        check_one_of(("padded", "words"), length=length)
        if isinstance(scale, bool) or not isinstance(scale, (int, float)) or scale <= 0:
            raise ValueError(
                f"`scale` must be a positive number. Received: scale={scale!r}"
            )
        self.length = length
        self.scale = float(scale)
        self.supports_masking = True

    def weights_for(self, mask, depth):
        """The PE weights `l` of shape `(..., J, d)` for a word mask `(..., J)`.

        Args:
            mask: bool tensor `(..., J)`, True for real words.
            depth: int, the embedding size `d`.

        Returns:
            Float tensor `(..., J, depth)` in the layer's compute dtype; zero at
            padding words.
        """
        dtype = self.compute_dtype
        maskf = ops.cast(mask, dtype)  # (..., J)
        position = ops.cumsum(maskf, axis=-1)  # (..., J) j = 1, 2, ... on real words
        if self.length == "words":
            length = ops.maximum(ops.sum(maskf, axis=-1, keepdims=True), 1.0)
        else:  # the padded length, the same for every sentence
            padded = mask.shape[-1] or ops.shape(maskf)[-1]
            length = ops.cast(ops.maximum(padded, 1), dtype)
        ratio = ops.expand_dims(position / length, axis=-1)  # (..., J, 1) j / J
        k = ops.cast(ops.arange(1, depth + 1), dtype) / ops.cast(depth, dtype)  # (d,)
        weights = (1.0 - ratio) - k * (1.0 - 2.0 * ratio)  # (..., J, d)
        return self.scale * weights * ops.expand_dims(maskf, axis=-1)

    def call(self, inputs, mask=None):
        inputs = ops.convert_to_tensor(inputs, dtype=self.compute_dtype)
        if mask is None:
            mask = ops.ones(ops.shape(inputs)[:-1], dtype="bool")
        weights = self.weights_for(mask, inputs.shape[-1])
        return ops.sum(weights * inputs, axis=-2)  # (..., d)

    def compute_mask(self, inputs, mask=None):
        if mask is None:
            return None
        return ops.any(ops.cast(mask, "bool"), axis=-1)

    def compute_output_shape(self, input_shape):
        input_shape = tuple(input_shape)
        if len(input_shape) < 2:
            raise ValueError(
                "PositionEncoding expects inputs of rank >= 2 (..., J, d). "
                f"Received: input_shape={input_shape!r}"
            )
        return input_shape[:-2] + input_shape[-1:]

    def get_config(self):
        return {**super().get_config(), **argument_config(self)}


@keras.saving.register_keras_serializable(package="zoo")
class TemporalEncoding(keras.layers.Layer):
    """Temporal encoding (TE): adds a learned vector `T(i)` to memory slot `i`.

    `m_i = m_i + T(i)`, with `T` a trainable `(memory_size, d)` matrix. The zoo
    stores memories most recent first, so slot 0 holds the sentence just before the
    question, slot 1 the one before it, and so on; `T(0)` therefore always means
    "most recent", whatever the story's length.

    Masking: the memory mask (non-empty slots) passes through unchanged; empty slots
    also receive `T(i)` but the memory attention gives them zero weight.

    Args:
        memory_size: int, the number of memory slots `M` (rows of `T`). Inputs may
            have at most this many slots.
        embeddings_initializer: initializer of `T` (default normal, stddev 0.1, as
            in the paper).
        **kwargs: base layer keyword arguments.

    Call arguments:
        inputs: float tensor `(B, M, d)`, one vector per memory slot.
        mask: optional bool tensor `(B, M)`; passed through.

    Returns:
        Float tensor `(B, M, d)`.

    Example:

    >>> TemporalEncoding(50)(keras.ops.zeros((2, 50, 20))).shape
    (2, 50, 20)

    Reference:
        Sukhbaatar et al. 2015, section 4.1 ("Temporal Encoding").
    """

    def __init__(self, memory_size, embeddings_initializer=None, **kwargs):
        super().__init__(**kwargs)
        check_positive_ints(memory_size=memory_size)
        self.memory_size = memory_size
        if embeddings_initializer is None:
            embeddings_initializer = keras.initializers.RandomNormal(stddev=0.1)
        self.embeddings_initializer = keras.initializers.get(embeddings_initializer)
        self.supports_masking = True

    def build(self, input_shape):
        depth = input_shape[-1]
        if depth is None:
            raise ValueError(
                "TemporalEncoding needs a known last dimension. "
                f"Received: input_shape={tuple(input_shape)!r}"
            )
        self.embeddings = self.add_weight(
            name="embeddings",
            shape=(self.memory_size, depth),
            initializer=self.embeddings_initializer,
        )

    def call(self, inputs, mask=None):
        inputs = ops.convert_to_tensor(inputs, dtype=self.compute_dtype)
        slots = inputs.shape[-2]
        if slots is not None and slots > self.memory_size:
            raise ValueError(
                f"TemporalEncoding has {self.memory_size} slots but the memory has "
                f"more. Received: inputs.shape={tuple(inputs.shape)!r}"
            )
        table = ops.cast(self.embeddings, self.compute_dtype)
        return inputs + table[: slots or ops.shape(inputs)[-2]]

    def compute_mask(self, inputs, mask=None):
        return mask

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), **argument_config(self)}
