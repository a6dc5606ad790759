"""Labelled documents for classification: IMDB, CSV/TSV, fixed splits, a demo corpus.

Readers return `Documents` (parallel lists of raw texts and string labels, plus where
each text came from, for error messages). `load_documents(path)` picks the reader from
the path and returns `DocumentSplits` (train / validation / test):

- the IMDB layout of Maas et al. 2011, `{train,test}/{pos,neg}/*.txt` (the folder
  `aclImdb`, its parent, or a `.tar.gz`/`.tgz` archive of it read member by member with
  `tarfile` streaming, never extracted to disk): its test set is kept; the validation
  set is a fixed, seeded part of its training set;
- CSV (`.csv`) or TSV (`.tsv`, `.tab`, `.txt`) with a header and a text and a label
  column, read with pandas, e.g. Yelp's `yelp.csv` (`text`, `stars`): it has no test
  set, so train / validation / test are a fixed, seeded split (80/10/10 by default).

`demo_corpus` generates a small, seeded, multi-sentence corpus whose label depends on a
few key words only, so a model learns it in seconds and its attention maps can be
checked by eye.

Errors name the file and, where there is one, the line: missing columns (naming the
columns found), empty files, empty texts, labels outside the expected set.
"""

import dataclasses
import os
import random
import re
import tarfile

import numpy as np

__all__ = [
    "DocumentSplits",
    "Documents",
    "demo_corpus",
    "encode_labels",
    "load_documents",
    "read_csv_documents",
    "read_imdb",
    "demo_splits",
    "split_documents",
]

DEFAULT_SPLIT_SEED = 1337
IMDB_LABELS = ("neg", "pos")
_IMDB_MEMBER = re.compile(r"(?:^|/)(train|test)/(pos|neg)/[^/]+\.txt$")


@dataclasses.dataclass
class Documents:
    """Raw documents with string labels.

    Attributes:
        texts: list of str, the raw documents.
        labels: list of str, one label per document.
        sources: list of str, where each document was read (`"file:line"` or a path
            inside an archive); used in error messages.
    """

    texts: list
    labels: list
    sources: list = None

    def __post_init__(self):
        if len(self.texts) != len(self.labels):
            raise ValueError(
                "`texts` and `labels` must have the same length. Received: "
                f"len(texts)={len(self.texts)}, len(labels)={len(self.labels)}"
            )
        if self.sources is None:
            self.sources = [f"document {i}" for i in range(len(self.texts))]

    def __len__(self):
        return len(self.texts)

    def subset(self, indices):
        """The documents at `indices` (a sequence of ints), in that order."""
        return Documents(
            [self.texts[i] for i in indices],
            [self.labels[i] for i in indices],
            [self.sources[i] for i in indices],
        )

    def label_counts(self):
        """`{label: count}`, sorted by label."""
        counts = {}
        for label in self.labels:
            counts[label] = counts.get(label, 0) + 1
        return dict(sorted(counts.items()))


@dataclasses.dataclass
class DocumentSplits:
    """Train / validation / test documents and the ordered class names.

    Attributes:
        train, validation, test: `Documents`.
        label_names: list of str; class id i is `label_names[i]`.
        description: a short human-readable description of the data and split.
    """

    train: Documents
    validation: Documents
    test: Documents
    label_names: list
    description: str = ""


def _sorted_labels(labels):
    """Sorts labels numerically when they all look like numbers, else as strings."""
    unique = set(labels)
    try:
        return sorted(unique, key=float)
    except ValueError:
        return sorted(unique)


def encode_labels(documents, label_names):
    """Maps the string labels of `documents` to int ids (index in `label_names`).

    Raises:
        ValueError: for a label not in `label_names`, naming the label and where the
            document came from.
    """
    index = {name: i for i, name in enumerate(label_names)}
    ids = np.empty(len(documents), dtype="int32")
    for i, (label, source) in enumerate(
        zip(documents.labels, documents.sources, strict=True)
    ):
        if label not in index:
            raise ValueError(
                f"{source}: unknown label {label!r}; expected one of "
                f"{list(label_names)!r}. Received: label={label!r}"
            )
        ids[i] = index[label]
    return ids


