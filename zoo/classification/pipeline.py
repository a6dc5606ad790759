"""Word vocabularies and `tf.data` pipelines of labelled raw texts.

Both read texts through the model's own in-graph tokenization, so the vocabulary
holds exactly the words the preprocessor will look up.
"""

import numpy as np
import tensorflow as tf

from zoo.text.vocabulary import Vocabulary


def build_word_vocabulary(
    texts, tokenize, path, max_size=None, min_count=1, batch_size=512
):
    """Builds, saves and returns the word `Vocabulary` of `texts`.

    Args:
        texts: list of raw str.
        tokenize: the in-graph tokenization, string tensor `[B]` -> ragged string
            tensor of any rank (its flat values are the words counted), e.g.
            `lambda t: tokenize_documents(t, 30, 50)[1]`.
        path: the vocabulary file written (`Vocabulary.save`).
        max_size: largest vocabulary size, reserved tokens included.
        min_count: words seen fewer times are left out (they map to `[UNK]`).
        batch_size: texts tokenized per step.
    """
    ds = tf.data.Dataset.from_tensor_slices(tf.constant(list(texts), tf.string))
    ds = ds.batch(batch_size).map(lambda t: tokenize(t).flat_values)
    token_lists = (batch.tolist() for batch in ds.as_numpy_iterator())
    vocab = Vocabulary.build(token_lists, max_size=max_size, min_count=min_count)
    vocab.save(path)
    return vocab


def labelled_dataset(
    texts, preprocess, batch_size, shuffle=False, seed=0, buckets=None
):
    """`LabelledTexts` -> batches of `(preprocess(text batch), labels (B,))`.

    Args:
        texts: a `LabelledTexts`.
        preprocess: string tensor `[B]` -> the model's input (e.g.
            `lambda t: preprocessor(t)["token_ids"]`), run in the pipeline.
        batch_size: examples per batch.
        shuffle: reshuffle every epoch (seeded) and, with `buckets`, batch texts of
            similar byte length together (less compute spent on padding); without
            `shuffle` the order is kept.
        seed: the shuffle's seed.
        buckets: increasing byte-length boundaries of the shuffled batches.
    """
    ds = tf.data.Dataset.from_tensor_slices(
        (tf.constant(texts.texts, tf.string), np.asarray(texts.labels, "int32"))
    )
    if shuffle:
        ds = ds.shuffle(len(texts), seed=seed, reshuffle_each_iteration=True)
    if shuffle and buckets:
        from zoo.training import bucket_by_length

        ds = bucket_by_length(
            ds,
            lambda t, y: tf.strings.length(t),
            boundaries=list(buckets),
            batch_size=batch_size,
            padded_shapes=([], []),
        )
    else:
        ds = ds.batch(batch_size)
    ds = ds.map(lambda t, y: (preprocess(t), y), num_parallel_calls=tf.data.AUTOTUNE)
    return ds.prefetch(tf.data.AUTOTUNE)


def labelled_datasets(data, preprocess, batch_size, seed=0, buckets=None):
    """`{"train", "validation", "test"}` datasets of a `ClassificationData`: the
    training set shuffled and bucketed, the others in order (see
    `labelled_dataset`)."""
    return {
        part: labelled_dataset(
            getattr(data, part),
            preprocess,
            batch_size,
            shuffle=part == "train",
            seed=seed,
            buckets=buckets,
        )
        for part in ("train", "validation", "test")
    }
