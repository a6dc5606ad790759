"""`prepare_inputs`: labelled texts -> vocabulary, preprocessor and datasets."""

import dataclasses
import pathlib

from zoo.classification.pipeline import build_word_vocabulary, labelled_datasets


@dataclasses.dataclass
class TextClassificationInputs:
    """What a text classifier is trained, evaluated and exported with.

    Attributes:
        texts: the `ClassificationData` (raw texts, class ids, names, description).
        preprocessor: the in-graph preprocessor built on the vocabulary.
        vocab_file: the vocabulary file.
        train, validation, test: `tf.data` datasets of `(model input, label)`.
        fingerprint: digest of the vocabulary, the class names and the training
            data (what a resumed run must match).
        embeddings: the `InitialEmbeddings`, once chosen.
    """

    texts: object
    preprocessor: object
    vocab_file: str
    train: object
    validation: object
    test: object
    fingerprint: str
    embeddings: object = None

    @property
    def description(self):
        return self.texts.description

    @property
    def label_names(self):
        return self.texts.label_names

    @property
    def vocabulary_size(self):
        return self.preprocessor.lookup.size


def prepare_inputs(
    texts,
    tokenize,
    make_preprocessor,
    vocab_file,
    vocab_size,
    min_count,
    batch_size,
    seed,
    buckets=None,
    preprocess_kwargs=None,
):
    """Builds the vocabulary of the training texts, the preprocessor and the datasets.

    Args:
        texts: a `ClassificationData`.
        tokenize: the preprocessor's in-graph tokenization (see
            `build_word_vocabulary`).
        make_preprocessor: `vocab_file -> preprocessor`; the preprocessor maps a
            string tensor `[B]` to a dict holding `"token_ids"`.
        vocab_file: the vocabulary file written.
        vocab_size, min_count: the vocabulary's size limit and minimum count.
        batch_size: examples per batch.
        seed: the training set's shuffle seed.
        buckets: byte-length bucket boundaries of the training batches.
        preprocess_kwargs: keyword arguments of the preprocessor's call in the
            pipelines (e.g. `{"pad_to_limits": True}`).

    Returns:
        A `TextClassificationInputs`.
    """
    from zoo.training import fingerprint

    build_word_vocabulary(
        texts.train.texts,
        tokenize,
        vocab_file,
        max_size=vocab_size,
        min_count=min_count,
    )
    preprocessor = make_preprocessor(vocab_file)
    kwargs = dict(preprocess_kwargs or {})
    datasets = labelled_datasets(
        texts,
        lambda t: preprocessor(t, **kwargs)["token_ids"],
        batch_size,
        seed=seed,
        buckets=buckets,
    )
    return TextClassificationInputs(
        texts,
        preprocessor,
        str(vocab_file),
        **datasets,
        fingerprint=fingerprint(
            pathlib.Path(vocab_file),
            list(texts.label_names),
            texts.train.texts,
            texts.train.labels,
        ),
    )
