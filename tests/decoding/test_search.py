import itertools
import math

import numpy as np
import pytest
import tensorflow as tf

from zoo.decoding.beam_search import beam_search, max_target_lengths, top_k_last_axis
from zoo.decoding.greedy import greedy_search
from zoo.decoding.penalties import coverage_penalty, gnmt_score, length_penalty
from zoo.layers.attention_decoder import AttentionDecoder

START, END, A, B = 2, 3, 4, 5
# A Markov "model" over tokens a, b: next-token probabilities given the previous token,
# and the attention over a 2-word source that each step produces.
PROBS = {
    START: {A: 0.5, B: 0.4, END: 0.1},
    A: {A: 0.1, B: 0.1, END: 0.8},
    B: {A: 0.05, B: 0.9, END: 0.05},
}
ATTENTION = {START: [0.9, 0.1], A: [0.2, 0.8], B: [0.5, 0.5], END: [0.0, 0.0]}


def _table():
    logits = np.full((6, 6), -50.0, np.float32)
    for prev, row in PROBS.items():
        for tok, p in row.items():
            logits[prev, tok] = math.log(p)
    attention = np.zeros((6, 2), np.float32)
    for prev, row in ATTENTION.items():
        attention[prev] = row
    return tf.constant(logits), tf.constant(attention)


def _markov_step():
    logits, attention = _table()

    def step_fn(ids, state, memory, position):
        return tf.gather(logits, ids), tf.gather(attention, ids), state

    return step_fn


def _brute_force(max_len, alpha, beta):
    """Every hypothesis (a/b tokens then END, at most max_len tokens) with its score."""
    best = None
    for n in range(max_len):
        for body in itertools.product([A, B], repeat=n):
            seq, prev, logp, cov = [*body, END], START, 0.0, np.zeros(2)
            for tok in seq:
                cov = cov + ATTENTION[prev]
                if len(seq) == max_len and tok == END:
                    step_logp = 0.0  # forced end at the limit
                else:
                    step_logp = math.log(PROBS[prev][tok])
                logp += step_logp
                prev = tok
            lp = ((5 + len(seq)) / 6) ** alpha
            cp = beta * np.sum(np.log(np.minimum(np.maximum(cov, 1e-10), 1.0)))
            score = logp / lp + cp
            if best is None or score > best[1]:
                best = (seq, score)
    return best


def _run(search, alpha, beta, max_steps=4, **kwargs):
    mask = tf.constant([[True, True]])
    # limit = ceil(0 * 2 + max_steps) = max_steps
    return search(
        _markov_step(),
        (tf.zeros([1, 1]),),
        (tf.zeros([1, 1]),),
        mask,
        max_steps=max_steps,
        length_a=0.0,
        length_b=max_steps,
        alpha=alpha,
        beta=beta,
        **kwargs,
    )


def test_penalties_hand_values():
    np.testing.assert_allclose(length_penalty(tf.constant([1, 7]), 1.0), [1.0, 2.0])
    np.testing.assert_allclose(length_penalty(tf.constant([3]), 0.0), [1.0])
    cp = coverage_penalty(
        tf.constant([[0.5, 2.0, 0.0]]), tf.constant([[True, True, False]]), 0.2
    )
    np.testing.assert_allclose(cp, [0.2 * math.log(0.5)], rtol=1e-6)
    s = gnmt_score(tf.constant([-2.0]), tf.constant([1]), tf.ones([1, 2]), None, 1.0)
    np.testing.assert_allclose(s, [-2.0])


def test_max_target_lengths():
    mask = tf.constant([[1, 1, 1, 0], [1, 0, 0, 0]]) > 0
    got = max_target_lengths(mask, max_steps=6, a=1.5, b=1)
    np.testing.assert_array_equal(got, [6, 3])  # ceil(5.5)=6, ceil(2.5)=3


def test_greedy_on_markov_model():
    out = _run(greedy_search, alpha=0.0, beta=0.0)
    # START -> a (0.5) -> END (0.8): log(0.4)
    np.testing.assert_array_equal(out["tokens"][0], [A, END, 0, 0])
    np.testing.assert_allclose(out["log_probs"][0], math.log(0.4), rtol=1e-6)
    np.testing.assert_allclose(out["attention"][0, :2], [[0.9, 0.1], [0.2, 0.8]])
    np.testing.assert_array_equal(out["attention"][0, 2:], 0.0)


