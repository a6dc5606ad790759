"""Reading data files the same way in every reader: lines, tables, layouts, splits.

Every reader of `zoo.data` reads through these functions: UTF-8 with an optional
byte-order mark (never part of a label, a column or a token), `.gz` decompressed,
lines split on "\\n" only (so line numbers are an editor's), control characters and NUL
kept (the in-graph tokenizers treat them as spaces). Table files are CSV, TSV or JSON
lines, told apart by their names (`table_format`; `zoo.data.labelled` reads them).
Invalid UTF-8 or a truncated `.gz` is a `zoo.errors.DataError` naming the file and
line; a missing path is a `MissingPathError`, and a named pipe or a device
(`/dev/zero`) given as a file or a folder a `DataError`, refused before it is opened.
"""

import gzip
import numbers
import os
import random
import stat
import zlib

from zoo.errors import ConfigError, DataError, MissingPathError

__all__ = [
    "MAX_FIELD_CHARS",
    "TABLE_FORMATS",
    "TABLE_SUFFIXES",
    "check_exists",
    "find_split_files",
    "decode_document",
    "iter_lines",
    "read_document",
    "seeded_split",
    "table_format",
]

MAX_FIELD_CHARS = 1 << 24
"""Longest field accepted, in characters: above `csv`'s 128 Ki default, which real
documents exceed; a longer one is almost always an unclosed quote."""

TABLE_FORMATS = ("csv", "tsv", "jsonl")
"""Formats of table files (`table_format`)."""

TABLE_SUFFIXES = {".csv": "csv", **dict.fromkeys((".tsv", ".tab", ".txt"), "tsv")}
TABLE_SUFFIXES.update(dict.fromkeys((".jsonl", ".ndjson", ".json"), "jsonl"))
"""The format of each table file name ending (optionally followed by `.gz`)."""

SPLIT_NAMES = {
    "train": ("train",),
    "validation": ("valid", "val", "dev", "validation"),
    "test": ("test",),
}
"""File stems of each split in a folder of split files (first match wins)."""

_GZIP_ERRORS = (EOFError, gzip.BadGzipFile, zlib.error)


