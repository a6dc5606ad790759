"""The GRU and LSTM state updates of Keras' cells, from precomputed products.

Shared by the layers that run their own recurrence loops over Keras cells' weights
(`AttentionDecoder`, `BidirectionalRNN`): they form the input and recurrent products
where it is cheapest (outside the loop, or joined with other products) and apply the
cells' update here, so both compute exactly Keras' function.
"""

from keras import ops


def gru_update(input_gates, recurrent_gates, h, activation, recurrent_activation):
    """Keras' GRU update with `reset_after=True`.

    Args:
        input_gates: `x W + b_x`, `(..., 3U)` (gates z, r, h).
        recurrent_gates: `h U + b_h`, `(..., 3U)`.
        h: the previous state `(..., U)`.
        activation, recurrent_activation: the cell's (tanh, sigmoid).

    Returns:
        The new state `(..., U)` (also the output).
    """
    x_z, x_r, x_h = ops.split(input_gates, 3, axis=-1)
    inner_z, inner_r, inner_h = ops.split(recurrent_gates, 3, axis=-1)
    z = recurrent_activation(x_z + inner_z)
    r = recurrent_activation(x_r + inner_r)
    candidate = activation(x_h + r * inner_h)
    return z * h + (1.0 - z) * candidate


def lstm_update(gates, c, activation, recurrent_activation):
    """Keras' LSTM update.

    Args:
        gates: `x W + h U + b`, `(..., 4U)` (gates i, f, c, o).
        c: the previous cell state `(..., U)`.
        activation, recurrent_activation: the cell's (tanh, sigmoid).

    Returns:
        `(h, c)`, the new output and cell state.
    """
    x_i, x_f, x_c, x_o = ops.split(gates, 4, axis=-1)
    c = recurrent_activation(x_f) * c + recurrent_activation(x_i) * activation(x_c)
    return recurrent_activation(x_o) * activation(c), c
