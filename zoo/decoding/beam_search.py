"""Beam search inside the graph with the GNMT length and coverage penalties.

Both searches (`greedy_search` is this one with one beam) drive a model through a step
function

    logits, weights, new_state = step_fn(ids, state, memory, position)

with `ids` `(N,)` int32 (the previous tokens), `state` any nested structure of tensors
whose first axis is the batch, `memory` a nested structure the step only reads (the
encoder outputs and projected keys), `position` the scalar int32 step index, `logits`
`(N, V)` and `weights` `(N, Ts)` the attention of this step. `AttentionDecoder.step`
has this form.

One `tf.while_loop` over target positions for the whole batch (`B` sources times `K`
beams), with static shapes so it compiles under XLA (`tf.function(jit_compile=True)`).

At every step each live beam is extended by every token; candidates are ranked by the
GNMT score `s = log P / lp + cp` (`zoo.decoding.penalties`) computed with the length and
the attention coverage the candidate would have. The length and coverage of a candidate
depend only on its beam, so within a beam the ranking is by `log P`: only each beam's
`K` most probable tokens can enter the new beam, and `K * K` candidates are ranked
instead of `K * V` (the same result, faster; `top_k_last_axis` finds them). A finished
beam (it produced `[END]`) stays in the beam with its score frozen, as its only
candidate; the search stops when every beam of every source has finished or at
`max_steps`. At the per-example length
limit `ceil(a * |X| + b)` the end marker is forced, so every returned hypothesis ends.
The best-scoring beam is returned with its tokens, scores and attention matrix.
"""

import tensorflow as tf

from zoo.decoding.penalties import coverage_penalty, gnmt_score, length_penalty
from zoo.layers.arguments import check_positive_ints

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


def only_token(token_id, depth):
    """Log-probs `(depth,)` that allow only `token_id`: 0 there, `NEG_INF` elsewhere."""
    allowed = tf.equal(tf.range(depth), token_id)
    return tf.where(allowed, 0.0, tf.constant(NEG_INF, tf.float32))