def check_exists(path, what="file or folder"):
    """`os.fspath(path)`, or `MissingPathError` when nothing is there.

    Only regular files and folders (or links to them) are accepted: a named pipe
    would block the reader until another process writes to it, and a device such as
    `/dev/zero` or `/dev/stdin` never ends; either is a `DataError` naming the path.
    Nothing is opened to tell.
    """
    if path is None:
        raise ConfigError(f"No {what} given. Received: path=None")
    path = os.fspath(path)
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        raise MissingPathError(path, what=what) from None
    except OSError as e:
        raise DataError(f"cannot be read ({e.strerror})", path=path) from None
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        kinds = {stat.S_IFIFO: "a named pipe", stat.S_IFCHR: "a character device"}
        kinds.update({stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket"})
        kind = kinds.get(stat.S_IFMT(mode), "a special file")
        raise DataError(
            f"not a regular file or folder ({kind}): pipes and devices are not read, "
            f"give a {what}",
            path=path,
        )
    return path


def table_format(path, format=None):
    """`"csv"`, `"tsv"` or `"jsonl"` from the name of `path` (`TABLE_SUFFIXES`, optionally
    `.gz`), or None; a given `format` is checked and returned."""
    if format is not None:
        if format not in TABLE_FORMATS:
            raise ConfigError(
                f"`format` must be one of {TABLE_FORMATS}. Received: format={format!r}"
            )
        return format
    name = os.fspath(path).lower().removesuffix(".gz")
    return TABLE_SUFFIXES.get(os.path.splitext(name)[1])


def _decode(raw, path, number):
    """Line `number` of `path` as text, without its line end or a byte-order mark."""
    try:
        text = raw.decode("utf-8").removesuffix("\n").removesuffix("\r")
    except UnicodeDecodeError as e:
        bad = raw[e.start : e.start + 4]
        raise DataError(
            f"invalid UTF-8 (bytes {bad!r} at byte {e.start} of the line); the file "
            "must be UTF-8 text (convert it first, e.g. `iconv -f latin1 -t utf-8`)",
            path=path,
            line=number,
        ) from None
    return text.removeprefix("\ufeff") if number == 1 else text  # utf-8-sig


def iter_lines(path):
    """Yields `(line_number, text)` for every line of a UTF-8 file (`.gz`
    decompressed), without its "\\n" or "\\r\\n"."""
    path = check_exists(path, "file")
    if os.path.isdir(path):
        raise DataError("expected a file, found a folder", path=path)
    number = 0
    try:
        with (gzip.open if path.lower().endswith(".gz") else open)(path, "rb") as f:
            for number, raw in enumerate(f, start=1):
                yield number, _decode(raw, path, number)
    except _GZIP_ERRORS as e:
        raise DataError(
            f"truncated or corrupt gzip file (after line {number}: {e})", path=path
        ) from None


def decode_document(data, path, encoding="utf-8"):
    """The text of one document's bytes (a file, an archive member) in `encoding`
    (UTF-8 with an optional byte-order mark, `"latin-1"`, ...); bytes that are not
    such text are a `DataError` naming `path` and the line."""
    utf8 = encoding.replace("_", "-").lower() in ("utf-8", "utf8")
    try:
        text = data.decode("utf-8" if utf8 else encoding)
    except LookupError:
        raise DataError(f"unknown encoding {encoding!r}", path=path) from None
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        if utf8:
            _decode(data.split(b"\n")[line - 1], path, line)  # raises
        raise DataError(
            f"not {encoding} text (byte {data[e.start]:#04x})", path=path, line=line
        ) from None
    return text.removeprefix("\ufeff")


def read_document(path, encoding="utf-8"):
    """The whole text of one file, as `decode_document` reads it."""
    path = check_exists(path, "file")
    with open(path, "rb") as f:
        return decode_document(f.read(), path, encoding)


# --- folders of split files ----------------------------------------------------------


def find_split_files(folder, suffixes, stems=None):
    """`{split: path}` of the split files in `folder` named `stem + suffix` (`stems`:
    `{split: (stem, ...)}`, default `SPLIT_NAMES`; `suffixes` tried in order); empty
    without a training file. A file linking out of `folder` is a `DataError`."""
    stems = SPLIT_NAMES if stems is None else stems
    names = set(os.listdir(folder)) if os.path.isdir(folder) else set()
    found = {}
    for split, candidates in stems.items():
        matches = (stem + s for stem in candidates for s in suffixes)
        if (match := next((m for m in matches if m in names), None)) is not None:
            found[split] = check_inside(os.path.join(folder, match), folder)
    return found if "train" in found else {}


def check_inside(path, root):
    """`path`, unless it resolves outside the folder `root`: a link out of a data
    folder (to a credentials file, `/proc/self/environ`) is a `DataError`, never read
    into a vocabulary or a model."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    if os.path.commonpath([real_root, real]) != real_root:
        raise DataError(
            f"a symbolic link to {real}, outside the data folder {root}; copy the "
            "file into the folder",
            path=path,
        )
    return path


def listing(folder, limit=10):
    """A short sorted listing of a folder's entries (folders end with "/")."""
    try:
        entries = sorted(os.listdir(folder))
    except OSError:
        return []
    shown = [e + "/" * os.path.isdir(os.path.join(folder, e)) for e in entries[:limit]]
    if len(entries) > limit:
        shown.append(f"... ({len(entries) - limit} more)")
    return shown


# --- the one seeded split ------------------------------------------------------------


def seeded_split(count, fractions, seed, *, strata=None, groups=None):
    """Fixed, seeded held-out parts of `count` items; every reader splits with it.

    Items with the same `groups` key (e.g. a translation's source sentence) form one
    unit that goes to one part: the training part keeps all of its items, a held-out
    part only the first (the others are dropped and counted), so a held-out sentence
    is never trained on. Units are shuffled with `random.Random(seed)`; with `strata`
    (one key per item, e.g. its label) each stratum is shuffled on its own and spread
    evenly over the order, so every part keeps the strata's proportions. Held-out
    part i takes the next `max(1, round(fractions[i] * units))` units of the order;
    the rest is the training part. The same input and seed give the same split on
    any machine.

    Returns:
        `(parts, dropped)`: `parts` is `[train, held_out_1, ...]`, lists of item
        indices in input order; `dropped[i]` counts the items held-out part i left
        out.
    """
    fractions = tuple(fractions)
    positive = all(isinstance(f, numbers.Real) and f > 0 for f in fractions)
    if not fractions or not positive or sum(fractions) >= 1:
        raise ConfigError(
            "Held-out fractions must be positive and sum to less than 1. "
            f"Received: fractions={fractions!r}"
        )
    units = {}
    for i in range(count):
        units.setdefault(i if groups is None else groups[i], []).append(i)
    members = list(units.values())
    rng = random.Random(seed)
    order = list(range(len(members)))
    if strata is None:
        rng.shuffle(order)
    else:
        by_stratum = {}
        for unit, items in enumerate(members):
            by_stratum.setdefault(str(strata[items[0]]), []).append(unit)
        ranked = []
        for s, (_, stratum) in enumerate(sorted(by_stratum.items())):
            rng.shuffle(stratum)
            ranked += [((r + 0.5) / len(stratum), s, u) for r, u in enumerate(stratum)]
        order = [unit for *_, unit in sorted(ranked)]
    parts, dropped, start = [], [], 0
    for fraction in fractions:
        chosen = order[start : start + max(1, int(round(fraction * len(order))))]
        parts.append(sorted(members[u][0] for u in chosen))
        dropped.append(sum(len(members[u]) - 1 for u in chosen))
        start += len(chosen)
    parts.insert(0, sorted(i for u in order[start:] for i in members[u]))
    return parts, dropped
