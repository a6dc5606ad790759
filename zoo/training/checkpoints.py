"""Checkpoints written whole or not at all: the best model and the backup.

Every file here is written to a temporary file in the same folder, flushed to disk and
renamed into place (`zoo.io.atomic_path`): a kill during a save leaves the previous
file intact, never a truncated one.

- `best.keras`: the best model so far (`BestCheckpoint`, a
  `keras.callbacks.ModelCheckpoint(save_best_only=True)` that saves to a temporary
  file and renames it).
- `backup/epoch-<N>.weights.h5`: the weights and optimizer state after N completed
  epochs (`Backup`), written at every epoch end, the previous one deleted once the new
  one is in place. The epoch count is in the file's name, so weights and count are
  replaced together by one rename (Keras' `BackupAndRestore` writes them to two files
  in place, and a kill between the two leaves them out of step). The file also holds
  the states of the model's random generators (`keras.random.SeedGenerator`, e.g. a
  dropout layer's), which `save_weights` leaves out, so a resumed run draws the
  random numbers the interrupted one would have.
- `backup/final-<N>.weights.h5`: the weights and optimizer state at the end of a
  training that finished after N epochs (what `fit` returns, best weights restored),
  kept instead of deleted while the caller still needs them
  (`zoo.training.run_folder.keep_final_backups`): a rerun loads them rather than
  training again.

The backup files are made in memory and then written with plain file writes: HDF5
crashes the process (SIGSEGV, in `h5py.File.close`) when it cannot flush a file on a
full disk (h5py issues 914, 1775, 2160), so it never writes to the disk itself here,
and a full disk is a `zoo.errors.DiskFullError` like any other write. A backup that
cannot be read (a truncated or damaged file) is an `UnreadableBackupError` (one line
naming the file, and `--resume never` to start afresh), found before the run's
record is touched, so the same command again says the same.
"""

import io
import os
import re
import shutil

import keras

from zoo.errors import DataError, DiskFullError, is_disk_full
from zoo.io import atomic_path, remove_temporaries


class UnreadableBackupError(DataError):
    """A backup file of a run folder cannot be read (truncated or damaged)."""


def read_weights(path, advice=None):
    """The arrays, in order, of a weights file written by `np.savez` (the early
    stopping's `best-<epoch>.npz`, a `minute_<M>.weights.npz` snapshot).

    A file that cannot be read (a truncated or damaged file) is an
    `UnreadableBackupError`: one line naming the file, then `advice`.
    """
    import zipfile

    import numpy as np

    try:
        saved = np.load(path, allow_pickle=False)
        if not isinstance(saved, np.lib.npyio.NpzFile):
            raise ValueError("one array, not an .npz archive")
        with saved:
            return [saved[f"arr_{i}"] for i in range(len(saved.files))]
    except (OSError, EOFError, ValueError, KeyError, zipfile.BadZipFile) as e:
        what, then = "the weights cannot be read (truncated or damaged: ", ")"
        then += f"; {advice}" if advice else ""
        raise _unreadable(path, e, what, then) from None


def _unreadable(path, error, before, after):
    """`UnreadableBackupError(before + the error in one line + after)`."""
    reason = " ".join(str(error).split())[:160] or type(error).__name__
    return UnreadableBackupError(f"{before}{reason}{after}", path=path)


def save_model_atomic(model, path):
    """`model.save(path)` through a temporary file and a rename: a kill during the
    save leaves the previous file at `path` intact. `path` ends with `.keras`."""
    with atomic_path(path) as tmp:
        model.save(tmp)
    return path


class BestCheckpoint(keras.callbacks.ModelCheckpoint):
    """`ModelCheckpoint(save_best_only=True)` that writes atomically.

    Keras saves the improved model to a temporary file in the folder of `path`
    (`filepath`); this callback then flushes it to disk and renames it onto `path`.
    Everything else (the monitored quantity, its direction, `best`) is Keras'.
    """

    def __init__(self, path, monitor="val_loss", mode="auto"):
        self.path = os.path.abspath(os.fspath(path))
        folder, name = os.path.split(self.path)
        super().__init__(
            os.path.join(folder, f".tmp-best-{name}"),
            monitor=monitor,
            mode=mode,
            save_best_only=True,
        )

    def on_epoch_end(self, epoch, logs=None):
        if os.path.exists(self.filepath):  # left by a killed save
            os.remove(self.filepath)
        try:
            super().on_epoch_end(epoch, logs)
        except Exception as e:
            if not is_disk_full(e) or isinstance(e, DiskFullError):
                raise
            if os.path.exists(self.filepath):
                os.remove(self.filepath)
            kept = "the previous best is kept" if os.path.exists(self.path) else ""
            raise DiskFullError(
                f"{self.path}: the disk is full, the best model of epoch {epoch + 1} "
                f"was not saved ({' '.join(str(e).split())[:120]})"
                + (f"; {kept}" if kept else "")
            ) from None
        if os.path.exists(self.filepath):
            with atomic_path(self.path) as tmp:
                os.replace(self.filepath, tmp)


def numbered_files(folder, pattern):
    """`{N: path}` of the files in `folder` whose names match `pattern`, whose
    first group is the number N (`{}` when there is no such folder)."""
    if not os.path.isdir(folder):
        return {}
    return {
        int(match[1]): os.path.join(folder, match[0])
        for match in map(pattern.match, os.listdir(folder))
        if match
    }


SEED_STATES = "zoo_seed_states"  # the group of the backup file holding them


def seed_states(model):
    """The model's variables that are not weights: its `SeedGenerator` states."""
    weights = {id(v) for v in model.weights}
    return [v for v in model.variables if id(v) not in weights]


