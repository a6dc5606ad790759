import numpy as np
from keras import ops

from zoo.layers.masking import (
    attention_mask,
    large_negative_number,
    masked_softmax,
    merge_masks,
)


def test_padded_keys_get_exact_zero_and_rows_sum_to_one():
    scores = np.array([[[1.0, 2.0, 3.0, 4.0]]], dtype="float32")
    mask = np.array([[[True, True, False, False]]])
    w = ops.convert_to_numpy(masked_softmax(scores, mask))
    expected = np.exp([1.0, 2.0]) / np.exp([1.0, 2.0]).sum()
    np.testing.assert_allclose(w[0, 0, :2], expected, rtol=1e-6)
    assert w[0, 0, 2] == 0.0 and w[0, 0, 3] == 0.0


def test_fully_masked_row_is_zero_not_nan():
    scores = np.random.randn(2, 3, 5).astype("float32")
    mask = np.ones((2, 3, 5), bool)
    mask[1, 2, :] = False
    w = ops.convert_to_numpy(masked_softmax(scores, mask))
    assert np.all(np.isfinite(w))
    np.testing.assert_array_equal(w[1, 2], np.zeros(5))
    np.testing.assert_allclose(w[0].sum(-1), np.ones(3), rtol=1e-6)


def test_float16_is_finite_and_bias_is_representable():
    assert large_negative_number("float16") == -65504.0
    assert large_negative_number("float32") == -1e9
    scores = (np.random.randn(2, 4, 6) * 50).astype("float16")
    mask = np.random.rand(2, 4, 6) > 0.5
    mask[0, 0, :] = False
    w = ops.convert_to_numpy(masked_softmax(ops.convert_to_tensor(scores), mask))
    assert w.dtype == np.float16
    assert np.all(np.isfinite(w))
    assert np.all(w[~mask] == 0)


def test_large_scores_are_stable():
    scores = np.array([[1000.0, 1001.0, -1000.0]], dtype="float32")
    w = ops.convert_to_numpy(masked_softmax(scores))
    assert np.all(np.isfinite(w))
    np.testing.assert_allclose(w.sum(), 1.0, rtol=1e-6)


def test_merge_and_attention_mask():
    assert merge_masks(None, None) is None
    q = np.array([[1, 1, 0]])
    v = np.array([[1, 0]])
    m = ops.convert_to_numpy(attention_mask(q, v))
    np.testing.assert_array_equal(
        np.broadcast_to(m, (1, 3, 2)), [[[1, 0], [1, 0], [0, 0]]]
    )
    c = ops.convert_to_numpy(attention_mask(causal=True, q_len=3, v_len=3))
    np.testing.assert_array_equal(c[0], np.tril(np.ones((3, 3), bool)))