# --- IMDB ------------------------------------------------------------------------


def _read_imdb_tar(path, splits):
    out = {split: ([], [], []) for split in splits}
    with tarfile.open(path, mode="r|*") as archive:  # streaming: one pass, no seeks
        for member in archive:
            if not member.isfile():
                continue
            match = _IMDB_MEMBER.search(member.name)
            if not match or match.group(1) not in out:
                continue
            data = archive.extractfile(member).read()
            texts, labels, sources = out[match.group(1)]
            texts.append(data.decode("utf-8", errors="replace"))
            labels.append(match.group(2))
            sources.append(f"{path}:{member.name}")
    return out


def _imdb_root(path):
    for candidate in (path, os.path.join(path, "aclImdb")):
        if os.path.isdir(os.path.join(candidate, "train")) or os.path.isdir(
            os.path.join(candidate, "test")
        ):
            return candidate
    return None


def _read_imdb_dir(path, splits):
    root = _imdb_root(path)
    if root is None:
        raise ValueError(
            f"{path}: not an IMDB folder: expected train/ or test/ (or aclImdb/) "
            f"inside. Found: {sorted(os.listdir(path))[:10]!r}"
        )
    out = {}
    for split in splits:
        texts, labels, sources = [], [], []
        for label in IMDB_LABELS:
            folder = os.path.join(root, split, label)
            if not os.path.isdir(folder):
                continue
            for name in sorted(os.listdir(folder)):
                if not name.endswith(".txt"):
                    continue
                file = os.path.join(folder, name)
                with open(file, "rb") as f:
                    texts.append(f.read().decode("utf-8", errors="replace"))
                labels.append(label)
                sources.append(file)
        out[split] = (texts, labels, sources)
    return out


def read_imdb(path, splits=("train", "test")):
    """Reads the IMDB review layout `{train,test}/{pos,neg}/*.txt`.

    Args:
        path: the `aclImdb` folder, a folder holding it, or a `.tar.gz`/`.tgz`
            archive of it (read by streaming, without extracting).
        splits: which of `"train"`, `"test"` to read.

    Returns:
        `{split: Documents}` with labels `"neg"` / `"pos"`, in file-name order.

    Raises:
        FileNotFoundError: when `path` does not exist.
        ValueError: when a requested split has no reviews, or a review is empty
            (naming the file).
    """
    path = os.fspath(path)
    for split in splits:
        if split not in ("train", "test"):
            raise ValueError(
                f"IMDB splits are 'train' and 'test'. Received: splits={splits!r}"
            )
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file or folder")
    if os.path.isdir(path):
        raw = _read_imdb_dir(path, splits)
    else:
        raw = _read_imdb_tar(path, splits)
    result = {}
    for split in splits:
        texts, labels, sources = raw[split]
        if not texts:
            raise ValueError(
                f"{path}: no IMDB reviews found for split {split!r} "
                f"(expected {split}/pos/*.txt and {split}/neg/*.txt)."
            )
        # Archive members come in archive order; sort by name for a stable order.
        order = sorted(range(len(texts)), key=lambda i: sources[i])
        docs = Documents(texts, labels, sources).subset(order)
        for text, source in zip(docs.texts, docs.sources, strict=True):
            if not text.strip():
                raise ValueError(f"{source}: empty review.")
        result[split] = docs
    return result


# --- CSV / TSV ---------------------------------------------------------------------


def _separator(path, sep):
    if sep is not None:
        return sep
    lower = path.lower()
    for suffix in (".csv", ".csv.gz"):
        if lower.endswith(suffix):
            return ","
    return "\t"


