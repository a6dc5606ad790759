"""Labelled-sentence readers: SST trees, TSV, CSV, JSON lines, class folders; a demo.

Every reader returns a `SentenceData` (parallel `texts` and integer `labels`, plus the
`label_names` the integers index). Malformed input raises `SentenceFormatError` (a
`zoo.errors.DataError`), whose message starts with `file:line:`; a path that does not
exist raises `zoo.errors.MissingPathError`. Files are UTF-8 (a byte-order mark is
ignored, invalid UTF-8 is an error naming the line; `.gz` is decompressed).

- `load_sentences(path, ...)`: any layout below, recognised from the path, as
  `{"train", "validation", "test"}`; splits the data lacks are fixed, seeded parts of
  its training data.
- `read_sst_trees(path, task="sst5"|"sst2", phrases=False)`: Stanford Sentiment
  Treebank in PTB tree format, one tree per line, e.g.
  `(3 (2 It) (4 (4 (2 's) (4 (3 (2 a) (4 lovely)) (2 film))) (2 .)))`.
  The sentence's label is the root label. SST-5 keeps the five classes 0..4; SST-2
  drops neutral (2) and maps 0, 1 -> negative and 3, 4 -> positive. With
  `phrases=True` every labelled node (phrase) of every tree becomes an example,
  duplicates removed (first occurrence kept): the phrase-level training set used for
  SST-2 in the literature. `-LRB-`/`-RRB-` become `(`/`)`.
- `load_sst(directory, task, phrases=False)`: `train.txt`, `dev.txt`, `test.txt` of a
  directory (phrase expansion, when asked, is applied to `train` only).
- `read_tsv(path)`: `label<TAB>sentence` lines; a first line whose label field is not
  a label (e.g. `label<TAB>sentence`) is taken as a header and skipped. With
  `text_column=`/`label_column=` any tab-separated file: header names, or 0-based
  positions for a file without a header row.
- `read_csv(path, text_column="text", label_column="label")`, e.g. `yelp.csv` with
  `label_column="stars"` (names, or 0-based positions without a header row).
- `read_jsonl(path, text_column="text", label_column="label")`: one JSON object per
  line.
- `read_class_folder(path, pattern="*.txt")`: `<class>/<file>`, one sentence (or
  short text) per file.
- `split_data(data, validation=0.1, test=0.1, seed=0)`: a fixed, seeded split for
  data sets without their own validation/test sets.
- `demo_corpus(...)`: a small generated three-class sentiment corpus for demos and tests.
"""

import dataclasses
import os
import re

import numpy as np

from zoo.data import files
from zoo.errors import ConfigError, DataError, MissingPathError

SST5_LABELS = ("very negative", "negative", "neutral", "positive", "very positive")
SST2_LABELS = ("negative", "positive")
TASKS = ("sst5", "sst2")
SST_FILES = {"train": "train.txt", "validation": "dev.txt", "test": "test.txt"}

LAYOUTS = (
    "a .csv, .tsv/.tab/.txt or .jsonl/.ndjson/.json file (optionally .gz)",
    "an SST tree folder (train.txt, dev.txt, test.txt)",
    "split files train.csv|tsv|jsonl (with valid|val|dev and test)",
    "one folder per class, <class>/*.txt (optionally under train/, valid|val|dev/, "
    "test/)",
)
"""The layouts `load_sentences` recognises, for error messages and help texts."""

_TREE_TOKEN = re.compile(r"\(|\)|[^\s()]+")
_PTB_ESCAPES = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]"}
_SPLIT_SUFFIXES = tuple(
    s + gz
    for s in (".tsv", ".tab", ".txt", ".csv", ".jsonl", ".ndjson", ".json")
    for gz in ("", ".gz")
)


class SentenceFormatError(DataError):
    """A malformed input file; the message starts with `path:line:`."""


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


def _error(path, line, message, received=None):
    suffix = "" if received is None else f" Received: {received!r}"
    return SentenceFormatError(f"{message}.{suffix}", path=path, line=line)


def _snippet(text, limit=80):
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + "..."


