"""Shared test configuration: TensorFlow backend, quiet logs, seeded, data location."""

import os
import pathlib

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import pytest  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"


@pytest.fixture
def shared_data():
    """Path to ../shared/data; skips the test when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data not available at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(autouse=True)
def _seed_and_reset():
    import keras

    keras.utils.set_random_seed(1234)
    yield
    keras.backend.clear_session()
