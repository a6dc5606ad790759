"""`run_task_test`: what every task is checked for (after keras-hub's `run_task_test`).

Fit on raw strings, predict on raw strings, `.keras` saved here and loaded in a fresh
process after `import zoo` only, a preset saved and loaded again: each gives the same
predictions as the task in memory.
"""

import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_FRESH = r"""
import json, sys
import numpy as np
import zoo, keras
task = keras.saving.load_model(sys.argv[1])
x = json.loads(sys.argv[2])
out = getattr(task, sys.argv[3])(x)
print(json.dumps({"class": type(task).__name__, "out": np.asarray(out).tolist()}))
"""


def predictions_in_fresh_process(path, x, method="predict"):
    """Loads `path` in a new Python process that imports only `zoo` and `keras`
    and returns `(class name, method(x) as a NumPy array)`."""
    env = {**os.environ, "KERAS_BACKEND": "tensorflow", "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run(
        [sys.executable, "-c", _FRESH, str(path), json.dumps(x), method],
        capture_output=True,
        text=True,
        cwd="/",
        env={**env, "PYTHONPATH": ROOT},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return result["class"], np.asarray(result["out"])


def run_task_test(task, x, y, predict_x, tmp_path, method="predict", atol=1e-5):
    """Fit, predict, `.keras` (fresh process) and preset round trips of `task`.

    Args:
        task: a compiled task.
        x, y: raw training inputs and targets for one epoch of `fit`.
        predict_x: raw inputs (JSON-serialisable) for `method`.
        tmp_path: a pytest `tmp_path`.
        method: the prediction method compared (`"predict"` or e.g. `"translate"`).
    """
    before = [w.copy() for w in task.backbone.get_weights()]
    history = task.fit(x, y, epochs=1, verbose=0)
    loss = history.history["loss"][-1]
    assert np.isfinite(loss), loss
    changed = [
        not np.allclose(a, b)
        for a, b in zip(before, task.backbone.get_weights(), strict=True)
    ]
    assert any(changed), "fit changed no weight"

    expected = np.asarray(_call(task, method, predict_x))
    if method == "predict":
        assert np.all(np.isfinite(expected))
        assert expected.shape[0] == len(next(iter(_as_batch(predict_x))))

    path = tmp_path / "task.keras"
    task.save(path)
    name, fresh = predictions_in_fresh_process(path, predict_x, method)
    assert name == type(task).__name__
    _assert_same(fresh, expected, atol)

    preset = tmp_path / "preset"
    task.save_to_preset(preset)
    for file in (
        "config.json",
        "model.weights.h5",
        "preprocessor.json",
        "task.json",
        "metadata.json",
    ):
        assert (preset / file).is_file(), file
    assert os.listdir(preset / "assets" / "preprocessor")
    metadata = json.loads((preset / "metadata.json").read_text())
    assert metadata["task"] == type(task).__name__
    assert metadata["parameter_count"] == task.backbone.count_params()
    loaded = type(task).from_preset(preset)
    _assert_same(np.asarray(_call(loaded, method, predict_x)), expected, atol)
    with pytest.raises(ValueError, match="is not empty"):
        task.save_to_preset(preset)
    with pytest.raises(ValueError, match="hub handles"):
        type(task).from_preset("kaggle://zoo/han/keras/imdb")
    keras.backend.clear_session()


def _call(task, method, x):
    fn = getattr(task, method)
    return fn(x, verbose=0) if method == "predict" else fn(x)


def _as_batch(x):
    return x.values() if isinstance(x, dict) else [x]


def _assert_same(got, expected, atol):
    if expected.dtype.kind in "OUS":
        assert got.tolist() == expected.tolist()
    else:
        np.testing.assert_allclose(got, expected, atol=atol)
