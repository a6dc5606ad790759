"""Labelled text: one reader for every layout, fixed splits.

`load_labelled(path)` recognises the layout and returns `LabelledSplits`: train /
validation / test `LabelledTexts` (texts, int32 class ids, class names). Layouts, in
the order they are recognised:

- a file, by its name (or `format=`): CSV, TSV or JSON lines, optionally `.gz` (see
  `read_labelled`: a TSV without columns given is `label<TAB>sentence` lines, as
  GLUE's SST-2, or PTB trees, as SST); a `.tar.gz`/`.tgz`/`.tar` of aclImdb
  (read member by member, never extracted);
- a folder: IMDB's `{train,test}/{pos,neg}/*.txt` (`aclImdb` or its parent); SST's
  `train.txt`, `dev.txt`, `test.txt` of trees; split files `train.*` with optional
  `valid|val|dev|validation.*` and `test.*`; one folder per class `<class>/*.txt`,
  optionally under `train/`, `valid|val|dev|validation/`, `test/`; exactly one
  `.tar.gz`/`.tgz` (that archive).

Splits the data lacks are seeded, label-stratified parts of its training data
(`zoo.data.files.seeded_split`). Errors are `zoo.errors.DataError`s naming the file
and line; a missing path is a `zoo.errors.MissingPathError`.

CSV and TSV are parsed by Python's `csv` in strict mode (a stray quote is an error
rather than a silently merged field), which gives each record's first line. Not
`pandas.read_csv`: its python engine runs this same parser but reports no record's
line, which had to be recovered by parsing its error texts and re-reading the file.
JSON
lines are decoded one line at a time with `json.loads`, not `pandas.read_json`: its
parser ends a string at a NUL character, drops an unpaired surrogate without a word,
and reads a `null` label and a missing one as the same NaN. Either way the file is
first read through `zoo.data.files.iter_lines` (UTF-8, byte-order mark, `.gz`), and
the fields of every format are checked in one pass, so every problem names its file
and line.
"""

import csv
import dataclasses
import fnmatch
import io
import itertools
import json
import os
import re
import sys
import tarfile
import zlib

import numpy as np

from zoo.data import files
from zoo.errors import ConfigError, DataError, MissingPathError

__all__ = [
    "LabelledSplits",
    "LabelledTexts",
    "is_tree_file",
    "load_labelled",
    "parse_tree",
    "read_class_folder",
    "read_imdb",
    "read_labelled",
    "sorted_labels",
]

IMDB_LABELS = ("neg", "pos")
SST5_LABELS = ("very negative", "negative", "neutral", "positive", "very positive")
SST2_LABELS = ("negative", "positive")
SST_FILES = {"train": "train.txt", "validation": "dev.txt", "test": "test.txt"}
TASKS = ("sst5", "sst2")
SPLITS = ("train", "validation", "test")
_IMDB_MEMBER = re.compile(r"(?:^|/)(train|test)/(pos|neg)/[^/]+\.txt$")
_ARCHIVES = (".tar.gz", ".tgz", ".tar")
_SPLIT_SUFFIXES = tuple(s + gz for s in files.TABLE_SUFFIXES for gz in ("", ".gz"))
_TREE_TOKEN = re.compile(r"\(|\)|[^\s()]+")
_PTB_ESCAPES = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]"}
_TEXT_NAMES = ("text", "sentence", "sentences")
_LABEL_NAMES = ("label", "labels", "class")
_UNKNOWN_FORMAT = (
    "cannot tell the format from the file name; expected a .csv, .tsv/.tab/.txt or "
    ".jsonl/.ndjson/.json file, optionally .gz (or pass the format: csv, tsv or jsonl)"
)


def sorted_labels(labels):
    """The distinct labels, numerically when they all look like numbers."""
    unique = set(labels)
    try:
        return sorted(unique, key=float)
    except ValueError:
        return sorted(unique)


