"""Input files are streamed and bounded: rows come one batch at a time, a line over
the limit is refused with its number without being read whole (in a .gz too), and
text that is not valid Unicode is refused with its file and line (no TensorFlow)."""

import gzip
import json
import os
import subprocess
import sys

import pytest

from zoo.errors import ConfigError, DataError
from zoo.serving.inputs import batches, iter_rows, read_rows, rows_from_texts


def test_rows_are_read_one_batch_at_a_time(tmp_path):
    path = tmp_path / "in.jsonl"
    good = [json.dumps({"text": f"row {i}"}) for i in range(4)]
    path.write_text("\n".join(good) + "\n{oops\n")
    chunks = batches(iter_rows(path, ["text"]), 2)
    # the bad line 5 is not read before the first batches are asked for
    assert next(chunks) == [{"text": "row 0"}, {"text": "row 1"}]
    assert next(chunks) == [{"text": "row 2"}, {"text": "row 3"}]
    with pytest.raises(DataError, match=r"in.jsonl:5: not a JSON object"):
        next(chunks)


def test_a_line_over_the_limit_is_refused_with_its_number(tmp_path):
    path = tmp_path / "in.txt"
    ten = "x" * 10
    # the limit counts the line without its ending or the byte-order mark
    path.write_bytes(("\ufeff" + ten + "\r\n" + ten + "\n" + ten).encode())
    assert read_rows(path, ["text"], max_line_bytes=10) == [{"text": ten}] * 3
    path.write_text(f"{ten}\n{ten}\n{ten}y\n{ten}\n")
    with pytest.raises(DataError) as refused:
        read_rows(path, ["text"], max_line_bytes=10)
    assert str(refused.value) == (
        f"{path}:3: the line is longer than 10 bytes, the limit per line "
        "(--max-line-mb raises it)"
    )
    jsonl = tmp_path / "in.jsonl"
    jsonl.write_text(json.dumps({"text": "é" * 6}) + "\n")  # 12 bytes of text
    with pytest.raises(DataError, match=r"in.jsonl:1: the line is longer than 20 "):
        read_rows(jsonl, ["text"], max_line_bytes=20)


def test_a_csv_field_over_the_limit_is_refused(tmp_path):
    path = tmp_path / "in.csv"
    path.write_text('text,id\n"short",1\n"' + "\n".join(["abcdefgh"] * 4) + '",2\n')
    with pytest.raises(DataError) as refused:
        read_rows(path, ["text"], max_line_bytes=20)
    assert str(refused.value) == (
        f"{path}:6: column 'text' is longer than 20 characters, the limit per field "
        "(--max-line-mb raises it)"
    )
    assert len(read_rows(path, ["text"], max_line_bytes=40)[1]["text"]) == 35


def test_invalid_unicode_is_refused_with_file_and_line(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text('{"text": "fine \\ud83d\\ude00"}\n{"text": "a\\ud800b"}\n')
    with pytest.raises(DataError) as refused:
        read_rows(path, ["text"])
    assert str(refused.value) == (
        f"{path}:2: input field 'text' holds a lone surrogate \\ud800 at character 1 "
        "(not valid Unicode text)"
    )
    path.write_text('{"text": "fine \\ud83d\\ude00"}\n')
    assert read_rows(path, ["text"]) == [{"text": "fine \U0001f600"}]
    # a command-line argument with a byte that is not UTF-8 (surrogateescape)
    with pytest.raises(ConfigError) as refused:
        rows_from_texts(["ok", "caf\udce9"], ["text"])
    assert str(refused.value) == (
        "TEXT argument 2 is not valid UTF-8 (byte 0xe9 at character 3)"
    )


def test_a_damaged_gz_is_one_line(tmp_path):
    path = tmp_path / "in.txt.gz"
    with gzip.open(path, "wb") as f:
        f.write(b"one\ntwo\n" * 1000)
    path.write_bytes(path.read_bytes()[:-30])
    with pytest.raises(DataError, match=r"in.txt.gz:\d+: cannot read: "):
        read_rows(path, ["text"])


_PEAK = """
import sys
from zoo.errors import DataError
from zoo.serving.inputs import batches, iter_rows
try:
    for batch in batches(iter_rows(sys.argv[1], ["text"]), 64):
        pass
except DataError as e:
    print(e)
# this program's peak (ru_maxrss would count the forking test process's too)
with open("/proc/self/status") as f:
    print(next(int(l.split()[1]) for l in f if l.startswith("VmHWM:")) // 1024)
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="Linux only")
def test_a_gz_bomb_is_bounded_by_the_line_limit(tmp_path):
    path = tmp_path / "bomb.txt.gz"
    block = b"a" * (1 << 20)
    with gzip.open(path, "wb", compresslevel=1) as f:
        f.write(b"first\n")
        for _ in range(256):  # one line of 256 MiB
            f.write(block)
    assert path.stat().st_size < 2 << 20
    proc = subprocess.run(
        [sys.executable, "-c", _PEAK, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, ZOO_LAZY_IMPORT="1"),  # as in `zoo`: no TensorFlow
    )
    assert proc.returncode == 0, proc.stderr
    message, peak_mib = proc.stdout.splitlines()
    assert message == (
        f"{path}:2: the line is longer than 1048576 bytes, the limit per line "
        "(--max-line-mb raises it)"
    )
    assert int(peak_mib) < 40, peak_mib  # the line is 256 MiB
