"""TensorFlow fast paths of the zoo, behind one switch.

Code that computes what the backend-agnostic layers and Keras' Adam compute, faster
on TensorFlow:

- `gru_loops`: the GRU loops with their gradients written out (the Bahdanau
  decoder's teacher-forced loop, the RNN of the Luong decoder without input
  feeding, the encoder's masked GRU directions), in training steps;
- `bidirectional_loop`: `BidirectionalRNN`'s directions with the input products
  taken out of the loop (TensorFlow on a CPU);
- `FusedAdam`: Keras' Adam with its dense updates in TensorFlow's fused kernel and
  its embedding updates and weight average as XLA-compiled passes.

The switch (the package's API): `enable(flag)`, `enabled()`, `scope(flag)`, with the default from the
environment variable `ZOO_FASTPATH` (`1` or unset: on, `0`: off). The fast paths
run only on the TensorFlow backend; elsewhere (and when switched off) the layers
run their generic loops and `FusedAdam` is Keras' Adam, so results agree up to
float32 rounding either way.

Importing this package registers the loops with `zoo.layers.recurrence`. The
package is declared as the TensorFlow backend's entry point of the group
`zoo.layers.loops` (pyproject.toml), so the registry imports it on its first use on
TensorFlow and the layers use the fast paths without an import by the caller; the
layers themselves import nothing from here. Importing the package loads the loops and
the switch only: `FusedAdam` (which builds on `zoo.training`'s weight averaging) is
imported from `zoo.fastpath.fused_adam`. TensorFlow is imported only where the
TensorFlow code runs: the package imports on any backend.
"""

from zoo.fastpath import bidirectional_loop, gru_loops
from zoo.fastpath.switch import enable, enabled, scope
from zoo.layers.recurrence import BIDIRECTIONAL_LOOP, DECODER_LOOP, register_loop

register_loop(DECODER_LOOP, gru_loops.decoder_loop, gru_loops.applies_to_decoder)
register_loop(
    DECODER_LOOP, gru_loops.luong_decoder_loop, gru_loops.applies_without_feeding
)
register_loop(
    BIDIRECTIONAL_LOOP,
    bidirectional_loop.bidirectional_loop,
    bidirectional_loop.applies,
)

__all__ = ["enable", "enabled", "scope"]
