"""Training settings of the HAN family (used by its recipe and its benchmark)."""

LENGTH_BUCKETS = (400, 800, 1200, 1800, 2600, 4000)
"""Bucket boundaries, in bytes of raw text, of the shuffled training batches:
documents of similar length are batched together (less compute spent on padding)."""

CLIPNORM = 5.0
"""Gradient-norm clipping of the optimizer (the RNNs see up to 50-step sequences)."""
