"""A tiny encoder and a batch of word ids shared by the sentence embedder tests."""

import numpy as np

from zoo.models.sentence_embedder import SelfAttentiveEncoder

IDS = np.array([[5, 6, 7, 0, 0], [8, 9, 10, 11, 12], [0, 0, 0, 0, 0]], "int32")
"""A short sentence, a full one and an empty one (all padding)."""


def tiny_encoder(**kwargs):
    args = dict(
        vocabulary_size=20,
        embedding_dim=8,
        lstm_units=6,
        attention_units=5,
        num_hops=3,
        penalty=1.0,
    )
    args.update(kwargs)
    return SelfAttentiveEncoder(**args)
