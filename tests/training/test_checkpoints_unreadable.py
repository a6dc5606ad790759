"""A truncated or damaged weights file of a run folder (the early stopping's
`best-<epoch>.npz` read on resume, a `minute_<M>.weights.npz` snapshot read at
evaluation) is one line naming the file (`UnreadableBackupError`), not a traceback."""

import os

import numpy as np
import pytest

from tests.training.training_test_utils import dense_model
from zoo.errors import ZooError
from zoo.training.callbacks import ResumableEarlyStopping, load_snapshot
from zoo.training.checkpoints import UnreadableBackupError, read_weights


def _saved(path, model):
    np.savez(path, *model.get_weights())
    return path


def _truncated(path):
    os.truncate(path, os.path.getsize(path) // 2)
    return path


def test_read_weights_reads_a_whole_file(tmp_path):
    model = dense_model()
    path = _saved(tmp_path / "w.npz", model)
    weights = read_weights(path)
    for got, want in zip(weights, model.get_weights(), strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    "damage", ["truncated", "empty", "garbage", "pickled", "one array", "a folder"]
)
def test_a_damaged_weights_file_is_one_line_naming_it(tmp_path, damage):
    path = _saved(tmp_path / "best-00002.npz", dense_model())
    if damage == "truncated":
        _truncated(path)
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "garbage":
        path.write_bytes(b"PK\x03\x04" + b"\xff" * 300)
    elif damage in ("pickled", "one array"):
        array = np.array([{}] if damage == "pickled" else [1.0])
        with open(path, "wb") as f:
            np.save(f, array, allow_pickle=True)
    else:
        os.remove(path)
        path.mkdir()
    with pytest.raises(UnreadableBackupError) as caught:
        read_weights(path, "pass --resume never")
    message = str(caught.value)
    assert isinstance(caught.value, ZooError)
    assert message.startswith(
        f"{path}: the weights cannot be read (truncated or damaged: "
    ), message
    assert message.endswith("; pass --resume never") and "\n" not in message


def test_a_truncated_best_epoch_file_on_resume_names_it(tmp_path):
    model = dense_model()
    folder = tmp_path / "run" / "backup"
    folder.mkdir(parents=True)
    path = _truncated(_saved(folder / "best-00001.npz", model))
    stopping = ResumableEarlyStopping("loss", "min", 3, str(folder), [0.5, 0.4])
    stopping.set_model(model)
    with pytest.raises(UnreadableBackupError) as caught:
        stopping.on_train_begin()
    assert str(caught.value).startswith(
        f"{path}: the weights cannot be read (truncated or damaged: "
    )
    assert str(caught.value).endswith(
        f"; pass --resume never to start afresh in {tmp_path / 'run'}"
    )


def test_a_truncated_snapshot_at_evaluation_names_it(tmp_path):
    model = dense_model()
    path = _saved(tmp_path / "minute_0001.00.weights.npz", model)
    assert load_snapshot(model, path) is model  # whole: read
    _truncated(path)
    with pytest.raises(UnreadableBackupError) as caught:
        load_snapshot(model, path)
    assert str(caught.value).startswith(
        f"{path}: the weights cannot be read (truncated or damaged: "
    )