def parse_tree(text, path="<string>", line=1):
    """Parses one PTB sentiment tree.

    Args:
        text: the tree, e.g. `"(3 (2 a) (4 (3 good) (2 film)))"`.
        path, line: where it came from, for error messages.

    Returns:
        `(words, nodes)`: `words` is the list of leaf tokens (PTB bracket escapes
        undone) and `nodes` a list of `(label, start, end)` for every node, children
        before parents, so `nodes[-1]` is the root and `words[start:end]` the phrase.

    Raises:
        SentenceFormatError: unbalanced brackets, missing or invalid label (not 0-4),
            a node without words, words outside a node, or text after the tree.
    """
    tokens = _TREE_TOKEN.findall(text)
    if not tokens:
        raise _error(path, line, "empty tree", _snippet(text))
    stack = []
    words = []
    nodes = []
    closed = False
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok == "(":
            if closed:
                raise _error(
                    path, line, "text after the end of the tree", _snippet(text)
                )
            label = tokens[i + 1] if i + 1 < len(tokens) else None
            if label is None or label in "()":
                raise _error(path, line, "expected a label after '('", _snippet(text))
            if not (len(label) == 1 and label in "01234"):
                raise _error(
                    path,
                    line,
                    f"invalid sentiment label {label!r} (expected 0-4)",
                    _snippet(text),
                )
            stack.append((int(label), len(words)))
            i += 2
        elif tok == ")":
            if not stack:
                raise _error(path, line, "unbalanced ')'", _snippet(text))
            label, start = stack.pop()
            if start == len(words):
                raise _error(path, line, "a node has no words", _snippet(text))
            nodes.append((label, start, len(words)))
            closed = not stack
            i += 1
        else:
            if not stack or closed:
                raise _error(
                    path, line, f"word {tok!r} outside any node", _snippet(text)
                )
            words.append(_PTB_ESCAPES.get(tok, tok))
            i += 1
    if stack:
        raise _error(
            path,
            line,
            f"unbalanced brackets: {len(stack)} '(' not closed",
            _snippet(text),
        )
    return words, nodes


def _map_label(label, task):
    if task == "sst5":
        return label
    if label == 2:
        return None
    return 0 if label < 2 else 1


def _check_task(task):
    if task not in TASKS:
        raise ConfigError(f"task must be one of {TASKS}. Received: task={task!r}")


def read_sst_trees(path, task="sst5", phrases=False):
    """Reads a file of SST PTB trees (one per line) into a `SentenceData`.

    Args:
        path: the file (e.g. `sst/train.txt`).
        task: `"sst5"` (labels 0..4) or `"sst2"` (neutral dropped, 0/1 merged to
            negative, 3/4 to positive).
        phrases: if True, every node of every tree is an example (deduplicated by
            text); otherwise one example per tree with the root label.

    Returns:
        A `SentenceData`; blank lines are skipped.
    """
    _check_task(task)
    path = files.check_exists(path, "file")
    texts, labels, seen = [], [], set()
    for line_number, line in files.iter_lines(path):
        if not line.strip():
            continue
        words, nodes = parse_tree(line, path=path, line=line_number)
        candidates = reversed(nodes) if phrases else nodes[-1:]
        for label, start, end in candidates:
            mapped = _map_label(label, task)
            if mapped is None:
                continue
            text = " ".join(words[start:end])
            if phrases:
                if text in seen:
                    continue
                seen.add(text)
            texts.append(text)
            labels.append(mapped)
    names = SST5_LABELS if task == "sst5" else SST2_LABELS
    return SentenceData(texts, labels, names)


def load_sst(directory, task="sst5", phrases=False):
    """`{"train", "validation", "test"}` -> `SentenceData` from an SST tree directory.

    Args:
        directory: a folder holding `train.txt`, `dev.txt` and `test.txt`.
        task: `"sst5"` or `"sst2"`.
        phrases: phrase-level expansion of the training split only (validation and
            test stay sentence level, as in the published evaluations).

    Raises:
        MissingPathError: the folder or one of its three files does not exist.
        DataError: one of them is a symbolic link out of the folder.
    """
    _check_task(task)
    directory = files.check_exists(directory, "SST folder")
    if not os.path.isdir(directory):
        raise DataError(
            "expected an SST folder (train.txt, dev.txt, test.txt), found a file",
            path=directory,
        )
    for name in SST_FILES.values():
        if not os.path.isfile(os.path.join(directory, name)):
            raise MissingPathError(
                os.path.join(directory, name),
                what="SST tree file (an SST folder holds train.txt, dev.txt and "
                "test.txt)",
            )
        files.check_inside(os.path.join(directory, name), directory)
    return {
        split: read_sst_trees(
            os.path.join(directory, name), task, phrases=phrases and split == "train"
        )
        for split, name in SST_FILES.items()
    }


