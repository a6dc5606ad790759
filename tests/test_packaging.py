"""Packaging: the core install is the layers with Keras and NumPy, extras per kind of
user, license and changelog; the core install runs a layer without TensorFlow.

Runs in the main environment and in `.venv-jax` (the core install with JAX and no
TensorFlow, `scripts/zoo.sh test-jax`), where the last test runs.
"""

import importlib.util
import os
import pathlib
import re
import subprocess
import sys
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT = PYPROJECT["project"]


def _names(requirements):
    """Distribution names of requirement strings (`"tensorflow[and-cuda]==2.21"`)."""
    return {re.match(r"[A-Za-z0-9_.-]+", r).group(0).lower() for r in requirements}


def test_the_core_install_is_keras_and_numpy():
    assert _names(PROJECT["dependencies"]) == {"keras", "numpy"}


def test_extras_per_kind_of_user():
    extras = {k: _names(v) for k, v in PROJECT["optional-dependencies"].items()}
    assert set(extras) == {"train", "serve", "gpu", "dev"}
    assert extras["train"] == {
        "tensorflow",
        "tensorflow-text",
        "sacrebleu",
        "sacremoses",
        "matplotlib",
        "tensorboard",
        "pandas",
    }
    assert extras["serve"] == {
        "tensorflow",
        "tensorflow-text",
        "tensorflow-serving-api",
        "grpcio",
        "protobuf",
    }
    assert extras["gpu"] == {"tensorflow"}
    assert {"pytest", "ruff"} <= extras["dev"]
    # one TensorFlow release everywhere: TF Serving links the tensorflow-text ops of
    # its own release
    pins = {
        requirement.split("==")[1]
        for extra in ("train", "serve", "gpu")
        for requirement in PROJECT["optional-dependencies"][extra]
        if requirement.startswith("tensorflow")
        and "==" in requirement
        and not requirement.startswith(("tensorflow-text", "tensorflow-serving"))
    }
    assert len(pins) == 1, pins


def test_every_declared_library_is_imported():
    sources = "\n".join(
        path.read_text(encoding="utf-8")
        for folder in ("zoo", "recipes")
        for path in (ROOT / folder).rglob("*.py")
    )
    imports = {
        "tensorflow-text": "tensorflow_text",
        "tensorflow-serving-api": "tensorflow_serving",
        "grpcio": "grpc",
        "protobuf": "google.protobuf",
    }
    declared = set(_names(PROJECT["dependencies"]))
    for extra in ("train", "serve"):
        declared |= _names(PROJECT["optional-dependencies"][extra])
    declared.discard("tensorboard")  # Keras' TensorBoard callback writes its logs
    assert "keras.callbacks.TensorBoard(" in sources
    for name in sorted(declared):
        module = imports.get(name, name)
        assert re.search(rf"^\s*(import|from) {re.escape(module)}\b", sources, re.M), (
            f"{name} is declared but zoo/ and recipes/ never import {module}"
        )


def test_the_recipes_folder_is_installed_as_zoo_recipes(tmp_path):
    # every package under zoo/ is listed (the list is explicit because recipes/ is
    # mapped onto zoo.recipes), and nothing named `recipes` lands in site-packages
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    found = {
        ".".join(path.parent.relative_to(ROOT).parts)
        for path in (ROOT / "zoo").rglob("__init__.py")
    }
    assert found | {"zoo.recipes"} == listed
    assert PYPROJECT["tool"]["setuptools"]["package-dir"]["zoo.recipes"] == "recipes"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "-q",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode != 0 and "No module named" in proc.stderr:
        pytest.skip(f"cannot build a wheel here: {proc.stderr.strip()[-200:]}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    import zipfile

    (wheel,) = tmp_path.glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names}
    assert "recipes" not in tops
    assert {n for n in tops if not n.endswith(".dist-info")} == {"zoo"}
    for recipe in (
        "translation",
        "han_classification",
        "self_attentive_embedding",
        "memn2n_babi",
        "__main__",
    ):
        assert f"zoo/recipes/{recipe}.py" in names
    assert not [n for n in names if n.startswith("zoo/") and "/testing.py" in n]


