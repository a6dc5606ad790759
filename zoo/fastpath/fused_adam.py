"""`FusedAdam`: Keras' Adam, its passes over the weights fused (TensorFlow).

`FusedAdam` is registered with Keras (`package="zoo"`), so saved models and their
optimizer state load back, on any backend (TensorFlow is imported inside the
methods; elsewhere the optimizer is Keras' Adam).
"""

import weakref

import keras
from keras import ops

from zoo.fastpath.switch import enabled
from zoo.training import keras_workarounds
from zoo.training.weight_averaging import average_momentum


@keras.saving.register_keras_serializable(package="zoo")
class FusedAdam(keras.optimizers.Adam):
    """`keras.optimizers.Adam`, its dense updates run as one fused TensorFlow kernel.

    For a dense gradient the update, `m <- b1 m + (1 - b1) g`,
    `v <- b2 v + (1 - b2) g^2`,
    `w <- w - lr sqrt(1 - b2^t) / (1 - b1^t) m / (sqrt(v) + epsilon)`, is computed by
    `tf.raw_ops.ResourceApplyAdam` in one pass over the weight, where Keras' own
    implementation makes about ten (each elementwise operation reads and writes the
    whole weight); `clipnorm` takes the norm in one reduction and rescales only when
    the norm exceeds it. The variables (`m`, `v`, the iteration count) are Adam's.

    An embedding's gradient (a `tf.IndexedSlices`, one slice per lookup) goes through
    Keras' own clipping and Keras' own update arithmetic, its elementwise part
    compiled by XLA into one pass over the table (Keras' makes about ten), so the
    optimizer computes what `keras.optimizers.Adam` computes for every weight. With
    `use_ema=True` the weight average `a <- m_t a + (1 - m_t) w` is one XLA-compiled
    pass per weight too (Keras' makes four), with the zoo's warmed-up momentum
    `m_t = min(ema_momentum, (1 + t) / (10 + t))` (0 in the first step;
    `zoo.training.weight_averaging.average_momentum`), the average that
    `zoo.training.fit` gives every Keras optimizer (`warm_up_average`), where
    Keras' own uses `ema_momentum` from the second step on. Keras (3.15) squares the
    slices before summing them: a row looked up `n` times in a batch adds the sum of
    its `n` squared slices to `v`, not the square of their sum as textbook Adam
    would, which makes frequent rows' steps up to `sqrt(n)` times larger. That is
    kept on purpose: with the textbook update the translation recipe's embeddings
    learn markedly slower at its learning rate (docs/experiments.md).

    Falls back to Keras' implementation while the fast paths are switched off
    (`zoo.fastpath.enabled()` is False, as it is on other backends), for
    `amsgrad=True`, for weights that are not float32/float64, and inside a
    `tf.distribute` strategy (where the distributed variables update through Keras).
    The switch is read when the train function is traced.

    Args:
        the arguments of `keras.optimizers.Adam`.
    """

    # the weight average's warm-up is computed here (zoo.training.warm_up_average)
    average_warm_up = True

    def _clip_by_norm(self, values, axes=None):
        if _is_sparse(values) or axes is not None or not enabled():
            return super()._clip_by_norm(values, axes)
        import tensorflow as tf

        # one reduction (l2_loss = sum(g^2) / 2), and a rescale only when needed
        norm = ops.sqrt(2.0 * tf.nn.l2_loss(values))
        return tf.cond(
            norm > self.clipnorm,
            lambda: values * ops.cast(self.clipnorm / norm, values.dtype),
            lambda: values,
        )

    def update_step(self, gradient, variable, learning_rate):
        if not self._fusable(variable):
            return super().update_step(gradient, variable, learning_rate)
        import tensorflow as tf

        dtype = variable.dtype
        index = self._get_variable_index(variable)
        weight = _tf_variable(variable)
        m, v = (_tf_variable(s[index]) for s in (self._momentums, self._velocities))
        step = ops.cast(self.iterations + 1, dtype)
        lr = ops.cast(learning_rate, dtype)
        beta_1, beta_2 = ops.cast(self.beta_1, dtype), ops.cast(self.beta_2, dtype)
        epsilon = ops.cast(self.epsilon, dtype)
        beta1_power, beta2_power = ops.power(beta_1, step), ops.power(beta_2, step)
        if not _is_sparse(gradient):
            tf.raw_ops.ResourceApplyAdam(
                var=weight.handle,
                m=m.handle,
                v=v.handle,
                beta1_power=beta1_power,
                beta2_power=beta2_power,
                lr=lr,
                beta1=beta_1,
                beta2=beta_2,
                epsilon=epsilon,
                grad=ops.cast(gradient, dtype),
            )
            return
        # An embedding's slices: Keras' arithmetic for a `tf.IndexedSlices` gradient,
        # `m += (G - m)(1 - b1)` with `G` the slices summed per row,
        # `v += (S - v)(1 - b2)` with `S` the squared slices summed per row,
        # `w -= m alpha / (sqrt(v) + epsilon)`, its elementwise part in one
        # XLA-compiled pass (Keras' own makes about ten over the whole table).
        values = ops.cast(gradient.values, dtype)
        indices, shape = gradient.indices, gradient.dense_shape
        summed = tf.convert_to_tensor(tf.IndexedSlices(values, indices, shape))
        squares = tf.convert_to_tensor(
            tf.IndexedSlices(ops.square(values), indices, shape)
        )
        alpha = lr * ops.sqrt(1 - beta2_power) / (1 - beta1_power)
        one_minus = (ops.cast(1 - self.beta_1, dtype), ops.cast(1 - self.beta_2, dtype))
        self._xla_updates()["adam"](
            weight, m, v, summed, squares, alpha, *one_minus, epsilon
        )

    def _update_model_variables_moving_average(self, trainable_variables):
        """The weight average, `a <- m_t a + (1 - m_t) w` with the warmed-up
        `m_t = average_momentum(t)`, in one XLA-compiled pass per weight (Keras' own
        makes four); when not fusable, Keras' update with that momentum."""
        if not self.use_ema or not all(self._fusable(v) for v in trainable_variables):
            return keras_workarounds.moving_average_update(
                self, trainable_variables, average_momentum
            )
        update = self._xla_updates()["average"]
        for variable, average in zip(
            trainable_variables, self._model_variables_moving_average, strict=True
        ):
            if average is None:
                continue
            momentum = average_momentum(
                self.iterations, self.ema_momentum, variable.dtype
            )
            update(_tf_variable(average), _tf_variable(variable), momentum)

    def _xla_updates(self):
        # kept outside the optimizer, so that nothing saves the functions with it
        if self not in _XLA_UPDATES:
            _XLA_UPDATES[self] = _xla_functions()
        return _XLA_UPDATES[self]

    def _fusable(self, variable):
        if not enabled() or self.amsgrad:
            return False
        import tensorflow as tf

        dtype = keras.backend.standardize_dtype(variable.dtype)
        return not tf.distribute.has_strategy() and dtype in ("float32", "float64")


def _tf_variable(variable):
    """The `tf.Variable` behind a Keras variable."""
    return variable.value if isinstance(variable, keras.Variable) else variable


_XLA_UPDATES = weakref.WeakKeyDictionary()


def _xla_functions():
    """The XLA-compiled elementwise updates (new functions per optimizer: a
    function's traces hold on to the variables they were traced with)."""
    import tensorflow as tf

    @tf.function(jit_compile=True, autograph=False)
    def adam(variable, m, v, summed, squares, alpha, one_minus_b1, one_minus_b2, eps):
        m.assign_add((summed - m) * one_minus_b1)
        v.assign_add((squares - v) * one_minus_b2)
        variable.assign_sub((m * alpha) / (tf.sqrt(v) + eps))

    @tf.function(jit_compile=True, autograph=False)
    def average(average, variable, momentum):
        average.assign(momentum * average + (1 - momentum) * variable)

    return {"adam": adam, "average": average}


def _is_sparse(gradient):
    """Whether `gradient` is a `tf.IndexedSlices` (without importing TensorFlow)."""
    return type(gradient).__name__ == "IndexedSlices"
