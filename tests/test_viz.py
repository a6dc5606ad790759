import numpy as np
import pytest

from zoo.viz import attention_heatmap


def test_attention_heatmap_writes_png(tmp_path):
    weights = np.array([[0.7, 0.2, 0.1], [0.0, 0.5, 0.5]])
    path = attention_heatmap(
        weights,
        ["ich", "bin"],
        ["i", "am", b"\xc3\xa9"],
        tmp_path / "a" / "m.png",
        title="alignment",
    )
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 1000


def test_attention_heatmap_rejects_bad_shapes_and_nan(tmp_path):
    with pytest.raises(ValueError, match="2 row labels"):
        attention_heatmap(np.ones((3, 2)), ["a", "b"], ["x", "y"], tmp_path / "x.png")
    with pytest.raises(ValueError, match="NaN"):
        attention_heatmap(np.full((1, 1), np.nan), ["a"], ["x"], tmp_path / "x.png")
