"""Export folders: model names, versions and their resolution (stdlib only, so commands
can check a path before they import TensorFlow).

Model names: `MODEL_NAME_RE` (a letter or digit, then letters, digits, `_`, `.`, `-`)
is the one check shared by `export_model`, which refuses other names, and `zoo deploy`,
which skips other folders with a note: a name that passes is safe unquoted in a shell
line, a URL path and a text proto.

Versions are read as TF Serving reads them: a version folder's name is a decimal
integer in ASCII digits (`007` is version 7), positive and within int64. Anything
else (`²`, `1.5`, `-3`, a hidden staging folder) is not a version: it is skipped, and
`version_folders` says why in a note. When two names read as the same number (`7` and
`007`), the canonical spelling is kept and the other skipped with a note.
"""

import os
import re
import sys

from zoo.errors import ConfigError, DataError, MissingPathError

MODEL_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_ASCII_DIGITS = re.compile(r"[0-9]+")
_MAX_VERSION = (1 << 63) - 1  # TF Serving's versions are int64


def is_model_name(name):
    """Whether `name` is a model name that export, deploy and TF Serving accept."""
    return isinstance(name, str) and MODEL_NAME_RE.fullmatch(name) is not None


def check_model_name(name):
    """`name` when `is_model_name(name)`, else a `ConfigError` naming it."""
    if not is_model_name(name):
        raise ConfigError(
            f"`name` must match {MODEL_NAME_RE.pattern}. Received: name={name!r}"
        )
    return name


def parse_version(folder_name):
    """The version TF Serving reads from a folder name, or None when it is none."""
    if not isinstance(folder_name, str) or not _ASCII_DIGITS.fullmatch(folder_name):
        return None
    version = int(folder_name)
    return version if 0 < version <= _MAX_VERSION else None


def version_folders(model_dir, complete=False):
    """The version folders of `model_dir` and notes on the folders skipped.

    Args:
        model_dir: `saved_models/NAME` (a missing folder has no versions).
        complete: only versions holding a `saved_model.pb`.

    Returns:
        `({version: folder_name}, [note, ...])`; hidden entries (staging folders)
        and plain files are left out without a note.
    """
    try:
        names = sorted(os.listdir(model_dir))
    except (FileNotFoundError, NotADirectoryError):
        return {}, []
    found, notes = {}, []
    for name in names:
        path = os.path.join(model_dir, name)
        if name.startswith(".") or not os.path.isdir(path):
            continue
        version = parse_version(name)
        if version is None:
            notes.append(
                f"{path}: skipped, not a version folder (TF Serving serves folders "
                "named by a positive integer)"
            )
            continue
        if complete and not os.path.exists(os.path.join(path, "saved_model.pb")):
            continue
        if version in found:
            keep, drop = sorted(
                (found[version], name), key=lambda n: (n != str(version), n)
            )
            found[version] = keep
            notes.append(
                f"{os.path.join(model_dir, drop)}: skipped, the same version as "
                f"{keep} ({version})"
            )
            continue
        found[version] = name
    return found, notes


def list_versions(model_dir):
    """Sorted integer versions present in `model_dir` (missing folder: [])."""
    return sorted(version_folders(model_dir)[0])


def latest_version(model_dir):
    """The highest integer version in `model_dir`, or None."""
    versions = list_versions(model_dir)
    return versions[-1] if versions else None


def latest_version_dir(model_dir, complete=False):
    """The folder of the highest version in `model_dir` (`saved_models/NAME/007` for
    version 7), or None."""
    found, _ = version_folders(model_dir, complete=complete)
    if not found:
        return None
    return os.path.join(model_dir, found[max(found)])


def version_of(version_dir):
    """The version number of a version folder.

    Raises:
        zoo.errors.DataError: when its name is not a version TF Serving reads.
    """
    name = os.path.basename(os.path.normpath(os.fspath(version_dir)))
    version = parse_version(name)
    if version is None:
        raise DataError(
            "not a version folder: TF Serving serves folders named by a positive "
            "integer",
            path=version_dir,
        )
    return version


class NoVersionError(DataError, FileNotFoundError):
    """An export folder that holds no SavedModel version folder."""

    def __init__(self, path):
        super().__init__("holds no SavedModel version folder (1/, 2/, ...)", path=path)

    def __reduce__(self):
        return (type(self), (self.path,))


class IncompleteVersionError(DataError, FileNotFoundError):
    """The latest version folder of an export holds no `saved_model.pb`."""

    def __init__(self, path):
        super().__init__(
            "the latest version holds no saved_model.pb (an interrupted copy?); TF "
            "Serving would fail to load it: complete or remove it, or name a "
            "version folder",
            path=path,
        )

    def __reduce__(self):
        return (type(self), (self.path,))


def incomplete_latest(model_dir):
    """The folder of `model_dir`'s highest version when it holds no
    `saved_model.pb` (TF Serving would try to load it), else None."""
    found, _ = version_folders(model_dir)
    if not found:
        return None
    latest = os.path.join(model_dir, found[max(found)])
    return None if os.path.exists(os.path.join(latest, "saved_model.pb")) else latest


def _stderr_note(note):
    print(f"note: {note}", file=sys.stderr)


def resolve_version_dir(path, note=_stderr_note):
    """`saved_models/NAME/VERSION` as given, or the latest version of `saved_models/NAME`.

    Args:
        path: a version folder or a model folder.
        note: called with a line for each folder skipped while looking for the
            latest version (printed to standard error by default; None: silent).

    Raises:
        zoo.errors.MissingPathError: when the folder does not exist.
        NoVersionError: when it holds no version (both are `FileNotFoundError`s).
        zoo.errors.DataError: a folder holding `saved_model.pb` whose name is not a
            version TF Serving reads (e.g. `²`).
        IncompleteVersionError: the latest version holds no `saved_model.pb`.
    """
    path = os.path.normpath(os.fspath(path))
    if not os.path.isdir(path):
        raise MissingPathError(path, what="export folder")
    if os.path.exists(os.path.join(path, "saved_model.pb")):
        version_of(path)
        return path
    found, notes = version_folders(path)
    for line in notes if note is not None else ():
        note(line)
    if not found:
        raise NoVersionError(path)
    latest = os.path.join(path, found[max(found)])
    if not os.path.exists(os.path.join(latest, "saved_model.pb")):
        raise IncompleteVersionError(latest)
    return latest
