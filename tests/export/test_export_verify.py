import os
import shutil

from zoo.export.verify import main as verify_main
from zoo.export.verify import verify_export, verify_in_fresh_process


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
