"""Labelled documents for classification: every common layout, fixed splits, a demo.

Readers return `Documents` (parallel lists of raw texts and string labels, plus where
each text came from, for error messages). `load_documents(path)` picks the reader from
the path and returns `DocumentSplits` (train / validation / test). Layouts, in the
order they are recognised:

- a file, by its name (or `format=`):
  - CSV (`.csv`), TSV (`.tsv`, `.tab`, `.txt`) or JSON lines (`.jsonl`, `.ndjson`,
    `.json`; one object per line), optionally `.gz`, with a text and a label column
    (`text_column`, `label_column`: header names, JSON keys, or 0-based positions for
    a CSV/TSV without a header row), e.g. Yelp's `yelp.csv` (`text`, `stars`);
  - a `.tar.gz`/`.tgz`/`.tar` archive of the IMDB layout, read member by member by
    streaming, never extracted to disk;
- a folder:
  - the IMDB layout of Maas et al. 2011, `{train,test}/{pos,neg}/*.txt` (the folder
    `aclImdb` or its parent);
  - split files `train.{csv,tsv,tab,txt,jsonl,ndjson,json}[.gz]`, with optional
    `valid|val|dev|validation.*` and `test.*` next to it;
  - one folder per class with one file per document, `<class>/*.txt` (the class is
    the folder's name; `pattern=` chooses the files), optionally under split folders
    `train/`, `valid|val|dev|validation/`, `test/`;
  - a folder holding exactly one `.tar.gz`/`.tgz` archive: that archive.

Splits a layout does not have are fixed, seeded parts of its training data: the
validation set (`validation_fraction`) and, without a test set, the test set
(`test_fraction`); e.g. IMDB keeps its test set, a single CSV gets 80/10/10.

Every file is UTF-8 (a byte-order mark is ignored; `.gz` is decompressed). Errors are
`zoo.errors.DataError` naming the file and, where there is one, the line: missing
columns (naming the columns found), a record with more or fewer fields than the
header, an unclosed quote, invalid UTF-8, empty files, empty texts, labels outside the
expected set, a folder in none of the layouts above (listing what it holds). A path
that does not exist is a `zoo.errors.MissingPathError`.

`demo_corpus` generates a small, seeded, multi-sentence corpus whose label depends on a
few key words only, so a model learns it in seconds and its attention maps can be
checked by eye.
"""

import contextlib
import dataclasses
import fnmatch
import gzip
import os
import random
import re
import sys
import tarfile
import zlib

import numpy as np

from zoo.data import files
from zoo.errors import ConfigError, DataError

__all__ = [
    "DocumentSplits",
    "Documents",
    "demo_corpus",
    "demo_splits",
    "encode_labels",
    "load_documents",
    "read_class_folder",
    "read_csv_documents",
    "read_imdb",
    "read_table_documents",
    "split_documents",
]

DEFAULT_SPLIT_SEED = 1337
IMDB_LABELS = ("neg", "pos")
_IMDB_MEMBER = re.compile(r"(?:^|/)(train|test)/(pos|neg)/[^/]+\.txt$")
_ARCHIVES = (".tar.gz", ".tgz", ".tar")
_SPLIT_SUFFIXES = tuple(
    s + gz
    for s in (".csv", ".tsv", ".tab", ".txt", ".jsonl", ".ndjson", ".json")
    for gz in ("", ".gz")
)
LAYOUTS = (
    "a .csv, .tsv/.tab/.txt or .jsonl/.ndjson/.json file (optionally .gz)",
    "a .tar.gz/.tgz of aclImdb",
    "the IMDB folder layout {train,test}/{pos,neg}/*.txt",
    "split files train.csv|tsv|jsonl (with valid|val|dev and test)",
    "one folder per class, <class>/*.txt (optionally under train/, valid|val|dev/, "
    "test/)",
)
"""The layouts `load_documents` recognises, for error messages and help texts."""


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


def check_classes(label_names, train, path):
    """A `DataError` unless there are at least two classes to tell apart."""
    if len(label_names) < 2:
        only = f" ({label_names[0]!r})" if label_names else ""
        raise DataError(
            f"one class only{only}: all {len(train)} training examples have the same "
            "label, and a classifier needs at least two classes",
            path=path,
        )


