import pytest
import tensorflow as tf

from zoo.training import bucket_by_length, validate_more_often


def test_bucket_by_length_groups_similar_lengths():
    lengths = [1, 9, 2, 8, 3, 7, 1, 9]
    ds = tf.data.Dataset.from_generator(
        lambda: ([1] * n for n in lengths),
        output_signature=tf.TensorSpec([None], tf.int32),
    )
    bucketed = bucket_by_length(ds, lambda x: tf.shape(x)[0], [5], batch_size=2)
    # no autotuning thread whose teardown can stall the end of an epoch, also
    # after the recipes' `prefetch(tf.data.AUTOTUNE)`
    assert not bucketed.prefetch(tf.data.AUTOTUNE).options().autotune.enabled
    batches = list(bucketed)
    widths = sorted(b.shape[1] for b in batches)
    assert sum(b.shape[0] for b in batches) == 8
    assert all(b.shape[0] <= 2 for b in batches)
    for b in batches:
        row_lengths = (b.numpy() > 0).sum(axis=1)
        assert (row_lengths < 5).all() or (row_lengths >= 5).all()
    assert widths[0] <= 3
    with pytest.raises(ValueError, match="boundaries=\\[5, 3\\]"):
        bucket_by_length(ds, len, [5, 3], 2)


def test_validate_more_often_cuts_each_pass_into_equal_keras_epochs():
    ds = tf.data.Dataset.range(10).batch(2)  # 5 batches
    same, kwargs = validate_more_often(ds, epochs=3, evals_per_epoch=1)
    assert same is ds and kwargs == {"epochs": 3}
    repeated, kwargs = validate_more_often(ds, epochs=3, evals_per_epoch=2)
    assert kwargs == {"epochs": 6, "steps_per_epoch": 3}
    # the same batches in the same order, pass after pass
    firsts = [int(b[0]) for b in repeated.take(10)]
    assert firsts == [0, 2, 4, 6, 8] * 2
    with pytest.raises(ValueError, match="evals_per_epoch"):
        validate_more_often(ds, epochs=3, evals_per_epoch=0)
    with pytest.raises(ValueError, match="holds no batch"):
        validate_more_often(ds.take(0), epochs=1, evals_per_epoch=2)