@dataclasses.dataclass
class LabelledTexts:
    """Texts and their class ids: text i is of class `label_names[labels[i]]`.

    `texts, labels = data` unpacks what `fit` takes.

    Attributes:
        texts: list of str.
        labels: int32 NumPy array, one class id per text.
        label_names: tuple of str.
        sources: where each text was read (`"file:line"`, a file, an archive
            member), for error messages.
    """

    texts: list
    labels: np.ndarray
    label_names: tuple
    sources: list = None

    def __post_init__(self):
        self.texts = list(self.texts)
        self.labels = np.asarray(self.labels, dtype="int32").reshape(-1)
        self.label_names = tuple(str(name) for name in self.label_names)
        if len(self.texts) != len(self.labels):
            raise ValueError(
                "`texts` and `labels` must have the same length. Received: "
                f"len(texts)={len(self.texts)}, len(labels)={len(self.labels)}"
            )
        if self.sources is None:
            self.sources = [f"text {i}" for i in range(len(self.texts))]

    @classmethod
    def encode(cls, texts, names, sources=None, label_names=None):
        """From each text's class name; ids index `label_names` (default: the names
        found, `sorted_labels`). A name outside `label_names` is a `DataError` naming
        where it was read."""
        label_names = sorted_labels(names) if label_names is None else label_names
        index = {str(name): i for i, name in enumerate(label_names)}
        sources = sources or [f"text {i}" for i in range(len(texts))]
        for name, source in zip(names, sources, strict=True):
            if name not in index:
                raise DataError(
                    f"{source}: unknown label {name!r}; expected one of "
                    f"{list(index)!r}. Received: label={name!r}"
                )
        return cls(texts, [index[name] for name in names], label_names, sources)

    def __len__(self):
        return len(self.texts)

    def __iter__(self):
        return iter((self.texts, self.labels))

    @property
    def names(self):
        """The class name of each text."""
        return [self.label_names[i] for i in self.labels]

    def counts(self):
        """`{class name: number of texts}`, in class-id order."""
        counts = np.bincount(self.labels, minlength=len(self.label_names))
        return dict(zip(self.label_names, counts.tolist(), strict=True))

    def relabel(self, label_names):
        """The same texts with the ids of `label_names` (see `encode`)."""
        return self.encode(self.texts, self.names, self.sources, label_names)

    def subset(self, indices):
        """The texts at `indices`, in that order."""
        indices = np.asarray(indices, dtype="int64").reshape(-1)
        return LabelledTexts(
            [self.texts[i] for i in indices],
            self.labels[indices],
            self.label_names,
            [self.sources[i] for i in indices],
        )

    def sample(self, limit, seed):
        """A seeded sample of at most `limit` texts, in their order (`self` when
        `limit` is None or not below the size)."""
        if limit is None or len(self) <= limit:
            return self
        keep = np.random.default_rng(seed).permutation(len(self))[:limit]
        return self.subset(np.sort(keep))


@dataclasses.dataclass
class LabelledSplits:
    """Train / validation / test `LabelledTexts` of the same classes, and one line
    describing the data and its split."""

    train: LabelledTexts
    validation: LabelledTexts
    test: LabelledTexts
    description: str = ""

    @property
    def label_names(self):
        return self.train.label_names

    def sizes(self):
        """`{"train": n, "validation": n, "test": n}`."""
        return {split: len(getattr(self, split)) for split in SPLITS}

    def sample(self, max_train=None, max_eval=None, seed=0):
        """Seeded samples of at most `max_train` training texts and `max_eval`
        validation and test texts each; the description says what was sampled."""
        parts, notes = {}, []
        for split, limit in zip(SPLITS, (max_train, max_eval, max_eval), strict=True):
            texts = getattr(self, split)
            parts[split] = kept = texts.sample(limit, seed)
            if len(kept) < len(texts):
                notes.append(f"{len(kept)} of {len(texts)} {split} texts sampled")
        description = "; ".join([self.description, *notes])
        return LabelledSplits(**parts, description=description)


