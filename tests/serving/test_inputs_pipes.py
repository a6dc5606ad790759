"""`--input` from a named pipe, a device or standard input: a named pipe is read as a
stream (rows come as its writer sends them), a folder or a device (`/dev/zero`) is
refused in one line naming it, and standard input fed from `/dev/zero` is bounded by
the line limit."""

import io
import json
import os
import threading

import pytest

from zoo import cli
from zoo.errors import DataError
from zoo.serving.inputs import iter_rows

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes")


def _writer(fifo, lines, sent=None):
    """Writes `lines` into `fifo` from a thread; waits on `sent[i]` (an Event)
    before line i when given, so a test can see rows arrive one at a time."""

    def write():
        with open(fifo, "w", encoding="utf-8") as f:
            for i, line in enumerate(lines):
                if sent is not None and i > 0:
                    assert sent[i].wait(30), "the reader never asked for the line"
                f.write(line + "\n")
                f.flush()

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


def test_a_named_pipe_is_read_as_a_stream(tmp_path):
    fifo = tmp_path / "in.jsonl"
    os.mkfifo(fifo)
    sent = [threading.Event() for _ in range(3)]
    lines = [json.dumps({"text": f"row {i}"}) for i in range(3)]
    thread = _writer(fifo, lines, sent)
    rows = iter_rows(str(fifo), ["text"])
    for i in range(3):
        # row i is read before the writer sends row i + 1: a stream, not a file
        assert next(rows) == {"text": f"row {i}"}
        if i + 1 < 3:
            sent[i + 1].set()
    assert list(rows) == []
    thread.join(5)


@pytest.mark.parametrize(
    "path, problem",
    [
        (
            "/dev/zero",
            "is a character device, not a file or a named pipe; give a "
            "file, a named pipe, or - for standard input",
        ),
        (
            "/dev/null",
            "is a character device, not a file or a named pipe; give a "
            "file, a named pipe, or - for standard input",
        ),
        ("folder", "is a folder; give a file"),
    ],
)
def test_a_device_or_a_folder_is_refused_in_one_line(tmp_path, path, problem):
    if path == "folder":
        path = str(tmp_path)
    elif not os.path.exists(path):
        pytest.skip(f"no {path}")
    with pytest.raises(DataError) as caught:
        next(iter_rows(path, ["text"]))
    assert str(caught.value) == f"{path}: {problem}"


def test_standard_input_from_dev_zero_is_bounded(monkeypatch):
    with open("/dev/zero", "rb") as zeros:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(zeros))
        with pytest.raises(DataError) as caught:
            next(iter_rows("-", ["text"], max_line_bytes=1024))
    assert str(caught.value) == (
        "-:1: the line is longer than 1024 bytes, the limit per line (--max-line-mb "
        "raises it)"
    )


def test_a_closed_standard_input_is_one_line_and_files_still_read(
    tmp_path, monkeypatch
):
    monkeypatch.setattr("sys.stdin", None)  # started with it closed
    with pytest.raises(DataError) as caught:
        next(iter_rows("-", ["text"]))
    assert str(caught.value) == "-: standard input is closed; give a file"
    texts = tmp_path / "t.txt"
    texts.write_text("a\nb\n")
    assert list(iter_rows(texts, ["text"])) == [{"text": "a"}, {"text": "b"}]


def test_zoo_predict_reads_a_named_pipe_and_refuses_dev_zero(small_exports, capsys):
    model = small_exports["classifier"]
    fifo = os.path.join(os.path.dirname(os.path.dirname(model)), "texts.fifo")
    os.mkfifo(fifo)
    try:
        thread = _writer(fifo, ["a fine film", "a dull film"])
        code = cli.main(["predict", model, "-i", fifo, "--format", "txt"])
        thread.join(5)
        from_pipe = capsys.readouterr()
    finally:
        os.remove(fifo)
    code_texts = cli.main(["predict", model, "a fine film", "a dull film"])
    from_texts = capsys.readouterr()
    assert (code, code_texts, from_pipe.err) == (0, 0, "")
    rows = [json.loads(line) for line in from_pipe.out.splitlines()]
    assert len(rows) == 2 and from_pipe.out == from_texts.out

    code = cli.main(["predict", model, "-i", "/dev/zero"])
    assert (code, capsys.readouterr()) == (
        2,
        (
            "",
            "error: /dev/zero: is a character device, not a file or a named pipe; "
            "give a file, a named pipe, or - for standard input\n",
        ),
    )
