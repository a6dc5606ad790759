"""A recipe script runs on the TensorFlow backend whatever KERAS_BACKEND says, with
TensorFlow's C++ log lines kept off stderr (`zoo/__init__.py`)."""

import os
import subprocess
import sys

PROBE = """
import zoo
import keras
print("BACKEND", keras.backend.backend())
import tensorflow
print("TF", tensorflow.__version__)
"""


def test_a_script_in_a_recipes_folder_runs_on_tensorflow_quietly(tmp_path):
    folder = tmp_path / "recipes"
    folder.mkdir()
    script = folder / "probe.py"
    script.write_text(PROBE)
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    env.update(KERAS_BACKEND="jax")
    env.pop("ZOO_LAZY_IMPORT", None)
    proc = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines()[0] == "BACKEND tensorflow"
    assert proc.stdout.splitlines()[1].startswith("TF ")
    assert proc.stderr == ""


def test_elsewhere_keras_backend_is_the_users(tmp_path):
    script = tmp_path / "probe.py"
    script.write_text("import os, zoo\nprint(os.environ['KERAS_BACKEND'])\n")
    env = dict(os.environ, KERAS_BACKEND="jax", ZOO_LAZY_IMPORT="1")
    proc = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "jax"
