import csv
import importlib.util
import io
import re
import warnings

import keras
import numpy as np
import pytest
import tensorflow as tf

from tests.training.training_test_utils import quick_run, regression_data, run_script
from zoo import training
from zoo.training import TrainingConfig
from zoo.training.fitting import _progress


def test_fit_writes_checkpoint_log_and_restores_best(tmp_path):
    x = np.random.default_rng(0).normal(size=(32, 3)).astype("float32")
    y = x.sum(axis=1, keepdims=True)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(8)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(keras.optimizers.SGD(0.1), "mse")
    cfg = TrainingConfig(epochs=3, run_dir=str(tmp_path / "run"), verbose=0)
    history = training.fit(model, ds, ds, cfg)
    assert history.epoch == [0, 1, 2]
    assert history.history["val_loss"][-1] < history.history["val_loss"][0]
    rows = list(csv.DictReader(open(tmp_path / "run" / "log.csv")))
    assert [int(r["epoch"]) for r in rows] == [0, 1, 2]
    best = keras.saving.load_model(tmp_path / "run" / "best.keras")
    np.testing.assert_allclose(
        best.predict(x, verbose=0), model.predict(x, verbose=0), atol=1e-6
    )
    assert not (tmp_path / "run" / "backup").exists()
    has_tensorboard = importlib.util.find_spec("tensorboard") is not None
    assert (tmp_path / "run" / "tensorboard").is_dir() == has_tensorboard
    # only the run's files: no temporary file of the atomic writes is left
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == sorted(
        [".lock", "best.keras", "log.csv", "run.json", "training_curve.png"]
        + ["tensorboard"] * has_tensorboard
    )


def test_fit_removes_the_temporaries_of_killed_writes(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / ".tmp-0badcafe-best.keras").write_bytes(b"half a model")
    (run_dir / "notes.txt").write_text("kept")
    quick_run(run_dir, epochs=1)
    assert not (run_dir / ".tmp-0badcafe-best.keras").exists()
    assert (run_dir / "notes.txt").read_text() == "kept"


def test_fit_sets_the_initial_epoch_itself(tmp_path):
    ds, _ = regression_data()
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(keras.optimizers.SGD(0.1), "mse")
    cfg = TrainingConfig(run_dir=str(tmp_path), verbose=0)
    with pytest.raises(ValueError, match="initial_epoch=2"):
        training.fit(model, ds, ds, cfg, initial_epoch=2)


class _Stream(io.StringIO):
    def __init__(self, terminal):
        super().__init__()
        self.terminal = terminal

    def isatty(self):
        return self.terminal


def test_progress_is_a_bar_on_a_terminal_and_lines_elsewhere():
    assert _progress("auto", _Stream(terminal=True)) == 1
    assert _progress("auto", _Stream(terminal=False)) == 2
    assert _progress(2, _Stream(terminal=True)) == 2
    assert _progress(1, _Stream(terminal=False)) == 1
    assert _progress(0, _Stream(terminal=True)) == 0


def test_output_to_a_file_is_keras_plain_lines_per_epoch(tmp_path):
    """Standard output is a pipe here, as when a run's output goes to a log file:
    Keras' `verbose=2` lines, no escape codes or carriage returns."""
    result = run_script(
        [tmp_path / "out.json", "--run-dir", tmp_path / "run", "--epochs", 3]
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "\x1b" not in result.stdout and "\r" not in result.stdout
    assert "\b" not in result.stdout
    lines = result.stdout.splitlines()
    assert lines[0::2] == ["Epoch 1/3", "Epoch 2/3", "Epoch 3/3"]
    for line in lines[1::2]:
        assert re.fullmatch(
            r"4/4 - \d+s - \d+[mu]?s/step - loss: [\d.e+-]+ - val_loss: [\d.e+-]+ - "
            r"elapsed_seconds: [\d.e+-]+",
            line,
        ), line
    # the same command again: the run completed, so it starts afresh
    again = run_script(
        [tmp_path / "out.json", "--run-dir", tmp_path / "run", "--epochs", 3]
    )
    assert again.stdout.splitlines()[0] == "Epoch 1/3"
    assert "UserWarning" not in result.stderr  # no Keras warnings (see below)


def test_fit_triggers_no_keras_warnings(tmp_path):
    ds, _ = regression_data()
    # a dataset whose length TensorFlow does not know, as after bucket_by_length
    unknown = ds.filter(lambda x, y: True)
    with warnings.catch_warnings(record=True) as caught:
        # the warnings a user sees (Python hides DeprecationWarnings raised inside
        # libraries, such as NumPy's about TensorFlow's `__array__`)
        warnings.simplefilter("always", UserWarning)
        quick_run(tmp_path / "a", epochs=2)
        model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
        model.compile(keras.optimizers.SGD(0.05), "mse")
        cfg = TrainingConfig(epochs=2, run_dir=str(tmp_path / "b"), verbose=0)
        training.fit(model, unknown, ds, cfg)
    assert [
        str(w.message) for w in caught if w.category is not DeprecationWarning
    ] == []


def test_a_too_short_dataset_still_warns_with_steps_per_epoch(tmp_path):
    ds, _ = regression_data()  # 4 batches, not repeated
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(keras.optimizers.SGD(0.05), "mse")
    cfg = TrainingConfig(epochs=2, run_dir=str(tmp_path), verbose=0, patience=0)
    with pytest.warns(UserWarning, match="ran out of data"):
        training.fit(model, ds, ds, cfg, steps_per_epoch=6)
