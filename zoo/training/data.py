"""tf.data helpers for training: length bucketing, validation more often than once
per pass (and where a resumed run's stream of batches starts)."""

import tensorflow as tf


def bucket_by_length(
    ds,
    length_fn,
    boundaries,
    batch_size,
    padded_shapes=None,
    padding_values=None,
    drop_remainder=False,
):
    """Batches examples of similar length together (less compute spent on padding).

    A thin wrapper over `tf.data.Dataset.bucket_by_sequence_length` with one batch
    size for every bucket, with tf.data's autotuning off for the pipeline
    (`Options.autotune.enabled = False`; `prefetch(tf.data.AUTOTUNE)` downstream then
    uses tf.data's fixed default buffer). With autotuning on, a root iterator owns a
    background thread (the autotuner's); on a busy CPU, deleting an iterator at an
    epoch's end (which Keras does when the next epoch or validation starts) can wait
    for that thread and stall training. These pipelines are cached and have no
    parallel maps, so there is nothing for it to tune.

    Args:
        ds: unbatched `tf.data.Dataset`.
        length_fn: function of one element returning its length (scalar int32).
        boundaries: increasing list of ints; bucket i holds lengths in
            `[boundaries[i-1], boundaries[i])`.
        batch_size: examples per batch.
        padded_shapes: optional padded shapes (default: pad every dimension to the
            longest element of the batch).
        padding_values: optional padding values (default 0 / "").
        drop_remainder: drop the last smaller batch of each bucket.

    Returns:
        A batched `tf.data.Dataset`.
    """
    boundaries = list(boundaries)
    if any(b <= a for a, b in zip(boundaries, boundaries[1:], strict=False)) or any(
        not isinstance(b, int) or b < 1 for b in boundaries
    ):
        raise ValueError(
            "`boundaries` must be strictly increasing positive ints. "
            f"Received: boundaries={boundaries!r}"
        )
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(
            f"`batch_size` must be a positive int. Received: batch_size={batch_size!r}"
        )
    options = tf.data.Options()
    options.autotune.enabled = False
    return ds.bucket_by_sequence_length(
        element_length_func=length_fn,
        bucket_boundaries=boundaries,
        bucket_batch_sizes=[batch_size] * (len(boundaries) + 1),
        padded_shapes=padded_shapes,
        padding_values=padding_values,
        drop_remainder=drop_remainder,
    ).with_options(options)


def validate_more_often(train_ds, epochs, evals_per_epoch):
    """Validation `evals_per_epoch` times per pass over `train_ds` in `Model.fit`.

    Keras validates (and callbacks such as `EarlyStopping(restore_best_weights=True)`
    or checkpoints choose weights) once per Keras epoch. On a large training set one
    pass can already overfit; this cuts each pass into `evals_per_epoch` Keras epochs
    of equal step counts, over the same batches in the same order.

    Args:
        train_ds: a finite `tf.data.Dataset` of training batches (it is iterated once
            here to count its batches).
        epochs: passes over the data.
        evals_per_epoch: validations per pass (1 returns the inputs unchanged).

    Returns:
        `(dataset, fit_kwargs)`: pass both to `keras.Model.fit` (`fit_kwargs` holds
        `epochs` and, when cut, `steps_per_epoch`).
    """
    dataset, fit_kwargs, _ = validation_rounds(train_ds, epochs, evals_per_epoch)
    return dataset, fit_kwargs


def validation_rounds(train_ds, epochs, evals_per_epoch):
    """`validate_more_often`, also returning the number of batches of one pass (None
    when `evals_per_epoch` is 1 and the data is not counted)."""
    for name, value in (("epochs", epochs), ("evals_per_epoch", evals_per_epoch)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"`{name}` must be a positive int. Received: {value!r}")
    if evals_per_epoch == 1:
        return train_ds, {"epochs": epochs}, None
    batches = sum(1 for _ in train_ds)
    if batches == 0:
        raise ValueError("The training data set holds no batch.")
    fit_kwargs = {
        "epochs": epochs * evals_per_epoch,
        "steps_per_epoch": -(-batches // evals_per_epoch),
    }
    return train_ds.repeat(), fit_kwargs, batches


def resume_rounds(train_ds, batches, steps_per_epoch, completed):
    """The stream of training batches of `validation_rounds` for a run resumed after
    `completed` validation rounds.

    The rounds cut the stream `train_ds.repeat()` into `steps_per_epoch` batches
    each, so the resumed run starts `completed * steps_per_epoch` batches into it:
    in pass `p` at batch `w` (`p, w = divmod(completed * steps_per_epoch,
    batches)`). tf.data draws a reshuffled pipeline's order (and the state of
    `Dataset.random(rerandomize_each_iteration=True)`) when an iterator of it is
    created, and `repeat` creates one iterator of `train_ds` per pass; so `p`
    iterators of `train_ds` are created here, and dropped with no element read, and
    the stream returned reads pass `p` from its batch `w` (the first `w` batches are
    read and dropped), then the later passes, each in the order of a run that was
    not interrupted.

    Args:
        train_ds: the training `tf.data.Dataset` before `validation_rounds`.
        batches: batches in one pass (`validation_rounds`' third value).
        steps_per_epoch: batches per round.
        completed: rounds completed before the resume.

    Returns:
        The `tf.data.Dataset` to give `Model.fit` in place of the repeated one.
    """
    passes, within = divmod(completed * steps_per_epoch, batches)
    for _ in range(passes):
        iter(train_ds)
    stream = train_ds.repeat()
    return stream.skip(within) if within else stream
