"""The translation recipe's splits and length-bucketed batches for `Seq2SeqTranslator`."""

import tensorflow as tf

from zoo.training import bucket_by_length

# Bucket boundaries, in subwords, of the key `max(source length, target length)`:
# 4 tokens wide up to 24, wider above. One-token-wide buckets would waste less
# compute on padding, but every batch would then hold sentences of one length
# only: batches of mixed lengths give less correlated gradients.
BUCKETS = [8, 12, 16, 20, 24, 32, 48]
SHUFFLE_BUFFER = 20_000


def translation_dataset(corpus, preprocessor, batch_size, shuffle=False, seed=None):
    """`({"source_ids", "target_ids"}, labels)` batches of similar lengths.

    Each pair is tokenized once (then cached); batches group pairs of similar
    length (`zoo.training.bucket_by_length` over `BUCKETS`) and are padded only to
    the longest pair of the batch. The decoder input `target_ids` is
    `[START] subwords` and the labels `subwords [END]`.

    Args:
        corpus: sentence pairs, with `sources` and `targets` lists of str.
        preprocessor: a `Seq2SeqTranslatorPreprocessor` with vocabularies.
        batch_size: pairs per batch.
        shuffle: reshuffle the pairs every epoch (training).
        seed: the shuffle's seed.

    Returns:
        A `tf.data.Dataset`.
    """
    pairs = tf.data.Dataset.from_tensor_slices((corpus.sources, corpus.targets))
    # no autograph: the tokenizers have no data-dependent Python control flow
    encode = tf.autograph.experimental.do_not_convert(preprocessor.encode_pair)
    ds = pairs.batch(512).map(encode).unbatch()

    def shift(source, target):  # decoder input `[START] subwords`, labels `... [END]`
        inputs = {"source_ids": tf.cast(source, tf.int32)}
        inputs["target_ids"] = tf.cast(target[:-1], tf.int32)
        return inputs, tf.cast(target[1:], tf.int32)

    ds = ds.map(shift).cache()
    if shuffle:
        ds = ds.shuffle(SHUFFLE_BUFFER, seed=seed, reshuffle_each_iteration=True)

    def length(inputs, labels):  # of the longer side
        return tf.maximum(tf.shape(inputs["source_ids"])[0], tf.shape(labels)[0])

    ds = bucket_by_length(ds, length, BUCKETS, batch_size)
    return ds.prefetch(tf.data.AUTOTUNE)


def count_target_tokens(dataset):
    """`(target tokens, batches)` of one pass over `dataset` (padding not counted)."""
    counts = dataset.map(lambda x, y: tf.reduce_sum(tf.cast(y > 0, tf.int64)))
    counts = list(counts.as_numpy_iterator())  # one per batch
    return int(sum(counts)), len(counts)


def load_translation_splits(
    data,
    languages,
    seed,
    valid_data=None,
    test_data=None,
    source_column=None,
    max_words=80,
    demo_size=2400,
    limits=(None, None),
    log=print,
):
    """The `{"train", "val", "test"}` sentence pairs (`zoo.data.parallel.ParallelCorpus`).

    Without `data`: the generated demo pair (`zoo.demo.parallel.demo_corpus` of
    `demo_size` pairs), split 90/5/5. Otherwise `zoo.data.parallel.load_parallel`:
    `data` (and `valid_data`, `test_data`) a folder of
    `{train,val|valid|dev,test}.{SRC,TGT}[.gz]`, a TSV of pairs (`source_column`) or
    `SRC_FILE,TGT_FILE`; missing splits are seeded 2% parts of the training pairs,
    and training pairs over `max_words` words are skipped.

    Args:
        data, valid_data, test_data: as above (None: the demo pair).
        languages: `(source, target)` language codes (the files' suffixes).
        seed: the seed of the splits and of the samples.
        source_column, max_words, demo_size: as above.
        limits: `(train, evaluation)`: each split is a seeded sample of at most that
            many pairs (None: all).
        log: gets one line per split (`None`: nowhere).
    """
    from zoo.data import parallel
    from zoo.demo.parallel import demo_corpus
    from zoo.training.steps import sample_indices

    if data is None:
        parts = parallel.split_corpus(demo_corpus(demo_size, seed), (0.05, 0.05), seed)
        splits = dict(zip(("train", "val", "test"), parts, strict=True))
    else:
        path, files = parallel.file_specs(data, valid_data, test_data)
        kw = dict(seed=seed, files=files, source_column=source_column)
        splits = parallel.load_parallel(path, *languages, max_words, **kw)
    for split, corpus in splits.items():
        indices = sample_indices(len(corpus), limits[split != "train"], seed)
        splits[split] = corpus if indices is None else corpus.subset(indices)
        if log is not None:
            log(f"[{split}] {len(splits[split])} pairs; {corpus.report}")
    return splits
