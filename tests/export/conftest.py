import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture(scope="session")
def tiny_export(tmp_path_factory):
    """One trained and exported tiny classifier shared by the export tests."""
    import tiny_model

    work = tmp_path_factory.mktemp("tiny")
    base_dir = work / "saved_models"
    version_dir, accuracy = tiny_model.train_and_export(str(base_dir), str(work))
    return {
        "base_dir": str(base_dir),
        "version_dir": version_dir,
        "accuracy": accuracy,
        "work": str(work),
    }