def _field(key, value, given, rule, what):
    """`value`, read from field `key` as `given`; a `ValueError` says what is wrong."""
    if not isinstance(value, str):
        scalar = given is None or isinstance(given, (bool, int, float))
        shown = json.dumps(given) if scalar else f"a {type(given).__name__}"
        raise ValueError(f"field {key!r} holds {shown}; {rule}")
    if bad := re.search("[\ud800-\udfff]", value):
        raise ValueError(
            f"field {key!r} holds an unpaired surrogate (\\u{ord(bad[0]):04x}), "
            "which is not text"
        )
    if not value.strip():
        raise ValueError(f"empty {key!r} (the {what} column)")
    if len(value) > files.MAX_FIELD_CHARS:
        long = f"a field longer than {files.MAX_FIELD_CHARS} characters"
        raise ValueError(f"{long} ({len(value)})")
    return value


def _records(path, records, columns):
    """`LabelledTexts` of `[(line, text, label)]` as read (strings, or JSON values),
    every field of every format checked here: a label is a string or an integer, an
    integer written as a float (`5.0`, `"4.0"`) that integer."""
    if not records:
        raise DataError("no examples in the file", path=path)
    texts, labels = [], []
    for line, text, given in records:
        label = int(given) if isinstance(given, float) and given.is_integer() else given
        label = str(label) if type(label) is int else label
        try:
            texts.append(_field(columns[0], text, text, "expected a string", "text"))
            rule = "a label is a string or an integer"
            label = _field(columns[1], label, given, rule, "label")
        except ValueError as e:
            raise DataError(str(e), path, line) from None
        labels.append(re.sub(r"^(-?\d+)\.0+$", r"\1", label.strip()))  # 4.0: 4
    sources = [f"{path}:{line}" for line, _, _ in records]
    return LabelledTexts.encode(texts, labels, sources)


# --- tables: CSV and TSV through Python's strict `csv`, JSON lines --------------------

_CSV_PROBLEMS = {
    "end of data": "unclosed quote: the quoted field that starts on this line never "
    'ends; close it, and double every quote inside a field ("")',
    "field larger": "a field longer than {limit} characters starts on this line (an "
    "unclosed quote?)",
    "": "malformed CSV ({message}); a field that contains a quote, a comma or a line "
    'break must be quoted, with inner quotes doubled ("")',
}


def _csv_records(path, sep):
    """Yields `(first line, fields)` of each record of a CSV (RFC 4180 quoting) or TSV
    (no quoting) file that is not blank."""
    text = "\n".join(line for _, line in files.iter_lines(path))  # UTF-8, BOM, .gz
    csv.field_size_limit(max(csv.field_size_limit(), files.MAX_FIELD_CHARS))
    quoting = csv.QUOTE_MINIMAL if sep == "," else csv.QUOTE_NONE
    rows = csv.reader(io.StringIO(text), delimiter=sep, quoting=quoting, strict=True)
    start = 1
    try:
        for row in rows:
            if len(row) > 1 or "".join(row).strip():
                yield start, row
            start = rows.line_num + 1
    except csv.Error as e:
        problem = _CSV_PROBLEMS[next(k for k in _CSV_PROBLEMS if k in str(e))]
        problem = problem.format(limit=files.MAX_FIELD_CHARS, message=e)
        raise DataError(problem, path, start) from None


def _read_delimited(path, columns, sep):
    """`[(line, text, label)]` of a CSV or TSV file; `line` is the record's first."""
    kind = "comma-separated" if sep == "," else "tab-separated"
    named = isinstance(columns[0], str)
    records = _csv_records(path, sep)
    line, first = next(records, (None, None))
    if first is None:
        raise DataError("the file is empty" + " (expected a header row)" * named, path)
    width, header, index = len(first), [h.strip() for h in first], columns
    if named and (missing := [c for c in columns if c not in header]):
        hint = " (a tab-separated header in a .csv file? pass the TSV format)"
        hint *= sep == "," and width == 1 and "\t" in header[0]
        found = f"the header has columns {header!r}{hint}"
        raise DataError(f"missing column(s) {missing!r}; {found}", path, line)
    if named:
        index = [header.index(c) for c in columns]
    elif max(columns) >= width:
        found = f"the first record has {width} {kind} field(s)"
        raise DataError(f"column {max(columns)} requested, but {found}", path, line)
    else:
        records = itertools.chain([(line, first)], records)
    where = f"the header's columns {header!r}" if named else "the first record"
    out = []
    for line, row in records:
        if len(row) != width:
            hint = '; quote a field that contains a comma ("hello, world")'
            hint *= sep == "," and len(row) > width
            found = f"expected {width} {kind} fields (as {where}), found {len(row)}"
            raise DataError(found + hint, path, line)
        out.append((line, *(row[i] for i in index)))
    if not out:
        what = "a header but no rows" if named else "no records"
        raise DataError(f"the file has {what}", path)
    return out


