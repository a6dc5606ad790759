"""`prepare_inputs`: labelled texts -> vocabulary, preprocessor and datasets.

The vocabulary is built before the run folder's identity is checked (the model's
size depends on it), so it is not written where another run's could be: it goes to
`RUN_DIR/vocabularies/<digest of its contents>/vocab.txt`, a file that no other
configuration writes and that never changes once written. A run that is then refused
(another run's backup in the folder) leaves the folder's run untouched; once the
identity check has passed, `TextClassificationInputs.publish` copies the vocabulary
to `RUN_DIR/vocab.txt` for people and tools that look there.
"""

import dataclasses
import os
import pathlib
import shutil

from zoo.classification.pipeline import build_word_vocabulary, labelled_datasets

VOCABULARIES = "vocabularies"


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
        published_vocab_file: where `publish` copies the vocabulary (the
            `vocab_file` asked of `prepare_inputs`).
    """

    texts: object
    preprocessor: object
    vocab_file: str
    train: object
    validation: object
    test: object
    fingerprint: str
    embeddings: object = None
    published_vocab_file: str = None

    def publish(self):
        """Copies the vocabulary to `published_vocab_file` (atomically); called once
        the run folder's identity is checked. Returns the path written, or None."""
        from zoo.io import atomic_path

        target = self.published_vocab_file
        if not target or os.path.abspath(target) == os.path.abspath(self.vocab_file):
            return None
        with atomic_path(target) as tmp:
            shutil.copyfile(self.vocab_file, tmp)
        return target

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
        vocab_file: the vocabulary's name and folder, `RUN_DIR/vocab.txt`: the
            file is written to `RUN_DIR/vocabularies/<digest>/vocab.txt`
            (`keyed_vocabulary`) and copied to `vocab_file` by `publish`.
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

    requested = os.fspath(vocab_file)
    vocab_file = keyed_vocabulary(
        lambda path: build_word_vocabulary(
            texts.train.texts,
            tokenize,
            path,
            max_size=vocab_size,
            min_count=min_count,
        ),
        requested,
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
        published_vocab_file=requested,
    )


def keyed_vocabulary(build, vocab_file):
    """Writes a vocabulary where only its own contents can be: `build(path)` writes
    it, and it lands in `dirname(vocab_file)/vocabularies/<digest of its
    bytes>/basename(vocab_file)` (`zoo.io.content_keyed`), so no configuration
    overwrites another's vocabulary.

    Returns:
        The vocabulary file's path.
    """
    from zoo.io import content_keyed

    return content_keyed(build, vocab_file, VOCABULARIES)
