import keras
import numpy as np
import pytest
from keras import ops

from tests.layers.layer_test_utils import loss_and_gradients
from zoo.layers import probability
from zoo.layers.masking import masked_softmax


def _np(x):
    return ops.convert_to_numpy(x)


def _case():
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(4, 6)).astype("float32")
    scores[0, 5] = 10.0  # the largest score of row 0 is masked
    mask = np.ones((4, 6), bool)
    mask[0, 5] = False
    mask[1, 3:] = False
    mask[3, :] = False  # fully masked row
    return scores, mask


def test_hardmax_is_one_hot_of_masked_argmax():
    scores, mask = _case()
    got = _np(probability.hardmax(scores, mask))
    expected = np.where(mask, scores, -np.inf).argmax(-1)
    for row in range(3):
        one_hot = np.eye(6, dtype="float32")[expected[row]]
        np.testing.assert_array_equal(got[row], one_hot)
    assert np.all(got[~mask] == 0.0)
    assert got[0, 5] == 0.0  # never the masked maximum
    np.testing.assert_array_equal(got[3], np.zeros(6))  # fully masked row


def test_hardmax_never_on_masked_position_random():
    rng = np.random.default_rng(1)
    scores = rng.normal(size=(64, 9)).astype("float32") * 5
    mask = rng.random((64, 9)) > 0.6
    got = _np(probability.hardmax(scores, mask))
    assert np.all(got[~mask] == 0.0)
    np.testing.assert_array_equal(got.sum(-1), mask.any(-1).astype("float32"))


def test_softmax_is_masked_softmax():
    scores, mask = _case()
    got = _np(probability.attention_probabilities(scores, mask, "softmax"))
    np.testing.assert_array_equal(got, _np(masked_softmax(scores, mask)))


@pytest.mark.parametrize("name", ["hardmax", "gumbel"])
def test_inference_is_hardmax(name):
    scores, mask = _case()
    got = _np(probability.attention_probabilities(scores, mask, name, training=False))
    np.testing.assert_array_equal(got, _np(probability.hardmax(scores, mask)))


@pytest.mark.parametrize("name", ["hardmax", "gumbel"])
def test_straight_through_forward_one_hot_backward_nonzero(name):
    scores, mask = _case()
    target = np.random.default_rng(2).normal(size=(4, 6)).astype("float32")
    seed = keras.random.SeedGenerator(3)

    def loss_fn(scores_t):
        w = probability.attention_probabilities(
            scores_t, mask, name, training=True, seed_generator=seed
        )
        return ops.sum(w * target), w

    w, (grad,) = loss_and_gradients(loss_fn, [scores])
    # Forward: exactly one-hot on an unmasked position (zeros for the masked row).
    assert set(np.unique(w).tolist()) <= {0.0, 1.0}
    np.testing.assert_array_equal(w.sum(-1), [1.0, 1.0, 1.0, 0.0])
    assert np.all(w[~mask] == 0.0)
    assert np.all(np.isfinite(grad))
    assert np.abs(grad[:3]).sum() > 1e-3
    assert np.all(grad[~mask] == 0.0)  # no gradient into padding


def test_hardmax_training_gradient_is_softmax_gradient():
    scores, mask = _case()
    target = np.random.default_rng(4).normal(size=(4, 6)).astype("float32")

    def hard_loss(s):
        hard = probability.attention_probabilities(s, mask, "hardmax", training=True)
        return ops.sum(hard * target), hard

    def soft_loss(s):
        soft = masked_softmax(s, mask)
        return ops.sum(soft * target), soft

    hard, (d_hard,) = loss_and_gradients(hard_loss, [scores])
    soft, (d_soft,) = loss_and_gradients(soft_loss, [scores])
    assert set(np.unique(hard).tolist()) <= {0.0, 1.0}  # one-hot forward
    assert np.abs(d_soft).max() > 1e-3  # the comparison is not of zeros
    np.testing.assert_allclose(d_hard, d_soft, rtol=1e-6)


def test_gumbel_is_seeded_and_noisy():
    scores = np.zeros((200, 5), "float32")
    a = probability.attention_probabilities(
        scores, None, "gumbel", True, keras.random.SeedGenerator(7)
    )
    b = probability.attention_probabilities(
        scores, None, "gumbel", True, keras.random.SeedGenerator(7)
    )
    np.testing.assert_array_equal(_np(a), _np(b))
    # Equal scores: the Gumbel argmax is uniform over the 5 positions.
    counts = _np(a).sum(0)
    assert counts.sum() == 200 and counts.min() > 15


def test_gumbel_noise_is_finite_and_gumbel_distributed():
    noise = _np(probability.gumbel_noise((20000,), "float32", seed=0))
    assert np.all(np.isfinite(noise))
    assert abs(noise.mean() - 0.5772) < 0.05  # Euler-Mascheroni constant
    assert abs(noise.var() - np.pi**2 / 6) < 0.1
