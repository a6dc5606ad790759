"""Optimizers: Keras' update rules, with each weight's gradient clipped as a whole.

- `summed_gradient`: an embedding's `tf.IndexedSlices` gradient as one dense tensor.
- `FusedAdam`: `keras.optimizers.Adam`'s update computed by TensorFlow's fused
  `ResourceApplyAdam` kernel (one pass over each weight instead of about ten), on
  each weight's summed gradient (also for `clipnorm`).

Both are registered with Keras (`package="zoo"`), so saved models and their optimizer
state load back.
"""

import keras
from keras import ops


def summed_gradient(gradient):
    """An embedding's gradient with its per-lookup slices summed (dense).

    TensorFlow returns the gradient of a lookup as a `tf.IndexedSlices` with one slice
    per looked-up row, repeated rows not summed; any other gradient is returned as is.
    """
    if type(gradient).__name__ == "IndexedSlices":  # TensorFlow's sparse gradient
        import tensorflow as tf

        return tf.convert_to_tensor(gradient)
    return gradient


def _handle(variable):
    """The resource handle of a Keras variable (or of a `tf.Variable`)."""
    if isinstance(variable, keras.Variable):
        variable = variable.value
    return variable.handle


@keras.saving.register_keras_serializable(package="zoo")
class FusedAdam(keras.optimizers.Adam):
    """`keras.optimizers.Adam` whose update runs as one fused TensorFlow kernel.

    The update is Keras Adam's, `m <- b1 m + (1 - b1) g`, `v <- b2 v + (1 - b2) g^2`,
    `w <- w - lr sqrt(1 - b2^t) / (1 - b1^t) m / (sqrt(v) + epsilon)`, computed by
    `tf.raw_ops.ResourceApplyAdam` in one pass over each weight, where Keras' own
    implementation makes about ten (each elementwise operation reads and writes the
    whole weight). The variables (`m`, `v`, the iteration count) are Adam's, so
    checkpoints written with either optimizer restore into the other.

    An embedding's gradient is summed over its lookups first (`summed_gradient`), so
    `g` is the weight's gradient as Adam defines it. Keras 3.15's Adam squares the
    per-lookup slices of a `tf.IndexedSlices` gradient before summing them, so for a
    row looked up `n` times in a batch its `v` grows by the sum of the `n` squared
    slices instead of by the square of their sum (up to `n` times smaller), and that
    row's step is up to `sqrt(n)` times larger than Adam's. On dense gradients the
    two optimizers compute the same update.

    With `clipnorm`, each weight's gradient is scaled to norm at most `clipnorm`, the
    norm taken over the weight's whole (summed) gradient; Keras takes an embedding's
    norm over the unsummed per-lookup slices, so a row looked up `n` times can move
    up to `sqrt(n)` times further than the clip allows (see `summed_gradient`).

    Falls back to Keras' implementation (on the summed gradient) for other backends, for
    `amsgrad=True`, for weights that are not float32/float64, and inside a
    `tf.distribute` strategy (where the distributed variables update through Keras).

    Args:
        the arguments of `keras.optimizers.Adam`.
    """

    def _clip_gradients(self, grads):
        if not (self.clipnorm and self.clipnorm > 0):
            return super()._clip_gradients(grads)
        return [None if g is None else self._clip_summed(g) for g in grads]

    def _clip_summed(self, gradient):
        gradient = summed_gradient(gradient)
        if keras.backend.backend() != "tensorflow":
            return self._clip_by_norm(gradient)
        import tensorflow as tf

        # one reduction (l2_loss = sum(g^2) / 2), and a rescale only when needed
        norm = ops.sqrt(2.0 * tf.nn.l2_loss(gradient))
        return tf.cond(
            norm > self.clipnorm,
            lambda: gradient * ops.cast(self.clipnorm / norm, gradient.dtype),
            lambda: gradient,
        )

    def update_step(self, gradient, variable, learning_rate):
        gradient = summed_gradient(gradient)
        if not self._fusable(variable):
            return super().update_step(gradient, variable, learning_rate)
        import tensorflow as tf

        dtype = variable.dtype
        index = self._get_variable_index(variable)
        step = ops.cast(self.iterations + 1, dtype)
        beta_1 = ops.cast(self.beta_1, dtype)
        beta_2 = ops.cast(self.beta_2, dtype)
        tf.raw_ops.ResourceApplyAdam(
            var=_handle(variable),
            m=_handle(self._momentums[index]),
            v=_handle(self._velocities[index]),
            beta1_power=ops.power(beta_1, step),
            beta2_power=ops.power(beta_2, step),
            lr=ops.cast(learning_rate, dtype),
            beta1=beta_1,
            beta2=beta_2,
            epsilon=ops.cast(self.epsilon, dtype),
            grad=ops.cast(gradient, dtype),
        )

    def _fusable(self, variable):
        if keras.backend.backend() != "tensorflow" or self.amsgrad:
            return False
        import tensorflow as tf

        if tf.distribute.has_strategy():
            return False
        return keras.backend.standardize_dtype(variable.dtype) in ("float32", "float64")
