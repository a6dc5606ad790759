"""Requests from files and arguments, answers as JSON lines (no TensorFlow)."""

import json

import numpy as np
import pytest

from zoo.errors import ConfigError, DataError, MissingPathError
from zoo.serving.inputs import (
    batches,
    columns,
    guess_format,
    read_rows,
    rows_from_texts,
)
from zoo.serving.outputs import json_line, output_rows

QA = ["question", "story"]


def test_txt_keeps_every_line_and_drops_the_bom(tmp_path):
    path = tmp_path / "in.txt"
    path.write_bytes("\ufeffA fine film.\n\n  spaced  \r\nlast".encode())
    assert read_rows(path, ["text"]) == [
        {"text": "A fine film."},
        {"text": ""},
        {"text": "  spaced  "},
        {"text": "last"},
    ]
    with pytest.raises(DataError, match="one input; this one takes question, story"):
        read_rows(path, QA)


def test_jsonl_rows_and_line_numbers(tmp_path):
    path = tmp_path / "in.jsonl"
    lines = [
        json.dumps({"story": "a\nb", "question": "q1", "id": 7}),
        "",
        json.dumps({"question": "q2", "story": "c"}),
    ]
    path.write_text("\n".join(lines) + "\n")
    assert read_rows(path, QA) == [
        {"question": "q1", "story": "a\nb"},
        {"question": "q2", "story": "c"},
    ]
    path.write_text(lines[0] + "\n" + json.dumps({"story": "c"}) + "\n")
    with pytest.raises(DataError) as missing:
        read_rows(path, QA)
    assert str(missing.value) == (
        f"{path}:2: missing input field(s) question (the signature takes "
        "question, story)"
    )
    path.write_text(lines[0] + "\n\n{not json}\n")
    with pytest.raises(DataError, match=r"in.jsonl:3: not a JSON object"):
        read_rows(path, QA)
    path.write_text('["a list"]\n')
    with pytest.raises(DataError, match=r":1: expected a JSON object .* found a list"):
        read_rows(path, QA)
    path.write_text('{"story": null, "question": "q"}\n')
    with pytest.raises(DataError, match=r":1: input field 'story' must be a string"):
        read_rows(path, QA)


def test_csv_and_tsv_with_a_header(tmp_path):
    path = tmp_path / "in.csv"
    path.write_text('id,story,question\n1,"a\nb",q1\n2,c,"q, two"\n')
    assert read_rows(path, QA) == [
        {"question": "q1", "story": "a\nb"},
        {"question": "q, two", "story": "c"},
    ]
    path.write_text("id,story,question\n1,a,q\n2,b,q,extra\n")
    with pytest.raises(DataError, match=r"in.csv:3: expected 3 fields .* found 4"):
        read_rows(path, QA)
    path.write_text("id,story\n1,a\n")
    with pytest.raises(DataError, match=r"in.csv:1: the header lacks the column"):
        read_rows(path, QA)
    path.write_text('story,question\n"unclosed,q\n')
    with pytest.raises(DataError, match=r"in.csv:\d+: "):
        read_rows(path, QA)
    tsv = tmp_path / "in.tsv"
    tsv.write_text("text\tlabel\nA fine film.\tpos\n")
    assert read_rows(tsv, ["text"]) == [{"text": "A fine film."}]
    assert read_rows(tsv, ["text"], fmt="tsv") == [{"text": "A fine film."}]


def test_bad_files(tmp_path):
    with pytest.raises(MissingPathError, match="no such input file"):
        read_rows(tmp_path / "absent.txt", ["text"])
    path = tmp_path / "bad.txt"
    path.write_bytes(b"fine\ncaf\xe9\n")
    with pytest.raises(DataError, match=r"bad.txt:2: not valid UTF-8"):
        read_rows(path, ["text"])
    with pytest.raises(ConfigError, match="unknown input format"):
        read_rows(path, ["text"], fmt="xml")


def test_formats_texts_columns_batches():
    assert [guess_format(p) for p in ("a.jsonl", "a.CSV", "a.tsv.gz", "a")] == [
        "jsonl",
        "csv",
        "tsv",
        "txt",
    ]
    assert rows_from_texts(["a", "b"], ["text"]) == [{"text": "a"}, {"text": "b"}]
    with pytest.raises(ConfigError, match="--question TEXT --story TEXT"):
        rows_from_texts(["a"], QA)
    rows = [{"question": f"q{i}", "story": f"s{i}"} for i in range(5)]
    assert columns(rows[:2], QA) == {"question": ["q0", "q1"], "story": ["s0", "s1"]}
    assert [len(b) for b in batches(rows, 2)] == [2, 2, 1]
    with pytest.raises(ConfigError):
        list(batches(rows, 0))


def test_output_rows_as_json_lines():
    outputs = {
        "label": np.array([b"pos", b"caf\xc3\xa9", b"\xff"], dtype=object),
        "attention": np.arange(6, dtype=np.float32).reshape(3, 2) / 4,
        "vocab_size": np.int64(12),  # no batch dimension: repeated in every row
    }
    rows = output_rows(outputs, 3)
    assert rows[1] == {"attention": [0.5, 0.75], "label": "café", "vocab_size": 12}
    assert rows[2]["label"] == "\ufffd"
    assert json.loads(json_line(rows[0])) == {
        "attention": [0.0, 0.25],
        "label": "pos",
        "vocab_size": 12,
    }
    assert json_line({"x": "é"}) == '{"x": "é"}'
