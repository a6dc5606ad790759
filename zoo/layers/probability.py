"""From scores to attention weights: soft, hard and straight-through Gumbel attention.

`attention_probabilities(scores, mask, probability, training, seed_generator)` is what
the attention layers call. Every variant normalises through
`zoo.layers.masking.masked_softmax`, so the masking guarantees (padded keys get exactly
0, fully masked rows are all 0, float16-safe) hold for all three:

- `"softmax"`: `masked_softmax(scores, mask)` (soft attention).
- `"hardmax"`: the one-hot vector of the masked argmax: exactly one 1 per row, never on a
  masked position; a fully masked row is all 0. At inference this is plain hard
  attention. In training the forward pass is the same one-hot vector and the backward
  pass uses the gradient of the masked softmax (a straight-through estimator), so a
  model with hard attention trains end to end and sees in training exactly the
  weights it will use at inference. (The alternative, "train soft, select hard", is
  `probability="softmax"` in training and `hardmax(...)` afterwards.)
- `"gumbel"`: straight-through Gumbel-softmax in training: Gumbel(0, 1) noise `g` is
  added to the scores, the forward pass is the one-hot argmax of `scores + g` and the
  backward pass the gradient of `masked_softmax(scores + g)`. The noise
  comes from a `keras.random.SeedGenerator`, so runs are reproducible. At inference it
  is `"hardmax"` (no noise).

The straight-through output is computed as `hard + (soft - stop_gradient(soft))`, which
is the one-hot vector exactly in the forward pass (no rounding of `1 - soft + soft`).

Reference:
    Jang, Gu and Poole, "Categorical Reparameterization with Gumbel-Softmax", ICLR 2017.
    Maddison, Mnih and Teh, "The Concrete Distribution: A Continuous Relaxation of
    Discrete Random Variables", ICLR 2017.
    Bengio, Leonard and Courville, "Estimating or Propagating Gradients Through
    Stochastic Neurons for Conditional Computation", 2013 (straight-through).
"""

import keras
from keras import ops

from zoo.layers.masking import masked_softmax

PROBABILITIES = ("softmax", "hardmax", "gumbel")


def hardmax(scores, mask=None):
    """One-hot vector of the masked argmax of `scores` along the last axis.

    Args:
        scores: float tensor.
        mask: bool/int tensor broadcastable to `scores` (True = may be selected), or
            `None`.

    Returns:
        A tensor of the shape and dtype of `scores` with exactly one 1 per row on an
        unmasked position; rows whose positions are all masked are all 0. Ties go to the
        first maximal position.
    """
    depth = ops.shape(scores)[-1]
    if mask is not None:
        mask = ops.broadcast_to(ops.cast(mask, "bool"), ops.shape(scores))
        scores = ops.where(mask, scores, ops.cast(float("-inf"), scores.dtype))
    one_hot = ops.one_hot(ops.argmax(scores, axis=-1), depth, dtype=scores.dtype)
    if mask is not None:
        # A fully masked row has argmax 0, which must not be selected.
        one_hot = ops.where(mask, one_hot, ops.zeros_like(one_hot))
    return one_hot


def straight_through(hard, soft):
    """`hard` in the forward pass, the gradient of `soft` in the backward pass."""
    return hard + (soft - ops.stop_gradient(soft))


def gumbel_noise(shape, dtype, seed=None):
    """Gumbel(0, 1) samples `-log(-log(U))`, `U ~ Uniform(0, 1)`, drawn in float32."""
    uniform = keras.random.uniform(shape, minval=1e-10, maxval=1.0 - 1e-7, seed=seed)
    return ops.cast(-ops.log(-ops.log(uniform)), dtype)


def attention_probabilities(
    scores, mask=None, probability="softmax", training=None, seed_generator=None
):
    """Turns scores into attention weights (see the module docstring).

    Args:
        scores: `(..., Tv)` float scores.
        mask: bool/int tensor broadcastable to `scores` or `None`.
        probability: `"softmax"`, `"hardmax"` or `"gumbel"`.
        training: Python bool or `None` (`None` counts as inference).
        seed_generator: a `keras.random.SeedGenerator` for the Gumbel noise (needed for
            reproducible `"gumbel"` training; `None` draws unseeded noise).

    Returns:
        Weights of the shape of `scores`, normalised over the last axis.
    """
    if probability == "softmax":
        return masked_softmax(scores, mask)
    if probability == "gumbel" and training:
        noise = gumbel_noise(ops.shape(scores), scores.dtype, seed=seed_generator)
        perturbed = scores + noise
        return straight_through(
            hardmax(perturbed, mask), masked_softmax(perturbed, mask)
        )
    hard = hardmax(scores, mask)
    if training:
        return straight_through(hard, masked_softmax(scores, mask))
    return hard
