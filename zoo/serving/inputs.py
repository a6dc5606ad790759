"""Prediction requests from the command line or from files (stdlib only).

A request row is a dict `{input_name: value}` holding every input of the signature.
Formats:

- `txt`: one text per line (every line, blank ones included, so output line i answers
  input line i); only for a signature with one input.
- `jsonl`: one JSON object per line with the inputs as keys, e.g.
  `{"story": "Mary went to the kitchen.\\nMary got the ball.", "question": "Where is
  the ball?"}`; other keys are ignored, blank lines skipped. Every input is a JSON
  string: a number, boolean, list, object or null is refused with its line.
- `csv` / `tsv`: a header row naming the inputs (other columns are ignored), then one
  row per request row; quoted fields may hold newlines.

Files are read as UTF-8 (a byte-order mark is dropped) and streamed: `iter_rows`
reads one line at a time, so memory follows the batch, not the file. A named pipe is
read as a stream, as standard input (`-`) is; a folder or a device (`/dev/zero`) is
refused with its name before it is opened. A line longer than
`max_line_bytes` (line ending not counted; 1 MiB by default) is refused with its line
number without being read whole, in a `.gz` file too (the limit bounds what it expands
to); in csv/tsv a field longer than that many characters is refused too. A malformed
line, a missing input field or column, a value that is not valid Unicode text (a lone
surrogate such as `"\\ud800"` in JSON) is a `zoo.errors.DataError` naming the file and
line; the run stops there.
"""

import csv
import gzip
import itertools
import json
import os
import re
import stat
import sys
import zlib

from zoo.errors import ConfigError, DataError, MissingPathError

FORMATS = ("txt", "jsonl", "csv", "tsv")
_EXTENSIONS = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
}
DEFAULT_MAX_LINE_BYTES = 1 << 20
_JSON_KINDS = {bool: "a boolean", int: "a number", float: "a number", dict: "an object"}
_JSON_KINDS.update({type(None): "null", list: "a list", tuple: "a list"})
_SURROGATE = re.compile("[\ud800-\udfff]")


def guess_format(path):
    """The format of `path` from its extension (`.gz` aside); `txt` by default."""
    name = os.fspath(path)
    root, ext = os.path.splitext(name)
    if ext == ".gz":
        ext = os.path.splitext(root)[1]
    return _EXTENSIONS.get(ext.lower(), "txt")


def _open_binary(path):
    """The input's bytes: standard input for `-`, a regular file, or a named pipe
    (read as a stream, as standard input is: the command waits for its writer).
    Anything else (a folder, a device such as `/dev/zero`, a socket) is a
    `DataError` naming it, refused before it is opened."""
    if path == "-":
        if sys.stdin is None:  # started with its standard input closed
            raise DataError("standard input is closed; give a file", path=path)
        return sys.stdin.buffer
    try:
        mode = os.stat(path).st_mode
        if stat.S_ISREG(mode) or stat.S_ISFIFO(mode):
            return (gzip.open if path.endswith(".gz") else open)(path, "rb")
    except (FileNotFoundError, NotADirectoryError):
        raise MissingPathError(path, what="input file") from None
    except OSError as e:
        raise DataError(f"cannot be read ({e.strerror})", path=path) from None
    if stat.S_ISDIR(mode):
        raise DataError("is a folder; give a file", path=path)
    kind = "a character device" if stat.S_ISCHR(mode) else "a special file"
    raise DataError(
        f"is {kind}, not a file or a named pipe; give a file, a named pipe, or - for "
        "standard input",
        path=path,
    )


def _decoded(path, max_line_bytes=DEFAULT_MAX_LINE_BYTES):
    """Yields `(line_number, text)` with the line ending kept; a line that is not
    UTF-8, or longer than `max_line_bytes`, is a `DataError` naming it."""
    f = _open_binary(path)
    try:
        for number in itertools.count(1):
            try:  # bounded: the BOM and "\r\n" aside, at most the limit is read
                raw = f.readline(max_line_bytes + 5)
            except (OSError, EOFError, zlib.error) as e:  # e.g. a damaged .gz
                reason = " ".join(str(e).split()) or type(e).__name__
                raise DataError(
                    f"cannot read: {reason}", path=path, line=number
                ) from None
            if not raw:
                break
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if len(raw.rstrip(b"\r\n")) > max_line_bytes:
                raise DataError(
                    f"the line is longer than {max_line_bytes} bytes, the limit per "
                    "line (--max-line-mb raises it)",
                    path=path,
                    line=number,
                )
            try:
                yield number, raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise DataError(
                    f"not valid UTF-8 ({e.reason} at byte {e.start})",
                    path=path,
                    line=number,
                ) from None
    finally:
        if path != "-":
            f.close()


def read_rows(path, input_names, fmt=None, max_line_bytes=DEFAULT_MAX_LINE_BYTES):
    """Reads request rows from a file: `list(iter_rows(...))`.

    Returns:
        A list of `{input_name: value}` dicts, in file order.
    """
    return list(iter_rows(path, input_names, fmt, max_line_bytes))


