"""Labelled sentences as label ids: SST trees, tables, class folders; a demo.

The reading is `zoo.data.labelled`'s (one reader for every layout); this module gives
its results as `SentenceData` (texts and integer label ids with their `label_names`),
with the defaults of sentence classification (seed 0; a TSV without columns is
`label<TAB>sentence` lines, a `.txt` of PTB trees is SST). Malformed input raises
`SentenceFormatError` (a `zoo.errors.DataError`) whose message starts with
`file:line:`; a missing path raises `zoo.errors.MissingPathError`.

- `load_sentences(path, ...)`: any layout, as `{"train", "validation", "test"}`.
- `load_sst(directory, task="sst5"|"sst2", phrases=False)`: Stanford Sentiment
  Treebank PTB trees `train.txt`, `dev.txt`, `test.txt`; the sentence's label is the
  root's; SST-2 drops neutral (2) and maps 0, 1 -> negative, 3, 4 -> positive;
  `phrases=True` makes every labelled node of the training trees an example
  (deduplicated), the phrase-level training set used for SST-2 in the literature.
- `read_sst_trees(path, ...)`, `read_csv(path, text_column, label_column)`: one file.
- `split_data(data, validation=0.1, test=0.1, seed=0)`: a fixed, seeded split.
- `demo_corpus(...)`: a small generated three-class sentiment corpus.
"""

import contextlib
import dataclasses
import os

import numpy as np

from zoo.data import files, labelled
from zoo.data.labelled import SST2_LABELS, SST5_LABELS, is_tree_file, parse_tree
from zoo.errors import DataError, MissingPathError

__all__ = [
    "SST2_LABELS",
    "SST5_LABELS",
    "SentenceData",
    "SentenceFormatError",
    "demo_corpus",
    "is_tree_file",
    "load_sentences",
    "load_sst",
    "parse_tree",
    "read_csv",
    "read_sentences",
    "read_sst_trees",
    "split_data",
]


class SentenceFormatError(DataError):
    """A malformed input file; the message starts with `path:line:`."""


@contextlib.contextmanager
def _sentence_errors():
    try:
        yield
    except (SentenceFormatError, MissingPathError):
        raise
    except DataError as e:
        raise SentenceFormatError(e.message, path=e.path, line=e.line) from None


@dataclasses.dataclass
class SentenceData:
    """Parallel lists of sentences and integer labels.

    Attributes:
        texts: list of `str`.
        labels: int64 NumPy array, same length, values in `range(len(label_names))`.
        label_names: tuple of `str`, the name of each label id.
    """

    texts: list
    labels: np.ndarray
    label_names: tuple

    def __post_init__(self):
        self.labels = np.asarray(self.labels, dtype="int64")
        self.label_names = tuple(str(n) for n in self.label_names)
        if len(self.texts) != len(self.labels):
            raise ValueError(
                "texts and labels differ in length. Received: "
                f"len(texts)={len(self.texts)}, len(labels)={len(self.labels)}"
            )

    def __len__(self):
        return len(self.texts)

    @property
    def num_classes(self):
        return len(self.label_names)

    def subset(self, indices):
        """The examples at `indices`, in that order."""
        indices = np.asarray(indices, dtype="int64")
        return SentenceData(
            [self.texts[i] for i in indices], self.labels[indices], self.label_names
        )

    def counts(self):
        """Number of examples per label id (a list of ints)."""
        return np.bincount(self.labels, minlength=self.num_classes).tolist()


def _encoded(documents, label_names=None):
    if label_names is None:
        label_names = labelled.sorted_labels(documents.labels)
    with _sentence_errors():
        ids = labelled.encode_labels(documents, label_names)
    return SentenceData(documents.texts, ids, label_names)


def read_sentences(
    path,
    text_column=None,
    label_column=None,
    label_names=None,
    *,
    format=None,
    task="sst5",
    phrases=False,
):
    """One file of `zoo.data.labelled.read_labelled` (a table, `label<TAB>sentence`
    lines, SST trees) as `SentenceData`; `label_names` (default: SST's names, else
    the labels found, sorted) gives the ids."""
    with _sentence_errors():
        docs = labelled.read_labelled(
            path, text_column, label_column, format=format, task=task, phrases=phrases
        )
    return _encoded(docs, label_names or docs.label_names)


def read_sst_trees(path, task="sst5", phrases=False):
    """A file of SST PTB trees (one per line) as `SentenceData`; `phrases=True`
    makes every node of every tree an example (deduplicated by text)."""
    return read_sentences(path, format="sst", task=task, phrases=phrases)


def load_sst(directory, task="sst5", phrases=False):
    """`{"train", "validation", "test"}` -> `SentenceData` of an SST tree folder
    (`train.txt`, `dev.txt`, `test.txt`; phrase expansion, when asked, for train).

    Raises:
        MissingPathError: the folder or one of its three files does not exist.
        DataError: a file, not a folder; a file linking out of the folder.
    """
    directory = files.check_exists(directory, "SST folder")
    if not os.path.isdir(directory):
        raise DataError(
            "expected an SST folder (train.txt, dev.txt, test.txt), found a file",
            path=directory,
        )
    return {
        split: read_sst_trees(file, task, phrases and split == "train")
        for split, file in labelled.sst_files(directory).items()
    }


