"""Errors a user can act on.

Every recipe, reader and command raises a subclass of `ZooError` for a problem in what
the user gave it: a missing path, a malformed file, a bad flag value, a run folder that
belongs to another run. The command-line entry points (`zoo.recipes`, `zoo.cli`) print
such an error as one line, `error: <message>`, and exit with status 2; `--debug` shows
the traceback instead. Anything else is a bug and keeps its traceback.

`DataError` names the file and, where there is one, the line:

>>> str(DataError("expected 2 tab-separated fields, found 3", path="a.tsv", line=7))
'a.tsv:7: expected 2 tab-separated fields, found 3'

Stdlib-only on purpose: importing it costs nothing, so `--help` stays fast.
"""

import os


class ZooError(Exception):
    """A problem in the user's input, reported as one line (exit status 2)."""

    exit_code = 2


class ConfigError(ZooError, ValueError):
    """A flag or argument value that cannot be used; the message names the value."""


class DataError(ZooError, ValueError):
    """A data file that cannot be read as expected.

    Args:
        message: what is wrong and what was expected.
        path: the file (or folder); shown first.
        line: 1-based line number in `path`, when the problem has one.
    """

    def __init__(self, message, path=None, line=None):
        self.message = message
        self.path = None if path is None else os.fspath(path)
        self.line = line
        where = self.path if line is None else f"{self.path}:{line}"
        super().__init__(message if path is None else f"{where}: {message}")

    def __reduce__(self):  # picklable across processes (tf.data, multiprocessing)
        return (type(self), (self.message, self.path, self.line))


class MissingPathError(DataError, FileNotFoundError):
    """A path the user named does not exist."""

    def __init__(self, path, what="file or folder", line=None):
        self.what = what
        super().__init__(f"no such {what}", path=path, line=line)

    def __reduce__(self):
        return (type(self), (self.path, self.what, self.line))


class DiskFullError(ZooError, OSError):
    """A write that ran out of disk space or quota; the message names the file and
    says what was kept.

    Args:
        message: the one-line message.
        reason: the system's words for it (e.g. "No space left on device").
    """

    def __init__(self, message, reason=None):
        super().__init__(message)
        self.message = message
        self.reason = reason

    def __reduce__(self):
        return (type(self), (self.message, self.reason))


_DISK_FULL_ERRNOS = (28, 122)  # ENOSPC, EDQUOT (Linux)
_DISK_FULL_TEXTS = ("no space left on device", "disk quota exceeded", "errno = 28")


def is_disk_full(error):
    """Whether `error` (an `OSError`, or a library's error that only says so in its
    message: h5py, TensorFlow) is a full disk or an exhausted quota."""
    if isinstance(error, OSError) and error.errno in _DISK_FULL_ERRNOS:
        return True
    text = str(error).lower()
    return any(t in text for t in _DISK_FULL_TEXTS)


def printable(text):
    """`text` with its control characters shown escaped (`\\x1b`): a name or a message
    read from a file, a folder or a server is shown on the terminal, never obeyed."""
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


def one_line(error):
    """The one-line form of `error` for the terminal: `error: <message>`."""
    text = " ".join(str(error).split()) or type(error).__name__
    return f"error: {text}"