def iter_rows(path, input_names, fmt=None, max_line_bytes=DEFAULT_MAX_LINE_BYTES):
    """Yields request rows from a file, reading it one line at a time.

    Args:
        path: the file (`-` for standard input).
        input_names: the signature's input names.
        fmt: one of `FORMATS`, or None to guess from the extension.
        max_line_bytes: the longest line (or csv field) accepted.

    Yields:
        `{input_name: value}` dicts, in file order.
    """
    path = os.fspath(path)
    fmt = fmt or ("txt" if path == "-" else guess_format(path))
    input_names = sorted(input_names)
    if fmt == "txt":
        if len(input_names) != 1:
            raise DataError(
                f"a text file (one text per line) feeds a signature with one input; "
                f"this one takes {', '.join(input_names)}: use jsonl or csv with "
                "those keys or columns",
                path=path,
            )
        for _, line in _decoded(path, max_line_bytes):
            yield {input_names[0]: line.rstrip("\r\n")}
    elif fmt == "jsonl":
        yield from _read_jsonl(path, input_names, max_line_bytes)
    elif fmt in ("csv", "tsv"):
        delimiter = "," if fmt == "csv" else "\t"
        yield from _read_delimited(path, input_names, delimiter, max_line_bytes)
    else:
        raise ConfigError(
            f"unknown input format {fmt!r}; formats: {', '.join(FORMATS)}"
        )


def _read_jsonl(path, input_names, max_line_bytes):
    for number, line in _decoded(path, max_line_bytes):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as e:
            raise DataError(
                f"not a JSON object ({e.msg} at column {e.colno})",
                path=path,
                line=number,
            ) from None
        if not isinstance(value, dict):
            raise DataError(
                f"expected a JSON object with the keys {', '.join(input_names)}, "
                f"found a {type(value).__name__}",
                path=path,
                line=number,
            )
        yield _pick(value, input_names, path, number, "field")


def _read_delimited(path, input_names, delimiter, max_line_bytes):
    old_limit = csv.field_size_limit()  # csv's default (128 KiB) is below a document
    csv.field_size_limit(max(old_limit, max_line_bytes))
    lines = (text for _, text in _decoded(path, max_line_bytes))
    reader = csv.reader(lines, delimiter=delimiter, strict=True)
    try:
        header = next(reader, None)
        if header is None:
            raise DataError(
                "empty file; expected a header naming the columns "
                f"{', '.join(input_names)}",
                path=path,
            )
        missing = [n for n in input_names if n not in header]
        if missing:
            raise DataError(
                f"the header lacks the column(s) {', '.join(missing)} "
                f"(columns: {', '.join(header)})",
                path=path,
                line=1,
            )
        for record in reader:
            if not record:
                continue
            if len(record) != len(header):
                raise DataError(
                    f"expected {len(header)} fields as in the header, found "
                    f"{len(record)}",
                    path=path,
                    line=reader.line_num,
                )
            fields = dict(zip(header, record, strict=True))
            row = _pick(fields, input_names, path, reader.line_num, "column")
            for name, value in row.items():
                if len(value) > max_line_bytes:
                    raise DataError(
                        f"column {name!r} is longer than {max_line_bytes} characters, "
                        "the limit per field (--max-line-mb raises it)",
                        path=path,
                        line=reader.line_num,
                    )
            yield row
    except csv.Error as e:
        raise DataError(str(e), path=path, line=reader.line_num) from None
    finally:
        csv.field_size_limit(old_limit)


def _pick(record, input_names, path, line, kind):
    missing = [n for n in input_names if n not in record]
    if missing:
        raise DataError(
            f"missing input {kind}(s) {', '.join(missing)} (the signature takes "
            f"{', '.join(input_names)})",
            path=path,
            line=line,
        )
    row = {}
    for name in input_names:
        value = record[name]
        if not isinstance(value, str):
            raise DataError(
                f"input {kind} {name!r} must be a string, found "
                f"{json_kind(value)}{_shown(value)}",
                path=path,
                line=line,
            )
        problem = unicode_problem(value)
        if problem is not None:
            raise DataError(f"input {kind} {name!r} {problem}", path=path, line=line)
        row[name] = value
    return row


def unicode_problem(text):
    """What makes `text` not valid Unicode text, or None: a lone surrogate (from a
    JSON `"\\ud800"`), or a byte that was not UTF-8 in a command-line argument
    (Python keeps it as a surrogate, U+DC80-U+DCFF)."""
    found = _SURROGATE.search(text)
    if found is None:
        return None
    code = ord(found.group())
    if code >= 0xDC80:
        return f"is not valid UTF-8 (byte 0x{code - 0xDC00:02x} at character {found.start()})"
    return (
        f"holds a lone surrogate \\u{code:04x} at character {found.start()} (not "
        "valid Unicode text)"
    )


def json_kind(value):
    """What a JSON value is, in JSON's words: `null`, `a boolean`, `a number`, ..."""
    return _JSON_KINDS.get(type(value), f"a {type(value).__name__}")


def _shown(value, limit=40):
    text = json.dumps(value, ensure_ascii=False, default=repr)
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return "" if value is None else f" ({text})"


def rows_from_texts(texts, input_names):
    """One request row per text, for a signature with one input."""
    input_names = sorted(input_names)
    if len(input_names) != 1:
        raise ConfigError(
            f"the signature takes {', '.join(input_names)}: give them as "
            + " ".join(f"--{n} TEXT" for n in input_names)
            + " or in a jsonl/csv --input file"
        )
    rows = []
    for position, text in enumerate(texts, start=1):
        problem = unicode_problem(text)
        if problem is not None:
            raise ConfigError(f"TEXT argument {position} {problem}")
        rows.append({input_names[0]: text})
    return rows


def columns(rows, input_names):
    """Request rows -> `{input_name: [values]}` (the columnar request)."""
    return {name: [row[name] for row in rows] for name in sorted(input_names)}


def batches(rows, size):
    """Consecutive lists of at most `size` rows of `rows` (any iterable: a file's
    rows are read one batch at a time)."""
    if size < 1:
        raise ConfigError(f"the batch size must be at least 1. Received: {size}")
    rows = iter(rows)
    while batch := list(itertools.islice(rows, size)):
        yield batch
