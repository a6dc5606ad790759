"""Labelled texts with integer labels (documents and sentences alike), their word
vocabulary and their `tf.data` pipelines.

The vocabulary and the pipelines read texts through the model's own in-graph
tokenization, so the vocabulary holds exactly the words the preprocessor looks up.
"""

import dataclasses

import numpy as np


@dataclasses.dataclass
class LabelledTexts:
    """Raw texts and their class ids.

    Attributes:
        texts: list of str.
        labels: int32 NumPy array, one class id per text.
    """

    texts: list
    labels: np.ndarray

    def __post_init__(self):
        self.texts = list(self.texts)
        self.labels = np.asarray(self.labels, dtype="int32")
        if len(self.texts) != len(self.labels):
            raise ValueError(
                "`texts` and `labels` must have the same length. Received: "
                f"len(texts)={len(self.texts)}, len(labels)={len(self.labels)}"
            )

    def __len__(self):
        return len(self.texts)

    def subset(self, indices):
        """The texts at `indices` (a sequence of ints), in that order."""
        indices = np.asarray(indices, dtype="int64")
        return LabelledTexts([self.texts[i] for i in indices], self.labels[indices])

    def sample(self, limit, seed):
        """A seeded sample of at most `limit` texts, in their original order
        (`self` when `limit` is None or not smaller than the size)."""
        if limit is None or len(self) <= limit:
            return self
        keep = np.random.default_rng(seed).permutation(len(self))[:limit]
        return self.subset(np.sort(keep))


@dataclasses.dataclass
class ClassificationData:
    """Train / validation / test `LabelledTexts` and the class names.

    Attributes:
        train, validation, test: `LabelledTexts`.
        label_names: tuple of str; class id i is `label_names[i]`.
        description: a short human-readable description of the data and split.
    """

    train: LabelledTexts
    validation: LabelledTexts
    test: LabelledTexts
    label_names: tuple
    description: str = ""

    def __post_init__(self):
        self.label_names = tuple(str(name) for name in self.label_names)

    @property
    def num_classes(self):
        return len(self.label_names)

    @classmethod
    def from_documents(cls, splits):
        """From `zoo.data.documents.DocumentSplits` (string labels)."""
        from zoo.data.documents import encode_labels

        parts = {
            part: LabelledTexts(
                getattr(splits, part).texts,
                encode_labels(getattr(splits, part), splits.label_names),
            )
            for part in ("train", "validation", "test")
        }
        return cls(
            **parts, label_names=splits.label_names, description=splits.description
        )

    @classmethod
    def from_sentences(cls, splits, description=""):
        """From `{"train", "validation", "test"}` -> `zoo.data.sentences.SentenceData`."""
        parts = {
            part: LabelledTexts(splits[part].texts, splits[part].labels)
            for part in ("train", "validation", "test")
        }
        return cls(
            **parts, label_names=splits["train"].label_names, description=description
        )

    def sample(self, max_train=None, max_eval=None, seed=0):
        """Seeded samples of at most `max_train` training texts and `max_eval`
        validation and test texts each (the others are kept); the description says
        what was sampled."""
        parts, notes = {}, []
        for part, limit in (
            ("train", max_train),
            ("validation", max_eval),
            ("test", max_eval),
        ):
            texts = getattr(self, part)
            parts[part] = texts.sample(limit, seed)
            if len(parts[part]) < len(texts):
                notes.append(f"{len(parts[part])} of {len(texts)} {part} texts sampled")
        description = (
            "; ".join([self.description, *notes]) if notes else self.description
        )
        return dataclasses.replace(self, **parts, description=description)

    def sizes(self):
        """`{"train": n, "validation": n, "test": n}`."""
        return {
            part: len(getattr(self, part)) for part in ("train", "validation", "test")
        }


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
    import tensorflow as tf

    from zoo.text.vocabulary import Vocabulary

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
    import tensorflow as tf

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