def _read_json_lines(path, columns):
    """`[(line, text, label)]` of a JSON-lines file, the values as decoded."""
    out = []
    for line, text in files.iter_lines(path):
        if not text.strip():
            continue
        if line == 1 and text.lstrip().startswith("["):
            problem = "a JSON array; expected JSON lines (one JSON object per line)"
            raise DataError(problem, path, line)
        try:
            record = json.loads(text, strict=False)  # control characters are text
        except json.JSONDecodeError as e:
            problem = f"invalid JSON ({e.msg} at column {e.colno}); expected one "
            raise DataError(problem + "JSON object per line", path, line) from None
        if not isinstance(record, dict):
            problem = f"a JSON {type(record).__name__}, expected an object "
            raise DataError(problem + f'({{"{columns[0]}": ...}})', path, line)
        if missing := [c for c in columns if c not in record]:
            problem = f"missing field(s) {missing!r}; the object has fields "
            raise DataError(problem + f"{list(record)[:20]!r}", path, line)
        out.append((line, *(record[c] for c in columns)))
    if not out:
        raise DataError("no records in the file (it is empty)", path)
    return out


def _read_table(path, text_column, label_column, format):
    """`LabelledTexts` of a CSV, TSV or JSON-lines file (`format`, default from the
    name)."""
    columns = (text_column, label_column)
    received = f"Received: text_column={text_column!r}, label_column={label_column!r}"
    if text_column == label_column:
        raise ConfigError(
            f"The text and label columns must differ (training on the labels teaches "
            f"nothing). {received}"
        )
    fmt = files.table_format(path, format)
    if fmt is None:
        raise DataError(_UNKNOWN_FORMAT, path)
    named = all(isinstance(c, str) for c in columns)
    positions = fmt != "jsonl" and all(type(c) is int and c >= 0 for c in columns)
    if not (named or positions):
        rule = "Columns are all names (the file has a header row, as JSON lines have) "
        rule += "or all 0-based positions (no header)"
        rule = "JSON lines fields are chosen by name" if fmt == "jsonl" else rule
        raise ConfigError(f"{rule}. Received: columns={columns!r}")
    if fmt == "jsonl":
        return _records(path, _read_json_lines(path, columns), columns)
    return _records(path, _read_delimited(path, columns, ",\t"[fmt == "tsv"]), columns)


# --- one file -----------------------------------------------------------------------


def parse_tree(text, path="<string>", line=1):
    """Parses one PTB sentiment tree, e.g. `"(3 (2 a) (4 (3 good) (2 film)))"`, into
    `(words, nodes)`: the leaves (PTB bracket escapes undone) and `(label, start, end)`
    of every node, children first (`nodes[-1]` is the root, `words[start:end]` a
    node's phrase). A malformed tree is a `DataError` at `path` and `line`."""
    snippet = text.strip()
    snippet = snippet if len(snippet) <= 80 else snippet[:80] + "..."

    def error(message):
        return DataError(f"{message}. Received: {snippet!r}", path=path, line=line)

    tokens = _TREE_TOKEN.findall(text)
    if not tokens:
        raise error("empty tree")
    stack, words, nodes, tokens = [], [], [], iter(tokens)
    for tok in tokens:
        if tok == "(":
            if nodes and not stack:
                raise error("text after the end of the tree")
            label = next(tokens, "(")
            if label in "()":
                raise error("expected a label after '('")
            if not (len(label) == 1 and label in "01234"):
                raise error(f"invalid sentiment label {label!r} (expected 0-4)")
            stack.append((int(label), len(words)))
        elif tok == ")":
            if not stack:
                raise error("unbalanced ')'")
            label, start = stack.pop()
            if start == len(words):
                raise error("a node has no words")
            nodes.append((label, start, len(words)))
        elif not stack:
            raise error(f"word {tok!r} outside any node")
        else:
            words.append(_PTB_ESCAPES.get(tok, tok))
    if stack:
        raise error(f"unbalanced brackets: {len(stack)} '(' not closed")
    return words, nodes


