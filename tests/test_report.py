"""zoo.report: words shown as written, a one-line title, the page in a browser."""

import re

import numpy as np
import pytest

from tests.chromium import dump_dom, needs_chromium, screenshot
from zoo.report import attention_grid_html, attention_report_html, display_spacing


def _joined(words):
    return "".join(
        (" " if space else "") + w
        for w, space in zip(words, display_spacing(words), strict=True)
    )


@pytest.mark.parametrize(
    "words, shown",
    [
        (
            ["japan", "'", "s", "growth", "was", "0", ".", "1", "%", "."],
            "japan's growth was 0.1%.",
        ),
        (
            ["a", "well", "-", "made", "film", "(", "really", ")", "!"],
            "a well-made film (really)!",
        ),
        (["dull", ",", "dull", ",", "dull", "..."], "dull, dull, dull..."),
        (["he", "said", ":", "1", ",", "000", "times"], "he said: 1,000 times"),
        (
            ["it", "'", "s", "a", "\u201c", "classic", "\u201d"],
            "it's a \u201cclassic\u201d",
        ),
    ],
)
def test_tokens_are_shown_as_written(words, shown):
    assert _joined(words) == shown


def _example():
    return {
        "sentences": ["japan ' s film .", "dull ."],
        "words": [["japan", "'", "s", "film", "."], ["dull", ".", ""]],
        "sentence_attention": [0.75, 0.25],
        "word_attention": [[0.1, 0.1, 0.1, 0.6, 0.1], [0.9, 0.1, 0.0]],
        "predicted": "pos",
        "true": "pos",
        "probability": 0.91,
    }


def test_title_is_one_line_and_the_description_a_subtitle(tmp_path):
    description = "aclImdb: 25000 train, 2500 validation\n(seeded 10% of train)"
    path = attention_report_html(
        tmp_path / "r.html",
        [_example()],
        title="HAN attention: aclImdb\nsecond line",
        subtitle=description,
    )
    page = open(path, encoding="utf-8").read()
    assert "<title>HAN attention: aclImdb</title>" in page
    assert "second line" not in page
    assert '<p class="sub">aclImdb: 25000 train, 2500 validation\n' in page
    # The spans of "japan ' s" sit against each other: no space between them.
    assert '>japan</span><span class="w"' in page
    assert ">&#x27;</span><span" in page


@needs_chromium
def test_the_page_renders_in_headless_chromium(tmp_path):
    path = attention_report_html(tmp_path / "r.html", [_example()], title="HAN")
    assert screenshot(path, tmp_path / "shot.png", tmp_path / "u") > 5000
    assert "highest-weighted sentence: 1" in dump_dom(path, tmp_path / "v")


def _grid():
    weights = np.array([[0.7, 0.2, 0.1], [0.0, 0.25, 0.75]])
    return {
        "rows": ["hop 1", "hop 2"],
        "columns": ["a", "<b>bold</b>", "film"],
        "weights": weights,
        "caption": "predicted pos (0.910), true neg",
        "ok": False,
    }


def test_attention_grid_cells_carry_their_weights(tmp_path):
    path = attention_grid_html(
        tmp_path / "g.html",
        [
            {"heading": "variant A", "examples": [_grid()]},
            {
                "heading": "variant B",
                "examples": [{**_grid(), "rows": [], "columns": [], "weights": []}],
            },
        ],
        title="Grid\nsecond line",
        summary="accuracy 0.5",
    )
    page = open(path, encoding="utf-8").read()
    assert "<title>Grid</title>" in page and "second line" not in page
    cells = re.findall(r'rgba\(30, 100, 230, ([0-9.]+)\)" title="([0-9.]+)"', page)
    # one cell per weight, in row order; strength = weight / the table's largest
    assert [float(t) for _, t in cells] == [0.7, 0.2, 0.1, 0.0, 0.25, 0.75]
    assert [float(a) for a, _ in cells] == pytest.approx(
        [0.7 / 0.75, 0.2 / 0.75, 0.1 / 0.75, 0.0, 0.25 / 0.75, 1.0], abs=1e-3
    )
    assert "&lt;b&gt;bold&lt;/b&gt;" in page and "<b>bold</b>" not in page
    assert "nothing left after preprocessing" in page  # the empty example
    assert page.count('class="bad"') == 2


def test_a_summary_given_as_rows_is_an_html_table(tmp_path):
    rows = [["variant", "BLEU"], ["none", "24.57"], ["<dot>", "33.48"]]
    path = attention_grid_html(
        tmp_path / "g.html", [{"heading": "x", "examples": [_grid()]}], summary=rows
    )
    page = open(path, encoding="utf-8").read()
    table = page[page.index('<table class="summary">') :]
    table = table[: table.index("</table>")]
    assert re.findall(r"<th>([^<]*)</th>", table) == ["variant", "BLEU"]
    assert re.findall(r"<td>([^<]*)</td>", table) == [
        "none",
        "24.57",
        "&lt;dot&gt;",
        "33.48",
    ]
    assert "<pre>" not in page


def test_attention_grid_refuses_weights_that_do_not_fit_the_labels(tmp_path):
    bad = {**_grid(), "weights": [[0.5, 0.5]] * 2}
    with pytest.raises(ValueError, match="must be 2 rows of 3 values"):
        attention_grid_html(tmp_path / "g.html", [{"heading": "x", "examples": [bad]}])


@needs_chromium
def test_the_grid_page_renders_in_headless_chromium(tmp_path):
    sections = [{"heading": h, "examples": [_grid()]} for h in ("dot", "general")]
    path = attention_grid_html(tmp_path / "g.html", sections, title="variants")
    assert screenshot(path, tmp_path / "shot.png", tmp_path / "u") > 5000
    dom = dump_dom(path, tmp_path / "v")
    assert dom.count("<table") == 2 and "general" in dom