def encode_labels(documents, label_names):
    """Maps the string labels of `documents` to int ids (index in `label_names`).

    Raises:
        DataError: for a label not in `label_names`, naming the label and where the
            document came from.
    """
    index = {name: i for i, name in enumerate(label_names)}
    ids = np.empty(len(documents), dtype="int32")
    for i, (label, source) in enumerate(
        zip(documents.labels, documents.sources, strict=True)
    ):
        if label not in index:
            raise DataError(
                f"{source}: unknown label {label!r}; expected one of "
                f"{list(label_names)!r}. Received: label={label!r}"
            )
        ids[i] = index[label]
    return ids


def _clean_label(label):
    label = label.strip()
    if re.fullmatch(r"-?\d+\.0+", label):
        label = label.split(".")[0]
    return label


def _check_document(text, where):
    if not text.strip():
        raise DataError(f"{where}: empty document.")


# --- IMDB ------------------------------------------------------------------------


class _TailReader:
    """A read-only stream that remembers the last bytes it gave (for the check that a
    tar archive ends with its end-of-archive block, after tarfile has stopped)."""

    def __init__(self, raw, keep=1 << 16):
        self.raw, self.keep, self.pos, self.tail = raw, keep, 0, b""

    def read(self, n=-1):
        data = self.raw.read(n)
        self.pos += len(data)
        self.tail = (self.tail + data)[-self.keep :]
        return data

    def bytes_at(self, start, n):
        """The `n` bytes at absolute offset `start` (fewer at the end of the
        stream), or None when they are no longer kept."""
        while self.pos < start + n and self.read(start + n - self.pos):
            pass
        begin = self.pos - len(self.tail)
        if start < begin:
            return None
        return self.tail[start - begin : start - begin + n]


_TAR_BLOCK = 512


def _check_tar_end(archive, stream, path, members):
    """A DataError unless the archive ends with tar's end-of-archive (zero) block.

    tarfile stops silently where the data ends, so a tar cut at a member boundary
    (or inside a header) reads as a shorter, complete archive."""
    end = stream.bytes_at(archive.offset, _TAR_BLOCK)
    if end is None:
        return  # trailing data beyond what is kept: tarfile found its end block
    if len(end) < _TAR_BLOCK or end.strip(b"\0"):
        raise DataError(
            f"truncated or corrupt archive: it ends after {members} members "
            f"(byte {archive.offset}) without tar's end-of-archive block; expected a "
            "complete .tar.gz/.tgz/.tar of aclImdb",
            path=path,
        )


def _read_imdb_tar(path, splits):
    out = {split: ([], [], []) for split in splits}
    with open(path, "rb") as f:
        magic = f.read(6)
    gzipped = magic[:2] == b"\x1f\x8b"
    other = magic[:3] == b"BZh" or magic == b"\xfd7zXZ\x00"  # bzip2, xz
    try:
        # tarfile's own stream decompression stops silently at a truncated gzip
        # stream; GzipFile raises EOFError there.
        raw = gzip.open(path, "rb") if gzipped else None
        if raw is None and not other:
            raw = open(path, "rb")  # noqa: SIM115 - closed below
        stream = None if raw is None else _TailReader(raw)
        mode = "r|*" if stream is None else "r|"
        members = 0
        with (
            contextlib.closing(raw) if raw else contextlib.nullcontext(),
            tarfile.open(path, mode=mode, fileobj=stream) as archive,  # no seeks
        ):
            for member in archive:
                members += 1
                if not member.isfile():
                    continue
                match = _IMDB_MEMBER.search(member.name)
                if not match or match.group(1) not in out:
                    continue
                where = f"{path}:{member.name}"
                data = archive.extractfile(member).read()
                texts, labels, sources = out[match.group(1)]
                texts.append(files.decode_document(data, where))
                labels.append(match.group(2))
                sources.append(where)
            if stream is not None and members:
                _check_tar_end(archive, stream, path, members)
    except (tarfile.TarError, EOFError, OSError, zlib.error) as e:
        if isinstance(e, FileNotFoundError):
            raise
        raise DataError(
            f"truncated or corrupt archive ({type(e).__name__}: {e}); expected a "
            ".tar.gz/.tgz/.tar of aclImdb",
            path=path,
        ) from None
    return out


def _imdb_root(path):
    """The folder holding IMDB's `train/` or `test/` with `pos/` and `neg/` in it."""
    for candidate in (path, os.path.join(path, "aclImdb")):
        for split in ("train", "test"):
            folder = os.path.join(candidate, split)
            if all(os.path.isdir(os.path.join(folder, label)) for label in IMDB_LABELS):
                return candidate
    return None