def test_license_classifiers_and_changelog():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert PROJECT["license"] == "Apache-2.0"  # SPDX (no license classifier)
    assert PROJECT["license-files"] == ["LICENSE"]
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
    assert "END OF TERMS AND CONDITIONS" in text
    assert not [c for c in PROJECT["classifiers"] if c.startswith("License ::")]
    assert "Programming Language :: Python :: 3.11" in PROJECT["classifiers"]
    version = re.search(
        r'__version__ = "([^"]+)"', (ROOT / "zoo" / "__init__.py").read_text()
    ).group(1)
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (\S+)", changelog, flags=re.MULTILINE)
    assert headings[0] == "Unreleased"
    assert version in headings


def test_the_fast_paths_plug_into_the_layers_through_an_entry_point():
    entry_points = PYPROJECT["project"]["entry-points"]["zoo.layers.loops"]
    assert entry_points == {"tensorflow": "zoo.fastpath"}


_IMPORT_LAYERS = """
import sys
import zoo.layers
above = ("zoo.fastpath", "zoo.training", "zoo.models", "zoo.recipes")
heavy = ("tensorflow_text", "sacrebleu", "sacremoses", "grpc")  # Keras may load pandas
loaded = sorted(
    m for m in sys.modules if m.split(".")[0] in heavy or m.startswith(above)
)
print("LOADED", loaded)
print("TENSORFLOW", "tensorflow" in sys.modules)
"""


def test_import_zoo_layers_loads_nothing_above_the_layers():
    # ZOO_LAZY_IMPORT=1: `import zoo` registers no models, so what loads is what
    # zoo.layers itself imports (with the TensorFlow backend, Keras loads TensorFlow)
    env = dict(os.environ, ZOO_LAZY_IMPORT="1")
    proc = subprocess.run(
        [sys.executable, "-c", _IMPORT_LAYERS],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "LOADED []" in proc.stdout
    if env.get("KERAS_BACKEND") != "tensorflow":
        assert "TENSORFLOW False" in proc.stdout


_CORE_MODEL = """
import sys
import keras
import numpy as np
from zoo.layers import BahdanauAttention

query = keras.Input((None, 4))
value = keras.Input((None, 6))
context, weights = BahdanauAttention(units=3)([query, value], return_attention_scores=True)
model = keras.Model([query, value], [context, weights])
model.compile(optimizer="adam", loss=["mse", None])
rng = np.random.default_rng(0)
q = rng.normal(size=(2, 5, 4)).astype("float32")
v = rng.normal(size=(2, 7, 6)).astype("float32")
model.fit([q, v], [np.zeros((2, 5, 6), "float32")], epochs=1, verbose=0)
c, w = model.predict([q, v], verbose=0)
assert c.shape == (2, 5, 6) and w.shape == (2, 5, 7), (c.shape, w.shape)
assert np.allclose(w.sum(-1), 1.0, atol=1e-5) and np.isfinite(c).all()
print("BACKEND", keras.backend.backend())
print("TENSORFLOW", "tensorflow" in sys.modules)
"""


@pytest.mark.skipif(
    importlib.util.find_spec("tensorflow") is not None,
    reason="the core install is checked in .venv-jax (no TensorFlow installed)",
)
def test_the_core_install_runs_a_layer_without_tensorflow():
    # a fresh interpreter, without the test session's imports; `import zoo` as a
    # user's would, registering what is installed
    env = {k: v for k, v in os.environ.items() if k != "ZOO_LAZY_IMPORT"}
    proc = subprocess.run(
        [sys.executable, "-c", _CORE_MODEL],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"BACKEND {env.get('KERAS_BACKEND')}" in proc.stdout
    assert "TENSORFLOW False" in proc.stdout
