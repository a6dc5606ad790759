"""Labelled-sentence readers: SST trees, `label<TAB>sentence` TSV, CSV; a demo corpus.

Every reader returns a `SentenceData` (parallel `texts` and integer `labels`, plus the
`label_names` the integers index). Malformed input raises `SentenceFormatError`, whose
message starts with `file:line:`.

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
  a label (e.g. `label<TAB>sentence`) is taken as a header and skipped.
- `read_csv(path, text_column="text", label_column="label")` via pandas, e.g.
  `yelp.csv` with `label_column="stars"`.
- `split_data(data, validation=0.1, test=0.1, seed=0)`: a fixed, seeded split for
  data sets without their own validation/test sets.
- `demo_corpus(...)`: a small generated three-class sentiment corpus for demos and tests.
"""

import dataclasses
import os
import re

import numpy as np

SST5_LABELS = ("very negative", "negative", "neutral", "positive", "very positive")
SST2_LABELS = ("negative", "positive")
TASKS = ("sst5", "sst2")

_TREE_TOKEN = re.compile(r"\(|\)|[^\s()]+")
_PTB_ESCAPES = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]"}


class SentenceFormatError(ValueError):
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
    where = f"{path}:{line}: " if line is not None else f"{path}: "
    suffix = "" if received is None else f" Received: {received!r}"
    return SentenceFormatError(f"{where}{message}.{suffix}")


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
        raise ValueError(f"task must be one of {TASKS}. Received: task={task!r}")


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
    texts, labels, seen = [], [], set()
    with open(path, encoding="utf-8") as f:
        for line_number, line in enumerate(f, start=1):
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
    """
    _check_task(task)
    files = {"train": "train.txt", "validation": "dev.txt", "test": "test.txt"}
    missing = [
        n for n in files.values() if not os.path.isfile(os.path.join(directory, n))
    ]
    if missing:
        raise FileNotFoundError(
            f"SST directory lacks {missing} (expected train.txt, dev.txt, test.txt). "
            f"Received: directory={str(directory)!r}"
        )
    return {
        split: read_sst_trees(
            os.path.join(directory, name), task, phrases=phrases and split == "train"
        )
        for split, name in files.items()
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


def read_tsv(path, label_names=None):
    """Reads `label<TAB>sentence` lines.

    Args:
        path: the file.
        label_names: optional sequence of the allowed labels as they appear in the
            file (their order gives the ids). Default: the labels found, sorted
            (numerically when they are numbers).

    Returns:
        A `SentenceData`. A first line that looks like a header (`label<TAB>...`) is
        skipped; blank lines are skipped.

    Raises:
        SentenceFormatError: a line without a tab, an empty sentence, an empty file,
            or a label not in `label_names`.
    """
    raw = []
    with open(path, encoding="utf-8") as f:
        for line_number, line in enumerate(f, start=1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            if "\t" not in line:
                raise _error(
                    path, line_number, "expected 'label<TAB>sentence'", _snippet(line)
                )
            label, text = line.split("\t", 1)
            label = label.strip()
            if line_number == 1 and label.lower() in ("label", "labels", "class"):
                continue
            if not text.strip():
                raise _error(path, line_number, "empty sentence", _snippet(line))
            raw.append((line_number, label, text.strip()))
    if not raw:
        raise _error(path, None, "no examples in file")
    index, names = _label_index([r[1] for r in raw], label_names, path)
    labels = []
    for line_number, label, _ in raw:
        if label not in index:
            raise _error(
                path, line_number, f"unknown label (allowed: {list(names)})", label
            )
        labels.append(index[label])
    return SentenceData([r[2] for r in raw], labels, names)


def read_csv(path, text_column="text", label_column="label", label_names=None):
    """Reads a CSV file with a text and a label column (pandas).

    Args:
        path: the file (e.g. `yelp_10k/yelp.csv`).
        text_column, label_column: column names (Yelp: `"text"`, `"stars"`).
        label_names: optional allowed labels as strings, in id order. Default: the
            labels found, sorted (numerically when they are numbers).

    Returns:
        A `SentenceData`.

    Raises:
        SentenceFormatError: missing column, empty file, a row with an empty text or
            label (line numbers count the header as line 1), an unknown label.
    """
    import pandas as pd

    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except pd.errors.EmptyDataError as e:
        raise _error(path, None, "empty file") from e
    missing = [c for c in (text_column, label_column) if c not in frame.columns]
    if missing:
        raise _error(
            path, 1, f"missing column(s) {missing}; columns are {list(frame.columns)}"
        )
    if len(frame) == 0:
        raise _error(path, None, "no examples in file")
    texts = frame[text_column].tolist()
    raw = [str(v).strip() for v in frame[label_column].tolist()]
    for i, (text, label) in enumerate(zip(texts, raw, strict=True)):
        # pandas hides the physical line of quoted multi-line rows: report the row
        # number as the line of a one-line-per-row file (header = line 1).
        if not label:
            raise _error(path, i + 2, f"empty {label_column!r}", _snippet(text))
        if not str(text).strip():
            raise _error(path, i + 2, f"empty {text_column!r}", label)
    index, names = _label_index(raw, label_names, path)
    labels = []
    for i, label in enumerate(raw):
        if label not in index:
            raise _error(path, i + 2, f"unknown label (allowed: {list(names)})", label)
        labels.append(index[label])
    return SentenceData([str(t) for t in texts], labels, names)


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
