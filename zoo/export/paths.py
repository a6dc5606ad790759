"""Export folders: model names, versions and their resolution (stdlib only, so commands
can check a path before they import TensorFlow).

Model names: `MODEL_NAME_RE` (a letter or digit, then letters, digits, `_`, `.`, `-`)
is the one check shared by `export_model`, which refuses other names, and `zoo deploy`,
which skips other folders with a note: a name that passes is safe unquoted in a shell
line, a URL path and a text proto.

Versions are read exactly as TF Serving's file-system source reads them
(`ParseVersionNumber` in `file_system_storage_path_source.cc`: `absl::SimpleAtoi`
into an int64): surrounding ASCII whitespace is ignored, an optional `+` or `-`, then
ASCII digits within int64. So `007` is version 7, ` 9` and `+9` are version 9, and
`0` and `-3` are versions too; `²`, `1.5`, `0x10` and hidden names are not. A folder
whose name is no version is skipped with a note. When two names read as the same
number (`7` and `007`), TF Serving keeps the last in byte order (`7`) and so does
`version_folders`, noting the other. A plain file whose name reads as a version is
listed too (TF Serving would try to load it); it holds no `saved_model.pb`.
"""

import os
import re
import sys

from zoo.errors import ConfigError, DataError, MissingPathError, printable

MODEL_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_VERSION_RE = re.compile(r"[+-]?[0-9]+")
_SPACE = " \t\n\v\f\r"  # absl::ascii_isspace
NOT_A_VERSION = (
    "not a version folder (TF Serving reads a version from a folder name made of "
    "ASCII digits, with an optional sign and surrounding whitespace, within int64)"
)


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
    """The version TF Serving reads from a folder name (`absl::SimpleAtoi` into an
    int64), or None when it reads none."""
    text = folder_name.strip(_SPACE)
    if not _VERSION_RE.fullmatch(text):
        return None
    version = int(text)
    return version if -(1 << 63) <= version < 1 << 63 else None  # int64


def version_folders(model_dir, complete=False):
    """The versions of `model_dir` as TF Serving reads them, and notes on the
    folders skipped.

    Args:
        model_dir: `saved_models/NAME` (a missing folder has no versions).
        complete: only versions whose folder holds a `saved_model.pb` (after the
            choice between two names of one version, as TF Serving makes it).

    Returns:
        `({version: folder_name}, [note, ...])`; hidden entries (staging folders)
        and plain files that read as no version are left out without a note.
    """
    try:
        names = sorted(os.listdir(model_dir), key=os.fsencode)  # TF's byte order
    except (FileNotFoundError, NotADirectoryError):
        return {}, []
    found, notes = {}, []
    for name in names:
        path = os.path.join(model_dir, name)
        version = parse_version(name)
        if version is None:
            if not name.startswith(".") and os.path.isdir(path):
                notes.append(f"{path}: skipped, {NOT_A_VERSION}")
            continue
        if version in found:  # TF Serving keeps the last name in byte order
            notes.append(
                f"{os.path.join(model_dir, found[version])}: skipped, the same "
                f"version as {name} ({version})"
            )
        found[version] = name
    if complete:
        found = {
            v: n
            for v, n in found.items()
            if os.path.isfile(os.path.join(model_dir, n, "saved_model.pb"))
        }
    return found, notes


def latest_version(model_dir):
    """The highest integer version in `model_dir`, or None."""
    return max(version_folders(model_dir)[0], default=None)


def latest_version_dir(model_dir, complete=False):
    """The folder of the highest version in `model_dir` (`saved_models/NAME/007` for
    version 7), or None."""
    found, _ = version_folders(model_dir, complete=complete)
    return os.path.join(model_dir, found[max(found)]) if found else None


def version_of(version_dir):
    """The version number of a version folder.

    Raises:
        zoo.errors.DataError: when its name is not a version TF Serving reads.
    """
    name = os.path.basename(os.path.normpath(os.fspath(version_dir)))
    version = parse_version(name)
    if version is None:
        raise DataError(NOT_A_VERSION, path=version_dir)
    return version


class NoVersionError(DataError, FileNotFoundError):
    """An export folder that holds no SavedModel version folder."""


class IncompleteVersionError(DataError, FileNotFoundError):
    """The latest version folder of an export holds no `saved_model.pb`."""


def resolve_version_dir(
    path, note=lambda line: print(f"note: {printable(line)}", file=sys.stderr)
):
    """`saved_models/NAME/VERSION` as given, or the latest version of `saved_models/NAME`.

    Args:
        path: a version folder or a model folder.
        note: called with a line for each folder skipped while looking for the
            latest version (printed to standard error by default; None: silent).

    Raises:
        zoo.errors.MissingPathError: when the folder does not exist.
        NoVersionError: when it holds no version (both are `FileNotFoundError`s).
        zoo.errors.DataError: a file where the folder was expected, or a folder
            holding `saved_model.pb` whose name is not a version TF Serving reads
            (e.g. `²`).
        IncompleteVersionError: the latest version holds no `saved_model.pb`.
    """
    path = os.path.normpath(os.fspath(path))
    if os.path.exists(path) and not os.path.isdir(path):
        raise DataError(
            "is a file; give the export folder (NAME or NAME/VERSION)", path=path
        )
    if not os.path.isdir(path):
        raise MissingPathError(path, what="export folder")
    if os.path.exists(os.path.join(path, "saved_model.pb")):
        version_of(path)
        return regular_files_only(path)
    found, notes = version_folders(path)
    for line in notes if note is not None else ():
        note(line)
    if not found:
        raise NoVersionError(
            "holds no SavedModel version folder (1/, 2/, ...)", path=path
        )
    latest = os.path.join(path, found[max(found)])
    if not os.path.exists(os.path.join(latest, "saved_model.pb")):
        raise IncompleteVersionError(
            "the latest version holds no saved_model.pb (an interrupted copy?); TF "
            "Serving would fail to load it: complete or remove it, or name a "
            "version folder",
            path=latest,
        )
    return regular_files_only(latest)


def regular_files_only(version_dir):
    """`version_dir`, once none of its files is a named pipe or a device: reading
    one would wait for a writer, or never end."""
    for folder, _, names in os.walk(version_dir):
        for name in names:
            file = os.path.join(folder, name)
            if os.path.exists(file) and not os.path.isfile(file):
                raise DataError(
                    "is a named pipe or a device, not a file: loading the export "
                    "would never end; export it again",
                    path=file,
                )
    return version_dir
