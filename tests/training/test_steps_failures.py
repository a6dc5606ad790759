"""How a recipe (`zoo.training.steps.recipe_run`) ends when it cannot go on: an
output folder it cannot write in (refused before any work), a full disk while
training (one line, the run folder resumable), a training loss that became NaN (one
line whose advice works). Run through the toy recipe (`tests/recipe/toy_recipe.py`).
"""

import csv
import errno
import math
import os

import keras
import pytest

from tests.recipe import toy_recipe as toy


def _args(tmp_path, *extra):
    return [
        "--run-dir",
        str(tmp_path / "run"),
        "--report-dir",
        str(tmp_path / "report"),
        "--export-dir",
        str(tmp_path / "export"),
        "--epochs",
        "3",
        *extra,
    ]


def _failed(capsys, argv, **kwargs):
    """`(exit status, stderr)` of a toy run that must fail."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as stopped:
        toy.main(argv, **kwargs)
    return stopped.value.code, capsys.readouterr().err


def _logged_epochs(run_dir):
    with open(run_dir / "log.csv", newline="") as f:
        return [int(row["epoch"]) for row in csv.DictReader(f)]


# --- output folders ------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--export-dir", "--run-dir", "--report-dir"])
def test_an_output_folder_under_a_file_is_refused_before_training(
    tmp_path, capsys, flag
):
    """A folder that cannot be created (a file on its way: root is refused too)."""
    (tmp_path / "file").write_text("x")
    folder = tmp_path / "file" / "out"
    code, err = _failed(capsys, [*_args(tmp_path), flag, str(folder)])
    assert (code, err) == (
        2,
        f"error: {flag} {folder}: {tmp_path / 'file'} is not a folder; pass another "
        f"{flag}\n",
    )
    assert not (tmp_path / "run").exists()  # nothing trained, nothing written
    assert not (tmp_path / "report").exists()


def test_a_read_only_export_dir_is_refused_before_training(tmp_path, capsys):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        if os.access(folder, os.W_OK):
            pytest.skip("chmod 0555 does not stop this user (root) from writing")
        exports = folder / "exports"
        code, err = _failed(capsys, [*_args(tmp_path), "--export-dir", str(exports)])
    finally:
        folder.chmod(0o755)
    assert (code, err) == (
        2,
        f"error: --export-dir {exports}: it cannot be created in {folder} "
        "(Permission denied); pass another --export-dir\n",
    )
    assert not (tmp_path / "run").exists()


def test_no_export_leaves_the_export_dir_unchecked(tmp_path):
    (tmp_path / "file").write_text("x")
    argv = [*_args(tmp_path), "--export-dir", str(tmp_path / "file" / "x")]
    result = toy.main([*argv, "--no-export", "--epochs", "1"])
    assert result["export"] is None and result["value"] > 0.5


# --- a full disk while training ------------------------------------------------------


def test_a_full_disk_while_training_is_one_line_and_the_run_resumes(
    tmp_path, capsys, monkeypatch
):
    """The CSV log's write fails at the second epoch's end (before that epoch's
    backup): one line, exit 2; the same command then resumes after epoch 1."""
    run_dir = tmp_path / "run"
    log_path = str(run_dir / "log.csv")
    original = keras.callbacks.CSVLogger.on_epoch_end

    def full_at_second_epoch(self, epoch, logs=None):
        if epoch == 1:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), log_path)
        return original(self, epoch, logs)

    monkeypatch.setattr(keras.callbacks.CSVLogger, "on_epoch_end", full_at_second_epoch)
    code, err = _failed(capsys, _args(tmp_path))
    assert (code, err) == (
        2,
        f"error: the disk is full (No space left on device) writing {log_path}; "
        f"{run_dir} keeps the backup after epoch 1: free some space and run the "
        "same command to resume from there\n",
    )
    assert os.listdir(run_dir / "backup") == ["epoch-00001.weights.h5"]

    monkeypatch.setattr(keras.callbacks.CSVLogger, "on_epoch_end", original)
    result = toy.main(_args(tmp_path))
    assert _logged_epochs(run_dir) == [0, 1, 2]  # epoch 1 trained again, once
    assert result["value"] > 0.9


def test_a_full_disk_before_any_backup_says_so(tmp_path, capsys, monkeypatch):
    """A writer whose error says so only in words (TensorFlow, h5py), in epoch 1."""

    def full(self, epoch, logs=None):
        raise RuntimeError("write failed: No space left on device")

    monkeypatch.setattr(keras.callbacks.CSVLogger, "on_epoch_end", full)
    code, err = _failed(capsys, _args(tmp_path))
    assert (code, err) == (
        2,
        "error: the disk is full (write failed: No space left on device); no epoch "
        f"had completed, {tmp_path / 'run'} holds no backup: free some space and run "
        "the same command to start again\n",
    )


def test_other_errors_keep_their_traceback(tmp_path, monkeypatch):
    def bug(self, epoch, logs=None):
        raise OSError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(keras.callbacks.CSVLogger, "on_epoch_end", bug)
    with pytest.raises(PermissionError):
        toy.main(_args(tmp_path))


# --- a loss that became NaN ----------------------------------------------------------


class _NaNAt(keras.callbacks.Callback):
    """Makes the logged loss NaN at one batch (the callbacks share the logs)."""

    def __init__(self, epoch, batch):
        super().__init__()
        self.at, self.epoch = (epoch, batch), None

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if (self.epoch, batch) == self.at:
            logs["loss"] = math.nan


def test_a_nan_loss_in_the_first_epoch_advises_a_new_run(tmp_path, capsys):
    code, err = _failed(capsys, _args(tmp_path), callbacks=[_NaNAt(0, 2)])
    assert (code, err) == (
        2,
        "error: The training loss became nan at epoch 1, batch 3, before any epoch "
        "completed (nothing is kept to resume from): run again with a lower "
        "--learning-rate, or check the data for NaN, infinite or huge values (e.g. "
        "in --embeddings).\n",
    )
    assert "same command resumes" not in err
    # The advice works: a lower rate is a new run, not refused.
    result = toy.main([*_args(tmp_path), "--learning-rate", "0.005"])
    assert _logged_epochs(tmp_path / "run") == [0, 1, 2]
    assert result["value"] > 0.5


def test_a_nan_loss_after_a_completed_epoch_advises_starting_afresh(tmp_path, capsys):
    code, err = _failed(capsys, _args(tmp_path), callbacks=[_NaNAt(1, 0)])
    backup = tmp_path / "run" / "backup"
    assert (code, err) == (
        2,
        "error: The training loss became nan at epoch 2, batch 1. The weights after "
        f"epoch 1 are kept in {backup}, but the same command would resume them and "
        "diverge again: run again with a lower --learning-rate, or check the data "
        "for NaN, infinite or huge values (e.g. in --embeddings), with --resume "
        "never (or another --run-dir) to start afresh.\n",
    )
    assert os.listdir(backup) == ["epoch-00001.weights.h5"]
    # The advice works: a lower rate with --resume never trains from epoch 1.
    argv = [*_args(tmp_path), "--learning-rate", "0.005", "--resume", "never"]
    toy.main(argv)
    assert _logged_epochs(tmp_path / "run") == [0, 1, 2]


def test_debug_shows_the_nan_error_itself(tmp_path):
    from zoo.training import NonFiniteLossError

    with pytest.raises(NonFiniteLossError, match="at epoch 1, batch 1,"):
        toy.main([*_args(tmp_path), "--debug"], callbacks=[_NaNAt(0, 0)])
