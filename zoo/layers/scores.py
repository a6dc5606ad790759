"""Attention score functions, selectable by name.

A score function maps a query and keys to unnormalised alignment scores
`(B, Tq, Tv)`; `zoo.layers.masking.masked_softmax` (or a hard variant from
`zoo.layers.probability`) turns them into weights. The functions hold no weights: the
layers own the parameters and pass them in, so a decoder can project the keys once per
sequence and reuse them at every step.

| name         | score(q_t, k_s)                                  | parameters          |
|--------------|--------------------------------------------------|---------------------|
| `dot`        | q_t . k_s                                        | -                   |
| `scaled_dot` | q_t . k_s / sqrt(d)                              | -                   |
| `cosine`     | q_t . k_s / (abs(q_t) abs(k_s))                  | -                   |
| `general`    | q_t^T W k_s                                      | W (dk, dq)          |
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
    Vaswani et al., "Attention Is All You Need", NeurIPS 2017 (scaled dot).
    Graves, Wayne and Danihelka, "Neural Turing Machines", 2014 (cosine, content-based).
"""

import math

from keras import ops

__all__ = [
    "SCORES",
    "concat_score",
    "cosine_score",
    "dot_score",
    "general_score",
    "get",
    "location_score",
    "project",
    "scaled_dot_score",
    "validate",
]


def _transpose_last(x):
    """Swaps the last two axes: (B, Tv, d) -> (B, d, Tv)."""
    rank = len(x.shape)
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    return ops.transpose(x, perm)


def project(x, kernel, bias=None):
    """`x @ kernel (+ bias)` over the last axis, for any rank of `x`."""
    y = ops.matmul(x, kernel)
    if bias is not None:
        y = ops.add(y, bias)
    return y


def dot_score(query, keys):
    """Dot-product score `q_t . k_s`.

    Args:
        query: `(B, Tq, d)`.
        keys: `(B, Tv, d)`.

    Returns:
        `(B, Tq, Tv)` scores.
    """
    return ops.matmul(query, _transpose_last(keys))  # (B, Tq, Tv)


def scaled_dot_score(query, keys):
    """Scaled dot product `q_t . k_s / sqrt(d)` (Vaswani et al. 2017)."""
    depth = query.shape[-1]
    if depth is None:
        raise ValueError(
            "scaled_dot needs a known query depth. "
            f"Received: query.shape={tuple(query.shape)!r}"
        )
    scale = ops.cast(1.0 / math.sqrt(depth), query.dtype)
    return dot_score(ops.multiply(query, scale), keys)


def cosine_score(query, keys, epsilon=1e-6):
    """Cosine similarity of `q_t` and `k_s` (content-based addressing), in [-1, 1].

    `epsilon` guards the norm of all-zero vectors (their score is 0).
    """
    return dot_score(_unit(query, epsilon), _unit(keys, epsilon))


def _unit(x, epsilon):
    """`x / ||x||` over the last axis, the squared norm at least `epsilon`."""
    squared_norm = ops.sum(ops.square(x), axis=-1, keepdims=True)
    return x / ops.sqrt(ops.maximum(squared_norm, epsilon))


def general_score(query, keys, kernel=None):
    """Bilinear score `q_t^T W k_s` (Luong "general").

    Args:
        query: `(B, Tq, dq)`.
        keys: `(B, Tv, dk)` raw keys with `kernel` `(dk, dq)`, or already projected
            keys `k_s W^T` `(B, Tv, dq)` with `kernel=None` (the decoder path: project
            once, score many times).
    """
    if kernel is not None:
        keys = project(keys, kernel)  # (B, Tv, dq)
    return dot_score(query, keys)


def concat_score(query, keys, v, query_kernel=None, key_kernel=None):
    """Additive score `v^T tanh(W_q q_t + W_k k_s)` (Bahdanau; Luong "concat").

    Args:
        query: `(B, Tq, dq)` raw queries (with `query_kernel` `(dq, U)`) or already
            projected `(B, Tq, U)`.
        keys: `(B, Tv, dk)` raw keys (with `key_kernel` `(dk, U)`) or already projected
            `(B, Tv, U)`; any key bias is expected to be included already.
        v: `(U,)` scoring vector.

    Returns:
        `(B, Tq, Tv)` scores.
    """
    if query_kernel is not None:
        query = project(query, query_kernel)
    if keys is not None and key_kernel is not None:
        keys = project(keys, key_kernel)
    hidden = ops.tanh(
        ops.expand_dims(query, axis=-2) + ops.expand_dims(keys, axis=-3)
    )  # (B, Tq, Tv, U)
    # A matrix-vector product rather than sum(hidden * v): it does not materialise a
    # second (B, Tq, Tv, U) tensor, and is several times faster under XLA on CPU.
    scores = ops.matmul(hidden, ops.expand_dims(v, axis=-1))  # (B, Tq, Tv, 1)
    return ops.squeeze(scores, axis=-1)  # (B, Tq, Tv)


def location_score(query, kernel, length=None):
    """Location-based score `a_t = W_a h_t` (Luong et al. 2015), from the query only.

    Args:
        query: `(B, Tq, dq)`.
        kernel: `(dq, S_max)`: one output per source position up to the maximum source
            length fixed at build time.
        length: the actual source length `Tv <= S_max` (int or scalar tensor); the
            scores are cut to it. `None` keeps all `S_max`.

    Returns:
        `(B, Tq, length)` scores.
    """
    scores = ops.matmul(query, kernel)  # (B, Tq, S_max)
    if length is not None:
        scores = scores[..., :length]
    return scores


SCORES = {
    "dot": dot_score,
    "scaled_dot": scaled_dot_score,
    "cosine": cosine_score,
    "general": general_score,
    "concat": concat_score,
    "location": location_score,
}


def validate(name):
    """Returns `name` if it is a known score, else raises a ValueError naming it."""
    if not isinstance(name, str) or name not in SCORES:
        raise ValueError(
            f"Unknown attention score. Expected one of {sorted(SCORES)}. "
            f"Received: score={name!r}"
        )
    return name


def get(name):
    """The score function registered under `name` (see the module table)."""
    return SCORES[validate(name)]
