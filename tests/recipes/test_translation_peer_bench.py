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

    model, _ = build_peer(30, 40, units=8)
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


def test_order_must_name_the_peer_and_a_zoo_model_once_each():
    from bench.translation_peer import parse_args

    for order in ("zoo,zoo", "peer,zoo,zoo", "zoo,zoo-bf16", "peer", "peer,other"):
        with pytest.raises(SystemExit):
            parse_args(["--data", "x", "--order", order])
    args = parse_args(["--data", "x", "--order", "zoo-bf16,peer,zoo"])
    assert args.order == "zoo-bf16,peer,zoo"


def test_peer_greedy_is_the_teacher_forced_model_run_step_by_step():
    # Feeding the greedy output back as teacher-forced input must give the same
    # argmax at every step (the step loop and the training graph are one model).
    from bench.translation_peer import PEER_LENGTH, build_peer, peer_greedy

    model, layers = build_peer(30, 40, units=8)
    rng = np.random.default_rng(1)
    context = rng.integers(1, 30, (3, PEER_LENGTH)).astype("int32")
    context[1, 20:] = 0  # padded source
    tokens = np.asarray(
        peer_greedy(layers, context, start_id=2, end_id=3, max_length=6)
    )
    assert tokens.shape[0] == 3 and 1 <= tokens.shape[1] <= 6
    target_in = np.zeros((3, PEER_LENGTH - 1), "int32")
    target_in[:, 0] = 2
    target_in[:, 1 : tokens.shape[1]] = tokens[:, :-1]
    forced = np.asarray(model([context, target_in])).argmax(-1)[:, : tokens.shape[1]]
    for row in range(3):
        ended = np.flatnonzero(tokens[row] == 3)
        stop = ended[0] + 1 if len(ended) else tokens.shape[1]
        np.testing.assert_array_equal(tokens[row, :stop], forced[row, :stop])
        assert (tokens[row, stop:] == 0).all()
