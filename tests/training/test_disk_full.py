"""A full disk during a write is one line (`DiskFullError`, exit status 2) saying
what was kept, never a library traceback."""

import errno
import os

import pytest

from tests.recipe import toy_recipe as toy
from tests.recipe.test_recipe import _args
from tests.training.training_test_utils import quick_run
from zoo.errors import DiskFullError, ZooError, is_disk_full
from zoo.io import atomic_path, atomic_write
from zoo.training import checkpoints

ENOSPC = OSError(errno.ENOSPC, "No space left on device")


def test_is_disk_full():
    assert is_disk_full(ENOSPC)
    assert is_disk_full(OSError(errno.EDQUOT, "Disk quota exceeded"))
    h5py_style = OSError(
        "Unable to synchronously create file (file write failed: time = ..., "
        "errno = 28, error message = 'No space left on device')"
    )
    assert h5py_style.errno is None and is_disk_full(h5py_style)
    assert not is_disk_full(OSError(errno.EACCES, "Permission denied"))
    assert not is_disk_full(ValueError("bad value"))


def test_an_atomic_write_on_a_full_disk_keeps_the_previous_file(tmp_path):
    path = tmp_path / "metrics.json"
    path.write_text("previous")
    with pytest.raises(DiskFullError) as full:
        with atomic_write(path) as f:
            f.write("new")
            raise ENOSPC
    assert str(full.value) == (
        f"{path}: the disk is full (No space left on device); the previous file is kept"
    )
    assert isinstance(full.value, ZooError) and isinstance(full.value, OSError)
    assert path.read_text() == "previous"
    assert os.listdir(tmp_path) == ["metrics.json"]  # no temporary file left
    with pytest.raises(DiskFullError, match="; no file$"):
        with atomic_path(tmp_path / "new.bin"):
            raise ENOSPC


def _full_after(monkeypatch, saves):
    """The backup's file write fails with ENOSPC, half written, after `saves`
    successful ones."""
    real = checkpoints._write_bytes
    calls = []

    def write_bytes(path, data):
        calls.append(path)
        if len(calls) > saves:
            real(path, bytes(data[: len(data) // 2]))
            raise ENOSPC
        real(path, data)

    monkeypatch.setattr(checkpoints, "_write_bytes", write_bytes)


def test_a_full_disk_during_a_backup_keeps_the_last_one(tmp_path, monkeypatch):
    run_dir = tmp_path / "run"
    _full_after(monkeypatch, saves=2)
    with pytest.raises(DiskFullError) as full:
        quick_run(run_dir)
    backup = run_dir / "backup" / "epoch-00002.weights.h5"
    assert str(full.value) == (
        "the disk is full (No space left on device): could not write the backup "
        f"after epoch 3 to {run_dir / 'backup'}; the backup after epoch 2 is kept "
        f"({backup}): free some space and run the same command to resume from there"
    )
    assert full.value.reason == "No space left on device"
    assert os.listdir(run_dir / "backup") == ["epoch-00002.weights.h5"]
    monkeypatch.undo()
    _, history = quick_run(run_dir)  # space freed: the same command resumes
    assert history.epoch == [2, 3]


def test_a_recipe_on_a_full_disk_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    _full_after(monkeypatch, saves=1)
    with pytest.raises(SystemExit) as exit_info:
        toy.main(_args(tmp_path, "--data", str(tmp_path)))
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1
    assert err.startswith(
        "error: the disk is full (No space left on device): could not write the "
        "backup after epoch 2 to "
    )
    assert "the backup after epoch 1 is kept" in err
