"""Export folders: versions and their resolution (stdlib only, so commands can check a
path before they import TensorFlow)."""

import os

from zoo.errors import DataError, MissingPathError


def list_versions(model_dir):
    """Sorted integer versions present in `model_dir` (missing folder: [])."""
    try:
        names = os.listdir(model_dir)
    except FileNotFoundError:
        return []
    return sorted(
        int(n)
        for n in names
        if n.isdigit() and os.path.isdir(os.path.join(model_dir, n))
    )


def latest_version(model_dir):
    """The highest integer version in `model_dir`, or None."""
    versions = list_versions(model_dir)
    return versions[-1] if versions else None


class NoVersionError(DataError, FileNotFoundError):
    """An export folder that holds no SavedModel version folder."""

    def __init__(self, path):
        super().__init__("holds no SavedModel version folder (1/, 2/, ...)", path=path)

    def __reduce__(self):
        return (type(self), (self.path,))


def resolve_version_dir(path):
    """`saved_models/NAME/VERSION` as given, or the latest version of `saved_models/NAME`.

    Raises:
        zoo.errors.MissingPathError: when the folder does not exist.
        NoVersionError: when it holds no version (both are `FileNotFoundError`s).
    """
    path = os.path.normpath(os.fspath(path))
    if not os.path.isdir(path):
        raise MissingPathError(path, what="export folder")
    if os.path.basename(path).isdigit() and os.path.exists(
        os.path.join(path, "saved_model.pb")
    ):
        return path
    version = latest_version(path)
    if version is None:
        raise NoVersionError(path)
    return os.path.join(path, str(version))