def is_tree_file(path):
    """True when the first non-empty line of `path` is a PTB tree (SST's format)."""
    for _, line in files.iter_lines(path):
        if line.strip():
            return line.lstrip().startswith("(")
    return False


def _read_trees(path, task, phrases):
    """SST trees, one per line, labelled with `SST5_LABELS` or `SST2_LABELS` (SST-2
    drops neutral); `phrases`: every node is an example, deduplicated."""
    if task not in TASKS:
        raise ConfigError(f"task must be one of {TASKS}. Received: task={task!r}")
    names = SST5_LABELS if task == "sst5" else SST2_LABELS
    texts, labels, sources, seen = [], [], [], set()
    for number, line in files.iter_lines(path):
        if not line.strip():
            continue
        words, nodes = parse_tree(line, path=path, line=number)
        for label, start, end in reversed(nodes) if phrases else nodes[-1:]:
            if task == "sst2" and label == 2:
                continue
            text = " ".join(words[start:end])
            if phrases and text in seen:
                continue
            seen.add(text)
            texts.append(text)
            labels.append(names[label if task == "sst5" else int(label > 2)])
            sources.append(f"{path}:{number}")
    return LabelledTexts.encode(texts, labels, sources, names)


def _read_label_lines(path):
    """`label<TAB>sentence` lines (a `label<TAB>...` first line is a header); a header
    naming a text and a label column (`sentence<TAB>label`) is read by name."""
    lines = [(n, line) for n, line in files.iter_lines(path) if line.strip()]
    fields = [f.strip() for f in lines[0][1].split("\t")] if lines else []
    text = [f for f in fields if f.lower() in _TEXT_NAMES]
    label = [f for f in fields if f.lower() in _LABEL_NAMES]
    if text and label:
        return read_labelled(path, text[0], label[0], format="tsv")
    records = []
    for number, line in lines:
        if "\t" not in line:
            received = f"Received: {line.strip()[:80]!r}"
            raise DataError(f"expected 'label<TAB>sentence'. {received}", path, number)
        label, text = line.split("\t", 1)
        if records or label.strip().lower() not in _LABEL_NAMES:
            records.append((number, text.strip(), label))
    return _records(path, records, ("sentence", "label"))


def read_labelled(
    path,
    text_column=None,
    label_column=None,
    *,
    label_names=None,
    format=None,
    task="sst5",
    phrases=False,
):
    """`LabelledTexts` of one file (optionally `.gz`) in the format of its name
    (`files.TABLE_SUFFIXES`) or `format` (`"csv"`, `"tsv"`, `"jsonl"`, `"sst"`).

    `text_column`, `label_column`: header names or JSON keys, or 0-based positions
    without a header row; default `"text"` and `"label"`, except for a TSV when
    neither is given: `label<TAB>sentence` lines (a first line naming the columns,
    e.g. `sentence<TAB>label`, is a header), or SST's PTB trees when the first line is
    one: `task` `"sst5"` or `"sst2"` (neutral dropped, 0/1 negative, 3/4 positive),
    `phrases=True` for every node as an example (duplicates dropped). `label_names`:
    the class names in id order (default: SST's, else the labels found, sorted);
    another label is an error. `sources` are `"file:line"`; blank lines are skipped.

    A label is a string or an integer, and names its class as written, stripped:
    `"pos"`, `"5"`, `5`; an integer written as a float (`5.0`, `"4.0"`) is that
    integer. A JSON label that is `null`, a boolean, a fraction (`1.5`, `NaN`), a
    list or an object is an error at its line, and so is a JSON text that is not a
    string. In CSV and TSV every field is a string: `true` or `NA` there is a
    class name. The text and the label column must differ (`ConfigError`).
    """
    path = files.check_exists(path, "file")
    tsv = text_column is None and label_column is None and format in (None, "tsv")
    tsv = tsv and files.table_format(path, format) == "tsv"
    if format == "sst" or (tsv and format is None and is_tree_file(path)):
        data = _read_trees(path, task, phrases)
    elif tsv:
        data = _read_label_lines(path)
    else:
        text_column = "text" if text_column is None else text_column
        label_column = "label" if label_column is None else label_column
        data = _read_table(path, text_column, label_column, format)
    return data if label_names is None else data.relabel(label_names)


