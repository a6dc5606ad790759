"""`BidirectionalRNN`'s TensorFlow loop: input products taken out of the loop.

The same function as `keras.layers.Bidirectional` over a GRU or LSTM; only the
computation differs where Keras would run its generic per-step loop (TensorFlow
backend, no GPU, where cuDNN is not available): the input products `x W + b` of
all time steps are one matrix product per direction before its loop, which then
multiplies only the state by the recurrent kernel (Keras' cell forms `x_t W` inside
the loop, one small product per step and direction). The two directions keep
separate, independent loops, which TensorFlow may run concurrently. In
training steps a GRU direction runs `gru_loops.masked_gru_recurrence`, whose
gradient is written out.

The masking is Keras': a masked step keeps the state and outputs zeros (what
`Bidirectional` sets for `return_sequences`); the backward direction reads the padded
sequence reversed, so with right padding it starts at the last real token. Input
dropout draws one mask per sequence and direction from each cell's seed generator,
as Keras' GRU/LSTM do.

`applies` leaves every other case to Keras' `Bidirectional.call`: a GPU, another
backend, the fast paths switched off, `recurrent_dropout`, `implementation=1`, a GRU
without `reset_after`, `merge_mode` other than `"concat"`, `return_sequences=False`,
stateful layers (and `BidirectionalRNN` itself passes calls with an
`initial_state` to Keras).

TensorFlow is imported inside the functions, so the module imports on any backend.
"""

import keras
from keras import ops

from zoo.fastpath import gru_loops
from zoo.fastpath.switch import enabled
from zoo.layers.recurrence import cell_weights, rnn_step


def applies(layer, training):
    """Whether `bidirectional_loop` computes `layer`'s call (a `BidirectionalRNN`
    without an initial state), while the fast paths are enabled."""
    fwd, bwd = layer.forward_layer, layer.backward_layer
    if (
        not enabled()
        or layer.merge_mode != "concat"
        or type(fwd) is not type(bwd)
        or type(fwd) not in (keras.layers.GRU, keras.layers.LSTM)
    ):
        return False
    for rnn in (fwd, bwd):
        cell = rnn.cell
        if (
            rnn.stateful
            or not rnn.return_sequences
            or cell.recurrent_dropout
            or getattr(cell, "implementation", 2) != 2
            or not cell.use_bias
            or getattr(cell, "reset_after", True) is False
        ):
            return False
    import tensorflow as tf

    # on a GPU Keras' own path runs cuDNN, faster than any loop
    return not tf.config.list_logical_devices("GPU")


def bidirectional_loop(layer, sequences, mask, training):
    """Both directions with `_direction`; Keras' `Bidirectional` outputs (the
    registry's `BIDIRECTIONAL_LOOP` signature)."""
    training = bool(training)
    x = ops.cast(sequences, layer.compute_dtype)  # (B, T, E)
    if mask is None:
        mask = ops.ones(ops.shape(x)[:2], "bool")
    mask_t = ops.transpose(ops.cast(mask, "bool"), (1, 0))[..., None]  # (T, B, 1)
    forward, fwd_states = _direction(layer.forward_layer, x, mask_t, training, False)
    backward, bwd_states = _direction(layer.backward_layer, x, mask_t, training, True)
    merged = ops.concatenate([forward, backward], axis=-1)  # (B, T, 2U)
    if not layer.return_state:
        return merged
    return (merged, *fwd_states, *bwd_states)


def _direction(rnn, x, step_mask, training, reverse):
    """One direction: `(outputs (B, T, U) in input order, final states)`.

    The input product `x W + b` of all steps is formed before the loop (after the
    cell's per-sequence dropout mask, as Keras applies it); the loop runs over time
    reversed for the backward direction, as Keras' `go_backwards` does.
    """
    import tensorflow as tf

    cell = rnn.cell
    dtype = x.dtype
    if training and 0.0 < cell.dropout < 1.0:
        keep = keras.random.dropout(
            ops.ones_like(x[:, 0, :]), rate=cell.dropout, seed=cell.seed_generator
        )
        x = x * ops.expand_dims(keep, 1)
    input_kernel, kernel, input_bias, recurrent_bias = cell_weights(cell, dtype)
    gates_in = ops.matmul(x, input_kernel) + input_bias  # (B, T, G)
    gates_in = ops.transpose(gates_in, (1, 0, 2))  # (T, B, G)
    if reverse:
        gates_in, step_mask = ops.flip(gates_in, axis=0), ops.flip(step_mask, axis=0)
    steps = ops.shape(gates_in)[0]
    zeros = ops.zeros((ops.shape(x)[0], cell.units), dtype)
    if training and gru_loops.can_use_cell(cell, dtype):
        outputs, final = gru_loops.masked_gru_recurrence(
            gates_in, step_mask, zeros, kernel, recurrent_bias
        )
        states = (final,)
    else:
        gates_ta = tf.TensorArray(dtype, size=steps).unstack(gates_in)
        mask_ta = tf.TensorArray("bool", size=steps).unstack(step_mask)

        def body(t, outputs_ta, *state):
            keep = mask_ta.read(t)  # (B, 1)
            output, new_state = rnn_step(
                cell, gates_ta.read(t), state, kernel, recurrent_bias
            )
            new_state = tuple(
                ops.where(keep, new, old)
                for new, old in zip(new_state, state, strict=True)
            )
            outputs_ta = outputs_ta.write(t, ops.where(keep, output, 0.0))
            return (t + 1, outputs_ta, *new_state)

        initial = (zeros,) if recurrent_bias is not None else (zeros, zeros)
        outputs_ta = tf.TensorArray(dtype, size=steps)
        _, outputs_ta, *states = tf.while_loop(
            lambda t, *_: t < steps,
            body,
            (ops.convert_to_tensor(0, "int32"), outputs_ta, *initial),
            maximum_iterations=steps,
        )
        outputs = outputs_ta.stack()  # (T, B, U), in loop order
    if reverse:
        outputs = ops.flip(outputs, axis=0)
    return ops.transpose(outputs, (1, 0, 2)), tuple(states)
