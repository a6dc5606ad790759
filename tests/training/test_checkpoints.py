import json
import os

import keras
import numpy as np
import pytest

from tests.training.training_test_utils import (
    dense_model,
    epochs_seen,
    log_rows,
    logged_epochs,
    run_script,
)
from zoo.training import save_model_atomic
from zoo.training.checkpoints import Backup


def _listing(folder):
    return sorted(os.listdir(folder))


def test_save_model_atomic_writes_a_loadable_model(tmp_path):
    model = dense_model()
    path = tmp_path / "final.keras"
    assert save_model_atomic(model, path) == path
    loaded = keras.saving.load_model(path)
    x = np.ones((2, 3), "float32")
    np.testing.assert_allclose(
        loaded.predict(x, verbose=0), model.predict(x, verbose=0)
    )
    assert _listing(tmp_path) == ["final.keras"]  # no temporary file left


def test_a_save_that_fails_midway_leaves_the_previous_model(tmp_path, monkeypatch):
    path = tmp_path / "final.keras"
    first = dense_model()
    save_model_atomic(first, path)
    before = path.read_bytes()
    second = dense_model(kernel_initializer="ones")

    def half_a_save(filepath, *args, **kwargs):
        with open(filepath, "wb") as f:
            f.write(before[: len(before) // 2])
        raise OSError("disk full")

    monkeypatch.setattr(second, "save", half_a_save)
    with pytest.raises(OSError, match="disk full"):
        save_model_atomic(second, path)
    assert path.read_bytes() == before
    assert _listing(tmp_path) == ["final.keras"]


def test_backup_keeps_one_complete_file_named_by_its_epoch(tmp_path, monkeypatch):
    backup = Backup(str(tmp_path / "backup"))
    assert backup.latest() == (0, None)
    model = dense_model()
    backup.save(model, 1)
    path2 = backup.save(model, 2)
    assert backup.latest() == (2, path2)
    assert _listing(tmp_path / "backup") == ["epoch-00002.weights.h5"]
    # a failing save of epoch 3 keeps epoch 2
    monkeypatch.setattr(
        model, "save_weights", lambda p, **kw: (open(p, "wb").close(), 1 / 0)
    )
    with pytest.raises(ZeroDivisionError):
        backup.save(model, 3)
    assert backup.latest() == (2, path2)
    assert _listing(tmp_path / "backup") == ["epoch-00002.weights.h5"]
    restored = dense_model(kernel_initializer="ones")
    backup.restore(restored, path2)
    for a, b in zip(restored.get_weights(), model.get_weights(), strict=True):
        np.testing.assert_allclose(a, b)
    backup.remove()
    assert not (tmp_path / "backup").exists()


def _kill_command(out, run_dir, what, epoch):
    return [
        out,
        "--run-dir",
        run_dir,
        "--kill-in-save",
        what,
        "--kill-epoch",
        epoch,
        "--patience",
        0,
    ]


@pytest.mark.slow
def test_killed_while_saving_the_backup_resumes_from_the_previous_one(tmp_path):
    """SIGKILL with the epoch-3 backup half written: the epoch-2 backup is intact and
    the same command resumes at epoch 3."""
    out, run_dir = tmp_path / "out.json", tmp_path / "run"
    cmd = _kill_command(out, run_dir, "backup", 2)
    first = run_script(cmd)
    assert first.returncode == -9, first.stderr[-2000:]  # SIGKILL
    assert Backup(str(run_dir / "backup")).latest()[0] == 2
    assert any(n.startswith(".tmp-") for n in os.listdir(run_dir / "backup"))
    second = run_script(cmd)  # the same command again
    assert second.returncode == 0, second.stderr[-2000:]
    assert f"resuming {run_dir} from epoch 3 (of 5)" in second.stdout
    assert epochs_seen(out) == [0, 1, 2, 2, 3, 4]
    assert json.load(open(out))["epochs"] == [2, 3, 4]
    assert logged_epochs(run_dir) == [0, 1, 2, 3, 4]  # epoch 2's first row dropped
    assert not (run_dir / "backup").exists()


@pytest.mark.slow
def test_killed_while_saving_the_best_model_keeps_the_previous_one(tmp_path):
    """SIGKILL with the epoch-2 best.keras half written: best.keras still holds the
    model of epoch 1, and the same command resumes at epoch 2."""
    out, run_dir = tmp_path / "out.json", tmp_path / "run"
    cmd = _kill_command(out, run_dir, "best", 1)
    first = run_script(cmd)
    assert first.returncode == -9, first.stderr[-2000:]
    best = keras.saving.load_model(run_dir / "best.keras")  # not a truncated file
    backup = Backup(str(run_dir / "backup"))
    completed, path = backup.latest()
    assert completed == 1  # killed before the epoch-2 backup
    epoch1 = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    epoch1.compile(keras.optimizers.SGD(0.05), "mse")
    backup.restore(epoch1, path)
    for a, b in zip(best.get_weights(), epoch1.get_weights(), strict=True):
        np.testing.assert_allclose(a, b)
    second = run_script(cmd)
    assert second.returncode == 0, second.stderr[-2000:]
    assert f"resuming {run_dir} from epoch 2 (of 5)" in second.stdout
    assert json.load(open(out))["epochs"] == [1, 2, 3, 4]
    assert not [n for n in os.listdir(run_dir) if n.startswith(".tmp-")]
    keras.saving.load_model(run_dir / "best.keras")


@pytest.mark.slow
def test_killed_mirrored_run_resumes_from_current_epoch(tmp_path):
    """Killed in epoch 2 and started again with the same command, a MirroredStrategy
    run on 2 logical CPU devices continues at epoch 2 and completes."""
    out = tmp_path / "out.json"
    cmd = [
        out,
        "--run-dir",
        tmp_path / "run",
        "--kill-epoch",
        2,
        "--patience",
        0,
        "--distribute",
        "mirrored",
        "--logical-cpus",
        2,
    ]
    first = run_script(cmd)
    assert first.returncode == 3, first.stderr[-2000:]
    assert epochs_seen(out) == [0, 1, 2]
    assert (tmp_path / "run" / "backup").is_dir()
    second = run_script(cmd)  # the same command again
    assert second.returncode == 0, second.stderr[-2000:]
    assert f"resuming {tmp_path / 'run'} from epoch 3 (of 5)" in second.stdout
    assert epochs_seen(out) == [0, 1, 2, 2, 3, 4]
    result = json.load(open(out))
    assert result["replicas"] == 2
    assert result["epochs"] == [2, 3, 4]
    assert logged_epochs(tmp_path / "run") == [0, 1, 2, 3, 4]
    losses = [float(row["loss"]) for row in log_rows(tmp_path / "run")]
    assert losses[2] < losses[0]  # resumed weights, not a fresh start
    assert losses[4] < losses[2]
    assert not (tmp_path / "run" / "backup").exists()
    assert (tmp_path / "run" / "best.keras").exists()
