"""Masked softmax and mask merging: the one home of masking logic in the zoo.

Every attention layer normalises its scores with `masked_softmax`, so the three masking
guarantees hold everywhere:

- a masked (padded) key gets exactly zero weight;
- a row whose keys are all masked gets all-zero weights (finite), never NaN;
- the large negative bias is float16-safe: 65504 (the float16 maximum) for float16 and
  bfloat16-free dtypes, 1e9 otherwise, as `keras.layers.Attention` does.
"""

import keras
from keras import ops


def large_negative_number(dtype):
    """The bias added to masked scores: -65504 for float16, -1e9 otherwise."""
    return -65504.0 if keras.backend.standardize_dtype(dtype) == "float16" else -1e9


def precise_dtype(dtype):
    """`"float32"` for the 16-bit float dtypes, else `dtype` itself.

    Under a mixed-precision policy the layers compute the numerically fragile parts
    in this dtype: positions and Gaussian windows (bfloat16 holds integers exactly
    only up to 256, float16 up to 2048) and the memory network's hop-by-hop
    scores, whose rounding compounds over the hops.
    """
    dtype = keras.backend.standardize_dtype(dtype)
    return "float32" if dtype in ("float16", "bfloat16") else dtype


def merge_masks(*masks):
    """Logical AND of the given masks, ignoring `None`; returns `None` if all are `None`.

    Masks must be broadcastable to each other; they are cast to bool.
    """
    merged = None
    for mask in masks:
        if mask is None:
            continue
        mask = ops.cast(mask, "bool")
        merged = mask if merged is None else ops.logical_and(merged, mask)
    return merged


def attention_mask(
    query_mask=None, value_mask=None, causal=False, q_len=None, v_len=None
):
    """Builds the (B, Tq, Tv) boolean mask of allowed query->key pairs.

    Args:
        query_mask: bool/int tensor (B, Tq) or `None`.
        value_mask: bool/int tensor (B, Tv) or `None`.
        causal: if True, query position i may only attend keys j <= i (needs q_len, v_len).
        q_len, v_len: lengths, needed only for `causal`.

    Returns:
        A bool tensor broadcastable to (B, Tq, Tv), or `None` when nothing is masked.
    """
    parts = []
    if value_mask is not None:
        parts.append(ops.expand_dims(value_mask, axis=-2))  # (B, 1, Tv)
    if query_mask is not None:
        parts.append(ops.expand_dims(query_mask, axis=-1))  # (B, Tq, 1)
    if causal:
        row = ops.expand_dims(ops.arange(q_len), axis=-1)
        col = ops.expand_dims(ops.arange(v_len), axis=0)
        parts.append(ops.expand_dims(row >= col, axis=0))  # (1, Tq, Tv)
    return merge_masks(*parts)


def masked_softmax(scores, mask=None, axis=-1):
    """Softmax over `axis` that gives exactly 0 to masked positions.

    Args:
        scores: float tensor of scores.
        mask: bool/int tensor broadcastable to `scores`; True/1 marks positions that may
            receive weight. `None` means nothing is masked.
        axis: the axis to normalise over.

    Returns:
        Weights of the shape of `scores`: they sum to 1 over `axis` where at least one
        position is unmasked, and are all 0 where every position is masked.
    """
    if mask is None:
        return ops.softmax(scores, axis=axis)
    mask = ops.cast(mask, "bool")
    neg = ops.cast(large_negative_number(scores.dtype), scores.dtype)
    biased = ops.where(mask, scores, neg)
    weights = ops.softmax(biased, axis=axis)  # max-subtracted inside softmax
    return ops.where(mask, weights, ops.zeros_like(weights))


def zero_padded_queries(query_mask, *tensors):
    """`tensors` `(B, [Tq,] ...)` with the rows of padded queries (`query_mask`
    `(B, [Tq])` False) set to zero; `tensors` unchanged when `query_mask` is `None`."""
    if query_mask is None:
        return tensors
    return tuple(
        x * ops.expand_dims(ops.cast(query_mask, x.dtype), axis=-1) for x in tensors
    )
