"""Attention score functions.

A score function maps a query and keys to unnormalised alignment scores
`(B, Tq, Tv)`; `zoo.layers.masking.masked_softmax` (or a hard variant from
`zoo.layers.probability`) turns them into weights. The functions hold no weights: the
layers own the parameters and pass them in, so a decoder can project the keys once per
sequence and reuse them at every step.

| score        | score(q_t, k_s)                                  | parameters          |
|--------------|--------------------------------------------------|---------------------|
| `dot`        | q_t . k_s                                        | -                   |
| `cosine`     | q_t . k_s / (abs(q_t) abs(k_s))                  | -                   |
| `general`    | q_t . (W k_s): `dot` of the projected keys       | W (dk, dq)          |
| `concat`     | v^T tanh(W [q_t; k_s]) = v^T tanh(W_q q_t + W_k k_s) | W_q, W_k, v     |
| `location`   | (W_a q_t)_s, from the query only                 | W_a (dq, S_max)     |

`concat` is evaluated as `W_q q_t + W_k k_s` (two small projections broadcast-added)
rather than projecting every concatenated pair, which is the same function and
`Tq * Tv` times cheaper in the projection.

Reference:
    Bahdanau, Cho and Bengio, "Neural Machine Translation by Jointly Learning to Align
    and Translate", ICLR 2015 (additive / concat score).
    Luong, Pham and Manning, "Effective Approaches to Attention-based Neural Machine
    Translation", EMNLP 2015 (dot, general, concat, location).
    Graves, Wayne and Danihelka, "Neural Turing Machines", 2014 (cosine, content-based).
"""

from keras import ops


def dot_score(query, keys):
    """Dot-product score `q_t . k_s`.

    Args:
        query: `(B, Tq, d)`.
        keys: `(B, Tv, d)`.

    Returns:
        `(B, Tq, Tv)` scores.
    """
    return ops.matmul(query, ops.swapaxes(keys, -1, -2))  # (B, Tq, Tv)


def cosine_score(query, keys, epsilon=1e-6):
    """Cosine similarity of `q_t` and `k_s` (content-based addressing), in [-1, 1].

    `epsilon` guards the norm of all-zero vectors (their score is 0).
    """
    return dot_score(_unit(query, epsilon), _unit(keys, epsilon))


def _unit(x, epsilon):
    """`x / ||x||` over the last axis, the squared norm at least `epsilon`."""
    squared_norm = ops.sum(ops.square(x), axis=-1, keepdims=True)
    return x / ops.sqrt(ops.maximum(squared_norm, epsilon))


def concat_score(query, keys, v):
    """Additive score `v^T tanh(W_q q_t + W_k k_s)` (Bahdanau; Luong "concat").

    Args:
        query: `(B, Tq, U)`, the projected queries `W_q q_t`.
        keys: `(B, Tv, U)`, the projected keys `W_k k_s` (any key bias included).
        v: `(U,)` scoring vector.

    Returns:
        `(B, Tq, Tv)` scores.
    """
    hidden = ops.tanh(
        ops.expand_dims(query, axis=-2) + ops.expand_dims(keys, axis=-3)
    )  # (B, Tq, Tv, U)
    # A matrix-vector product rather than sum(hidden * v): it does not materialise a
    # second (B, Tq, Tv, U) tensor, and is several times faster under XLA on CPU.
    scores = ops.matmul(hidden, ops.expand_dims(v, axis=-1))  # (B, Tq, Tv, 1)
    return ops.squeeze(scores, axis=-1)  # (B, Tq, Tv)


def location_score(query, kernel, length):
    """Location-based score `a_t = W_a h_t` (Luong et al. 2015), from the query only.

    Args:
        query: `(B, Tq, dq)`.
        kernel: `(dq, S_max)`: one output per source position up to the maximum source
            length fixed at build time.
        length: the actual source length `Tv <= S_max` (int or scalar tensor); the
            scores are cut to it.

    Returns:
        `(B, Tq, length)` scores.
    """
    return ops.matmul(query, kernel)[..., :length]  # (B, Tq, length)
