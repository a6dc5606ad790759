"""GRU loops with their gradients written out: the decoder's and the encoder's.

`AttentionDecoder` (`attention="bahdanau"`, or `"luong"` without input feeding, whose
RNN runs `masked_gru_recurrence` with every step kept; `cell="gru"`) and
`BidirectionalRNN` (GRU directions, `zoo.fastpath.bidirectional_loop`) run these
loops in training steps
on the TensorFlow backend while `zoo.fastpath.enabled()` (their gradient functions
read the forward loop's arrays, which a SavedModel cannot hold, so inference and
exports run the layers' generic loops). Each computes the function of the layer's
generic loop; only the backward pass differs in how it is formed. TensorFlow's
automatic gradient of a `while` loop forms, at every step, the gradients of the
weights the loop reads (the recurrent kernel and bias; the decoder's query kernel and
scoring vector) and of the loop-invariant tensors (the decoder's projected keys and
the memory's share of the input gates), and adds each to a running sum: dozens of
small products and additions per step. Here the backward loop reads the forward
loop's saved activations in place, carries only what flows from step to step (the
state's gradient, and the decoder's sums over the keys and the scoring vector) and
stacks the per-step gate gradients; each weight's gradient is then one product over
all steps at once.

The GRU is Keras' with `reset_after=True` and its default activations (`can_use_cell`
checks this): `z = sigmoid(x_z + i_z)`, `r = sigmoid(x_r + i_r)`,
`c = tanh(x_h + r i_h)`, `h' = z h + (1 - z) c`, where `x` is the input's share of
the gates and `i = h U + b_h`.

TensorFlow is imported inside the functions, so the module imports on any backend.
"""

import keras
from keras import ops

from zoo.fastpath.switch import enabled
from zoo.layers.masking import masked_softmax
from zoo.layers.recurrence import gru_step


