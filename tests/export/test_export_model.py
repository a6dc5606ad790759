import json
import os
import threading

import keras
import numpy as np
import pytest
import tensorflow as tf
import tiny_model
from tensorflow_serving.apis import prediction_log_pb2

from tests.export.export_testing import load_signature
from zoo.export import export as export_lib
from zoo.export import manifest as manifest_lib
from zoo.export.warmup import read_warmup


def test_layout_manifest_and_assets(tiny_export):
    version_dir = tiny_export["version_dir"]
    assert os.path.basename(version_dir) == "1"
    assert tiny_export["accuracy"] == pytest.approx(1.0)
    model_dir = os.path.dirname(version_dir)
    assert sorted(os.listdir(model_dir))[:2] == ["1", "1.keras"]
    assert not [n for n in os.listdir(model_dir) if n.startswith(".tmp")]
    assert os.listdir(os.path.join(version_dir, "assets")) == ["vocab.txt"]
    manifest = manifest_lib.load_manifest(version_dir)
    assert manifest["recipe"] == "tests.export.tiny_model"
    assert manifest["metrics"]["train_accuracy"] == pytest.approx(1.0)
    assert manifest["versions"]["tensorflow"] == tf.__version__
    assert manifest["versions"]["keras"] == keras.__version__
    assert set(manifest["versions"]) >= {"tensorflow", "tensorflow_text", "keras"}
    serving = manifest["signatures"]["serving_default"]
    assert serving["inputs"]["text"]["dtype"] == "string"
    assert serving["inputs"]["text"]["shape"] == [-1]
    assert serving["outputs"]["probabilities"] == {
        "dtype": "float32",
        "shape": [-1, 2],
        "tensor": serving["outputs"]["probabilities"]["tensor"],
    }
    assert (
        manifest["signatures"]["preprocess"]["outputs"]["token_ids"]["dtype"] == "int64"
    )
    assert manifest["keras_check"]["outputs"] == {"probabilities": "probabilities"}


def test_warmup_file_is_prediction_log_of_real_examples(tiny_export):
    path = os.path.join(tiny_export["version_dir"], manifest_lib.WARMUP_PATH)
    records = list(tf.data.TFRecordDataset(path).as_numpy_iterator())
    assert len(records) == 2
    log = prediction_log_pb2.PredictionLog.FromString(records[0])
    assert log.predict_log.request.model_spec.name == "tiny"
    assert log.predict_log.request.model_spec.signature_name == "serving_default"
    requests = dict(read_warmup(path))
    texts = [t.decode() for t in requests["serving_default"]["text"]]
    assert texts == tiny_model.EXAMPLES


def test_reloaded_export_matches_keras_model(tiny_export):
    version_dir = tiny_export["version_dir"]
    serve = load_signature(version_dir)
    out = serve(text=["the film was good", "awful and boring"])
    assert out["label"].tolist() == [b"positive", b"negative"]
    model = keras.saving.load_model(version_dir + ".keras")
    ids = load_signature(version_dir, "preprocess")(text=["the film was good"])[
        "token_ids"
    ]
    np.testing.assert_allclose(
        model(ids).numpy()[0], out["probabilities"][0], atol=1e-6
    )


def test_next_version_and_failed_export_leaves_nothing(
    tiny_export, tmp_path, monkeypatch
):
    base = tmp_path / "sm"
    model = tiny_model.build_model(8)
    vocab = os.path.join(tiny_export["work"], "vocab.txt")
    module = tiny_model.TinyServing(model, vocab)
    kwargs = dict(
        name="m",
        signatures={"serving_default": module.serve, "preprocess": module.preprocess},
        base_dir=str(base),
        keras_model=model,
        warmup={"serving_default": {"text": ["good"]}},
    )
    first = export_lib.export_model(module, **kwargs)
    second = export_lib.export_model(module, **kwargs)
    assert [os.path.basename(first), os.path.basename(second)] == ["1", "2"]

    def boom(*args, **kw):
        raise OSError("disk full")

    monkeypatch.setattr(manifest_lib, "write_manifest", boom)
    with pytest.raises(OSError, match="disk full"):
        export_lib.export_model(module, **kwargs)
    assert sorted(os.listdir(base / "m")) == ["1", "1.keras", "2", "2.keras"]