def _read_imdb_dir(path, splits):
    root = _imdb_root(path)
    if root is None:
        raise DataError(
            "not an IMDB folder: expected train/{pos,neg}/ or test/{pos,neg}/ (or "
            f"aclImdb/) inside. Found: {files.listing(path)!r}",
            path=path,
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
                file = files.check_inside(os.path.join(folder, name), path)
                texts.append(files.read_document(file))
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
        MissingPathError: when `path` does not exist.
        DataError: when a requested split has no reviews, a review is empty or not
            UTF-8 (naming the file), or the archive is truncated.
    """
    for split in splits:
        if split not in ("train", "test"):
            raise ConfigError(
                f"IMDB splits are 'train' and 'test'. Received: splits={splits!r}"
            )
    path = files.check_exists(path)
    if os.path.isdir(path):
        raw = _read_imdb_dir(path, splits)
    else:
        raw = _read_imdb_tar(path, splits)
    result = {}
    for split in splits:
        texts, labels, sources = raw[split]
        if not texts:
            raise DataError(
                f"no IMDB reviews found for split {split!r} "
                f"(expected {split}/pos/*.txt and {split}/neg/*.txt).",
                path=path,
            )
        # Archive members come in archive order; sort by name for a stable order.
        order = sorted(range(len(texts)), key=lambda i: sources[i])
        docs = Documents(texts, labels, sources).subset(order)
        for text, source in zip(docs.texts, docs.sources, strict=True):
            if not text.strip():
                raise DataError(f"{source}: empty review.")
        result[split] = docs
    return result


# --- CSV / TSV / JSON lines ----------------------------------------------------------


def read_table_documents(
    path, text_column="text", label_column="label", format=None, sep=None
):
    """Reads documents from a CSV, TSV or JSON-lines file.

    Args:
        path: the file (optionally `.gz`); the format comes from its name (`.csv`;
            `.tsv`, `.tab`, `.txt`; `.jsonl`, `.ndjson`, `.json`) unless `format`
            is given.
        text_column: the column (header name, JSON key, or 0-based position in a
            CSV/TSV without a header row) holding the text.
        label_column: the column holding the label (any type; kept as str,
            integral numbers such as `4.0` become `"4"`).
        format: `"csv"`, `"tsv"` or `"jsonl"`, overriding the file name.
        sep: a field separator overriding the format's (`,` or tab).

    Returns:
        `Documents`; `sources` are `"file:line"` (line 1 is the header).

    Raises:
        MissingPathError: when the file does not exist.
        DataError: for an empty file, missing columns (naming the columns found), a
            record with the wrong number of fields, an unclosed quote, invalid
            UTF-8 or JSON, or a row with an empty text or label (naming file and
            line).
    """
    path = files.check_exists(path, "file")
    if files.table_format(path, format) is None and sep is None:
        format = "tsv"  # any other name: tab-separated, as before
    records = files.read_table(
        path, (text_column, label_column), format=format, delimiter=sep
    )
    texts, labels, sources = [], [], []
    for row, (line, (text, label)) in enumerate(records):
        label = _clean_label(label)
        problem = None
        if not text.strip():
            problem = f"empty text in column {text_column!r}"
        elif not label:
            problem = f"empty label in column {label_column!r}"
        if problem:
            raise DataError(f"{problem} (data row {row + 1}).", path=path, line=line)
        texts.append(text)
        labels.append(label)
        sources.append(f"{path}:{line}")
    return Documents(texts, labels, sources)


def read_csv_documents(
    path, text_column="text", label_column="label", sep=None, format=None
):
    """Reads documents from a CSV/TSV (or JSON-lines) file with a header row.

    `.csv` (and `.csv.gz`) is comma-separated, `.jsonl`/`.ndjson`/`.json` JSON
    lines, anything else (`.tsv`, `.tab`, `.txt`) tab-separated, unless `sep` or
    `format` is given. See `read_table_documents`.
    """
    return read_table_documents(
        path, text_column=text_column, label_column=label_column, format=format, sep=sep
    )


# --- One folder per class --------------------------------------------------------------


def _visible(name):
    return not name.startswith(".")


def _class_folders(folder, pattern, root=None):
    """`{class: [file, ...]}` of the subfolders of `folder` holding matching files;
    a class folder or file that links out of `root` (default `folder`) is a
    `DataError`."""
    root = folder if root is None else root
    classes = {}
    for name in sorted(os.listdir(folder)):
        sub = os.path.join(folder, name)
        if not _visible(name) or not os.path.isdir(sub):
            continue
        matches = [
            files.check_inside(os.path.join(sub, f), root)
            for f in sorted(os.listdir(sub))
            if _visible(f)
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
    log=None,
):
    """Reads one folder per class, one file per document: `path/<class>/<file>`.

    Args:
        path: the folder whose subfolders are the classes (hidden folders and
            folders without matching files are not classes).
        pattern: which files are documents (a shell pattern, e.g. `"*"` for every
            file).
        root: the data folder that every file must lie in, symbolic links
            resolved (default: `path`).
        encoding: the files' text encoding (`"utf-8"`, `"latin-1"`, ...).
        skip_unreadable: skip a file that is not text in `encoding` or is empty,
            with one line to `log` naming it and why, instead of stopping.
        log: where a skipped file's line goes (default: standard error).

    Returns:
        `Documents` labelled with the folder names, sorted by class then file name;
        `sources` are the file paths; `skipped` lists the `(file, reason)` of the
        files skipped.

    Raises:
        MissingPathError: `path` does not exist.
        DataError: no class folder with matching files (listing what the folder
            holds), an empty document, invalid UTF-8 (file and line), a file that
            is a symbolic link out of `root`.
    """
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
    texts, labels, sources, skipped = [], [], [], []
    for label, paths in classes.items():
        for file in paths:
            try:
                text = files.read_document(file, encoding)
                _check_document(text, file)
            except DataError as error:
                if not skip_unreadable:
                    raise
                skipped.append((file, str(error)))
                print(f"skipped: {error}", file=log or sys.stderr, flush=True)
                continue
            texts.append(text)
            labels.append(label)
            sources.append(file)
    documents = Documents(texts, labels, sources)
    documents.skipped = skipped
    return documents


def _class_folder_splits(path, pattern):
    """`{split: folder}` of a class-folder layout, or None."""
    found = {}
    for split, stems in files.SPLIT_NAMES.items():
        for stem in stems:
            sub = os.path.join(path, stem)
            if os.path.isdir(sub) and _class_folders(sub, pattern, path):
                found[split] = sub
                break
    if "train" in found:
        return found
    if found:
        raise DataError(
            f"split folders {sorted(found)!r} but no train/ with class folders "
            f"(<class>/{pattern}) in it",
            path=path,
        )
    if _class_folders(path, pattern):
        return {"all": path}
    return None


def _is_archive(path):
    return path.lower().endswith(_ARCHIVES) and not os.path.isdir(path)


def _complete(parts, seed, validation_fraction, test_fraction):
    """Train / validation / test from the parts a layout has; notes what was split."""
    train, validation, test = (
        parts.get("train"),
        parts.get("validation"),
        parts.get("test"),
    )
    notes = []
    if validation is None and test is None:
        train, validation, test = split_documents(
            train,
            (
                1 - validation_fraction - test_fraction,
                validation_fraction,
                test_fraction,
            ),
            seed=seed,
        )
        notes.append(f"seeded split of the training data, seed {seed}")
    elif validation is None:
        train, validation = split_documents(
            train, (1 - validation_fraction, validation_fraction), seed=seed
        )
        notes.append(f"validation: seeded split of train, seed {seed}")
    elif test is None:
        train, test = split_documents(
            train, (1 - test_fraction, test_fraction), seed=seed
        )
        notes.append(f"test: seeded split of train, seed {seed}")
    sizes = f"train {len(train)}, validation {len(validation)}, test {len(test)}" + (
        f" ({'; '.join(notes)})" if notes else ""
    )
    return train, validation, test, sizes


def _check_fractions(validation_fraction, test_fraction):
    for name, value in (
        ("validation_fraction", validation_fraction),
        ("test_fraction", test_fraction),
    ):
        if not isinstance(value, (int, float)) or not 0 < value < 1:
            raise ConfigError(f"`{name}` must be in (0, 1). Received: {name}={value!r}")
    if validation_fraction + test_fraction >= 1:
        raise ConfigError(
            "`validation_fraction + test_fraction` must be below 1. Received: "
            f"validation_fraction={validation_fraction!r}, "
            f"test_fraction={test_fraction!r}"
        )


def _detect(path, format, pattern):
    """`(kind, detail)` of the layout at `path`; see the module docstring."""
    if os.path.isfile(path):
        if format is not None or files.table_format(path) is not None:
            return "table", None
        if _is_archive(path):
            return "imdb", path
        raise DataError(
            "cannot tell the format from the file name; expected "
            + "; or ".join(LAYOUTS[:2])
            + " (or pass the format: csv, tsv or jsonl)",
            path=path,
        )
    if _imdb_root(path) is not None:
        return "imdb", path
    split_files = files.find_split_files(path, _SPLIT_SUFFIXES)
    if split_files:
        return "split_files", split_files
    class_splits = _class_folder_splits(path, pattern)
    if class_splits:
        return "class_folders", class_splits
    archives = [f for f in sorted(os.listdir(path)) if f.lower().endswith(_ARCHIVES)]
    if len(archives) == 1:
        return "imdb", os.path.join(path, archives[0])
    raise DataError(
        "no known document layout in the folder; expected "
        + "; or ".join(LAYOUTS[2:])
        + f"; or one .tar.gz of aclImdb. Found: {files.listing(path)!r}",
        path=path,
    )


def load_documents(
    path,
    text_column="text",
    label_column=None,
    seed=DEFAULT_SPLIT_SEED,
    validation_fraction=0.1,
    test_fraction=0.1,
    label_names=None,
    *,
    format=None,
    pattern="*.txt",
    encoding="utf-8",
    skip_unreadable=False,
):
    """Reads a data set in any layout of the module docstring; fixed splits.

    Args:
        path: a file or folder (see the module docstring for the layouts and the
            order in which they are recognised).
        text_column, label_column: the text and label columns of CSV/TSV/JSON-lines
            files: header names or JSON keys, or 0-based positions for a CSV/TSV
            without a header row; `label_column=None` means `"label"` (folder
            layouts ignore both).
        seed: seed of the splits made from the training data.
        validation_fraction: part of the training data held out for validation when
            the data has no validation set.
        test_fraction: part of the data held out for testing when the data has no
            test set.
        label_names: optional ordered list of expected labels; a label outside it is
            an error. Default: the sorted labels of the training part.
        format: `"csv"`, `"tsv"` or `"jsonl"`: read `path` (a file) as that format
            whatever its name.
        pattern: the document files of a class-folder layout (a shell pattern).
        encoding, skip_unreadable: how the files of a class-folder layout are read
            (`read_class_folder`); the description counts the skipped files.

    Returns:
        `DocumentSplits`.

    Raises:
        MissingPathError: `path` does not exist.
        DataError: a path in none of the layouts (saying which were expected), and
            every malformed file, with its file and line.
        ConfigError: bad fractions or format.
    """
    _check_fractions(validation_fraction, test_fraction)
    path = files.check_exists(path)
    label_column = "label" if label_column is None else label_column
    kind, detail = _detect(path, format, pattern)
    columns = f"text={text_column!r}, label={label_column!r}"
    if kind == "imdb":
        imdb = read_imdb(detail)
        train, validation, test, sizes = _complete(
            {"train": imdb["train"], "test": imdb["test"]},
            seed,
            validation_fraction,
            test_fraction,
        )
        description = f"IMDB {detail}: {sizes}"
    elif kind == "table":
        docs = read_table_documents(path, text_column, label_column, format=format)
        train, validation, test, sizes = _complete(
            {"train": docs}, seed, validation_fraction, test_fraction
        )
        description = f"{path} ({columns}): {sizes}"
    elif kind == "split_files":
        parts = {
            split: read_table_documents(file, text_column, label_column, format=format)
            for split, file in detail.items()
        }
        train, validation, test, sizes = _complete(
            parts, seed, validation_fraction, test_fraction
        )
        names = ", ".join(os.path.basename(f) for f in detail.values())
        description = f"{path} ({names}; {columns}): {sizes}"
    else:
        parts = {
            split: read_class_folder(
                folder,
                pattern,
                root=path,
                encoding=encoding,
                skip_unreadable=skip_unreadable,
            )
            for split, folder in detail.items()
        }
        skipped = sum(len(getattr(part, "skipped", ())) for part in parts.values())
        parts["train"] = parts.pop("all", parts.get("train"))
        train, validation, test, sizes = _complete(
            parts, seed, validation_fraction, test_fraction
        )
        description = f"{path} (one folder per class, {pattern}): {sizes}"
        if skipped:
            description += f"; {skipped} unreadable file(s) skipped"
    if label_names is None:
        label_names = _sorted_labels(train.labels)
    label_names = list(label_names)
    check_classes(label_names, train, path)
    for part in (train, validation, test):
        encode_labels(part, label_names)  # raises on an unknown label
    return DocumentSplits(train, validation, test, label_names, description)


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