# --- one folder per class -------------------------------------------------------------


def _class_folders(folder, pattern, root=None):
    """`{class: [file, ...]}` of the subfolders of `folder` holding matching files;
    one that links out of `root` (default `folder`) is a `DataError`."""
    classes = {}
    for name in sorted(os.listdir(folder)):
        sub = os.path.join(folder, name)
        if name.startswith(".") or not os.path.isdir(sub):
            continue
        matches = [
            files.check_inside(os.path.join(sub, f), root or folder)
            for f in sorted(os.listdir(sub))
            if not f.startswith(".")
            and fnmatch.fnmatch(f, pattern)
            and os.path.isfile(os.path.join(sub, f))
        ]
        if matches:
            classes[name] = matches
    return classes


def read_class_folder(
    path,
    pattern="*.txt",
    *,
    root=None,
    encoding="utf-8",
    skip_unreadable=False,
    skipped=None,
):
    """`LabelledTexts` of one file per text, `path/<class>/<file>` (the subfolders
    holding files that match the shell `pattern` are the classes), by class then
    file name, stripped; `sources` are the files, which must lie in `root` (default
    `path`). `skip_unreadable`: a file that is not text in `encoding` or is empty is
    skipped with one line to standard error and `(file, reason)` appended to the
    list `skipped`, instead of stopping."""
    path = files.check_exists(path, "folder")
    if not os.path.isdir(path):
        raise DataError("expected a folder of class folders, found a file", path=path)
    classes = _class_folders(path, pattern, root)
    if not classes:
        raise DataError(
            f"no class folders: expected <class>/{pattern} inside. Found: "
            f"{files.listing(path)!r}",
            path=path,
        )
    texts, labels, sources = [], [], []
    for label, paths in classes.items():
        for file in paths:
            try:
                text = files.read_document(file, encoding).strip()
                if not text:
                    raise DataError(f"{file}: empty document.")
            except DataError as error:
                if not skip_unreadable:
                    raise
                if skipped is not None:
                    skipped.append((file, str(error)))
                print(f"skipped: {error}", file=sys.stderr, flush=True)
                continue
            texts.append(text)
            labels.append(label)
            sources.append(file)
    return LabelledTexts.encode(texts, labels, sources)


def _class_folder_splits(path, pattern):
    """`{split: folder}` of a class-folder layout (`{"train": path}` without split
    folders), or None."""
    found = {}
    for split, stems in files.SPLIT_NAMES.items():
        for stem in stems:
            sub = os.path.join(path, stem)
            if os.path.isdir(sub) and _class_folders(sub, pattern, path):
                found[split] = sub
                break
    if found and "train" not in found:
        raise DataError(
            f"split folders {sorted(found)!r} but no train/ with class folders "
            f"(<class>/{pattern}) in it",
            path=path,
        )
    return found or ({"train": path} if _class_folders(path, pattern) else None)


# --- IMDB -----------------------------------------------------------------------------


