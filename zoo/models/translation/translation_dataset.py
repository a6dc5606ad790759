"""Length-bucketed training batches for `Seq2SeqTranslator`."""

import tensorflow as tf

from zoo.training import bucket_by_length

# Bucket boundaries, in subwords, of the key `max(source length, target length)`:
# 4 tokens wide up to 24, wider above. One-token-wide buckets would waste less
# compute on padding, but every batch would then hold sentences of one length
# only: batches of mixed lengths give less correlated gradients.
BUCKETS = [8, 12, 16, 20, 24, 32, 48]
SHUFFLE_BUFFER = 20_000


def translation_dataset(
    corpus, preprocessor, batch_size, shuffle=False, seed=None, buckets=BUCKETS
):
    """`({"source_ids", "target_ids"}, labels)` batches of similar lengths.

    Each pair is tokenized once (then cached); batches group pairs of similar
    length (`zoo.training.bucket_by_length` over `buckets`) and are padded only to
    the longest pair of the batch. The decoder input `target_ids` is
    `[START] subwords` and the labels `subwords [END]`.

    Args:
        corpus: sentence pairs, with `sources` and `targets` lists of str.
        preprocessor: a `TranslationPreprocessor`.
        batch_size: pairs per batch.
        shuffle: reshuffle the pairs every epoch (training).
        seed: the shuffle's seed.
        buckets: the length boundaries of the buckets.

    Returns:
        A `tf.data.Dataset`.
    """
    pairs = tf.data.Dataset.from_tensor_slices(
        (tf.constant(corpus.sources), tf.constant(corpus.targets))
    )
    # no autograph: the tokenizers have no data-dependent Python control flow
    encode = tf.autograph.experimental.do_not_convert(preprocessor.encode_pair)
    ds = pairs.batch(512).map(encode).unbatch()
    ds = ds.map(
        lambda s, t: (
            {
                "source_ids": tf.cast(s, tf.int32),
                "target_ids": tf.cast(t[:-1], tf.int32),
            },
            tf.cast(t[1:], tf.int32),
        )
    ).cache()
    if shuffle:
        ds = ds.shuffle(SHUFFLE_BUFFER, seed=seed, reshuffle_each_iteration=True)
    ds = bucket_by_length(
        ds,
        lambda x, y: tf.maximum(tf.shape(x["source_ids"])[0], tf.shape(y)[0]),
        buckets,
        batch_size,
    )
    return ds.prefetch(tf.data.AUTOTUNE)


def count_target_tokens(dataset):
    """`(target tokens, batches)` of one pass over `dataset` (padding not counted)."""
    counts = dataset.map(lambda x, y: tf.reduce_sum(tf.cast(y > 0, tf.int64)))
    tokens, batches = counts.reduce(
        (tf.constant(0, tf.int64), tf.constant(0, tf.int64)),
        lambda total, n: (total[0] + n, total[1] + 1),
    )
    return int(tokens), int(batches)
