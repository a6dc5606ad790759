import json
import os

import keras
import numpy as np
import pytest

from tests.training.training_test_utils import (
    Interrupt,
    dense_model,
    epochs_seen,
    log_rows,
    logged_epochs,
    quick_run,
    run_script,
)
from zoo.errors import ZooError
from zoo.training import save_model_atomic
from zoo.training.checkpoints import Backup, UnreadableBackupError


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
    monkeypatch.setattr(model, "save_weights", lambda p, **kw: 1 / 0)
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


def _truncate(path):
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) // 2)


def test_a_truncated_backup_is_one_line_and_the_same_command_says_it_again(tmp_path):
    """The backup a tiny fit wrote, cut to half its size: one line naming the file
    and `--resume never`, nothing in the folder changed, so the same again says the
    same; `--resume never` then trains afresh."""
    run_dir = tmp_path / "run"
    with pytest.raises(Interrupt):
        quick_run(run_dir, interrupt_at=2)
    path = run_dir / "backup" / "epoch-00002.weights.h5"
    _truncate(path)
    before = {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()}
    messages = []
    for _ in range(2):
        with pytest.raises(UnreadableBackupError) as caught:
            quick_run(run_dir)
        messages.append(str(caught.value))
        assert {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()} == before
    assert messages[0] == messages[1]
    assert messages[0].startswith(
        f"{path}: the backup after epoch 2 cannot be read (Unable to "
    )
    assert "truncated file" in messages[0] and "\n" not in messages[0]
    assert messages[0].endswith(
        f"it is kept as it is: pass --resume never to start afresh in {run_dir}, or "
        "another --run-dir"
    )
    assert isinstance(caught.value, ZooError)
    _, history = quick_run(run_dir, resume="never")
    assert history.epoch == [0, 1, 2, 3]


def test_damaged_bytes_inside_a_backup_are_the_same_one_line(tmp_path):
    """A file HDF5 opens but whose data cannot be read is found by `restore`."""
    model = dense_model()
    backup = Backup(str(tmp_path / "backup"))
    path = backup.save(model, 1)
    data = bytearray(open(path, "rb").read())
    data[len(data) // 3 : len(data) // 3 + 2048] = b"\xff" * 2048
    open(path, "wb").write(bytes(data))
    with pytest.raises(UnreadableBackupError, match=r"cannot be read \(") as caught:
        backup.restore(dense_model(), path)
    assert str(caught.value).startswith(f"{path}: the backup cannot be read (")


def test_a_recipe_with_a_truncated_backup_exits_2_with_one_line_twice(tmp_path, capsys):
    from tests.recipe import toy_recipe as toy
    from tests.recipe.test_recipe import _args
    from tests.training.training_test_utils import InterruptAt

    with pytest.raises(Interrupt):
        toy.main(_args(tmp_path), callbacks=[InterruptAt(1)])
    (path,) = (tmp_path / "run" / "backup").iterdir()
    _truncate(path)
    capsys.readouterr()
    errors = []
    for _ in range(2):
        with pytest.raises(SystemExit) as exit_info:
            toy.main(_args(tmp_path))
        assert exit_info.value.code == 2
        errors.append(capsys.readouterr().err)
    assert errors[0] == errors[1] and len(errors[0].splitlines()) == 1
    assert errors[0].startswith(f"error: {path}: the backup after epoch 1 cannot be ")
    assert "--resume never" in errors[0]


def _mount_tmpfs(folder, size):
    import subprocess

    if os.geteuid() != 0:
        pytest.skip("a small tmpfs needs root")
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
        capture_output=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {mounted.stderr.decode()[:200]}")


@pytest.mark.slow
def test_a_run_folder_on_a_really_full_disk_is_one_line_and_exit_2(tmp_path):
    """A 96 KiB tmpfs: the first backup does not fit. HDF5 used to write it there and
    crash the process in `h5py.File.close` (exit 139); the backup is now made in
    memory and its write fails as any other (exit 2, one line)."""
    import subprocess
    import sys

    full = tmp_path / "full"
    _mount_tmpfs(full, "96k")
    script = (
        "import sys; from tests.recipe import toy_recipe as toy; toy.main(sys.argv[1:])"
    )
    argv = ["--run-dir", str(full / "run"), "--units", "512", "--no-tensorboard"]
    argv += ["--report-dir", str(tmp_path / "r"), "--export-dir", str(tmp_path / "e")]
    try:
        proc = subprocess.run(
            [sys.executable, "-c", script, *argv],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))),
        )
    finally:
        subprocess.run(["umount", str(full)], check=False)
    assert proc.returncode == 2, proc.stderr[-3000:]
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in proc.stderr
    assert errors[0].startswith("error: the disk is full (No space left on device): ")
    assert errors[0].endswith("/run/backup; no backup is kept")
