import numpy as np
import pytest
from keras import ops

from zoo.layers import scores


def _np(x):
    return ops.convert_to_numpy(x)


@pytest.fixture
def qk():
    rng = np.random.default_rng(0)
    q = rng.normal(size=(2, 3, 4)).astype("float32")
    k = rng.normal(size=(2, 5, 4)).astype("float32")
    return q, k


def test_dot(qk):
    q, k = qk
    expected = np.einsum("btd,bsd->bts", q, k)
    np.testing.assert_allclose(_np(scores.dot_score(q, k)), expected, rtol=1e-5)


def test_cosine(qk):
    q, k = qk
    qn = q / np.linalg.norm(q, axis=-1, keepdims=True)
    kn = k / np.linalg.norm(k, axis=-1, keepdims=True)
    got = _np(scores.cosine_score(q, k))
    np.testing.assert_allclose(got, np.einsum("btd,bsd->bts", qn, kn), atol=1e-5)
    assert np.all(np.abs(got) <= 1.0 + 1e-6)
    zero = np.zeros((1, 1, 4), "float32")
    assert _np(scores.cosine_score(zero, k[:1]))[0, 0].tolist() == [0.0] * 5


def test_concat_equals_projection_of_concatenation(qk):
    q, k = qk
    rng = np.random.default_rng(2)
    wq = rng.normal(size=(4, 6)).astype("float32")
    wk = rng.normal(size=(4, 6)).astype("float32")
    v = rng.normal(size=(6,)).astype("float32")
    # The textbook form: v^T tanh(W [q; k]) with W = [W_q; W_k] on the concatenation.
    w = np.concatenate([wq, wk], axis=0)  # (8, 6)
    expected = np.zeros((2, 3, 5), "float32")
    for b in range(2):
        for t in range(3):
            for s in range(5):
                expected[b, t, s] = v @ np.tanh(np.concatenate([q[b, t], k[b, s]]) @ w)
    got = scores.concat_score(q @ wq, k @ wk, v)
    np.testing.assert_allclose(_np(got), expected, rtol=1e-4, atol=1e-5)


def test_location_cuts_to_source_length(qk):
    q, _ = qk
    w = np.random.default_rng(3).normal(size=(4, 9)).astype("float32")
    full = _np(scores.location_score(q, w, 9))
    assert full.shape == (2, 3, 9)
    np.testing.assert_allclose(full, q @ w, rtol=1e-5)
    np.testing.assert_allclose(
        _np(scores.location_score(q, w, length=5)), full[..., :5]
    )