def read_csv_documents(path, text_column="text", label_column="label", sep=None):
    """Reads documents from a CSV/TSV file with a header row, using pandas.

    Args:
        path: the file; `.csv` (and `.csv.gz`) is comma-separated, anything else
            (`.tsv`, `.tab`, `.txt`) tab-separated unless `sep` is given.
        text_column: name of the column holding the text.
        label_column: name of the column holding the label (any type; kept as str,
            integral floats such as `4.0` become `"4"`).
        sep: optional separator overriding the suffix rule.

    Returns:
        `Documents`; `sources` are `"file:line"` (line 1 is the header).

    Raises:
        FileNotFoundError: when the file does not exist.
        ValueError: for an empty file, missing columns (naming the columns found),
            or a row with an empty text or label (naming file and line).
    """
    import pandas as pd

    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: no such file")
    if os.path.getsize(path) == 0:
        raise ValueError(f"{path}: the file is empty.")
    try:
        frame = pd.read_csv(
            path,
            sep=_separator(path, sep),
            dtype=str,
            keep_default_na=False,
            quoting=3 if _separator(path, sep) == "\t" else 0,  # TSV: no quoting
        )
    except pd.errors.EmptyDataError:
        raise ValueError(f"{path}: the file is empty.") from None
    except pd.errors.ParserError as e:
        raise ValueError(f"{path}: cannot parse the file: {e}") from None
    missing = [c for c in (text_column, label_column) if c not in frame.columns]
    if missing:
        raise ValueError(
            f"{path}: missing column(s) {missing!r}; the file has columns "
            f"{list(frame.columns)!r}. Received: text_column={text_column!r}, "
            f"label_column={label_column!r}"
        )
    if len(frame) == 0:
        raise ValueError(f"{path}: the file has a header but no rows.")
    texts, labels, rows = [], [], []
    for row, (text, label) in enumerate(
        zip(frame[text_column], frame[label_column], strict=True)
    ):
        label = label.strip()
        problem = None
        if not text.strip():
            problem = f"empty text in column {text_column!r}"
        elif not label:
            problem = f"empty label in column {label_column!r}"
        if problem:
            line = _record_lines(path, _separator(path, sep))[row]
            raise ValueError(f"{path}:{line}: {problem} (data row {row + 1}).")
        if re.fullmatch(r"-?\d+\.0+", label):
            label = label.split(".")[0]
        texts.append(text)
        labels.append(label)
        rows.append(row)
    lines = _LazyLines(path, _separator(path, sep))
    return Documents(texts, labels, _Sources(path, lines, rows))


def _record_lines(path, sep):
    """The first physical line of every data record (quoted fields may span lines)."""
    import csv

    lines = []
    with open(path, encoding="utf-8", errors="replace", newline="") as f:
        quoting = csv.QUOTE_NONE if sep == "\t" else csv.QUOTE_MINIMAL
        reader = csv.reader(f, delimiter=sep, quoting=quoting)
        previous = 0
        for i, _ in enumerate(reader):
            if i > 0:
                lines.append(previous + 1)
            previous = reader.line_num
    return lines


class _LazyLines:
    """Computes record line numbers only when an error message needs one."""

    def __init__(self, path, sep):
        self.path, self.sep, self._lines = path, sep, None

    def __getitem__(self, row):
        if self._lines is None:
            self._lines = _record_lines(self.path, self.sep)
        return self._lines[row] if row < len(self._lines) else row + 2


class _Sources:
    """A list-like of `"file:line"` strings, computed on access."""

    def __init__(self, path, lines, rows):
        self.path, self.lines, self.rows = path, lines, rows

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        return f"{self.path}:{self.lines[self.rows[i]]}"

    def __iter__(self):
        return (self[i] for i in range(len(self)))


# --- Splits --------------------------------------------------------------------------


