"""Recurrence pieces shared by the layers that run their own loops.

- `cell_weights`, `rnn_step` (`gru_step` for a GRU, which the written-out gradients of
  `zoo.fastpath` also run): the weights and the step of Keras' GRU and LSTM cells,
  from the precomputed input share of the gates. `AttentionDecoder` and
  `BidirectionalRNN` form the input products where it is cheapest (outside the loop,
  or joined with other products) and run the cells' step here, so both compute
  exactly Keras' function.
- The loop registry: a layer that runs a recurrence asks `select_loop(kind, layer,
  training, default)` which loop to run for a call. Backend-specific implementations of the
  same function (the TensorFlow ones in `zoo.fastpath`) register themselves with
  `register_loop`; when none is registered, or none applies to the layer and call,
  the layer runs its generic loop (`keras.ops`, or Keras' own RNN), so the layers
  run on every Keras backend and never import a backend themselves.

Loop kinds and the signatures their loops have:

- `DECODER_LOOP`: `loop(decoder, projected, state, memory_bundle, weights,
  training) -> (features, attention)`, the teacher-forced recurrence of an
  `AttentionDecoder` (arguments and results as in its `_scan_recurrence`,
  time-major).
- `BIDIRECTIONAL_LOOP`: `loop(layer, sequences, mask, training) -> outputs`, a
  `BidirectionalRNN` call without an initial state (outputs as
  `keras.layers.Bidirectional.call` returns them).

Implementations plug in from above: a package that provides loops for a backend
declares the entry point `<backend> = "<module>"` in the group `zoo.layers.loops`
(attention-zoo declares `tensorflow = "zoo.fastpath"`), and the registry's first use
on that backend imports the module, which calls `register_loop`. So the layers run the
fast loops without an import by the caller, while this module depends on no package
above `zoo.layers`; on a backend no installed package provides loops for (JAX, torch)
nothing is imported.
"""

import keras
from keras import ops

from zoo.layers.arguments import check_one_of

DECODER_LOOP = "attention_decoder"
BIDIRECTIONAL_LOOP = "bidirectional_rnn"
LOOP_KINDS = (DECODER_LOOP, BIDIRECTIONAL_LOOP)

# the entry-point group of the modules that register loops, named by backend
ENTRY_POINT_GROUP = "zoo.layers.loops"

_registry = {kind: [] for kind in LOOP_KINDS}
_loaded_backends = set()


def register_loop(kind, loop, applies):
    """Registers `loop` as the loop of `kind` wherever `applies(layer, training)`.

    Args:
        kind: one of `LOOP_KINDS`.
        loop: the function (signature per kind, see the module docstring). It must
            compute the function of the layer's generic loop.
        applies: `applies(layer, training) -> bool`, asked at every call (in a
            traced function: once per trace).
    """
    check_one_of(LOOP_KINDS, kind=kind)
    _load_backend_loops()  # so that a later registration comes after the backend's
    _registry[kind].append((loop, applies))


def unregister_loop(kind, loop):
    """Removes `loop` from the loops of `kind` (no error when absent)."""
    _registry[kind] = [entry for entry in _registry[kind] if entry[0] is not loop]


def registered_loops(kind):
    """The loops registered for `kind`, in registration order."""
    return tuple(loop for loop, _ in _registry[kind])


def select_loop(kind, layer, training, default=None):
    """The loop to run for this call of `layer`.

    Returns:
        The most recently registered loop of `kind` whose `applies(layer,
        training)` is true, else `default` (the layer's generic loop).
    """
    check_one_of(LOOP_KINDS, kind=kind)
    _load_backend_loops()
    for loop, applies in reversed(_registry[kind]):
        if applies(layer, training):
            return loop
    return default


def _load_backend_loops():
    """Imports the modules the installed packages declare for this backend (once)."""
    backend = keras.backend.backend()
    if backend in _loaded_backends:
        return
    _loaded_backends.add(backend)  # first: the modules register while loading
    from importlib.metadata import entry_points

    for entry_point in entry_points(group=ENTRY_POINT_GROUP, name=backend):
        entry_point.load()


def cell_weights(cell, dtype):
    """The weights of a Keras `GRUCell` (`reset_after=True`) or `LSTMCell` in `dtype`.

    Returns:
        `(kernel, recurrent_kernel, input_bias, recurrent_bias)`; `recurrent_bias`
        is `None` for an LSTM (one bias).
    """
    kernel, recurrent, bias = (
        ops.cast(w, dtype) for w in (cell.kernel, cell.recurrent_kernel, cell.bias)
    )
    if isinstance(cell, keras.layers.GRUCell):  # bias rows: input, recurrent
        return kernel, recurrent, bias[0], bias[1]
    return kernel, recurrent, bias, None


def rnn_step(cell, gates, state, recurrent_kernel, recurrent_bias):
    """One step of Keras' GRU (`reset_after=True`) or LSTM cell `cell`.

    Args:
        cell: the Keras cell (its activations are used).
        gates: `(..., G)`, the input's share of the gates `x W + b_x`.
        state: the previous state(s): `(h,)` for a GRU, `(h, c)` for an LSTM.
        recurrent_kernel, recurrent_bias: from `cell_weights` (the bias `None` for
            an LSTM).

    Returns:
        `(output, new_state)`, `new_state` a tuple like `state`.
    """
    activation, recurrent_activation = cell.activation, cell.recurrent_activation
    if recurrent_bias is not None:  # GRU
        args = (recurrent_kernel, recurrent_bias, activation, recurrent_activation)
        h = gru_step(gates, state[0], *args)[0]
        return h, (h,)
    h, c = state  # LSTM, gates i, f, c, o
    gates = gates + ops.matmul(h, recurrent_kernel)
    x_i, x_f, x_c, x_o = ops.split(gates, 4, axis=-1)
    c = recurrent_activation(x_f) * c + recurrent_activation(x_i) * activation(x_c)
    h = recurrent_activation(x_o) * activation(c)
    return h, (h, c)


def gru_step(gates, h, kernel, bias, activation=ops.tanh, gate=ops.sigmoid):
    """One step of Keras' GRU (`reset_after=True`) from the input's share of the
    gates `(..., 3U)`: `(new_h, (z, r, c, inner_h))`, with the activations that a
    written-out gradient (`zoo.fastpath.gru_loops`) reads."""
    x_z, x_r, x_h = ops.split(gates, 3, axis=-1)
    inner_z, inner_r, inner_h = ops.split(ops.matmul(h, kernel) + bias, 3, axis=-1)
    z, r = gate(x_z + inner_z), gate(x_r + inner_r)
    c = activation(x_h + r * inner_h)
    return z * h + (1.0 - z) * c, (z, r, c, inner_h)
