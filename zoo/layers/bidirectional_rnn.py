"""BidirectionalRNN: Keras' Bidirectional GRU/LSTM with a registered-loop hook."""

import keras

from zoo.layers import recurrence


@keras.saving.register_keras_serializable(package="zoo")
class BidirectionalRNN(keras.layers.Bidirectional):
    """`keras.layers.Bidirectional` whose call may run a registered backend loop.

    The same layer, weights and outputs as `keras.layers.Bidirectional` (it is a
    subclass: same variables, same checkpoints, same config plus nothing). A call
    without an `initial_state` runs the loop that
    `zoo.layers.recurrence.select_loop(BIDIRECTIONAL_LOOP, ...)` returns, when a
    backend has registered one that applies to this layer: on TensorFlow,
    `zoo.fastpath` registers a loop that forms the input products `x W + b` of all
    time steps before the loop (CPU only, GRU or LSTM, `merge_mode="concat"`,
    `return_sequences=True`; see `zoo.fastpath.bidirectional_loop`). Every other
    call is Keras' `Bidirectional.call`, on any backend.

    Masking is Keras': a masked step keeps the state and outputs zeros.

    Args: those of `keras.layers.Bidirectional`.

    Example:

    >>> layer = BidirectionalRNN(keras.layers.GRU(64, return_sequences=True))
    >>> outputs = layer(embedded, mask=mask)  # (B, T, 128)
    """

    def call(self, sequences, initial_state=None, mask=None, training=None):
        loop = None
        if initial_state is None:
            loop = recurrence.select_loop(recurrence.BIDIRECTIONAL_LOOP, self, training)
        if loop is None:
            return super().call(
                sequences, initial_state=initial_state, mask=mask, training=training
            )
        return loop(self, sequences, mask, training)