def read_csv(
    path, text_column="text", label_column="label", label_names=None, *, format=None
):
    """`read_sentences` of a CSV file (or of a TSV / JSON-lines one, by its name or
    `format`), e.g. Yelp's `yelp.csv` with `label_column="stars"`."""
    format = format or files.table_format(path) or "csv"
    return read_sentences(path, text_column, label_column, label_names, format=format)


def split_data(data, validation=0.1, test=0.1, seed=0):
    """A fixed, seeded `{"train", "validation", "test"}` split of a `SentenceData`,
    stratified by label (`zoo.data.files.seeded_split`); a fraction may be 0."""
    if not 0 <= validation < 1 or not 0 <= test < 1 or validation + test >= 1:
        raise ValueError(
            "validation and test fractions must be in [0, 1) and sum below 1. "
            f"Received: validation={validation!r}, test={test!r}"
        )
    held = {k: f for k, f in (("validation", validation), ("test", test)) if f > 0}
    parts = [list(range(len(data)))]
    if held:
        parts, _ = files.seeded_split(
            len(data), list(held.values()), seed, strata=data.labels.tolist()
        )
    out = {"validation": [], "test": []}
    out.update(zip(["train", *held], parts, strict=True))
    return {split: data.subset(out[split]) for split in ("train", "validation", "test")}


def load_sentences(
    path,
    task="sst5",
    text_column=None,
    label_column=None,
    label_names=None,
    phrases=False,
    *,
    format=None,
    pattern="*.txt",
    validation=0.1,
    test=0.1,
    seed=0,
):
    """`{"train", "validation", "test"}` -> `SentenceData` of labelled sentences in
    any layout of `zoo.data.labelled.load_labelled` (`task`, `phrases`: SST trees;
    `validation`, `test`: the fractions held out of the training data when the data
    lacks those sets, seeded with `seed`). The three share `label_names`."""
    with _sentence_errors():
        splits = labelled.load_labelled(
            path,
            text_column,
            label_column,
            label_names=label_names,
            format=format,
            pattern=pattern,
            task=task,
            phrases=phrases,
            validation_fraction=validation,
            test_fraction=test,
            seed=seed,
        )
    return {
        split: _encoded(getattr(splits, split), splits.label_names)
        for split in ("train", "validation", "test")
    }


DEMO_LABELS = ("negative", "neutral", "positive")
_DEMO_POSITIVE = (
    "wonderful",
    "brilliant",
    "moving",
    "delightful",
    "superb",
    "charming",
    "funny",
    "gorgeous",
)
_DEMO_NEGATIVE = (
    "dull",
    "awful",
    "boring",
    "tedious",
    "clumsy",
    "bland",
    "painful",
    "terrible",
)
_DEMO_SUBJECTS = (
    "the film",
    "this movie",
    "the story",
    "the cast",
    "the script",
    "the ending",
    "the director 's work",
    "the soundtrack",
    "the plot",
    "the dialogue",
)
_DEMO_FILLER = (
    "in the end",
    "for most of its running time",
    "at times",
    "on the whole",
    "from start to finish",
    "in its second half",
    "by any measure",
    "as expected",
)
_DEMO_NEUTRAL = ("is", "seems", "feels", "looks", "turns out")


def demo_corpus(num_train=1200, num_validation=200, num_test=200, seed=0):
    """A small generated three-class sentiment corpus (negative / neutral / positive).

    Each sentence has a subject, a verb, filler phrases and zero or one sentiment
    word at a random position; the label follows the sentiment word (none ->
    neutral), so an attention model has to find one word among several.

    Returns:
        `{"train", "validation", "test"}` -> `SentenceData` with `DEMO_LABELS`.
    """
    rng = np.random.default_rng(seed)

    def make(n):
        texts, labels = [], []
        for _ in range(n):
            label = int(rng.integers(3))
            parts = [
                str(rng.choice(_DEMO_SUBJECTS)),
                str(rng.choice(_DEMO_NEUTRAL)),
            ]
            fillers = list(rng.choice(_DEMO_FILLER, size=int(rng.integers(1, 3))))
            if label == 0:
                word = str(rng.choice(_DEMO_NEGATIVE))
            elif label == 2:
                word = str(rng.choice(_DEMO_POSITIVE))
            else:
                word = "ordinary"
            parts.extend(str(f) for f in fillers)
            position = int(rng.integers(2, len(parts) + 1))
            parts.insert(position, word)
            texts.append(" ".join(parts) + " .")
            labels.append(label)
        return SentenceData(texts, labels, DEMO_LABELS)

    return {
        "train": make(num_train),
        "validation": make(num_validation),
        "test": make(num_test),
    }
