"""GNMT length and coverage penalties (Wu et al. 2016, section 7).

The score of a hypothesis `Y` of source `X` is

    s(Y, X) = log P(Y | X) / lp(Y) + cp(X; Y)
    lp(Y) = ((5 + |Y|) / 6) ** alpha
    cp(X; Y) = beta * sum_i log(min(sum_j a_ij, 1))

with `a_ij` the attention weight of target word `j` on source word `i`. `|Y|` counts the
generated tokens including the end marker. The coverage term runs over the real
(unpadded) source positions only; a coverage below `COVERAGE_FLOOR` is clamped to it
so that an unattended word costs `beta * log(COVERAGE_FLOOR)` instead of minus infinity.
"""

import tensorflow as tf

COVERAGE_FLOOR = 1e-10


def length_penalty(lengths, alpha):
    """`((5 + |Y|) / 6) ** alpha` for int or float lengths (any shape)."""
    lengths = tf.cast(lengths, tf.float32)
    return tf.pow((5.0 + lengths) / 6.0, tf.cast(alpha, tf.float32))


def coverage_penalty(coverage, source_mask, beta):
    """`beta * sum_i log(min(coverage_i, 1))` over unmasked source positions.

    Args:
        coverage: `(..., Ts)` summed attention weights per source position.
        source_mask: `(..., Ts)` (broadcastable), True for real source tokens, or
            `None` (every position is real).
        beta: the coverage weight (0 disables the term exactly).

    Returns:
        `(...)` float32 penalties (<= 0).
    """
    coverage = tf.cast(coverage, tf.float32)
    clipped = tf.clip_by_value(coverage, COVERAGE_FLOOR, 1.0)
    logs = tf.math.log(clipped)
    if source_mask is not None:
        logs = logs * tf.cast(source_mask, tf.float32)
    return tf.cast(beta, tf.float32) * tf.reduce_sum(logs, axis=-1)


def gnmt_score(log_prob, lengths, coverage, source_mask, alpha=0.0, beta=0.0):
    """`log_prob / lp(lengths) + cp(coverage)`, the GNMT hypothesis score."""
    score = tf.cast(log_prob, tf.float32) / length_penalty(lengths, alpha)
    return score + coverage_penalty(coverage, source_mask, beta)