def bahdanau_gru_recurrence(x, h0, keys, share_m, mask, w_q, v, w_r, b_r):
    """Runs the decoder recurrence over all target steps (teacher forcing).

    At each step `t` (`h` the previous state, Keras' GRU with `reset_after`):
    `a_t = masked_softmax(v^T tanh(keys + h W_q))`,
    `x_t = inputs_t + a_t memory_share` (the context's share of the input gates,
    `c_t W_x = sum_j a_tj (m_j W_x)`), then the GRU update from `x_t` and
    `h U + b_h`.

    Args:
        x: `(T, B, 3U)`, time-major `e_t W_e + b_x`.
        h0: `(B, U)`, the initial state.
        keys: `(B, S, A)`, the projected keys (biases included).
        share_m: `(B, S, 3U)`, `memory W_x`.
        mask: `(B, S)` bool, True for real source positions.
        w_q: `(U, A)`, the query kernel.
        v: `(A,)`, the scoring vector.
        w_r: `(U, 3U)`, the recurrent kernel.
        b_r: `(3U,)`, the recurrent bias.

    Returns:
        `(states (T, B, U), attention (T, B, S))`.
    """
    import tensorflow as tf

    mask = ops.cast(mask, "bool")

    @tf.custom_gradient
    def recurrence(x, h0, keys, share_m, w_q, v, w_r, b_r):
        steps = tf.shape(x)[0]
        dtype = x.dtype
        inputs_ta = tf.TensorArray(dtype, size=steps).unstack(x)
        names = ("h", "a", "previous", "tanh", "z", "r", "c", "inner_h")

        def step(t, h):
            tanh = ops.tanh(keys + ops.matmul(h, w_q)[:, None, :])  # (B, S, A)
            scores = ops.squeeze(ops.matmul(tanh, v[:, None]), -1)  # (B, S)
            a = masked_softmax(scores, mask)
            share = ops.squeeze(ops.matmul(a[:, None, :], share_m), 1)  # (B, 3U)
            new_h, gru = gru_step(inputs_ta.read(t) + share, h, w_r, b_r)
            return new_h, (new_h, a, h, tanh, *gru)

        _, arrays = _forward_loop(step, steps, h0, names, dtype)
        states, attention = arrays["h"].stack(), arrays["a"].stack()
        previous = arrays["previous"].stack()  # (T, B, U), h_{t-1}

        def grad(d_states, d_attention):
            # the backward loop reads the forward loop's arrays in place
            upstream = [
                tf.TensorArray(dtype, size=steps).unstack(_zeros_if_none(d, like))
                for d, like in ((d_states, states), (d_attention, attention))
            ]
            w_r_t, w_q_t = ops.transpose(w_r), ops.transpose(w_q)
            # the per-step gradients of the gates, of `inner` and of the query
            outs = tuple(tf.TensorArray(dtype, size=steps) for _ in range(3))

            def back(t, dh, d_keys, d_v, outs):
                g_h, g_a = (u.read(t) for u in upstream)
                h, a, tanh, z, r, c, inner_h = (
                    arrays[n].read(t)
                    for n in ("previous", "a", "tanh", "z", "r", "c", "inner_h")
                )
                d_gates, d_inner, dh = _gru_backward(g_h + dh, h, z, r, c, inner_h)
                g_a = g_a + ops.squeeze(ops.matmul(share_m, d_gates[..., None]), -1)
                d_scores = a * (g_a - ops.sum(a * g_a, axis=-1, keepdims=True))
                d_pre = d_scores[..., None] * v * (1.0 - tanh * tanh)  # (B, S, A)
                d_query = ops.sum(d_pre, axis=1)  # (B, A)
                # sum over b, s of d_scores * tanh
                flat_tanh = ops.reshape(tanh, (-1, v_size))
                d_v = d_v + ops.matmul(ops.reshape(d_scores, (1, -1)), flat_tanh)[0]
                dh = dh + ops.matmul(d_inner, w_r_t) + ops.matmul(d_query, w_q_t)
                values = (d_gates, d_inner, d_query)
                outs = tuple(o.write(t, d) for o, d in zip(outs, values, strict=True))
                return t - 1, dh, d_keys + d_pre, d_v, outs

            v_size = ops.shape(v)[0]
            zeros = (tf.zeros_like(h0), tf.zeros_like(keys), tf.zeros_like(v))
            _, d_h0, d_keys, d_v, outs = tf.while_loop(
                lambda t, *_: t >= 0,
                back,
                (steps - 1, *zeros, outs),
                maximum_iterations=steps,
            )
            d_gates, d_inner, d_query = (array.stack() for array in outs)
            d_w_r, d_b_r = _recurrent_gradients(previous, d_inner)
            d_w_q = _kernel_gradient(previous, d_query)
            # sum_t a_t^T d_gates_t, per batch row: (B, S, T) @ (B, T, 3U)
            d_share_m = ops.matmul(
                ops.transpose(attention, (1, 2, 0)), ops.transpose(d_gates, (1, 0, 2))
            )
            return (d_gates, d_h0, d_keys, d_share_m, d_w_q, d_v, d_w_r, d_b_r)

        return (states, attention), grad

    return recurrence(*_tensors(x, h0, keys, share_m, w_q, v, w_r, b_r))