def split_documents(
    documents, fractions=(0.8, 0.1, 0.1), seed=DEFAULT_SPLIT_SEED, stratify=True
):
    """A fixed, seeded split into parts of the given fractions.

    With `stratify=True` every label is split separately, so each part keeps the label
    proportions. The same documents, fractions and seed always give the same split.

    Args:
        documents: `Documents`.
        fractions: fractions of the parts (e.g. train/validation/test); they must be
            positive and sum to 1.
        seed: int seed of the shuffle.
        stratify: whether to split each label separately.

    Returns:
        A tuple of `Documents`, one per fraction.
    """
    fractions = tuple(float(f) for f in fractions)
    if (
        not fractions
        or any(f <= 0 for f in fractions)
        or abs(sum(fractions) - 1) > 1e-6
    ):
        raise ValueError(
            "`fractions` must be positive and sum to 1. "
            f"Received: fractions={fractions!r}"
        )
    rng = np.random.default_rng(seed)
    groups = {}
    keys = documents.labels if stratify else [None] * len(documents)
    for i, key in enumerate(keys):
        groups.setdefault(key, []).append(i)
    parts = [[] for _ in fractions]
    for key in sorted(groups, key=str):
        idx = np.array(groups[key])
        idx = idx[rng.permutation(len(idx))]
        bounds = np.round(np.cumsum(fractions) * len(idx)).astype(int)
        start = 0
        for p, end in enumerate(bounds):
            parts[p].extend(idx[start:end].tolist())
            start = end
    out = []
    for part in parts:
        part = sorted(part)
        order = rng.permutation(len(part))
        out.append(documents.subset([part[j] for j in order]))
    return tuple(out)


def _is_imdb(path):
    lower = path.lower()
    if lower.endswith((".tar.gz", ".tgz", ".tar")):
        return True
    return os.path.isdir(path) and _imdb_root(path) is not None


