"""Greedy decoding inside the graph (one `tf.while_loop`, batched, XLA-compatible).

Both searches drive a model through a step function

    logits, weights, new_state = step_fn(ids, state, memory, position)

with `ids` `(N,)` int32 (the previous tokens), `state` any nested structure of tensors
whose first axis is the batch, `memory` a nested structure the step only reads (the
encoder outputs and projected keys), `position` the scalar int32 step index, `logits`
`(N, V)` and `weights` `(N, Ts)` the attention of this step. `AttentionDecoder.step`
has this form.
"""

import tensorflow as tf

from zoo.decoding.penalties import gnmt_score

__all__ = [
    "END_ID",
    "PAD_ID",
    "START_ID",
    "ban_tokens",
    "force_end",
    "greedy_search",
    "max_target_lengths",
]

PAD_ID, START_ID, END_ID = 0, 2, 3
NEG_INF = -1e9


def max_target_lengths(source_mask, max_steps, a=1.5, b=5):
    """Per-example length limit `ceil(a * |X| + b)`, clamped to `[1, max_steps]`.

    Args:
        source_mask: `(B, Ts)`, True for real source tokens.
        max_steps: Python int, the static size of the output buffers.
        a, b: the slope and intercept of the limit.

    Returns:
        `(B,)` int32 limits (counting the end marker).
    """
    source_length = tf.reduce_sum(tf.cast(source_mask, tf.float32), axis=-1)
    limit = tf.math.ceil(a * source_length + b)
    return tf.cast(tf.clip_by_value(limit, 1.0, float(max_steps)), tf.int32)


def ban_tokens(log_probs, banned):
    """Gives the ids in `banned` (padding, start marker) log-prob `NEG_INF`."""
    vocab = tf.shape(log_probs)[-1]
    hit = tf.reduce_any(
        tf.equal(tf.range(vocab)[:, None], tf.constant(banned, tf.int32)[None, :]),
        axis=-1,
    )
    return tf.where(hit, tf.constant(NEG_INF, tf.float32), log_probs)


def only_token(token_id, depth):
    """Log-probs `(depth,)` that allow only `token_id`: 0 there, `NEG_INF` elsewhere."""
    allowed = tf.equal(tf.range(depth), token_id)
    return tf.where(allowed, 0.0, tf.constant(NEG_INF, tf.float32))


def write_step(t, tokens, attention, token, weights):
    """Writes step `t` into the outputs: `token` `(...)` into `tokens` `(..., L)`,
    its attention `weights` `(..., Ts)` into `attention` `(..., L, Ts)`."""
    at_t = tf.one_hot(t, tokens.shape[-1], dtype=tf.float32)  # (L,)
    tokens = tokens + tf.cast(at_t, tf.int32) * token[..., None]
    attention = attention + at_t[:, None] * weights[..., None, :]
    return tokens, attention


def run_search(body, shape, ids, state, log_prob, source_len, max_steps):
    """Runs a search's `body` in one `tf.while_loop` until every hypothesis has
    finished or `max_steps` steps are done.

    The loop variables are `(t, ids, state, finished, lengths, log_prob, coverage,
    tokens, attention)`; the last six have the leading shape `shape` (`[B]` for
    greedy search, `[B, K]` for beam search) and start at zero (`log_prob` at the
    value given), then `()`, `()`, `()`, `(Ts,)`, `(L,)` and `(L, Ts)`.

    Returns:
        The final `(lengths, log_prob, coverage, tokens, attention)`.
    """

    def cond(t, ids, state, finished, *_):
        return tf.logical_and(t < max_steps, tf.logical_not(tf.reduce_all(finished)))

    loop_vars = (
        tf.constant(0, tf.int32),
        ids,
        state,
        tf.zeros(shape, tf.bool),
        tf.zeros(shape, tf.int32),
        log_prob,
        tf.zeros([*shape, source_len], tf.float32),
        tf.zeros([*shape, max_steps], tf.int32),
        tf.zeros([*shape, max_steps, source_len], tf.float32),
    )
    return tf.while_loop(cond, body, loop_vars, maximum_iterations=max_steps)[4:]


def force_end(log_probs, must_end, end_id=END_ID):
    """Rows where `must_end` only allow `end_id` (log-prob 0)."""
    end_only = only_token(end_id, tf.shape(log_probs)[-1])
    must_end = tf.expand_dims(must_end, -1)
    return tf.where(must_end, tf.broadcast_to(end_only, tf.shape(log_probs)), log_probs)


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
    start_id=START_ID,
    end_id=END_ID,
    pad_id=PAD_ID,
):
    """Decodes the most probable next token at each step until `[END]` or the limit.

    Args:
        step_fn: see the module docstring.
        initial_state: nested tensors `(B, ...)`.
        memory: nested tensors `(B, ...)` passed to every step.
        source_mask: `(B, Ts)` bool, True for real source tokens.
        max_steps: Python int, the static output length (buffers are this long).
        length_a, length_b: per-example limit `ceil(a * |X| + b)` (see
            `max_target_lengths`); at the limit the end marker is forced.
        alpha, beta: GNMT length and coverage penalties for the reported score.
        start_id, end_id, pad_id: token ids.

    Returns:
        A dict: `tokens` `(B, max_steps)` int32 (the end marker, then padding),
        `lengths` `(B,)` (including the end marker), `log_probs` `(B,)`, `scores`
        `(B,)` (GNMT score) and `attention` `(B, max_steps, Ts)` (zero rows after
        the end).
    """
    source_mask = tf.cast(source_mask, tf.bool)
    batch = tf.shape(source_mask)[0]
    source_len = tf.shape(source_mask)[1]
    limits = max_target_lengths(source_mask, max_steps, length_a, length_b)

    def body(t, ids, state, finished, lengths, log_prob, coverage, tokens, attention):
        logits, weights, new_state = step_fn(ids, state, memory, t)
        log_probs = tf.nn.log_softmax(tf.cast(logits, tf.float32), axis=-1)
        log_probs = ban_tokens(log_probs, [pad_id, start_id])
        log_probs = force_end(log_probs, t + 1 >= limits, end_id)
        next_ids = tf.argmax(log_probs, axis=-1, output_type=tf.int32)
        token_log_prob = tf.gather(log_probs, next_ids, batch_dims=1)
        alive = tf.logical_not(finished)
        alive_f = tf.cast(alive, tf.float32)
        next_ids = tf.where(alive, next_ids, pad_id)
        weights = tf.cast(weights, tf.float32) * alive_f[:, None]
        tokens, attention = write_step(t, tokens, attention, next_ids, weights)
        log_prob = log_prob + token_log_prob * alive_f
        coverage = coverage + weights
        lengths = lengths + tf.cast(alive, tf.int32)
        finished = tf.logical_or(finished, tf.equal(next_ids, end_id))
        return (
            t + 1,
            next_ids,
            new_state,
            finished,
            lengths,
            log_prob,
            coverage,
            tokens,
            attention,
        )

    start = tf.fill([batch], tf.constant(start_id, tf.int32))
    log_prob = tf.zeros([batch], tf.float32)
    lengths, log_prob, coverage, tokens, attention = run_search(
        body, [batch], start, initial_state, log_prob, source_len, max_steps
    )
    scores = gnmt_score(log_prob, lengths, coverage, source_mask, alpha, beta)
    return {
        "tokens": tokens,
        "lengths": lengths,
        "log_probs": log_prob,
        "scores": scores,
        "attention": attention,
    }
