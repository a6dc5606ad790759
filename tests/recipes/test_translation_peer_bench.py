"""The peer of the training-speed comparison (bench.translation_peer)."""

import numpy as np
import pytest


def test_standardize_is_the_tutorials():
    import tensorflow as tf

    from bench.translation_peer import standardize

    out = standardize(tf.constant(["Ein Mann, der läuft.", "¿Qué?"])).numpy()
    assert [s.decode() for s in out] == [
        "[START] ein mann ,  der lauft . [END]",
        "[START] ¿ que ? [END]",
    ]


def test_peer_model_shapes_and_masked_loss():
    from bench.translation_peer import PEER_LENGTH, build_peer, peer_loss

    model = build_peer(30, 40, units=8)
    rng = np.random.default_rng(0)
    context = rng.integers(1, 30, (2, PEER_LENGTH)).astype("int32")
    target_in = rng.integers(1, 40, (2, PEER_LENGTH - 1)).astype("int32")
    logits = model([context, target_in])
    assert tuple(logits.shape) == (2, PEER_LENGTH - 1, 40)
    labels = np.zeros((2, PEER_LENGTH - 1), "int32")
    labels[:, :3] = 5
    # padding positions (label 0) do not count: the loss equals the mean over 6 tokens
    full = peer_loss(labels, logits)
    real = -np.log(
        np.exp(logits[:, :3, 5]) / np.exp(np.asarray(logits[:, :3])).sum(-1)
    ).mean()
    np.testing.assert_allclose(float(full), real, rtol=1e-5)


def test_order_must_name_both_models():
    from bench.translation_peer import parse_args

    with pytest.raises(SystemExit):
        parse_args(["--data", "x", "--order", "zoo,zoo"])