def masked_gru_recurrence(x, step_mask, h0, w_r, b_r):
    """A GRU over time-major inputs, padded steps skipped (the encoder's direction).

    At a step whose mask is False the state is carried over unchanged and the output
    is zero, as in Keras' masked RNN loop.

    Args:
        x: `(T, B, 3U)`, the inputs' share of the gates `x W + b_x`.
        step_mask: `(T, B, 1)` bool.
        h0: `(B, U)`, the initial state.
        w_r: `(U, 3U)`, the recurrent kernel.
        b_r: `(3U,)`, the recurrent bias.

    Returns:
        `(outputs (T, B, U), final_state (B, U))`.
    """
    import tensorflow as tf

    step_mask = ops.cast(step_mask, "bool")

    @tf.custom_gradient
    def recurrence(x, h0, w_r, b_r):
        steps = tf.shape(x)[0]
        dtype = x.dtype
        inputs_ta = tf.TensorArray(dtype, size=steps).unstack(x)
        mask_ta = tf.TensorArray("bool", size=steps, clear_after_read=False)
        mask_ta = mask_ta.unstack(step_mask)
        names = ("output", "previous", "z", "r", "c", "inner_h")

        def step(t, h):
            keep = mask_ta.read(t)  # (B, 1)
            new_h, gru = gru_step(inputs_ta.read(t), h, w_r, b_r)
            output = ops.where(keep, new_h, 0.0)
            return ops.where(keep, new_h, h), (output, h, *gru)

        final, arrays = _forward_loop(step, steps, h0, names, dtype)
        outputs, previous = arrays["output"].stack(), arrays["previous"].stack()

        def grad(d_outputs, d_final):
            d_outputs = tf.TensorArray(dtype, size=steps).unstack(
                _zeros_if_none(d_outputs, outputs)
            )
            w_r_t = ops.transpose(w_r)
            # the per-step gradients of the gates and of `inner`
            outs = tuple(tf.TensorArray(dtype, size=steps) for _ in range(2))

            def back(t, dh, outs):
                keep = mask_ta.read(t)
                h, z, r, c, inner_h = (
                    arrays[n].read(t) for n in ("previous", "z", "r", "c", "inner_h")
                )
                g = ops.where(keep, dh + d_outputs.read(t), 0.0)
                d_gates, d_inner, d_direct = _gru_backward(g, h, z, r, c, inner_h)
                dh = ops.where(keep, d_direct, dh) + ops.matmul(d_inner, w_r_t)
                outs = (outs[0].write(t, d_gates), outs[1].write(t, d_inner))
                return t - 1, dh, outs

            _, d_h0, outs = tf.while_loop(
                lambda t, *_: t >= 0,
                back,
                (steps - 1, _zeros_if_none(d_final, final), outs),
                maximum_iterations=steps,
            )
            d_gates, d_inner = (array.stack() for array in outs)
            return (d_gates, d_h0, *_recurrent_gradients(previous, d_inner))

        return (outputs, final), grad

    return recurrence(*_tensors(x, h0, w_r, b_r))


def _forward_loop(step, steps, h0, names, dtype):
    """Runs `step(t, h) -> (next_h, values)` for `t = 0 .. steps - 1`, writing each
    step's `values` to the arrays named `names` (kept for the backward loop, which
    reads them in place). Returns `(final_h, arrays)`."""
    import tensorflow as tf

    arrays = {
        name: tf.TensorArray(dtype, size=steps, clear_after_read=False)
        for name in names
    }

    def body(t, h, arrays):
        h, values = step(t, h)
        arrays = {
            name: arrays[name].write(t, value)
            for name, value in zip(names, values, strict=True)
        }
        return t + 1, h, arrays

    _, final, arrays = tf.while_loop(
        lambda t, *_: t < steps,
        body,
        (tf.constant(0), h0, arrays),
        maximum_iterations=steps,
    )
    return final, arrays


def _gru_backward(g, h, z, r, c, inner_h):
    """The gradients of one GRU step from `g`, the new state's gradient.

    Returns:
        `(d_input_gates, d_inner, d_h)`: the gradients of the input's share of the
        gates, of `inner = h U + b_h` (both `(B, 3U)`), and of the previous state
        through its direct path `z h` (the path through `inner` is
        `d_inner U^T`, formed by the caller).
    """
    d_c = g * (1.0 - z) * (1.0 - c * c)  # before the tanh
    d_z = g * (h - c) * z * (1.0 - z)  # before the sigmoid
    d_r = d_c * inner_h * r * (1.0 - r)
    d_gates = ops.concatenate([d_z, d_r, d_c], axis=-1)
    d_inner = ops.concatenate([d_z, d_r, d_c * r], axis=-1)
    return d_gates, d_inner, g * z


