"""MaskedSparseCrossentropy: label-smoothed token cross-entropy that skips padding."""

import keras
from keras import ops

from zoo.layers.arguments import check_dropout_rates


@keras.saving.register_keras_serializable(package="zoo")
class MaskedSparseCrossentropy(keras.losses.Loss):
    """Token-level cross-entropy over logits that ignores padding (id 0).

    The loss is averaged over the real target tokens of the batch (not over the padded
    positions). With `label_smoothing = e` the target distribution is
    `(1 - e) * one_hot + e / V` (Szegedy et al. 2016).

    The gradient with respect to the logits is written out
    (`softmax(z) - (1 - e) one_hot(y) - e / V`, weighted), so a training step makes
    one pass over the `(B, T, V)` logits, the largest tensor of the step, where the
    automatic gradient of `log_softmax` makes several.

    Args:
        label_smoothing: float in `[0, 1)`.
        pad_id: the padding id whose positions get no loss.
        **kwargs: base `keras.losses.Loss` arguments.

    Example:

    >>> loss = MaskedSparseCrossentropy(label_smoothing=0.1)
    >>> value = loss(labels, logits)  # labels (B, T) int, logits (B, T, V)
    """

    def __init__(
        self, label_smoothing=0.0, pad_id=0, name="masked_crossentropy", **kwargs
    ):
        kwargs.pop("reduction", None)
        super().__init__(name=name, reduction="sum", **kwargs)
        check_dropout_rates(label_smoothing=label_smoothing)  # a rate in [0, 1)
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
    `log_softmax`, in fewer passes over the logits.
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
