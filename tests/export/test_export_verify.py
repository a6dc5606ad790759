import os
import shutil

import pytest

from zoo.export.verify import (
    fresh_process_command,
    verify_export,
    verify_in_fresh_process,
)
from zoo.export.verify import main as verify_main


def test_verify_passes_in_fresh_process(tiny_export):
    report = verify_in_fresh_process(os.path.dirname(tiny_export["version_dir"]))
    assert report["ok"], report["errors"]
    assert report["returncode"] == 0
    assert report["path"].endswith(os.path.join("tiny", "1"))
    assert report["ops"]["unregistered"] == []
    assert report["ops"]["count"] > 10
    assert report["warmup"] == {**report["warmup"], "requests": 2, "replayed": 2}
    compared = report["keras_check"]["compared"]["probabilities"]
    assert compared["ok"] and compared["max_abs_diff"] < 1e-5
    assert "signature 'serving_default'" in report["output"]
    assert "output probabilities: float32 [-1, 2]" in report["output"]


def test_verify_fails_clearly(tiny_export, tmp_path, capsys):
    import keras
    import tiny_model

    from zoo.text.vocabulary import Vocabulary

    # 1. The .keras model beside the export is not the exported model.
    other = tmp_path / "other"
    shutil.copytree(tiny_export["version_dir"], other / "1")
    vocab = Vocabulary.load(os.path.join(tiny_export["work"], "vocab.txt"))
    keras.utils.set_random_seed(7)
    tiny_model.build_model(len(vocab)).save(other / "1.keras")
    assert verify_main([str(other)]) == 1
    err = capsys.readouterr().err
    assert f"FAILED: {other / '1'}" in err
    assert "'probabilities' differs from the Keras model" in err

    # 2. The warm-up file is missing.
    broken = tmp_path / "broken"
    shutil.copytree(tiny_export["base_dir"], broken)
    os.remove(broken / "tiny" / "1" / "assets.extra" / "tf_serving_warmup_requests")
    report = verify_export(broken / "tiny" / "1")
    assert report["ok"] is False
    assert any("no warm-up file" in e for e in report["errors"])

    # 3. No export at all.
    missing = verify_export(tmp_path / "nothing")
    assert missing["ok"] is False
    assert "no such export folder" in missing["errors"][0]


_PROBE = """\
import os

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "imported.txt"), "a") as f:
    f.write(__name__ + "\\n")
"""


def _probe_folder(path, names):
    """A folder of modules that each append their name to `imported.txt` if imported."""
    path.mkdir()
    for name in names:
        (path / f"{name}.py").write_text(_PROBE)
    return path / "imported.txt"


def _export_naming_modules(tiny_export, root):
    import json

    version_dir = root / "named" / "1"
    shutil.copytree(tiny_export["version_dir"], version_dir)
    shutil.copy(tiny_export["version_dir"] + ".keras", root / "named" / "1.keras")
    manifest_path = version_dir / "assets.extra" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["keras_check"]["modules"] = ["zoo_probe_keras_check"]
    manifest["recipe"] = "zoo_probe_recipe"
    manifest_path.write_text(json.dumps(manifest))
    return version_dir


@pytest.mark.slow
def test_verifier_imports_nothing_an_export_names(tiny_export, tmp_path, monkeypatch):
    version_dir = _export_naming_modules(tiny_export, tmp_path)

    # In this process, with the named modules importable.
    marker = _probe_folder(
        tmp_path / "in_process", ["zoo_probe_keras_check", "zoo_probe_recipe"]
    )
    monkeypatch.syspath_prepend(str(marker.parent))
    report = verify_export(version_dir)
    assert report["ok"], report["errors"]
    assert report["keras_check"]["ignored_modules"] == ["zoo_probe_keras_check"]
    assert report["keras_check"]["compared"]["probabilities"]["ok"]
    assert not marker.exists()

    # In the fresh process: the current folder and PYTHONPATH hold the named modules
    # and a fake tensorflow_text; isolated mode leaves both off sys.path.
    fresh_marker = _probe_folder(
        tmp_path / "cwd",
        ["zoo_probe_keras_check", "zoo_probe_recipe", "tensorflow_text"],
    )
    monkeypatch.chdir(fresh_marker.parent)
    monkeypatch.setenv("PYTHONPATH", str(fresh_marker.parent))
    report = verify_in_fresh_process(version_dir)
    assert report["ok"], report["errors"] + [report["output"]]
    assert report["keras_check"]["ignored_modules"] == ["zoo_probe_keras_check"]
    assert not fresh_marker.exists()
    assert fresh_process_command(version_dir)[1] == "-I"


def test_export_refuses_modules_in_keras_check(tiny_export, tmp_path):
    import tiny_model

    from zoo.export import export_model

    model = tiny_model.build_model(8)
    module = tiny_model.TinyServing(
        model, os.path.join(tiny_export["work"], "vocab.txt")
    )
    with pytest.raises(ValueError, match="cannot name modules"):
        export_model(
            module,
            "m",
            {"serving_default": module.serve, "preprocess": module.preprocess},
            base_dir=str(tmp_path),
            keras_model=model,
            warmup={"serving_default": {"text": ["a"]}},
            keras_check={"outputs": {"probabilities": 0}, "modules": ["os"]},
        )


def test_a_zero_tolerance_compares_exactly():
    import numpy as np

    from zoo.export.verify import _compare

    got, expected = np.array([1.0]), np.array([1.00001])
    assert _compare(got, expected)["ok"] is True  # within the default 1e-4
    assert _compare(got, expected, atol=0, rtol=0)["ok"] is False


def test_a_usage_error_is_one_line(capsys):
    assert verify_main([]) == 2
    assert capsys.readouterr().err == (
        "error: the following arguments are required: path\n"
    )
    assert verify_main(["x", "--bogus"]) == 2
    assert capsys.readouterr().err == "error: unrecognized arguments: --bogus\n"
