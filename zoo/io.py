"""Files written whole or not at all.

`atomic_write(path)` and `atomic_path(path)` write to a temporary file in the folder of
`path`, flush it to disk (`fsync`) and rename it onto `path` (`os.replace`, atomic on
POSIX and Windows). A reader sees the previous file or the new one, never a half-written
one, and a process killed during the write leaves the previous file intact. Use them
for anything a later run or another program reads: checkpoints, reports, manifests.

```python
with atomic_write("reports/metrics.json") as f:
    json.dump(metrics, f)

with atomic_path("runs/x/final.keras") as tmp:  # any writer that takes a path
    model.save(tmp)
```

`check_writable_dir(path, flag)` refuses, before any work, an output folder that
cannot be written in (a `zoo.errors.ConfigError` naming the flag and the folder).

A kill during a write leaves its temporary file behind, named `.tmp-<random>-<name>`;
`remove_temporaries(folder)` deletes those of a folder. The temporary file is created
with the permissions a plain `open(path, "w")` would give (umask applied), not the
owner-only mode of `tempfile.mkstemp`. A write that runs out of disk space is a
`zoo.errors.DiskFullError` (one line naming the file; exit status 2 in the commands),
with the temporary file removed and the previous file kept.

Stdlib-only on purpose: importing it costs nothing.
"""

import contextlib
import os
import secrets
import shutil

from zoo.errors import ConfigError, DiskFullError, is_disk_full

TEMPORARY_PREFIX = ".tmp-"


def temporary_path(path):
    """A fresh temporary name next to `path`, ending with the name of `path` (so
    writers that check the extension, such as `.keras` or `.weights.h5`, accept it)."""
    folder, name = os.path.split(os.path.abspath(os.fspath(path)))
    return os.path.join(folder, f"{TEMPORARY_PREFIX}{secrets.token_hex(4)}-{name}")


@contextlib.contextmanager
def atomic_path(path):
    """Yields a temporary path next to `path` and moves the file written there onto
    `path` when the body completes.

    The body writes one file at the yielded path by any means (`model.save`,
    `np.save`, a library's writer). When the body raises, `path` is left as it was
    and the temporary file is removed.

    Raises:
        FileNotFoundError: when the body wrote no file at the temporary path.
        zoo.errors.DiskFullError: when the disk (or quota) is full; `path` is left
            as it was.
    """
    path = os.path.abspath(os.fspath(path))
    tmp = temporary_path(path)
    try:
        yield tmp
        if not os.path.isfile(tmp):
            raise FileNotFoundError(
                f"nothing was written to the temporary file of {path} ({tmp})"
            )
        with open(tmp, "rb") as f:  # also what `atomic_write` wrote (now closed)
            os.fsync(f.fileno())
        os.replace(tmp, path)
        _fsync_folder(os.path.dirname(path))
    except Exception as e:
        if is_disk_full(e) and not isinstance(e, DiskFullError):
            kept = "the previous file is kept" if os.path.exists(path) else "no file"
            reason = " ".join((getattr(e, "strerror", None) or str(e)).split())[:120]
            raise DiskFullError(
                f"{path}: the disk is full ({reason}); {kept}", reason
            ) from None
        raise
    finally:
        _remove(tmp)


@contextlib.contextmanager
def atomic_write(path, mode="w", encoding=None, newline=None):
    """`open(path, mode)` for writing, made atomic: yields the open file of a
    temporary path, which replaces `path` once the body completes.

    Args:
        path: the file to write.
        mode: `"w"` / `"wt"` (text, UTF-8 unless `encoding` says otherwise) or `"wb"`.
        encoding: text encoding (default UTF-8).
        newline: as for `open`.
    """
    if mode not in ("w", "wt", "wb"):
        raise ValueError(f"`mode` must be 'w', 'wt' or 'wb'. Received: mode={mode!r}")
    encoding = encoding or (None if "b" in mode else "utf-8")
    with atomic_path(path) as tmp:
        with open(tmp, mode.replace("w", "x"), encoding=encoding, newline=newline) as f:
            yield f


def content_keyed(write, path, store):
    """Writes a file where only its own contents can be: `folder/store/<digest>/name`.

    `write(tmp_path)` writes the file into a fresh hidden folder of
    `dirname(path)/store/`; that folder is then renamed to the SHA-256 digest (12 hex
    digits) of the file's bytes. The same contents give the same folder (kept as it
    is), other contents another, so a file written for one configuration is never
    overwritten by another's (e.g. a vocabulary built before a run's identity is
    checked). The file keeps the name of `path`.

    Returns:
        The path of the file: `dirname(path)/store/<digest>/basename(path)`.
    """
    import hashlib

    folder, name = os.path.split(os.path.abspath(os.fspath(path)))
    root = os.path.join(folder, store)
    os.makedirs(root, exist_ok=True)
    staging = os.path.join(root, f"{TEMPORARY_PREFIX}{secrets.token_hex(6)}")
    os.mkdir(staging)  # the umask applies
    try:
        write(os.path.join(staging, name))
        with open(os.path.join(staging, name), "rb") as f:
            digest = hashlib.file_digest(f, "sha256")
        target = os.path.join(root, digest.hexdigest()[:12])
        if not os.path.isfile(os.path.join(target, name)):
            shutil.rmtree(target, ignore_errors=True)  # a half-removed one
            try:
                os.rename(staging, target)
            except OSError:
                if not os.path.isfile(os.path.join(target, name)):
                    raise
    finally:
        _remove(staging)
    return os.path.join(target, name)


def check_writable_dir(path, flag):
    """Refuses, before any work, a folder the program could not write in.

    `path` is a folder that exists or is to be created (with its missing parents).
    A file is created and removed in it (or in its nearest existing parent), which
    is what the writes to come need; so a read-only file system, missing
    permissions or an ACL are found, for root too, with nothing left behind.

    Args:
        path: the folder.
        flag: the option that named it (e.g. `"--export-dir"`), for the message.

    Returns:
        `path`, as given.

    Raises:
        zoo.errors.ConfigError: naming `flag` and `path` (and the parent, when it
            is that parent the folder would be created in that is not writable),
            when a part of `path` is a file, or the folder cannot be written.
    """
    target = existing = os.path.abspath(os.fspath(path))
    while not os.path.isdir(existing):
        if os.path.lexists(existing):
            raise ConfigError(
                f"{flag} {os.fspath(path)}: {existing} is not a folder; pass another "
                f"{flag}"
            )
        existing = os.path.dirname(existing)
    probe = os.path.join(existing, f"{TEMPORARY_PREFIX}{secrets.token_hex(4)}-probe")
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except OSError as e:
        reason = e.strerror or type(e).__name__
        problem = f"it cannot be created in {existing}"
        problem = "the folder is not writable" if existing == target else problem
        raise ConfigError(
            f"{flag} {os.fspath(path)}: {problem} ({reason}); pass another {flag}"
        ) from None
    _remove(probe)
    return path


def remove_temporaries(folder):
    """Deletes the temporary files that killed writes left in `folder` (not in its
    subfolders). Returns their paths."""
    names = os.listdir(folder) if os.path.isdir(folder) else []
    removed = [os.path.join(folder, n) for n in names if n.startswith(TEMPORARY_PREFIX)]
    for path in removed:
        _remove(path)
    return removed


def _fsync_folder(folder):
    """Makes a rename in `folder` durable (POSIX); a no-op where folders cannot be
    opened (Windows)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    with contextlib.suppress(OSError):
        os.fsync(fd)
    os.close(fd)


def _remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        os.remove(path)
