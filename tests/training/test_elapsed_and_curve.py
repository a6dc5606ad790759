"""`log.csv`'s `elapsed_seconds` column and `training_curve.png` in the run folder."""

import numpy as np
import pytest

from tests.training.training_test_utils import Interrupt, log_rows, quick_run
from zoo.training import callbacks as callbacks_module
from zoo.training.callbacks import ElapsedTime, TrainingCurve


class Clock:
    """A settable `time.monotonic`."""

    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class Pauses:
    paused_seconds = 0.0


def test_elapsed_time_counts_epochs_and_leaves_out_pauses(monkeypatch):
    clock, pauses = Clock(), Pauses()
    monkeypatch.setattr(callbacks_module.time, "monotonic", clock)
    timer = ElapsedTime(previous=10.0, pauses=[pauses])
    logged = []
    for epoch, (seconds, paused, between) in enumerate([(5, 0, 7), (4, 1.5, 3)]):
        timer.on_epoch_begin(epoch)
        clock.now += seconds
        pauses.paused_seconds += paused
        logs = {"loss": 1.0}
        timer.on_epoch_end(epoch, logs)
        logged.append(logs["elapsed_seconds"])
        clock.now += between  # checkpoints written after the epoch's end
    assert logged == [15.0, 17.5]


def test_the_log_has_elapsed_seconds_continued_by_a_resume(tmp_path):
    run_dir = tmp_path / "run"
    with pytest.raises(Interrupt):
        quick_run(run_dir, epochs=4, interrupt_at=2)
    before = [float(r["elapsed_seconds"]) for r in log_rows(run_dir)]
    assert len(before) == 2 and 0 < before[0] < before[1]
    # an interrupted run draws the curve of its logged epochs
    assert (run_dir / "training_curve.png").stat().st_size > 1000
    quick_run(run_dir, epochs=4)
    after = [float(r["elapsed_seconds"]) for r in log_rows(run_dir)]
    assert after[:2] == before
    assert np.all(np.diff(after) > 0)
    png = (run_dir / "training_curve.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_curve_of_a_run_with_validation_rounds(tmp_path, monkeypatch):
    drawn = []
    draw = TrainingCurve.draw

    def record(self):
        series = draw(self)
        drawn.append(series)
        return series

    monkeypatch.setattr(TrainingCurve, "draw", record)
    quick_run(tmp_path / "run", epochs=2, validations_per_epoch=2)
    series = drawn[-1]
    assert series["epoch"] == [0.5, 1.0, 1.5, 2.0]
    rows = log_rows(tmp_path / "run")
    np.testing.assert_allclose(series["loss"], [float(r["loss"]) for r in rows])
    np.testing.assert_allclose(series["val_loss"], [float(r["val_loss"]) for r in rows])
    np.testing.assert_allclose(
        series["minutes"], [float(r["elapsed_seconds"]) / 60 for r in rows]
    )
    assert (tmp_path / "run" / "training_curve.png").is_file()


def test_a_failed_drawing_does_not_fail_training(tmp_path, monkeypatch, capsys):
    import zoo.viz

    def broken(*args, **kwargs):
        raise RuntimeError("no fonts\nat all")

    monkeypatch.setattr(zoo.viz, "training_curve", broken)
    model, history = quick_run(tmp_path / "run", epochs=2)
    assert history.epoch == [0, 1]
    assert not (tmp_path / "run" / "training_curve.png").exists()
    lines = [
        line
        for line in capsys.readouterr().err.splitlines()
        if "could not draw" in line
    ]
    assert lines == [
        f"warning: could not draw {tmp_path / 'run' / 'training_curve.png'}: "
        "RuntimeError: no fonts at all"
    ]


def test_a_fresh_start_removes_the_earlier_curve(tmp_path):
    run_dir = tmp_path / "run"
    quick_run(run_dir, epochs=1)
    assert (run_dir / "training_curve.png").is_file()
    with pytest.raises(Interrupt):
        quick_run(run_dir, epochs=2, interrupt_at=0, resume="never")
    assert not (run_dir / "training_curve.png").exists()