def _label_index(raw_labels, label_names, path):
    """Maps raw label values to ids; numbers sort numerically, strings as strings."""
    if label_names is None:
        unique = set(raw_labels)
        try:
            ordered = sorted(unique, key=float)
        except ValueError:
            ordered = sorted(unique)
        label_names = tuple(str(v) for v in ordered)
    index = {name: i for i, name in enumerate(label_names)}
    return index, tuple(label_names)


def _from_records(path, records, label_names, text_column, label_column):
    """`SentenceData` from `(line, text, label)` records, checking every row."""
    if not records:
        raise _error(path, None, "no examples in file")
    for line, text, label in records:
        if not label:
            raise _error(path, line, f"empty {label_column!r}", _snippet(text))
        if not text.strip():
            raise _error(path, line, f"empty {text_column!r}", label)
    index, names = _label_index([r[2] for r in records], label_names, path)
    labels = []
    for line, _, label in records:
        if label not in index:
            raise _error(path, line, f"unknown label (allowed: {list(names)})", label)
        labels.append(index[label])
    return SentenceData([r[1] for r in records], labels, names)


def read_table_sentences(
    path, text_column="text", label_column="label", label_names=None, format=None
):
    """Reads a CSV, TSV or JSON-lines file with a text and a label column.

    Args:
        path: the file (optionally `.gz`); the format comes from its name (`.csv`;
            `.tsv`, `.tab`, `.txt`; `.jsonl`, `.ndjson`, `.json`) unless `format` is
            given.
        text_column, label_column: header names or JSON keys, or 0-based positions
            for a CSV/TSV without a header row.
        label_names: optional allowed labels as strings, in id order. Default: the
            labels found, sorted (numerically when they are numbers).
        format: `"csv"`, `"tsv"` or `"jsonl"`, overriding the file name.

    Returns:
        A `SentenceData`.

    Raises:
        SentenceFormatError: missing column, empty file, a record with the wrong
            number of fields, an unclosed quote, invalid UTF-8 or JSON, a row with an
            empty text or label, an unknown label; each with file and line.
    """
    path = files.check_exists(path, "file")
    try:
        table = files.read_table(path, (text_column, label_column), format=format)
    except SentenceFormatError:
        raise
    except DataError as e:
        raise SentenceFormatError(e.message, path=e.path, line=e.line) from None
    records = [(line, text, _clean_label(label)) for line, (text, label) in table]
    return _from_records(path, records, label_names, text_column, label_column)


def _clean_label(label):
    label = label.strip()
    if re.fullmatch(r"-?\d+\.0+", label):
        label = label.split(".")[0]
    return label


def read_tsv(path, label_names=None, *, text_column=None, label_column=None):
    """Reads `label<TAB>sentence` lines, or the named columns of any TSV.

    Args:
        path: the file (optionally `.gz`).
        label_names: optional sequence of the allowed labels as they appear in the
            file (their order gives the ids). Default: the labels found, sorted
            (numerically when they are numbers).
        text_column, label_column: both None (default): `label<TAB>sentence` lines.
            Otherwise the columns to read (header names, or 0-based positions for a
            file without a header row), e.g. `text_column=0, label_column=1` for
            `sentence<TAB>label` lines; every line must then have the same number of
            fields.

    Returns:
        A `SentenceData`. In the `label<TAB>sentence` format a first line that looks
        like a header (`label<TAB>...`) is skipped, blank lines are skipped and a
        sentence may contain further tabs.

    Raises:
        SentenceFormatError: a line without a tab, an empty sentence, an empty file,
            invalid UTF-8 or a label not in `label_names`, with file and line.
    """
    if text_column is not None or label_column is not None:
        if text_column is None or label_column is None:
            raise ConfigError(
                "Give both `text_column` and `label_column`, or neither. Received: "
                f"text_column={text_column!r}, label_column={label_column!r}"
            )
        return read_table_sentences(
            path, text_column, label_column, label_names, format="tsv"
        )
    path = files.check_exists(path, "file")
    header = _named_header(path)
    if header is not None:  # e.g. `text<TAB>label`: read the columns by name
        return read_table_sentences(path, *header, label_names, format="tsv")
    raw = []
    try:
        for line_number, line in files.iter_lines(path):
            if not line.strip():
                continue
            if "\t" not in line:
                raise _error(
                    path, line_number, "expected 'label<TAB>sentence'", _snippet(line)
                )
            label, text = line.split("\t", 1)
            label = label.strip()
            if not raw and label.lower() in ("label", "labels", "class"):
                continue
            raw.append((line_number, label, text.strip()))
    except SentenceFormatError:
        raise
    except DataError as e:
        raise SentenceFormatError(e.message, path=e.path, line=e.line) from None
    records = [(line, text, label) for line, label, text in raw]
    return _from_records(path, records, label_names, "sentence", "label")