class InMemoryWeightsFile(io.BytesIO):
    """A weights file in memory. `Model.save_weights` takes it for a path: Keras
    checks the `.weights.h5` ending of `str(filepath)` and writes a `BytesIO`
    through h5py."""

    def __str__(self):
        return "backup.weights.h5"


def _save_weights(model, path):
    """Writes the weights, the optimizer state and the seed states to `path`: made
    in memory, then written with a plain write (see the module docstring)."""
    import h5py
    import numpy as np

    buffer = InMemoryWeightsFile()
    model.save_weights(buffer)
    with h5py.File(buffer, "a") as f:
        group = f.create_group(SEED_STATES)
        for i, variable in enumerate(seed_states(model)):
            group.create_dataset(str(i), data=np.asarray(variable))
    _write_bytes(path, buffer.getbuffer())


def _write_bytes(path, data):
    with open(path, "wb") as f:
        f.write(data)


def _restore_seed_states(model, path):
    import h5py

    with h5py.File(path, "r") as f:
        group = f.get(SEED_STATES, {})  # none in a file written without them
        for i, variable in enumerate(seed_states(model)):
            if str(i) in group and group[str(i)].shape == tuple(variable.shape):
                variable.assign(group[str(i)][()])


class Backup:
    """The backup folder of a run: `epoch-<N>.weights.h5` after N completed epochs.

    Args:
        folder: the backup folder (`run_dir/backup`).
    """

    PATTERN = re.compile(r"^epoch-(\d+)\.weights\.h5$")
    FINAL = re.compile(r"^final-(\d+)\.weights\.h5$")

    def __init__(self, folder):
        self.folder = folder

    def latest(self):
        """`(completed epochs, path)` of the newest backup, or `(0, None)`."""
        return max(numbered_files(self.folder, self.PATTERN).items(), default=(0, None))

    def final(self):
        """`(epochs, path)` of the backup of a finished training, or `(0, None)`."""
        return max(numbered_files(self.folder, self.FINAL).items(), default=(0, None))

    def is_final(self, path):
        return path is not None and bool(self.FINAL.match(os.path.basename(path)))

    def save(self, model, completed_epochs, final=False):
        """Writes the weights and optimizer state after `completed_epochs` epochs,
        then deletes the older backups. With `final`: the weights at the end of a
        training that finished after `completed_epochs` epochs, and then everything
        else in the folder is deleted (the per-epoch backups, early stopping's best
        weights)."""
        os.makedirs(self.folder, exist_ok=True)
        name = f"{'final' if final else 'epoch'}-{completed_epochs:05d}.weights.h5"
        path = os.path.join(self.folder, name)
        try:
            with atomic_path(path) as tmp:
                _save_weights(model, tmp)
        except DiskFullError as e:
            done, kept = self.latest()
            what = (
                f"the backup after epoch {done} is kept ({kept}): free some space "
                "and run the same command to resume from there"
                if kept
                else "no backup is kept"
            )
            raise DiskFullError(
                f"the disk is full ({e.reason}): could not write the backup after "
                f"epoch {completed_epochs} to {self.folder}; {what}",
                e.reason,
            ) from None
        for other in os.listdir(self.folder):
            if other != name and (final or self.PATTERN.match(other)):
                if os.path.isfile(os.path.join(self.folder, other)):
                    os.remove(os.path.join(self.folder, other))
        remove_temporaries(self.folder)
        return path

    def check(self, path, completed=None):
        """Raises `UnreadableBackupError` when `path` cannot be opened as an HDF5
        file (a truncated file is found here: HDF5 checks the size it recorded);
        `completed` is the number of epochs it holds, for the message."""
        import h5py

        try:
            with h5py.File(path, "r"):
                pass
        except Exception as e:  # h5py: OSError, or another error for damaged bytes
            raise self._unreadable(path, e, completed) from None

    def _unreadable(self, path, error, completed=None):
        held = f" after epoch {completed:g}" if completed else ""
        return _unreadable(
            path,
            error,
            f"the backup{held} cannot be read (",
            f"); it is kept as it is: pass --resume never to start afresh in "
            f"{os.path.dirname(self.folder)}, or another --run-dir",
        )

    def restore(self, model, path):
        """Loads the backup at `path` into `model` (and its optimizer).

        Raises:
            UnreadableBackupError: the file cannot be read.
        """
        optimizer = model.optimizer
        if optimizer is not None and not optimizer.built:
            # The optimizer's variables must exist before its state is loaded.
            optimizer.build(model.trainable_variables)
        self.check(path)
        try:
            model.load_weights(path)
            _restore_seed_states(model, path)
        except (OSError, KeyError, RuntimeError, ValueError) as e:
            raise self._unreadable(path, e) from None

    def remove(self):
        if os.path.isdir(self.folder):
            shutil.rmtree(self.folder)


class SaveBackup(keras.callbacks.Callback):
    """Writes the backup at every epoch end; when training completes, deletes it, or
    with `keep_final` replaces it with the final weights (`Backup.save(final=True)`). Not
    when training stops on an error, so the same command resumes.

    Args:
        backup: the `Backup`.
        keep_final: keep the final weights rather than delete the backup.
        completed: epochs completed before this `fit` (a resumed run).
    """

    def __init__(self, backup, keep_final=False, completed=0):
        super().__init__()
        self.backup = backup
        self.keep_final = keep_final
        self.completed = completed

    def on_epoch_end(self, epoch, logs=None):
        self.completed = epoch + 1
        self.backup.save(self.model, epoch + 1)

    def on_train_end(self, logs=None):
        if self.keep_final:
            self.backup.save(self.model, self.completed, final=True)
        else:
            self.backup.remove()