def test_beam_finds_hand_computed_best_without_penalties():
    # Without penalties the best is a END: 0.5 * 0.8 = 0.4 (b b ... loses: 0.4*0.9*...).
    out = _run(beam_search, alpha=0.0, beta=0.0, beam_width=3)
    np.testing.assert_array_equal(out["tokens"][0], [A, END, 0, 0])
    np.testing.assert_allclose(out["scores"][0], math.log(0.4), rtol=1e-6)


def test_beam_with_coverage_penalty_hand_computed():
    # With beta = 1, "a END" covers [1.1, 0.9]: cp = log(0.9) = -0.105, s = -1.022.
    # "b b END" (forced? no: 4 steps allowed) = 0.4 * 0.9 * 0.05 = 0.018 -> too low.
    # "END" alone: log 0.1 = -2.303, cp = log(0.1) -> worse.
    # So the best stays "a END" at log(0.4) + log(0.9).
    out = _run(beam_search, alpha=0.0, beta=1.0, beam_width=4)
    np.testing.assert_array_equal(out["tokens"][0], [A, END, 0, 0])
    np.testing.assert_allclose(
        out["scores"][0], math.log(0.4) + math.log(0.9), rtol=1e-5
    )


@pytest.mark.parametrize(
    "alpha,beta,max_steps", [(0.0, 0.0, 4), (2.0, 0.0, 4), (3.0, 0.5, 5)]
)
def test_wide_beam_equals_brute_force(alpha, beta, max_steps):
    seq, score = _brute_force(max_steps, alpha, beta)
    out = _run(beam_search, alpha, beta, max_steps=max_steps, beam_width=32)
    got = [int(t) for t in out["tokens"][0] if t != 0]
    assert got == seq
    np.testing.assert_allclose(out["scores"][0], score, rtol=1e-5)


def test_length_penalty_changes_the_winner():
    # With a strong length reward, the long "b b b END" (forced end at the limit of
    # 4 tokens) beats "a END": hand-computed with lp = ((5 + |Y|) / 6) ** 3.
    short = math.log(0.4) / ((5 + 2) / 6) ** 3
    long = math.log(0.4 * 0.9 * 0.9) / ((5 + 4) / 6) ** 3
    assert long > short
    out = _run(beam_search, alpha=3.0, beta=0.0, beam_width=4)
    np.testing.assert_array_equal(out["tokens"][0], [B, B, B, END])
    np.testing.assert_allclose(out["scores"][0], long, rtol=1e-5)


def _decoder_setup(attention, **kwargs):
    rng = np.random.default_rng(0)
    batch, ts, depth, units, vocab = 3, 6, 8, 8, 13
    memory = tf.constant(rng.normal(size=(batch, ts, depth)).astype("float32"))
    mask = np.ones((batch, ts), bool)
    mask[1, 3:] = False
    mask = tf.constant(mask)
    h0 = tf.constant(rng.normal(size=(batch, units)).astype("float32"))
    decoder = AttentionDecoder(vocab, units, attention=attention, **kwargs)
    decoder([tf.zeros((batch, 2), tf.int32), memory, mask, h0])
    bundle = decoder.prepare_memory(memory, mask)
    state = decoder.initial_state([h0])

    def step_fn(ids, state, memory, position):
        return decoder.step(ids, state, memory, position)

    return step_fn, state, bundle, mask


@pytest.mark.parametrize("attention", ["bahdanau", "luong"])
def test_beam_width_one_equals_greedy(attention):
    step_fn, state, bundle, mask = _decoder_setup(attention)
    kwargs = dict(max_steps=7, alpha=0.6, beta=0.2)
    greedy = greedy_search(step_fn, state, bundle, mask, **kwargs)
    beam = beam_search(step_fn, state, bundle, mask, beam_width=1, **kwargs)
    for key in ("tokens", "lengths"):
        np.testing.assert_array_equal(beam[key], greedy[key])
    for key in ("scores", "log_probs", "attention"):
        np.testing.assert_allclose(beam[key], greedy[key], atol=1e-5)
    # rows of the padded source never receive attention
    np.testing.assert_array_equal(greedy["attention"][1, :, 3:], 0.0)


def test_jit_compile_matches_eager():
    step_fn, state, bundle, mask = _decoder_setup("luong", score="general")

    def search(state, bundle, mask):
        return beam_search(step_fn, state, bundle, mask, max_steps=6, beam_width=3)

    eager = search(state, bundle, mask)
    compiled = tf.function(search, jit_compile=True)(state, bundle, mask)
    np.testing.assert_array_equal(compiled["tokens"], eager["tokens"])
    np.testing.assert_allclose(compiled["scores"], eager["scores"], atol=1e-4)


