"""Greedy decoding inside the graph: beam search (`zoo.decoding.beam_search`, whose
docstring describes the step function) with one beam."""

from zoo.decoding.beam_search import beam_search


def greedy_search(
    step_fn,
    initial_state,
    memory,
    source_mask,
    max_steps,
    length_a=1.5,
    length_b=5,
    alpha=0.0,
    beta=0.0,
):
    """Decodes the most probable next token at each step until `[END]` or the limit.

    Args:
        step_fn: see `zoo.decoding.beam_search`.
        initial_state: nested tensors `(B, ...)`.
        memory: nested tensors `(B, ...)` passed to every step.
        source_mask: `(B, Ts)` bool, True for real source tokens.
        max_steps: Python int, the static output length (buffers are this long).
        length_a, length_b: per-example limit `ceil(a * |X| + b)` (see
            `max_target_lengths`); at the limit the end marker is forced.
        alpha, beta: GNMT length and coverage penalties for the reported score.

    Returns:
        A dict: `tokens` `(B, max_steps)` int32 (the end marker, then padding),
        `lengths` `(B,)` (including the end marker), `log_probs` `(B,)`, `scores`
        `(B,)` (GNMT score) and `attention` `(B, max_steps, Ts)` (zero rows after
        the end).

    The most probable token at each step is the one beam's best candidate: this is
    `beam_search` with `beam_width=1`.
    """
    return beam_search(
        step_fn, initial_state, memory, source_mask, max_steps, 1, alpha, beta,
        length_a, length_b,
    )  # fmt: skip