def _kernel_gradient(previous, d_products):
    """The gradient of a kernel `W` that every step multiplies with its previous
    state (`h W`), from the stacked previous states `(T, B, U)` and the products'
    gradients `(T, B, N)`: one product over all steps."""
    flat_previous = ops.reshape(previous, (-1, ops.shape(previous)[-1]))
    flat_products = ops.reshape(d_products, (-1, ops.shape(d_products)[-1]))
    return ops.matmul(ops.transpose(flat_previous), flat_products)


def _recurrent_gradients(previous, d_inner):
    """`(d U, d b_h)` of the GRU's `inner = h U + b_h` over all steps."""
    return _kernel_gradient(previous, d_inner), ops.sum(d_inner, axis=(0, 1))


def _tensors(*values):
    return [ops.convert_to_tensor(value) for value in values]


def _zeros_if_none(gradient, like):
    return ops.zeros_like(like) if gradient is None else gradient


def can_use_cell(cell, dtype):
    """Whether a Keras `GRUCell` computes the GRU of these loops, in `dtype`: the
    TensorFlow backend, default activations, `reset_after`, a bias, float32."""
    return (
        keras.backend.backend() == "tensorflow"
        and isinstance(cell, keras.layers.GRUCell)
        and cell.activation is keras.activations.tanh
        and cell.recurrent_activation is keras.activations.sigmoid
        and cell.use_bias
        and cell.reset_after
        and keras.backend.standardize_dtype(dtype) == "float32"
    )


def applies_to_decoder(decoder, training):
    """The registry's test for `decoder_loop`: training steps, while the fast paths
    are enabled, of a Bahdanau GRU decoder with soft attention (whose recurrence
    `bahdanau_gru_recurrence` computes)."""
    return (
        bool(training)
        and enabled()
        and decoder.attention == "bahdanau"
        and decoder.attention_layer.probability == "softmax"
        and can_use_cell(decoder.cell, decoder.compute_dtype)
    )


def applies_without_feeding(decoder, training):
    """The registry's test for `luong_decoder_loop`: training steps, while the fast
    paths are enabled, of a Luong GRU decoder without input feeding (whose
    recurrence, the RNN alone, `masked_gru_recurrence` computes)."""
    return (
        bool(training)
        and enabled()
        and decoder.attention == "luong"
        and not decoder.input_feeding
        and can_use_cell(decoder.cell, decoder.compute_dtype)
    )


def luong_decoder_loop(decoder, projected, state, memory_bundle, weights, training):
    """`AttentionDecoder`'s teacher-forced loop for Luong without input feeding
    (the registry's `DECODER_LOOP` signature): the GRU over all target steps as
    `masked_gru_recurrence` (every step kept: the decoder's generic loop runs all
    steps too), then the decoder's `attend_rnn_outputs`."""
    every_step = ops.ones_like(projected[..., :1], dtype="bool")  # (Tt, B, 1)
    outputs, _ = masked_gru_recurrence(projected, every_step, state[0], *weights[3:])
    return decoder.attend_rnn_outputs(outputs, memory_bundle, training)


def decoder_loop(decoder, projected, state, memory_bundle, weights, training):
    """`AttentionDecoder`'s teacher-forced loop (the registry's `DECODER_LOOP`
    signature) as `bahdanau_gru_recurrence`: time-major `(features, attention)`."""
    _, keys, mask, _, share = memory_bundle
    layer = decoder.attention_layer
    w_q, v = layer._weight(layer.query_kernel), layer.scoring_vector()
    return bahdanau_gru_recurrence(
        projected, state[0], keys, share, mask, w_q, v, *weights[3:]
    )
