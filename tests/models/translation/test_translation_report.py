import numpy as np

from zoo.models.translation.translation_report import (
    heatmap_title,
    plot_translation_attention,
)


def test_heatmap_title_names_source_translation_and_reference():
    title = heatmap_title("Ein  Hund\nläuft.", "a dog runs .", "A dog is running." * 9)
    lines = title.splitlines()
    assert lines[0] == "source: Ein Hund läuft."
    assert lines[1] == "translation: a dog runs ."
    assert lines[2] == "reference: " + ("A dog is running." * 9)[:87] + "..."


def test_heat_maps_of_the_outputs_with_tokens(tmp_path):
    attention = np.full((3, 4), 0.25, dtype="float32")
    out = {
        "target_tokens": [b"a", b"dog", b""],
        "source_tokens": [b"ein", b"hund", b"", b""],
        "attention": attention,
        "translation": b"a dog",
    }
    empty = {**out, "target_tokens": [b""]}  # nothing to draw
    lines = []
    paths = plot_translation_attention(
        [out, empty, out], ["ein hund"] * 3, ["a dog"] * 3, str(tmp_path), lines.append
    )
    assert paths == [
        str(tmp_path / "attention_0.png"),
        str(tmp_path / "attention_2.png"),
    ]
    assert lines == [f"heat map: {p}" for p in paths]
    assert all((tmp_path / f"attention_{i}.png").stat().st_size > 0 for i in (0, 2))
