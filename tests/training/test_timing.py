"""`validations_per_epoch`, `time_limit` and `snapshot_minutes` of `zoo.training.fit`."""

import json

import keras
import numpy as np
import pytest

from tests.training.training_test_utils import FakeClock, log_rows, regression_data
from zoo import training
from zoo.errors import ConfigError
from zoo.training import TimedSnapshots, TrainingConfig, load_snapshot
from zoo.training import callbacks as callbacks_module


def _model(ema=0.0):
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(
        keras.optimizers.SGD(0.05, **training.averaging(TrainingConfig(ema=ema))),
        "mse",
    )
    return model


def test_validations_per_epoch_cut_each_pass(tmp_path):
    ds, _ = regression_data(n=64, batch=8)  # 8 batches a pass
    cfg = TrainingConfig(
        epochs=2, validations_per_epoch=4, run_dir=str(tmp_path), verbose=0
    )
    history = training.fit(_model(), ds, ds, cfg)
    # 2 passes x 4 validations, 2 batches each
    assert history.epoch == list(range(8))
    assert len(history.history["val_loss"]) == 8
    assert [int(r["epoch"]) for r in log_rows(tmp_path)] == list(range(8))


@pytest.mark.parametrize(
    "field, value",
    [
        ("validations_per_epoch", 0),
        ("time_limit", -1.0),
        ("snapshot_minutes", float("nan")),
        ("time_limit", True),
    ],
)
def test_bad_timing_options_are_config_errors(field, value):
    with pytest.raises(ConfigError, match=field):
        TrainingConfig(**{field: value})


def test_snapshots_at_fixed_minutes_and_the_limit_stops_training(tmp_path, monkeypatch):
    # 30 s per clock reading: a batch end reads it once, a snapshot twice more.
    monkeypatch.setattr(callbacks_module.time, "perf_counter", FakeClock(30.0))
    ds, (x, _) = regression_data(n=32, batch=8)  # 4 batches an epoch
    cfg = TrainingConfig(
        epochs=50,
        snapshot_minutes=1.0,
        time_limit=3.0,
        run_dir=str(tmp_path),
        verbose=0,
        tensorboard=False,
    )
    model = _model()
    history = training.fit(model, ds, ds, cfg)
    assert len(history.epoch) < 50  # stopped by the limit
    folder = tmp_path / "snapshots"
    listed = json.loads((folder / "snapshots.json").read_text())
    assert [s["minutes"] for s in listed] == [1.0, 2.0, 3.0]
    assert [s["step"] for s in listed] == sorted(s["step"] for s in listed)
    for s in listed:
        assert (folder / s["file"]).is_file()
    # the snapshot at the limit holds the weights of the last step
    last = load_snapshot(_model(), folder / listed[-1]["file"])
    np.testing.assert_allclose(last.get_weights()[0], model.get_weights()[0])


def test_snapshots_hold_the_weight_average(tmp_path, monkeypatch):
    monkeypatch.setattr(callbacks_module.time, "perf_counter", FakeClock(20.0))
    ds, _ = regression_data(n=32, batch=8)
    cfg = TrainingConfig(
        epochs=2,
        ema=0.9,
        snapshot_minutes=1.0,
        run_dir=str(tmp_path),
        verbose=0,
        tensorboard=False,
    )
    model = _model(ema=0.9)
    snapshots = []
    original = TimedSnapshots._save

    def save_and_record(self, seconds):
        original(self, seconds)
        average = [
            v.numpy() for v in self.model.optimizer._model_variables_moving_average
        ]
        raw = [v.numpy() for v in self.model.trainable_variables]
        snapshots.append((self.snapshots[-1]["file"], average, raw))

    monkeypatch.setattr(TimedSnapshots, "_save", save_and_record)
    training.fit(model, ds, ds, cfg)
    assert snapshots
    for name, average, raw in snapshots:
        saved = load_snapshot(_model(), tmp_path / "snapshots" / name)
        np.testing.assert_allclose(saved.get_weights()[0], average[0], rtol=1e-6)
        assert not np.allclose(average[0], raw[0])  # the raw weights were put back


def test_timed_snapshots_arguments_are_checked():
    with pytest.raises(ValueError, match="every_minutes"):
        TimedSnapshots("x", every_minutes=-1)
    with pytest.raises(ValueError, match="folder"):
        TimedSnapshots(None, every_minutes=1)
    TimedSnapshots(None, limit_minutes=1)  # a limit alone needs no folder


def test_a_resumed_run_continues_the_snapshot_clock(tmp_path, monkeypatch):
    # A run killed at 150 s had written the snapshots of minutes 1, 2 and (in the
    # epoch that is trained again) 3: the resumed clock starts at 150 s, keeps the
    # first two, and the next snapshot is minute 3's, written again.
    folder = tmp_path / "snapshots"
    folder.mkdir()
    earlier = [
        {
            "minutes": m,
            "epoch": m,
            "step": 4 * m,
            "file": f"minute_{m:07.2f}.weights.npz",
        }
        for m in (1.0, 2.0, 3.0)
    ]
    (folder / "snapshots.json").write_text(json.dumps(earlier))
    monkeypatch.setattr(callbacks_module.time, "perf_counter", FakeClock(20.0))
    snapshots = TimedSnapshots(str(folder), 1.0, 3.5, previous=150.0)
    snapshots.set_model(_model())
    snapshots.on_train_begin()
    assert [s["minutes"] for s in snapshots.snapshots] == [1.0, 2.0]
    assert snapshots.elapsed() == 170.0  # 150 before, 20 in this fit
    snapshots.on_train_batch_end(0)  # 190 s: minute 3
    assert [s["minutes"] for s in snapshots.snapshots] == [1.0, 2.0, 3.0]
    listed = json.loads((folder / "snapshots.json").read_text())
    assert [s["minutes"] for s in listed] == [1.0, 2.0, 3.0]
    assert not snapshots.model.stop_training
    snapshots.on_train_batch_end(1)  # 230 s (writing not counted): past 3.5 min
    assert snapshots.model.stop_training
