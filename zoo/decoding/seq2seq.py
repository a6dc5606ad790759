"""Greedy or beam-search decoding of a `Seq2SeqTranslator` (in the graph)."""

import tensorflow as tf

from zoo.decoding.beam_search import beam_search
from zoo.decoding.greedy import greedy_search

__all__ = ["decode_translator"]


def decode_translator(
    model,
    source_ids,
    max_steps,
    beam_width=1,
    alpha=0.0,
    beta=0.0,
    length_a=1.5,
    length_b=5,
):
    """Translates a batch of source ids.

    Args:
        model: a `Seq2SeqTranslator` (anything with `encode()` and `decoder.step()`).
        source_ids: `(B, Ts)` int32 ids, 0 = padding.
        max_steps: Python int, the static length of the output buffers.
        beam_width: 1 runs `greedy_search`, more runs `beam_search`.
        alpha, beta: GNMT length and coverage penalties.
        length_a, length_b: per-source limit `ceil(a * |X| + b)`.

    Returns:
        The search's dict (`tokens`, `lengths`, `log_probs`, `scores`, `attention`).
    """
    source_ids = tf.cast(source_ids, tf.int32)
    memory, state, source_mask = model.encode(source_ids, training=False)
    step_fn = model.decoder.step  # (ids, state, memory, position)
    kwargs = dict(
        max_steps=max_steps,
        alpha=alpha,
        beta=beta,
        length_a=length_a,
        length_b=length_b,
    )
    if beam_width == 1:
        return greedy_search(step_fn, state, memory, source_mask, **kwargs)
    return beam_search(
        step_fn, state, memory, source_mask, beam_width=beam_width, **kwargs
    )