def _read_imdb_tar(path, out):
    """Appends `(text, label, source)` of the archive's reviews to `out[split]`."""
    try:
        # Random-access mode: its GzipFile (BZ2File, LZMAFile) raises EOFError at a
        # truncated stream, where the stream mode stops silently.
        with tarfile.open(path, "r:*") as tar:
            for member in tar:
                match = _IMDB_MEMBER.search(member.name) if member.isfile() else None
                if not match or match.group(1) not in out:
                    continue
                where = f"{path}:{member.name}"
                text = files.decode_document(tar.extractfile(member).read(), where)
                out[match.group(1)].append((text, match.group(2), where))
            # tarfile stops silently where the data ends, so a tar cut at a member
            # boundary reads as a shorter archive: check for the end-of-archive block
            # (just read, so the seek back stays in the read buffer).
            tar.fileobj.seek(tar.offset)
            end = tar.fileobj.read(512)
            if tar.members and (len(end) < 512 or end.strip(b"\0")):
                raise DataError(
                    f"truncated or corrupt archive: it ends after {len(tar.members)} "
                    f"members (byte {tar.offset}) without tar's end-of-archive block; "
                    "expected a complete .tar.gz/.tgz/.tar of aclImdb",
                    path=path,
                )
    except (tarfile.TarError, EOFError, OSError, zlib.error) as e:
        raise DataError(
            f"truncated or corrupt archive ({type(e).__name__}: {e}); expected a "
            ".tar.gz/.tgz/.tar of aclImdb",
            path=path,
        ) from None


def _imdb_root(path, need=any):
    """The folder holding IMDB's `train/` or (`need=all`) and `test/`."""
    for candidate in (path, os.path.join(path, "aclImdb")):
        if need(
            os.path.isdir(os.path.join(candidate, split, label))
            for split in ("train", "test")
            for label in IMDB_LABELS
        ):
            return candidate
    return None


def read_imdb(path, splits=("train", "test")):
    """`{split: LabelledTexts}` (classes `"neg"`, `"pos"`, file-name order) of IMDB's
    reviews `{train,test}/{pos,neg}/*.txt` (Maas et al. 2011) in `path`: the `aclImdb`
    folder, its parent, or a `.tar.gz`/`.tgz`/`.tar` of it (read member by member)."""
    if any(split not in ("train", "test") for split in splits):
        raise ConfigError(
            f"IMDB splits are 'train' and 'test'. Received: splits={splits!r}"
        )
    path = files.check_exists(path)
    out = {split: [] for split in splits}
    if not os.path.isdir(path):
        _read_imdb_tar(path, out)
    elif (root := _imdb_root(path)) is None:
        raise DataError(
            "not an IMDB folder: expected train/{pos,neg}/ or test/{pos,neg}/ (or "
            f"aclImdb/) inside. Found: {files.listing(path)!r}",
            path=path,
        )
    else:
        for split, label in itertools.product(splits, IMDB_LABELS):
            folder = os.path.join(root, split, label)
            names = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
            for name in fnmatch.filter(names, "*.txt"):
                file = files.check_inside(os.path.join(folder, name), path)
                out[split].append((files.read_document(file), label, file))
    for split, reviews in out.items():
        if not reviews:
            expected = f"(expected {split}/pos/*.txt and {split}/neg/*.txt)."
            raise DataError(
                f"no IMDB reviews found for split {split!r} {expected}", path
            )
        for text, _, source in reviews:
            if not text.strip():
                raise DataError(f"{source}: empty review.")
        texts, labels, sources = zip(*sorted(reviews, key=lambda r: r[2]), strict=True)
        out[split] = LabelledTexts.encode(texts, labels, list(sources), IMDB_LABELS)
    return out


# --- any layout -----------------------------------------------------------------------


