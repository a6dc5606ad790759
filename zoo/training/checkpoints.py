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
  in place, and a kill between the two leaves them out of step).
"""

import os
import re
import shutil

import keras

from zoo.io import atomic_path, remove_temporaries


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
        super().on_epoch_end(epoch, logs)
        if os.path.exists(self.filepath):
            with atomic_path(self.path) as tmp:
                os.replace(self.filepath, tmp)


class Backup:
    """The backup folder of a run: `epoch-<N>.weights.h5` after N completed epochs.

    Args:
        folder: the backup folder (`run_dir/backup`).
    """

    PATTERN = re.compile(r"^epoch-(\d+)\.weights\.h5$")

    def __init__(self, folder):
        self.folder = folder

    def latest(self):
        """`(completed epochs, path)` of the newest backup, or `(0, None)`."""
        if not os.path.isdir(self.folder):
            return 0, None
        found = []
        for name in os.listdir(self.folder):
            match = self.PATTERN.match(name)
            if match:
                found.append((int(match.group(1)), os.path.join(self.folder, name)))
        return max(found) if found else (0, None)

    def exists(self):
        return os.path.isdir(self.folder)

    def save(self, model, completed_epochs):
        """Writes the weights and optimizer state after `completed_epochs` epochs,
        then deletes the older backups."""
        os.makedirs(self.folder, exist_ok=True)
        path = os.path.join(self.folder, f"epoch-{completed_epochs:05d}.weights.h5")
        with atomic_path(path) as tmp:
            model.save_weights(tmp)
        for name in os.listdir(self.folder):
            match = self.PATTERN.match(name)
            if match and int(match.group(1)) != completed_epochs:
                os.remove(os.path.join(self.folder, name))
        remove_temporaries(self.folder)
        return path

    def restore(self, model, path):
        """Loads the backup at `path` into `model` (and its optimizer)."""
        optimizer = model.optimizer
        if optimizer is not None and not optimizer.built:
            # The optimizer's variables must exist before its state is loaded.
            optimizer.build(model.trainable_variables)
        model.load_weights(path)

    def remove(self):
        if os.path.isdir(self.folder):
            shutil.rmtree(self.folder)


class RestoreBackup(keras.callbacks.Callback):
    """First callback: loads the backup at `path` when training begins (after
    Keras has built the model's metrics and optimizer, as `BackupAndRestore` does)."""

    def __init__(self, backup, path):
        super().__init__()
        self.backup = backup
        self.path = path

    def on_train_begin(self, logs=None):
        self.backup.restore(self.model, self.path)


class SaveBackup(keras.callbacks.Callback):
    """Writes the backup at every epoch end; deletes it when training completes
    (not when it stops on an error, so the same command resumes)."""

    def __init__(self, backup):
        super().__init__()
        self.backup = backup

    def on_epoch_end(self, epoch, logs=None):
        self.backup.save(self.model, epoch + 1)

    def on_train_end(self, logs=None):
        self.backup.remove()