def top_k_last_axis(values, k, block=128):
    """`tf.math.top_k(values, k)` for `(N, V)` floats, faster on CPU for large `V`.

    The row is cut into blocks of `block` entries; the k largest entries lie in the
    k blocks with the largest maxima, so only those `k * block` entries are ranked.
    Results, ties included (the lower index first), equal `tf.math.top_k`'s: the
    chosen blocks are taken in index order. Falls back to `tf.math.top_k` when `V` is
    not static or too small for the blocks to pay.

    Returns:
        `(values, indices)`, each `(N, k)`.
    """
    vocab = values.shape[-1]
    blocks = -(-vocab // block) if vocab is not None else 0
    if vocab is None or blocks <= 2 * k:
        return tf.math.top_k(values, k=k)
    rows = tf.shape(values)[0]
    padding = blocks * block - vocab
    if padding:
        values = tf.pad(values, [[0, 0], [0, padding]], constant_values=float("-inf"))
    values = tf.reshape(values, [rows, blocks, block])
    _, chosen = tf.math.top_k(tf.reduce_max(values, axis=-1), k=k)
    chosen = tf.sort(chosen, axis=-1)  # index order keeps top_k's tie-breaking
    candidates = tf.reshape(tf.gather(values, chosen, batch_dims=1), [rows, k * block])
    top, position = tf.math.top_k(candidates, k=k)
    index = tf.gather(chosen, position // block, batch_dims=1) * block
    return top, index + position % block


def _top_k_allowed(logits, k, banned):
    """The top `k` of each row of `(N, V)` logits among the ids not in `banned`.

    The top `k + len(banned)` ids hold the top `k` allowed ones, so the ban touches
    `(N, k + len(banned))` values, not the whole row; ties resolve as
    `tf.math.top_k` on the banned row would (the lower id first).
    """
    extra = len(banned)
    top, ids = top_k_last_axis(logits, k + extra)
    allowed = tf.reduce_all(
        tf.not_equal(ids[:, :, None], tf.constant(banned, tf.int32)), axis=-1
    )
    top = tf.where(allowed, top, tf.constant(NEG_INF, top.dtype))
    order = tf.math.top_k(top, k=k).indices
    return tf.gather(top, order, batch_dims=1), tf.gather(ids, order, batch_dims=1)


def beam_search(
    step_fn,
    initial_state,
    memory,
    source_mask,
    max_steps,
    beam_width=5,
    alpha=0.6,
    beta=0.2,
    length_a=1.5,
    length_b=5,
):
    """Beam search with GNMT scoring (ids: `START_ID`, `END_ID`, `PAD_ID`).

    Args:
        step_fn: `(ids, state, memory, position) -> (logits, weights, new_state)`.
        initial_state: nested tensors `(B, ...)`.
        memory: nested tensors `(B, ...)`; tiled to the beams once.
        source_mask: `(B, Ts)` bool, True for real source tokens.
        max_steps: Python int, the static output length.
        beam_width: Python int `K >= 1`.
        alpha: length penalty exponent (0 = no length normalisation).
        beta: coverage penalty weight (0 = none).
        length_a, length_b: per-example limit `ceil(a * |X| + b)` on `|Y|`.

    Returns:
        A dict like `greedy_search`'s for the best hypothesis of each source:
        `tokens` `(B, max_steps)`, `lengths`, `log_probs`, `scores` `(B,)`,
        `attention` `(B, max_steps, Ts)`.
    """
    check_positive_ints(beam_width=beam_width)
    k = beam_width
    source_mask = tf.cast(source_mask, tf.bool)
    batch = tf.shape(source_mask)[0]
    source_len = tf.shape(source_mask)[1]
    limits = max_target_lengths(source_mask, max_steps, length_a, length_b)
    limits = tf.repeat(limits[:, None], k, axis=1)  # (B, K)
    mask_bk = tf.repeat(source_mask[:, None, :], k, axis=1)  # (B, K, Ts)
    tiled = (memory, initial_state)  # every (B, ...) tensor repeated to (B * K, ...)
    memory, state = tf.nest.map_structure(lambda x: tf.repeat(x, k, axis=0), tiled)
    # Flat row of beam k of source b is b * K + k.
    row_offsets = tf.range(batch)[:, None] * k  # (B, 1)
    banned = [PAD_ID, START_ID]

    def body(t, ids, state, finished, lengths, log_prob, coverage, tokens, attention):
        logits, weights, new_state = step_fn(ids, state, memory, t)
        logits = tf.cast(logits, tf.float32)  # (B * K, V)
        # log P = logit - logsumexp(logits): the normaliser includes the banned ids,
        # as log_softmax followed by banning would. Ranking inside one beam is by
        # log P alone (its length and coverage terms are the same for all of its
        # tokens), so the K best tokens of each beam hold the K best candidates of
        # the step: K * K candidates instead of K * V.
        normaliser = tf.reduce_logsumexp(logits, axis=-1)  # (B * K,)
        vocab = logits.shape[-1]
        per_beam = k if vocab is None else min(k, vocab - len(banned))
        top_logits, top_tokens = _top_k_allowed(logits, per_beam, banned)
        top_lp = tf.reshape(top_logits - normaliser[:, None], [batch, k, per_beam])
        top_tokens = tf.reshape(top_tokens, [batch, k, per_beam])
        # An end-only beam (finished, or at its length limit) has one candidate: the
        # end marker with log-prob 0; its other slots are fillers that never rank.
        end_only = tf.logical_or(finished, t + 1 >= limits)[:, :, None]  # (B, K, 1)
        top_lp = tf.where(end_only, only_token(0, per_beam), top_lp)
        top_tokens = tf.where(end_only, END_ID, top_tokens)
        alive_f = 1.0 - tf.cast(finished, tf.float32)  # (B, K)
        weights = tf.reshape(tf.cast(weights, tf.float32), [batch, k, -1])
        weights = weights * alive_f[:, :, None]
        new_lengths = lengths + tf.cast(1.0 - tf.cast(finished, tf.float32), tf.int32)
        new_coverage = coverage + weights  # (B, K, Ts)
        candidates = log_prob[:, :, None] + top_lp  # (B, K, k')
        ranking = candidates / length_penalty(new_lengths, alpha)[:, :, None]
        ranking = ranking + coverage_penalty(new_coverage, mask_bk, beta)[:, :, None]
        flat = [batch, k * per_beam]
        _, flat_index = tf.math.top_k(tf.reshape(ranking, flat), k=k)
        parent = flat_index // per_beam  # (B, K)
        token = tf.gather(tf.reshape(top_tokens, flat), flat_index, batch_dims=1)
        log_prob = tf.gather(tf.reshape(candidates, flat), flat_index, batch_dims=1)
        parent_finished, lengths, coverage, weights, tokens, attention = [
            tf.gather(x, parent, batch_dims=1)  # the chosen parents' rows
            for x in (finished, new_lengths, new_coverage, weights, tokens, attention)
        ]
        token = tf.where(parent_finished, PAD_ID, token)
        at_t = tf.one_hot(t, max_steps, dtype=tf.float32)  # (L,): the step's outputs
        tokens = tokens + tf.cast(at_t, tf.int32) * token[..., None]
        attention = attention + at_t[:, None] * weights[..., None, :]
        finished = tf.logical_or(parent_finished, tf.equal(token, END_ID))
        rows = tf.reshape(row_offsets + parent, [-1])  # (B * K,)
        state = tf.nest.map_structure(lambda s: tf.gather(s, rows), new_state)
        ids = tf.reshape(token, [-1])
        return (
            t + 1, ids, state, finished, lengths, log_prob, coverage, tokens, attention
        )  # fmt: skip

    def cond(t, ids, state, finished, *_):
        return tf.logical_and(t < max_steps, tf.logical_not(tf.reduce_all(finished)))

    # Only beam 0 is live at the start, so the first step does not pick K copies of
    # the same token.
    loop_vars = (
        tf.constant(0, tf.int32),
        tf.fill([batch * k], START_ID),  # ids
        state,
        tf.zeros([batch, k], tf.bool),  # finished
        tf.zeros([batch, k], tf.int32),  # lengths
        tf.tile(only_token(0, k)[None, :], [batch, 1]),  # log_prob
        tf.zeros([batch, k, source_len], tf.float32),  # coverage
        tf.zeros([batch, k, max_steps], tf.int32),  # tokens
        tf.zeros([batch, k, max_steps, source_len], tf.float32),  # attention
    )
    loop = tf.while_loop(cond, body, loop_vars, maximum_iterations=max_steps)
    lengths, log_prob, coverage, tokens, attention = loop[4:]
    scores = gnmt_score(log_prob, lengths, coverage, mask_bk, alpha, beta)  # (B, K)
    best = tf.argmax(scores, axis=1, output_type=tf.int32)  # (B,)
    return {
        "tokens": tf.gather(tokens, best, batch_dims=1),
        "lengths": tf.gather(lengths, best, batch_dims=1),
        "log_probs": tf.gather(log_prob, best, batch_dims=1),
        "scores": tf.gather(scores, best, batch_dims=1),
        "attention": tf.gather(attention, best, batch_dims=1),
    }