def test_extra_files_land_beside_the_version_or_not_at_all(tiny_export, tmp_path):
    base = tmp_path / "sm"
    model = tiny_model.build_model(8)
    vocab = os.path.join(tiny_export["work"], "vocab.txt")
    module = tiny_model.TinyServing(model, vocab)
    kwargs = dict(
        name="m",
        signatures={"serving_default": module.serve},
        base_dir=str(base),
    )

    def write_note(path):
        assert path.endswith(".note.txt") and ".tmp-export-" in path
        with open(path, "w") as f:
            f.write("hello")

    first = export_lib.export_model(
        module, extra_files={".note.txt": write_note}, **kwargs
    )
    with open(first + ".note.txt") as f:
        assert f.read() == "hello"

    def half_then_fail(path):
        with open(path, "w") as f:
            f.write("partial")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        export_lib.export_model(
            module,
            extra_files={".note.txt": write_note, ".more.txt": half_then_fail},
            **kwargs,
        )
    assert sorted(os.listdir(base / "m")) == ["1", "1.note.txt"]
    with pytest.raises(ValueError, match="suffixes"):
        export_lib.export_model(module, extra_files={"x.txt": write_note}, **kwargs)
    assert sorted(os.listdir(base / "m")) == ["1", "1.note.txt"]


def test_concurrent_renames_never_clobber(tmp_path):
    model_dir = tmp_path / "m"
    model_dir.mkdir()
    tmps = []
    for i in range(8):
        d = model_dir / f".tmp-export-{i}"
        d.mkdir()
        (d / "saved_model.pb").write_text(str(i))
        tmps.append(str(d))
    results = [None] * 8
    barrier = threading.Barrier(8)

    def work(i):
        barrier.wait()
        results[i] = export_lib._rename_to_next_version(tmps[i], str(model_dir))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(int(os.path.basename(r)) for r in results) == list(range(1, 9))
    contents = sorted(
        (model_dir / str(v) / "saved_model.pb").read_text() for v in range(1, 9)
    )
    assert contents == [str(i) for i in range(8)]


def test_export_argument_errors(tiny_export, tmp_path):
    model = tiny_model.build_model(8)
    module = tiny_model.TinyServing(
        model, os.path.join(tiny_export["work"], "vocab.txt")
    )
    with pytest.raises(ValueError, match="name='bad name'"):
        export_lib.export_model(module, "bad name", {"serving_default": module.serve})
    with pytest.raises(ValueError, match="serving_default"):
        export_lib.export_model(
            module, "m", {"x": module.serve}, base_dir=str(tmp_path)
        )
    with pytest.raises(ValueError, match="exactly \\['text'\\]"):
        export_lib.export_model(
            module,
            "m",
            {"serving_default": module.serve},
            base_dir=str(tmp_path),
            warmup={"serving_default": {"txt": ["a"]}},
        )
    with pytest.raises(ValueError, match="preprocess"):
        export_lib.export_model(
            module,
            "m",
            {"serving_default": module.serve},
            base_dir=str(tmp_path),
            keras_model=model,
            warmup={"serving_default": {"text": ["a"]}},
            keras_check={"outputs": {"probabilities": 0}},
        )
    assert not (tmp_path / "m").exists() or os.listdir(tmp_path / "m") == []


def test_resolve_version_dir(tiny_export, tmp_path):
    version_dir = tiny_export["version_dir"]
    from zoo.export.paths import resolve_version_dir

    assert resolve_version_dir(os.path.dirname(version_dir)) == os.path.normpath(
        version_dir
    )
    with pytest.raises(FileNotFoundError, match="no such export"):
        resolve_version_dir(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="holds no SavedModel"):
        resolve_version_dir(tmp_path / "empty")
    json.dumps(manifest_lib.read_signatures(version_dir))  # JSON-able
