"""The serving benchmark's worst-case mode (bench.serving --worst-case)."""

import pytest

from tests.serving import tiny_exports

HAN = {"limits": {"max_input_bytes": 65536, "max_sentences": 30, "max_words": 50}}
EMBEDDER = {"limits": {"max_input_bytes": 65536, "max_length": 128}}
TRANSLATION = {
    "limits": {"max_batch_size": 256},
    "metadata": {"preprocessing": {"max_length": 64}},
}
MEMN2N = {"limits": {"memory_slots": 50, "max_story_bytes": 262144}}


def _requests(manifest, inputs):
    from bench.serving import worst_case_requests

    return {name: row for name, row, _ in worst_case_requests(manifest, inputs)}


def test_han_rows_fill_the_input_limit_with_the_most_sentences_or_words():
    requests = _requests(HAN, ["text"])
    assert sorted(requests) == ["long sentences", "many sentences"]
    long_text = requests["long sentences"]["text"]
    many_text = requests["many sentences"]["text"]
    assert len(long_text.encode()) == len(many_text.encode()) == 65536
    assert long_text.count(".") == 30  # max_sentences sentences ...
    assert min(len(s.split()) for s in long_text.split(".")[:30]) > 50  # > max_words
    assert many_text.count(".") == 65536 // 5  # ... or as many as fit


@pytest.mark.parametrize(("manifest", "size"), [(EMBEDDER, 65536), (TRANSLATION, 2048)])
def test_text_rows_hold_the_most_words_the_byte_limit_keeps(manifest, size):
    requests = _requests(manifest, ["text"])
    (text,) = [row["text"] for row in requests.values()]
    assert len(text.encode()) == size
    assert len(text.split()) == size // 2


def test_memn2n_rows_fill_the_story_limit_with_long_or_wordless_lines():
    requests = _requests(MEMN2N, ["story", "question"])
    long_lines = requests["long lines"]["story"]
    wordless = requests["word-less lines"]["story"]
    assert len(long_lines.encode()) == len(wordless.encode()) == 262144
    assert len(long_lines.splitlines()) == 50
    lines = wordless.splitlines()
    assert lines[0] == "mary went to the kitchen"
    assert set(lines[1:]) == {"."} and len(lines) > 100_000
    assert len(requests["long lines"]["question"].encode()) == 65536


def test_unknown_inputs_are_refused():
    from bench.serving import worst_case_requests

    with pytest.raises(ValueError, match="no worst-case request for the inputs"):
        worst_case_requests({}, ["image"])


@pytest.fixture(scope="module")
def reader(tmp_path_factory):
    """The tiny story/question export, 4 rows per request at most."""
    return tiny_exports.export_reader(
        tmp_path_factory.mktemp("bench") / "saved_models", max_batch_size=4
    )


def test_worst_case_runs_the_limit_and_refuses_one_row_more(reader):
    from bench.serving import run_worst_case, worst_case_plan

    plan = worst_case_plan(reader)
    assert plan == [
        ("serving_default", "long lines", False),
        ("serving_default", "word-less lines", False),
        ("serving_default", "long lines", True),
    ]
    row = run_worst_case(reader, "serving_default", "long lines", repeats=2)
    assert row["rows"] == 4 and row["max_batch_size"] == 4
    assert row["request_mib"] == pytest.approx(4 * (256 + 64) / 1024)
    assert row["first_s"] > 0 and row["median_s"] > 0 and row["repeats"] == 2
    assert row["peak_increase_mib"] >= 0
    # the tiny reader splits the 50 story lines: attention has one weight per line
    assert row["largest_output"] == "attention [4, 50]"

    refused = run_worst_case(
        reader, "serving_default", "long lines", repeats=2, over_limit=True
    )
    assert refused["rows"] == 5
    assert "max_batch_size=4" in refused["refused"]
    assert refused["refused_ms"] > 0 and "first_s" not in refused


@pytest.mark.slow
def test_worst_case_command_runs_each_request_in_a_fresh_process(reader, capsys):
    from bench.serving import main

    assert main(["--worst-case", reader, "--repeats", "1"]) == 0
    table = capsys.readouterr().out
    rows = [line for line in table.splitlines() if line.startswith("| ")][1:]
    assert len(rows) == 3
    assert "| 4 |" in rows[0] and "word-less lines" not in rows[0]
    assert "1 line of words" in rows[1]
    assert "5 (limit 4)" in rows[2] and "refused in" in rows[2]