def read_csv(
    path, text_column="text", label_column="label", label_names=None, *, format=None
):
    """Reads a CSV file with a text and a label column.

    Args:
        path: the file (e.g. `yelp_10k/yelp.csv`); `.tsv`/`.jsonl` names are read
            as those formats.
        text_column, label_column: column names (Yelp: `"text"`, `"stars"`), or
            0-based positions for a file without a header row.
        label_names: optional allowed labels as strings, in id order. Default: the
            labels found, sorted (numerically when they are numbers).
        format: `"csv"`, `"tsv"` or `"jsonl"`, overriding the file name.

    Returns:
        A `SentenceData`.

    Raises:
        SentenceFormatError: see `read_table_sentences`.
    """
    format = format or files.table_format(path) or "csv"
    return read_table_sentences(path, text_column, label_column, label_names, format)


def read_jsonl(path, text_column="text", label_column="label", label_names=None):
    """Reads JSON lines (one object per line) with a text and a label field.

    Labels may be strings or numbers (`4` and `4.0` both become `"4"`). See
    `read_table_sentences`.
    """
    return read_table_sentences(path, text_column, label_column, label_names, "jsonl")


def read_class_folder(path, pattern="*.txt", label_names=None, *, root=None):
    """Reads `path/<class>/<file>`: one example per file, labelled with its folder.

    See `zoo.data.documents.read_class_folder` (`root`: the data folder every file
    must lie in); `label_names` (default: the sorted folder names) gives the ids.
    """
    from zoo.data.documents import read_class_folder as read_documents

    docs = read_documents(path, pattern, root=root)
    records = [
        (source, text.strip(), label)
        for text, label, source in zip(
            docs.texts, docs.labels, docs.sources, strict=True
        )
    ]
    index, names = _label_index([r[2] for r in records], label_names, path)
    labels = []
    for source, _, label in records:
        if label not in index:
            raise SentenceFormatError(
                f"unknown class folder {label!r} (allowed: {list(names)})", path=source
            )
        labels.append(index[label])
    return SentenceData([r[1] for r in records], labels, names)


def split_data(data, validation=0.1, test=0.1, seed=0):
    """A fixed, seeded `{"train", "validation", "test"}` split of a `SentenceData`."""
    if not 0 <= validation < 1 or not 0 <= test < 1 or validation + test >= 1:
        raise ValueError(
            "validation and test fractions must be in [0, 1) and sum below 1. "
            f"Received: validation={validation!r}, test={test!r}"
        )
    order = np.random.default_rng(seed).permutation(len(data))
    n_test = int(round(len(data) * test))
    n_val = int(round(len(data) * validation))
    return {
        "test": data.subset(np.sort(order[:n_test])),
        "validation": data.subset(np.sort(order[n_test : n_test + n_val])),
        "train": data.subset(np.sort(order[n_test + n_val :])),
    }


_TEXT_NAMES = ("text", "sentence", "sentences")
_LABEL_NAMES = ("label", "labels", "class")


def _named_header(path):
    """`(text column, label column)` names when the first line of a TSV is a header
    naming both (`text<TAB>label`, `sentence<TAB>label`, ...), else None."""
    try:
        for _, line in files.iter_lines(path):
            if line.strip():
                fields = [f.strip() for f in line.split("\t")]
                text = [f for f in fields if f.lower() in _TEXT_NAMES]
                label = [f for f in fields if f.lower() in _LABEL_NAMES]
                return (text[0], label[0]) if text and label else None
    except DataError:
        return None  # read_tsv reports it with its line
    return None


def is_tree_file(path):
    """True when the first non-empty line of `path` is a PTB tree (SST's format)."""
    for _, line in files.iter_lines(path):
        if line.strip():
            return line.lstrip().startswith("(")
    return False


def _read_table_file(path, text_column, label_column, label_names, format):
    fmt = files.table_format(path, format)
    if fmt == "tsv" and text_column is None and label_column is None:
        return read_tsv(path, label_names)
    return read_table_sentences(
        path,
        "text" if text_column is None else text_column,
        "label" if label_column is None else label_column,
        label_names,
        fmt,
    )