def load_documents(
    path,
    text_column="text",
    label_column=None,
    seed=DEFAULT_SPLIT_SEED,
    validation_fraction=0.1,
    test_fraction=0.1,
    label_names=None,
):
    """Reads a data set and returns its fixed train/validation/test split.

    Args:
        path: an IMDB folder or archive (see `read_imdb`), or a CSV/TSV file (see
            `read_csv_documents`). If `path` is a folder holding one
            `*.tar.gz` archive, that archive is read.
        text_column, label_column: CSV/TSV column names; `label_column=None` means
            `"label"` (IMDB ignores both).
        seed: seed of the split.
        validation_fraction: part of the training data held out for validation.
        test_fraction: part of the data held out for testing when the data has no
            test set (CSV/TSV).
        label_names: optional ordered list of expected labels; a label outside it is
            an error. Default: the sorted labels of the training part.

    Returns:
        `DocumentSplits`.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file or folder")
    if os.path.isdir(path) and _imdb_root(path) is None:
        archives = [
            f for f in sorted(os.listdir(path)) if f.endswith((".tar.gz", ".tgz"))
        ]
        if len(archives) == 1:
            path = os.path.join(path, archives[0])
    if _is_imdb(path):
        imdb = read_imdb(path)
        train, validation = split_documents(
            imdb["train"], (1 - validation_fraction, validation_fraction), seed=seed
        )
        test = imdb["test"]
        description = (
            f"IMDB {path}: train {len(train)}, validation {len(validation)} "
            f"(seeded split of train, seed {seed}), test {len(test)}"
        )
    else:
        docs = read_csv_documents(
            path, text_column=text_column, label_column=label_column or "label"
        )
        train_fraction = 1 - validation_fraction - test_fraction
        train, validation, test = split_documents(
            docs, (train_fraction, validation_fraction, test_fraction), seed=seed
        )
        description = (
            f"{path} (text={text_column!r}, label={label_column or 'label'!r}): "
            f"train {len(train)}, validation {len(validation)}, test {len(test)} "
            f"(seeded split, seed {seed})"
        )
    if label_names is None:
        label_names = _sorted_labels(train.labels)
    label_names = list(label_names)
    for part in (train, validation, test):
        encode_labels(part, label_names)  # raises on an unknown label
    return DocumentSplits(train, validation, test, label_names, description)


# --- Demo corpus ---------------------------------------------------------------------

_SUBJECTS = [
    "the film",
    "the story",
    "the cast",
    "the director",
    "the ending",
    "the music",
    "the script",
    "the camera work",
    "the second half",
    "the lead actor",
]
_FILLER = [
    "{s} runs for about two hours",
    "i watched it on a rainy sunday with my brother",
    "{s} takes place in a small town near the sea",
    "there is a long scene in a train station",
    "{s} was shot in the north of the country",
    "my friend had already seen it twice",
    "the cinema was almost empty that evening",
    "{s} reminded me of an old television series",
    "it is based on a novel from the seventies",
    "we bought tickets a week before",
]
_KEY_SENTENCES = {
    "pos": [
        "{s} was {a} and {a2}",
        "honestly {s} is {a}",
        "i found {s} truly {a}",
    ],
    "neg": [
        "{s} was {a} and {a2}",
        "honestly {s} is {a}",
        "i found {s} truly {a}",
    ],
}
_KEY_WORDS = {
    "pos": ["wonderful", "brilliant", "moving", "excellent", "delightful", "superb"],
    "neg": ["boring", "awful", "dull", "terrible", "clumsy", "tedious"],
}


def demo_corpus(num_documents=400, seed=0, min_sentences=3, max_sentences=6):
    """A small, seeded, learnable corpus of multi-sentence "reviews".

    Every document has `min_sentences`..`max_sentences` sentences: neutral filler
    sentences (shared by both classes) and one or two key sentences holding a
    sentiment word ("wonderful", "boring", ...) that alone decides the label
    (`"pos"` or `"neg"`). The key sentence sits at a random position, so a model must
    find it: its sentence attention and the sentiment word's word attention should
    be high. Key sentences use the same templates in both classes, so only the
    sentiment words carry the label.

    Args:
        num_documents: number of documents (balanced classes).
        seed: random seed; the same seed gives the same corpus.
        min_sentences, max_sentences: sentences per document.

    Returns:
        `Documents` with labels `"neg"` / `"pos"`.
    """
    if num_documents < 2:
        raise ValueError(
            f"`num_documents` must be at least 2. Received: num_documents={num_documents!r}"
        )
    if not 1 <= min_sentences <= max_sentences:
        raise ValueError(
            "Expected 1 <= min_sentences <= max_sentences. Received: "
            f"min_sentences={min_sentences!r}, max_sentences={max_sentences!r}"
        )
    rng = random.Random(seed)
    texts, labels = [], []
    for i in range(num_documents):
        label = IMDB_LABELS[i % 2]
        n = rng.randint(min_sentences, max_sentences)
        num_keys = 1 if n < 4 or rng.random() < 0.6 else 2
        sentences = []
        for _ in range(n - num_keys):
            sentences.append(rng.choice(_FILLER).format(s=rng.choice(_SUBJECTS)))
        for _ in range(num_keys):
            a, a2 = rng.sample(_KEY_WORDS[label], 2)
            key = rng.choice(_KEY_SENTENCES[label]).format(
                s=rng.choice(_SUBJECTS), a=a, a2=a2
            )
            sentences.insert(rng.randint(0, len(sentences)), key)
        punct = [rng.choice([".", ".", ".", "!"]) for _ in sentences]
        text = " ".join(
            s[0].upper() + s[1:] + p for s, p in zip(sentences, punct, strict=True)
        )
        texts.append(text)
        labels.append(label)
    order = list(range(num_documents))
    rng.shuffle(order)
    docs = Documents(
        texts, labels, [f"demo document {i}" for i in range(num_documents)]
    )
    return docs.subset(order)


def demo_splits(num_documents=400, seed=0):
    """`DocumentSplits` of `demo_corpus` (80/10/10, seeded)."""
    docs = demo_corpus(num_documents, seed=seed)
    train, validation, test = split_documents(docs, (0.8, 0.1, 0.1), seed=seed)
    return DocumentSplits(
        train,
        validation,
        test,
        list(IMDB_LABELS),
        f"generated demo corpus: {num_documents} documents, seed {seed}",
    )
