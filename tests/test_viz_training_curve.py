"""`zoo.viz.training_curve`: the PNG of a training log's curves."""

import csv
import math

import numpy as np
import pytest

from zoo.viz import CURVE_DPI, CURVE_SIZE, training_curve


def _write_log(path, rows):
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def _png_size(path):
    from matplotlib import image

    pixels = image.imread(path)
    return pixels.shape[1], pixels.shape[0]  # (width, height)


def _rows():
    return [
        {
            "epoch": e,
            "elapsed_seconds": 30.0 * (e + 1),
            "loss": 1.0 / (e + 1),
            "val_accuracy": 0.5 + 0.1 * e,
            "val_loss": 1.5 / (e + 1),
        }
        for e in range(4)
    ]


def test_the_curve_is_a_png_of_the_logged_values(tmp_path):
    log = _write_log(tmp_path / "log.csv", _rows())
    path = tmp_path / "out" / "training_curve.png"
    series = training_curve(log, path, monitor="val_accuracy")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = CURVE_SIZE
    assert _png_size(path) == (int(width * CURVE_DPI), int(height * CURVE_DPI))
    assert series["epoch"] == [1.0, 2.0, 3.0, 4.0]
    assert series["minutes"] == [0.5, 1.0, 1.5, 2.0]
    np.testing.assert_allclose(series["loss"], [1.0, 0.5, 1 / 3, 0.25])
    np.testing.assert_allclose(series["val_loss"], [1.5, 0.75, 0.5, 0.375])
    np.testing.assert_allclose(series["val_accuracy"], [0.5, 0.6, 0.7, 0.8])
    assert set(series) == {"epoch", "minutes", "loss", "val_loss", "val_accuracy"}


def test_validation_rounds_are_at_fractional_epochs(tmp_path):
    log = _write_log(tmp_path / "log.csv", _rows())
    series = training_curve(log, tmp_path / "c.png", rounds_per_epoch=2)
    assert series["epoch"] == [0.5, 1.0, 1.5, 2.0]
    # val_loss is drawn anyway; the monitor adds no curve when it is a loss
    assert set(series) == {"epoch", "minutes", "loss", "val_loss"}
    series = training_curve(log, tmp_path / "c.png", monitor="val_loss")
    assert set(series) == {"epoch", "minutes", "loss", "val_loss"}


def test_a_log_without_time_or_validation(tmp_path):
    rows = [{"epoch": e, "loss": v} for e, v in enumerate([2.0, "nan", "NA", 0.5])]
    log = _write_log(tmp_path / "log.csv", rows)
    series = training_curve(log, tmp_path / "c.png", monitor="val_accuracy")
    assert series["minutes"] is None
    assert series["loss"][0] == 2.0 and series["loss"][3] == 0.5
    assert math.isnan(series["loss"][1]) and math.isnan(series["loss"][2])
    assert set(series) == {"epoch", "minutes", "loss"}
    assert (tmp_path / "c.png").stat().st_size > 1000


def test_bad_logs_and_arguments(tmp_path):
    log = _write_log(tmp_path / "log.csv", [{"epoch": 0, "accuracy": 0.5}])
    with pytest.raises(ValueError, match="'loss'"):
        training_curve(log, tmp_path / "c.png")
    log = _write_log(tmp_path / "ok.csv", _rows())
    with pytest.raises(ValueError, match="rounds_per_epoch"):
        training_curve(log, tmp_path / "c.png", rounds_per_epoch=0)
    assert not (tmp_path / "c.png").exists()