def _complete(parts, validation, test, seed, path):
    """`{"train", "validation", "test"}` from the parts a layout has; one class only
    is a `DataError` naming `path`."""
    from zoo.data.documents import check_classes

    check_classes(list(parts["train"].label_names), parts["train"], path)
    if "validation" in parts and "test" in parts:
        return parts
    train = parts["train"]
    if "validation" not in parts and "test" not in parts:
        return split_data(train, validation=validation, test=test, seed=seed)
    missing = "validation" if "validation" not in parts else "test"
    fraction = validation if missing == "validation" else test
    held = split_data(train, validation=0.0, test=fraction, seed=seed)
    return {**parts, "train": held["train"], missing: held["test"]}


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
    """Reads labelled sentences in any supported layout: train / validation / test.

    Layouts, in the order they are recognised:

    - a file, by its name (or `format=`): CSV (`.csv`), TSV (`.tsv`, `.tab`,
      `.txt`), JSON lines (`.jsonl`, `.ndjson`, `.json`), each optionally `.gz`;
    - an SST tree folder: `train.txt`, `dev.txt`, `test.txt` holding PTB trees
      (`task` and `phrases` apply);
    - split files `train.{tsv,tab,txt,csv,jsonl,ndjson,json}[.gz]`, with optional
      `valid|val|dev|validation.*` and `test.*`;
    - one folder per class, `<class>/*.txt` (one example per file; `pattern=`
      chooses the files), optionally under `train/`, `valid|val|dev/`, `test/`.

    Args:
        path: a file or folder.
        task: `"sst5"` or `"sst2"`, for SST trees.
        text_column, label_column: the columns of CSV/TSV/JSON-lines files (header
            names or JSON keys, or 0-based positions for a CSV/TSV without a
            header). Default: `"text"` and `"label"`, except for TSV, which then
            reads `label<TAB>sentence` lines (see `read_tsv`).
        label_names: the allowed labels in id order; default the training data's
            labels, sorted (numerically when they are numbers). Validation and test
            files use the training data's label ids.
        phrases: phrase-level SST training data.
        format: `"csv"`, `"tsv"` or `"jsonl"`: read a file (or the split files) as
            that format whatever its name.
        pattern: the example files of a class-folder layout (a shell pattern).
        validation, test: fractions of the training data held out when the data
            has no validation or no test set (a fixed, seeded `split_data`).
        seed: seed of those splits.

    Returns:
        `{"train", "validation", "test"}` -> `SentenceData`, sharing `label_names`.

    Raises:
        MissingPathError: `path` does not exist.
        SentenceFormatError / DataError: a path in none of the layouts (saying which
            were expected) and every malformed file, with its file and line.
    """
    path = files.check_exists(path)
    if os.path.isfile(path):
        if files.table_format(path, format) is None:
            raise DataError(
                "cannot tell the format from the file name; expected "
                f"{LAYOUTS[0]} (or pass the format: csv, tsv or jsonl)",
                path=path,
            )
        data = _read_table_file(path, text_column, label_column, label_names, format)
        return _complete({"train": data}, validation, test, seed, path)
    sst = {s: os.path.join(path, n) for s, n in SST_FILES.items()}
    if os.path.isfile(sst["train"]) and is_tree_file(sst["train"]):
        return load_sst(path, task, phrases=phrases)
    split_files = files.find_split_files(path, _SPLIT_SUFFIXES)
    if split_files:
        train = _read_table_file(
            split_files["train"], text_column, label_column, label_names, format
        )
        parts = {"train": train}
        for split in ("validation", "test"):
            if split in split_files:
                parts[split] = _read_table_file(
                    split_files[split],
                    text_column,
                    label_column,
                    train.label_names,
                    format,
                )
        return _complete(parts, validation, test, seed, path)
    from zoo.data.documents import _class_folder_splits

    class_splits = _class_folder_splits(path, pattern)
    if class_splits:
        folders = dict(class_splits)
        folders["train"] = folders.pop("all", folders.get("train"))
        train = read_class_folder(folders["train"], pattern, label_names, root=path)
        parts = {"train": train}
        for split in ("validation", "test"):
            if split in folders:
                parts[split] = read_class_folder(
                    folders[split], pattern, train.label_names, root=path
                )
        return _complete(parts, validation, test, seed, path)
    raise DataError(
        "no known sentence layout in the folder; expected "
        + "; or ".join(LAYOUTS[1:])
        + f". Found: {files.listing(path)!r}",
        path=path,
    )


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
