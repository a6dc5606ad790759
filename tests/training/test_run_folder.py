"""A run folder belongs to one run: an exclusive lock naming its holder's pid, and
the final weights of a finished training kept until the caller's run completes."""

import os
import signal
import subprocess
import sys

import numpy as np
import pytest

from tests.training.training_test_utils import logged_epochs, quick_run
from zoo.training.run_folder import (
    LOCK_FILE,
    RunLockedError,
    holds_lock,
    keep_final_backups,
    kept_backups,
    run_lock,
)

IDENTITY = {"recipe": "toy", "config": {"units": 8}, "data": "0123456789ab"}

_HOLDER = """
import sys, time
from zoo.training.run_folder import run_lock
with run_lock(sys.argv[1]):
    print("locked", flush=True)
    time.sleep(120)
"""


@pytest.fixture
def holder():
    """`holder(run_dir)`: another process holding the lock of `run_dir`."""
    procs = []

    def start(run_dir):
        proc = subprocess.Popen(
            [sys.executable, "-c", _HOLDER, str(run_dir)],
            stdout=subprocess.PIPE,
            text=True,
            cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))),
        )
        procs.append(proc)
        assert proc.stdout.readline().strip() == "locked"
        return proc

    yield start
    for proc in procs:
        proc.kill()
        proc.wait()


def test_a_second_process_is_refused_naming_the_holder(tmp_path, holder):
    run_dir = tmp_path / "run"
    proc = holder(run_dir)
    with pytest.raises(RunLockedError) as refused:
        with run_lock(run_dir):
            pass
    assert refused.value.pid == proc.pid
    assert str(refused.value) == (
        f"{run_dir} is in use by another run (pid {proc.pid}): wait for it to "
        "finish, or pass another --run-dir"
    )
    assert refused.value.exit_code == 2
    assert not holds_lock(run_dir)
    # The lock goes with its process: a killed holder leaves none behind.
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    with run_lock(run_dir):
        assert holds_lock(run_dir)
        assert (run_dir / LOCK_FILE).read_text() == f"{os.getpid()}\n"
    assert not holds_lock(run_dir)
    assert (run_dir / LOCK_FILE).read_text() == ""


def test_the_lock_is_reentrant_within_a_process(tmp_path):
    with run_lock(tmp_path / "run"):
        with run_lock(tmp_path / "run"):
            assert holds_lock(tmp_path / "run")
        assert holds_lock(tmp_path / "run")
    assert not holds_lock(tmp_path / "run")


def test_fit_refuses_a_folder_another_process_holds(tmp_path, holder):
    run_dir = tmp_path / "run"
    proc = holder(run_dir)
    with pytest.raises(RunLockedError, match=f"pid {proc.pid}"):
        quick_run(run_dir, run_identity=IDENTITY)
    assert sorted(os.listdir(run_dir)) == [LOCK_FILE]  # nothing else written


def test_a_finished_training_is_kept_and_loaded_instead_of_repeated(tmp_path, capsys):
    run_dir = tmp_path / "run"
    with keep_final_backups() as kept:
        assert kept_backups() is kept
        model, history = quick_run(run_dir, run_identity=IDENTITY)
        assert history.epoch == [0, 1, 2, 3]
        assert os.listdir(run_dir / "backup") == ["final-00004.weights.h5"]
        assert [b.folder for b in kept] == [str(run_dir / "backup")]
    assert kept_backups() is None
    trained = model.get_weights()
    capsys.readouterr()

    # The same run again (e.g. after a kill during its export): no training.
    with keep_final_backups() as kept:
        again, history = quick_run(run_dir, run_identity=IDENTITY)
        assert history.epoch == [] and history.history == {}
        for a, b in zip(again.get_weights(), trained, strict=True):
            np.testing.assert_array_equal(a, b)
        assert logged_epochs(run_dir) == [0, 1, 2, 3]
        for backup in kept:
            backup.remove()
    out = capsys.readouterr().out
    assert (
        f"resuming {run_dir}: its training finished after 4 epochs; loading the "
        "trained weights instead of training again (--resume never trains afresh)"
    ) in out
    assert not (run_dir / "backup").exists()

    # Once the caller's run is complete the folder starts afresh, as before.
    _, history = quick_run(run_dir, run_identity=IDENTITY)
    assert history.epoch == [0, 1, 2, 3]
    assert not (run_dir / "backup").exists()


def test_the_kept_weights_of_another_run_are_refused(tmp_path):
    from zoo.training import RunMismatchError

    run_dir = tmp_path / "run"
    with keep_final_backups():
        quick_run(run_dir, run_identity=IDENTITY)
    with pytest.raises(RunMismatchError, match="units"):
        quick_run(run_dir, run_identity={**IDENTITY, "config": {"units": 4}})
    assert os.listdir(run_dir / "backup") == ["final-00004.weights.h5"]
    # --resume never trains afresh and drops them.
    _, history = quick_run(run_dir, run_identity=IDENTITY, resume="never")
    assert history.epoch == [0, 1, 2, 3]
