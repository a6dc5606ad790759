import json

import keras
import numpy as np

from zoo.models.memn2n import MemN2N
from zoo.models.memn2n import run_cache as run_cache_module
from zoo.models.memn2n.run_cache import RunCache, run_key


def test_run_key_depends_on_parts_and_library_version(monkeypatch):
    key = run_key({"hops": 3}, "task1", 0)
    assert key == run_key({"hops": 3}, "task1", 0) and len(key) == 16
    assert key != run_key({"hops": 2}, "task1", 0)
    assert key != run_key({"hops": 3}, "task1", 1)
    monkeypatch.setattr(run_cache_module, "__version__", "0.0.0")
    assert key != run_key({"hops": 3}, "task1", 0)


def test_a_saved_run_is_reused_only_under_its_key(tmp_path):
    model = MemN2N(12, 4, 3, embedding_dim=4, hops=1)
    cache = RunCache(tmp_path / "run", "k1")
    assert cache.load() is None
    cache.save(model, {"train_error": 1.5, "info": {"epochs": 3}})
    loaded, result = RunCache(tmp_path / "run", "k1").load()
    assert result == {"train_error": 1.5, "info": {"epochs": 3}}
    x = {"story": np.ones((1, 4, 3), "int32"), "question": np.ones((1, 3), "int32")}
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(loaded(x)["probabilities"]),
        keras.ops.convert_to_numpy(model(x)["probabilities"]),
        rtol=1e-6,
    )
    assert RunCache(tmp_path / "run", "k2").load() is None
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == [
        "final.keras",
        "result.json",
    ]
    # A corrupt result (e.g. a killed write of an older format) is not reused.
    (tmp_path / "run" / "result.json").write_text("{")
    assert RunCache(tmp_path / "run", "k1").load() is None
    (tmp_path / "run" / "result.json").write_text(json.dumps([1]))
    assert RunCache(tmp_path / "run", "k1").load() is None


def test_a_damaged_model_file_is_trained_again_and_said(tmp_path, capsys):
    model = MemN2N(12, 4, 3, embedding_dim=4, hops=1)
    cache = RunCache(tmp_path / "run", "k1")
    cache.save(model, {"train_error": 1.5})
    path = tmp_path / "run" / "final.keras"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    capsys.readouterr()
    assert RunCache(tmp_path / "run", "k1").load() is None
    err = capsys.readouterr().err
    assert err.startswith(f"warning: {path} cannot be read (")
    assert err.endswith("); the run is trained again\n") and err.count("\n") == 1
    cache.save(model, {"train_error": 1.0})  # the rerun's save replaces it
    assert RunCache(tmp_path / "run", "k1").load()[1] == {"train_error": 1.0}


def test_a_full_disk_while_saving_is_one_line(tmp_path, monkeypatch):
    import errno

    import pytest

    from zoo.errors import DiskFullError

    def full(self, path, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    model = MemN2N(12, 4, 3, embedding_dim=4, hops=1)
    monkeypatch.setattr(type(model), "save", full)
    with pytest.raises(DiskFullError) as caught:
        RunCache(tmp_path / "run", "k1").save(model, {"train_error": 1.0})
    assert str(caught.value) == (
        f"{tmp_path / 'run' / 'final.keras'}: the disk is full (No space left on "
        "device); no file"
    )
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == []
