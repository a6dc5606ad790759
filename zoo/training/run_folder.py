"""A run folder belongs to one run: its lock, and the backups kept until the end.

`run_lock(run_dir)` holds an exclusive lock (`fcntl.flock`) on `run_dir/.lock` for as
long as the run lasts. A second process that asks for the same folder gets a
`RunLockedError` (one line, exit status 2) naming the pid of the run that holds it;
the lock goes with its process, so a killed run leaves no stale lock. Within one
process the lock is re-entrant (`zoo.training.steps.recipe_run` takes it before the
data is loaded, and `fit` takes it again around training).

`keep_final_backups()` marks the part of a program after which a run's trained
weights are no longer needed: inside it, `fit` keeps the backup of a finished
training (`backup/final-<N>.weights.h5`, the weights `fit` returns) instead of
deleting it, and lists it in the yielded list; the caller deletes those backups once
its run is complete (for a recipe: after the export). A run killed before that point
(during evaluation, a report or the export) is resumed by the same command from its
trained weights, without training again.

Stdlib only: it is imported before TensorFlow.
"""

import contextlib
import fcntl
import os

from zoo.errors import ConfigError

LOCK_FILE = ".lock"

_HELD = set()  # real paths of the run folders this process has locked
_KEPT = []  # stack of the lists `keep_final_backups` yields


class RunLockedError(ConfigError):
    """The run folder is in use by another process.

    Attributes:
        run_dir: the run folder.
        pid: the pid of the process holding it (None when it could not be read).
    """

    def __init__(self, run_dir, pid=None):
        self.run_dir = os.fspath(run_dir)
        self.pid = pid
        holder = f"pid {pid}" if pid is not None else "a process whose pid is unknown"
        super().__init__(
            f"{self.run_dir} is in use by another run ({holder}): wait for it to "
            "finish, or pass another --run-dir"
        )

    def __reduce__(self):
        return (type(self), (self.run_dir, self.pid))


@contextlib.contextmanager
def run_lock(run_dir):
    """Holds the exclusive lock of `run_dir` (created if needed) for the body.

    Raises:
        RunLockedError: another process holds it.
    """
    run_dir = os.fspath(run_dir)
    os.makedirs(run_dir, exist_ok=True)
    key = os.path.realpath(run_dir)
    if key in _HELD:  # this process holds it already
        yield run_dir
        return
    path = os.path.join(run_dir, LOCK_FILE)
    # Closing the file releases the lock.
    with open(path, "a+", encoding="ascii", errors="replace") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            text = f.read(64).strip()
            pid = int(text) if text.isdigit() else None
            raise RunLockedError(run_dir, pid) from None
        try:
            f.truncate(0)
            f.write(f"{os.getpid()}\n")
            f.flush()
            _HELD.add(key)
            yield run_dir
        finally:
            _HELD.discard(key)
            with contextlib.suppress(OSError):
                f.truncate(0)


def holds_lock(run_dir):
    """Whether this process holds the lock of `run_dir`."""
    return os.path.realpath(os.fspath(run_dir)) in _HELD


@contextlib.contextmanager
def keep_final_backups():
    """Inside the body, `fit` keeps the backup of each finished training; yields the
    list of those `zoo.training.checkpoints.Backup`s (delete them with `.remove()`
    once the run is complete)."""
    kept = []
    _KEPT.append(kept)
    try:
        yield kept
    finally:
        _KEPT[:] = [k for k in _KEPT if k is not kept]


def kept_backups():
    """The list of the innermost `keep_final_backups`, or None outside one."""
    return _KEPT[-1] if _KEPT else None
