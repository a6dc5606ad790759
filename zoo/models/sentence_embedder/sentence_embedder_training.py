"""Training and evaluation pieces of the sentence embedder family."""

from zoo.layers.structured_self_attention import orthogonality_penalty

LENGTH_BUCKETS = (30, 60, 100, 150, 220, 400)
"""Bucket boundaries, in bytes of raw text, of the shuffled training batches:
sentences of similar length are batched together (less compute spent on padding)."""

CLIPNORM = 0.5
"""Gradient-norm clipping of the optimizer (the paper's value)."""


def penalty_norms(outputs, features):
    """Per-text `||A A^T - I||_F` of a classifier's attention, 0 for a text without
    tokens: how far the hops are from attending to different words.

    The signature is `zoo.models.text_classifier.predict_texts`'s `extra`: `outputs` are the
    `SelfAttentiveClassifier`'s, `features` the `SentencePreprocessor`'s.
    """
    mask = features["token_ids"] != 0
    return {"penalty_norm": orthogonality_penalty(outputs["attention"], mask, False)}
