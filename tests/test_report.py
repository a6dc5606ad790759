"""zoo.report: words shown as written, a one-line title, the page in a browser."""

import shutil
import subprocess

import pytest

from zoo.report import attention_report_html, display_spacing


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


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium not installed")
def test_the_page_renders_in_headless_chromium(tmp_path):
    path = attention_report_html(tmp_path / "r.html", [_example()], title="HAN")
    shot = tmp_path / "shot.png"
    done = subprocess.run(
        [
            "chromium",
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'u'}",
            f"--screenshot={shot}",
            "--window-size=900,500",
            f"file://{path}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert shot.stat().st_size > 5000
    dom = subprocess.run(
        [
            "chromium",
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'v'}",
            "--dump-dom",
            f"file://{path}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    assert "highest-weighted sentence: 1" in dom