def test_bad_beam_width():
    with pytest.raises(ValueError, match="Received: beam_width=0"):
        _run(beam_search, 0.0, 0.0, beam_width=0)


@pytest.mark.parametrize("vocab", [7, 128, 1000, 1037])
@pytest.mark.parametrize("k", [1, 3, 5])
def test_top_k_last_axis_equals_tf_top_k(vocab, k):
    rng = np.random.default_rng(vocab + k)
    cases = [
        rng.normal(size=(6, vocab)),
        np.round(rng.normal(size=(6, vocab)) * 2.0),  # many ties
        np.where(rng.random((6, vocab)) < 0.5, -np.inf, rng.normal(size=(6, vocab))),
    ]
    fn = tf.function(top_k_last_axis, reduce_retracing=True)
    for x in cases:
        x = tf.constant(x, tf.float32)
        expected = tf.math.top_k(x, k=k)
        for values, indices in (top_k_last_axis(x, k), fn(x, k)):
            np.testing.assert_array_equal(values, expected.values)
            np.testing.assert_array_equal(indices, expected.indices)


def _numpy_flat_beam(logits, attention, max_steps, k, alpha, beta, limit):
    """The textbook search: every beam times every token ranked at every step."""
    vocab = logits.shape[1]
    log_softmax = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    end_only = np.full(vocab, -1e9)
    end_only[END] = 0.0
    prev = np.full(k, START)
    log_prob = np.where(np.arange(k) == 0, 0.0, -1e9)
    lengths = np.zeros(k, int)
    coverage = np.zeros((k, attention.shape[1]))
    finished = np.zeros(k, bool)
    tokens = np.zeros((k, max_steps), int)
    lp = lambda n: ((5.0 + n) / 6.0) ** alpha  # noqa: E731
    cp = lambda c: beta * np.log(np.clip(c, 1e-10, 1.0)).sum(-1)  # noqa: E731
    for t in range(max_steps):
        if finished.all():
            break
        rows = log_softmax[prev].copy()
        rows[:, [0, START]] = -1e9
        rows[finished | (t + 1 >= limit)] = end_only
        weights = attention[prev] * (~finished)[:, None]
        new_lengths = lengths + (~finished)
        new_coverage = coverage + weights
        candidates = log_prob[:, None] + rows
        ranking = candidates / lp(new_lengths)[:, None] + cp(new_coverage)[:, None]
        flat = np.argsort(-ranking.reshape(-1), kind="stable")[:k]
        parent, token = flat // vocab, flat % vocab
        log_prob = candidates.reshape(-1)[flat]
        token = np.where(finished[parent], 0, token)
        lengths, coverage = new_lengths[parent], new_coverage[parent]
        tokens = tokens[parent]
        tokens[:, t] = token
        finished = finished[parent] | (token == END)
        prev = token
    scores = log_prob / lp(lengths) + cp(coverage)
    best = int(np.argmax(scores))
    return tokens[best], scores[best]


@pytest.mark.parametrize("vocab", [40, 700])
def test_beam_equals_numpy_flat_search_on_a_large_vocabulary(vocab):
    # Ranking only each beam's k best tokens must give the same search as ranking
    # all k * V candidates, including on vocabularies where blocks are used.
    rng = np.random.default_rng(vocab)
    logits = (rng.normal(size=(vocab, vocab)) * 3.0).astype(np.float32)
    attention = rng.dirichlet(np.ones(3), size=vocab).astype(np.float32)
    table, att = tf.constant(logits), tf.constant(attention)

    def step_fn(ids, state, memory, position):
        return tf.gather(table, ids), tf.gather(att, ids), state

    for alpha, beta in ((0.0, 0.0), (0.6, 0.2), (1.0, 1.0)):
        out = beam_search(
            step_fn,
            tf.zeros([1, 1]),
            tf.zeros([1, 1]),
            tf.ones([1, 3], tf.bool),
            max_steps=8,
            beam_width=4,
            alpha=alpha,
            beta=beta,
        )
        # limit min(ceil(1.5 * 3 + 5), max_steps) = 8
        tokens, score = _numpy_flat_beam(logits, attention, 8, 4, alpha, beta, 8)
        np.testing.assert_array_equal(out["tokens"][0], tokens)
        np.testing.assert_allclose(out["scores"][0], score, rtol=1e-4, atol=1e-4)