def _detect(path, format, pattern):
    """`(kind, detail)` of the layout at `path`; see the module docstring."""
    if os.path.isfile(path):
        if format is not None or files.table_format(path) is not None:
            return "file", {"train": path}
        if path.lower().endswith(_ARCHIVES):
            return "imdb", path
        raise DataError(f"{_UNKNOWN_FORMAT}; or a .tar.gz/.tgz of aclImdb", path)
    if _imdb_root(path, all) is not None:  # else train/{neg,pos} are class folders
        return "imdb", path
    sst = os.path.join(path, SST_FILES["train"])
    if os.path.isfile(sst) and is_tree_file(sst):
        found = {}  # a file missing or linking out of the folder is an error
        for split, name in SST_FILES.items():
            file = os.path.join(path, name)
            if not os.path.isfile(file):
                what = "SST tree file (an SST folder holds train.txt, dev.txt and "
                what += "test.txt)"
                raise MissingPathError(file, what=what)
            found[split] = files.check_inside(file, path)
        return "sst", found
    split_files = files.find_split_files(path, _SPLIT_SUFFIXES)
    if split_files:
        return "file", split_files
    class_splits = _class_folder_splits(path, pattern)
    if class_splits:
        return "class_folders", class_splits
    archives = [f for f in sorted(os.listdir(path)) if f.lower().endswith(_ARCHIVES)]
    if len(archives) == 1:
        return "imdb", os.path.join(path, archives[0])
    raise DataError(
        "no known document layout in the folder; expected the IMDB folder layout "
        "{train,test}/{pos,neg}/*.txt; or an SST tree folder (train.txt, dev.txt, "
        "test.txt); or split files train.csv|tsv|jsonl (with valid|val|dev and test); "
        "or one folder per class, <class>/*.txt (optionally under train/, "
        "valid|val|dev/, test/); or one .tar.gz of aclImdb. Found: "
        f"{files.listing(path)!r}",
        path=path,
    )


def load_labelled(
    path,
    text_column=None,
    label_column=None,
    *,
    label_names=None,
    format=None,
    pattern="*.txt",
    encoding="utf-8",
    skip_unreadable=False,
    task="sst5",
    phrases=False,
    validation_fraction=0.1,
    test_fraction=0.1,
    seed=1337,
):
    """`LabelledSplits` of a file or folder in any layout of the module docstring.

    `text_column`, `label_column`, `format`, `task`: as `read_labelled` reads files;
    `phrases`: phrase-level SST training data (validation and test stay sentences).
    `label_names`: the class names in id order (default: the training data's);
    another label is an error. `pattern`, `encoding`, `skip_unreadable`: as
    `read_class_folder` reads class folders. `validation_fraction`, `test_fraction`,
    `seed`: the seeded parts of the training data held out when the data has no
    validation or no test set.
    """
    fractions = {"validation": validation_fraction, "test": test_fraction}
    files.seeded_split(0, fractions.values(), seed)  # checks the fractions
    path = files.check_exists(path)
    files.table_format(path, format if format != "sst" else None)  # checks `format`
    kind, detail = _detect(path, format, pattern)
    skipped = []
    if kind == "imdb":
        parts = read_imdb(detail)
        what = f"IMDB {detail}"
    elif kind == "class_folders":
        how = dict(encoding=encoding, skip_unreadable=skip_unreadable, skipped=skipped)
        parts = {
            s: read_class_folder(f, pattern, root=path, **how)
            for s, f in detail.items()
        }
        what = f"{path} (one folder per class, {pattern})"
    else:
        how = dict(format="sst" if kind == "sst" else format, task=task)
        parts = {
            s: read_labelled(
                f, text_column, label_column, phrases=phrases and s == "train", **how
            )
            for s, f in detail.items()
        }
        names = ", ".join(os.path.basename(f) for f in detail.values())
        if kind == "sst":
            names = f"SST trees, {task}" + (", phrase-level training" * phrases)
        what = f"{path} ({names})" if os.path.isdir(path) else path
    label_names = tuple(label_names or parts["train"].label_names)
    parts = {s: p.relabel(label_names) for s, p in parts.items()}
    missing = [s for s in ("validation", "test") if s not in parts]
    notes = ""
    if missing:
        train = parts["train"]
        pieces, _ = files.seeded_split(
            len(train), [fractions[s] for s in missing], seed, strata=train.names
        )
        parts.update(zip(["train", *missing], map(train.subset, pieces), strict=True))
        notes = f" ({' and '.join(missing)}: seeded split of the training data, seed {seed})"
    if len(label_names) < 2:
        only = f" ({label_names[0]!r})" if label_names else ""
        raise DataError(
            f"one class only{only}: all {len(parts['train'])} training examples have "
            "the same label, and a classifier needs at least two classes",
            path=path,
        )
    sizes = ", ".join(f"{s} {len(parts[s])}" for s in SPLITS)
    description = f"{what}: {sizes}{notes}"
    if skipped:
        description += f"; {len(skipped)} unreadable file(s) skipped"
    return LabelledSplits(**parts, description=description)
