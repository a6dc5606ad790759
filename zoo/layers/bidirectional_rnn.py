"""BidirectionalRNN: Keras' Bidirectional GRU/LSTM with both directions in one loop."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="zoo")
class BidirectionalRNN(keras.layers.Bidirectional):
    """`keras.layers.Bidirectional` over a GRU or LSTM, both directions in one loop.

    The same layer, weights and outputs as `keras.layers.Bidirectional` (it is a
    subclass: same variables, same checkpoints, same config plus nothing); only the
    computation differs where Keras would run its generic per-step loop (TensorFlow
    backend, no GPU, where cuDNN is not available):

    - the input projections `x W + b` of both directions, for all time steps, are
      two matrix products before the loop (Keras' cell forms `x_t W` inside the
      loop, one small product per step and direction);
    - one `tf.while_loop` advances the forward direction at position `t` and the
      backward one at `T - 1 - t` together, with one batched product
      `[h_f; h_b] [U_f; U_b]` per step (Keras runs two loops, one after the other
      on one core).

    The masking is Keras': a masked step keeps the state and outputs zeros (what
    `Bidirectional` sets for `return_sequences`); the backward direction reads the
    padded sequence reversed, so with right padding it starts at the last real
    token. Input dropout draws one mask per sequence and direction from each
    cell's seed generator, as Keras' GRU/LSTM do.

    Everywhere else (a GPU, another backend, `recurrent_dropout`, `implementation=1`,
    a GRU without `reset_after`, an `initial_state`, `merge_mode` other than `"concat"`,
    `return_sequences=False`, stateful layers) the layer defers to Keras'
    `Bidirectional.call`.

    Args: those of `keras.layers.Bidirectional`.

    Example:

    >>> layer = BidirectionalRNN(keras.layers.GRU(64, return_sequences=True))
    >>> outputs = layer(embedded, mask=mask)  # (B, T, 128)
    """

    def call(self, sequences, initial_state=None, mask=None, training=None):
        if not self._can_fuse(initial_state):
            return super().call(
                sequences, initial_state=initial_state, mask=mask, training=training
            )
        return _fused_call(self, sequences, mask, bool(training))

    def _can_fuse(self, initial_state):
        if keras.backend.backend() != "tensorflow" or initial_state is not None:
            return False
        fwd, bwd = self.forward_layer, self.backward_layer
        if type(fwd) is not type(bwd) or type(fwd) not in (
            keras.layers.GRU,
            keras.layers.LSTM,
        ):
            return False
        for layer in (fwd, bwd):
            cell = layer.cell
            if (
                layer.stateful
                or not layer.return_sequences
                or cell.recurrent_dropout
                or getattr(cell, "implementation", 2) != 2
                or not cell.use_bias
                or getattr(cell, "reset_after", True) is False
            ):
                return False
        if self.merge_mode != "concat":
            return False
        import tensorflow as tf

        # on a GPU Keras' own path runs cuDNN, faster than any loop
        return not tf.config.list_logical_devices("GPU")


def _fused_call(layer, sequences, mask, training):
    import tensorflow as tf

    fwd, bwd = layer.forward_layer, layer.backward_layer
    is_gru = isinstance(fwd, keras.layers.GRU)
    dtype = layer.compute_dtype
    x = ops.cast(sequences, dtype)  # (B, T, E)
    batch, steps = ops.shape(x)[0], ops.shape(x)[1]
    if mask is None:
        mask = ops.ones((batch, steps), "bool")
    mask = ops.cast(mask, "bool")

    # --- input projections of both directions, all steps (before the loop) ---
    projected, recurrent, recurrent_bias = [], [], []
    for rnn in (fwd, bwd):
        cell = rnn.cell
        inputs = x
        if training and 0.0 < cell.dropout < 1.0:
            keep = keras.random.dropout(
                ops.ones_like(x[:, 0, :]), rate=cell.dropout, seed=cell.seed_generator
            )
            inputs = x * ops.expand_dims(keep, 1)
        bias = ops.cast(cell.bias, dtype)
        input_bias = bias[0] if is_gru else bias
        recurrent_bias.append(bias[1] if is_gru else ops.zeros_like(bias))
        projected.append(ops.matmul(inputs, ops.cast(cell.kernel, dtype)) + input_bias)
        recurrent.append(ops.cast(cell.recurrent_kernel, dtype))
    activation = fwd.cell.activation
    recurrent_activation = fwd.cell.recurrent_activation
    zeros = ops.zeros((batch, fwd.cell.units), dtype)

    def run(gates_in, step_mask, kernel, bias):
        """One direction's loop over time-major `(T, B, G)` gates and `(T, B, 1)` mask."""

        def gru_step(gates, state):
            (h,) = state
            inner = ops.matmul(h, kernel) + bias  # (B, 3U)
            x_z, x_r, x_h = ops.split(gates, 3, axis=-1)
            inner_z, inner_r, inner_h = ops.split(inner, 3, axis=-1)
            z = recurrent_activation(x_z + inner_z)
            r = recurrent_activation(x_r + inner_r)
            candidate = activation(x_h + r * inner_h)
            h = z * h + (1.0 - z) * candidate
            return h, (h,)

        def lstm_step(gates, state):
            h, c = state
            gates = gates + ops.matmul(h, kernel)  # (B, 4U): i, f, c, o
            x_i, x_f, x_c, x_o = ops.split(gates, 4, axis=-1)
            c = recurrent_activation(x_f) * c + recurrent_activation(x_i) * activation(
                x_c
            )
            h = recurrent_activation(x_o) * activation(c)
            return h, (h, c)

        cell_step = gru_step if is_gru else lstm_step
        initial = (zeros,) if is_gru else (zeros, zeros)
        gates_ta = tf.TensorArray(dtype, size=steps).unstack(gates_in)
        mask_ta = tf.TensorArray("bool", size=steps).unstack(step_mask)
        outputs_ta = tf.TensorArray(dtype, size=steps)

        def body(t, outputs_ta, *state):
            keep = mask_ta.read(t)  # (B, 1)
            output, new_state = cell_step(gates_ta.read(t), state)
            new_state = tuple(
                ops.where(keep, new, old)
                for new, old in zip(new_state, state, strict=True)
            )
            outputs_ta = outputs_ta.write(t, ops.where(keep, output, 0.0))
            return (t + 1, outputs_ta, *new_state)

        result = tf.while_loop(
            lambda t, *_: t < steps,
            body,
            (ops.convert_to_tensor(0, "int32"), outputs_ta, *initial),
            maximum_iterations=steps,
        )
        outputs = ops.transpose(result[1].stack(), (1, 0, 2))  # (B, T, U)
        return outputs, result[2:]

    time_major_mask = ops.transpose(mask, (1, 0))[..., None]  # (T, B, 1)
    forward, forward_states = run(
        ops.transpose(projected[0], (1, 0, 2)),
        time_major_mask,
        recurrent[0],
        recurrent_bias[0],
    )
    backward, backward_states = run(
        ops.flip(ops.transpose(projected[1], (1, 0, 2)), axis=0),
        ops.flip(time_major_mask, axis=0),
        recurrent[1],
        recurrent_bias[1],
    )
    backward = ops.flip(backward, axis=1)
    merged = ops.concatenate([forward, backward], axis=-1)  # (B, T, 2U)
    if not layer.return_state:
        return merged
    return (merged, *forward_states, *backward_states)
