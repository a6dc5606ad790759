import os
import subprocess
import sys
import textwrap

import pytest
from google.protobuf import text_format
from tensorflow_serving.config import model_server_config_pb2

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def tiny_export(tmp_path):
    """A small trained export (built in this process: cheaper than in a child)."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "export"))
    try:
        import tiny_model
    finally:
        sys.path.pop(0)
    version_dir, _ = tiny_model.train_and_export(
        str(tmp_path / "built"), str(tmp_path), epochs=20
    )
    return {"version_dir": version_dir}


@pytest.mark.slow
def test_main_job_runs_verifies_and_reports(tiny_export, tmp_path):
    fakes = tmp_path / "fakes"
    fakes.mkdir()
    # A recipe that "trains" by copying the tiny export (the export fixture trained
    # it once), so this test times the main job, not a training run.
    (fakes / "fake_ok_recipe.py").write_text(
        textwrap.dedent(
            f"""
            import argparse, os, shutil

            def main(argv=None):
                parser = argparse.ArgumentParser()
                parser.add_argument("--export-dir")
                parser.add_argument("--run-dir")
                parser.add_argument("--report-dir")
                args = parser.parse_args(argv)
                target = os.path.join(args.export_dir, "tiny")
                shutil.copytree({str(os.path.dirname(tiny_export["version_dir"]))!r}, target)
                return {{"model": "tiny", "metric": "accuracy", "value": 1.0,
                        "export": os.path.join(target, "1")}}
            """
        )
    )
    (fakes / "fake_broken_recipe.py").write_text(
        "def main(argv=None):\n    raise RuntimeError('demo data missing')\n"
    )
    export_dir = tmp_path / "saved_models"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(fakes), ROOT]),
    }
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "zoo.recipes",
            "--export-dir",
            str(export_dir),
            "--recipes",
            "fake_ok_recipe",
            "fake_broken_recipe",
            "zoo.recipes.not_written_yet",
            "--timeout",
            "300",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=tmp_path,
    )
    assert result.returncode == 1, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    tiny_row = next(line for line in lines if line.startswith("tiny "))
    assert "accuracy = 1.0000" in tiny_row
    assert os.path.join("tiny", "1") in tiny_row and "| ok " in tiny_row
    broken = next(line for line in lines if line.startswith("fake_broken_recipe"))
    assert "failed" in broken
    assert "FAILED fake_broken_recipe: exit 1: RuntimeError: demo data missing" in (
        result.stderr
    )
    assert any(
        line.startswith("not_written_yet") and "not available" in line for line in lines
    )
    config = text_format.Parse(
        (export_dir / "models.config").read_text(),
        model_server_config_pb2.ModelServerConfig(),
    )
    assert [c.name for c in config.model_config_list.config] == ["tiny"]
    assert (export_dir / "serve.sh").exists()
