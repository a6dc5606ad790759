import contextlib

import pytest

from tests.serving import tiny_exports


@pytest.fixture(scope="session")
def small_exports(tmp_path_factory):
    """`{"classifier": version_dir, "reader": version_dir}` under one export root."""
    work = tmp_path_factory.mktemp("serving")
    base_dir = work / "saved_models"
    return {
        "root": str(base_dir),
        "classifier": tiny_exports.export_classifier(base_dir, work),
        "reader": tiny_exports.export_reader(base_dir),
    }


@pytest.fixture
def serve():
    """`serve(export_dir, **kwargs) -> ServedExport`: TF Serving's gRPC and REST
    predict contracts over the export on 127.0.0.1 (see
    `tests.serving.fake_serving.serve_export`), stopped when the test ends."""
    from tests.serving.fake_serving import serve_export

    with contextlib.ExitStack() as stack:
        yield lambda export_dir, **kwargs: stack.enter_context(
            serve_export(export_dir, **kwargs)
        )
