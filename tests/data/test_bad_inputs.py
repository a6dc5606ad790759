"""Every reader against every case of the shared bad-file table (`tests.bad_inputs`).

A case either fails with a `DataError` whose message names the file (and the line)
and says what is wrong, or is read, and then as the clean sample would be (byte-order
marks, CRLF) or with its awkward text intact (NUL, control characters, long fields,
tokens with spaces). A path that does not exist is a `MissingPathError` for every
reader.
"""

import os
import pathlib

import numpy as np
import pytest

from tests.bad_inputs import FIELD_LIMIT, cases_for
from zoo.data import babi, files, labelled, parallel
from zoo.errors import DataError, MissingPathError
from zoo.text import embeddings

_TABLE_SAMPLES = {
    "csv": b"text,label\nMARK film,pos\nbad film,neg\n",
    "tsv": b"text\tlabel\nMARK film\tpos\nbad film\tneg\n",
    "jsonl": (
        b'{"text": "good film", "label": "pos"}\n{"text": "MARK film", "label": "neg"}\n'
    ),
}
_VOCABULARY = ["[PAD]", "[UNK]", "good", "film", "bad", "new york", "nul\x00in\x01side"]


def _labelled(data):
    return list(data.texts), data.names


def _vectors(path):
    first, _ = embeddings.load_embeddings(path, _VOCABULARY, seed=0)
    second, _ = embeddings.load_embeddings(path, _VOCABULARY, seed=1)
    found = [
        token
        for i, token in enumerate(_VOCABULARY)
        if i >= 2 and np.array_equal(first[i], second[i])  # not a random row
    ]
    return found, [first[i].tolist() for i in range(2, len(_VOCABULARY))]


def _babi(path):
    examples = babi.read_babi_file(path)
    texts = [s for ex in examples for s in ex.story] + [ex.question for ex in examples]
    return texts, [ex.answer for ex in examples]


def _line_pairs(path):
    n = len(_LINE_SAMPLES["line_pairs"].split(b"\n")) - 1
    target = path.parent / "target.txt"
    target.write_bytes(b"".join(b"target %d\n" % i for i in range(n)))
    corpus = parallel.read_pairs((path, target))
    return corpus.sources, corpus.targets


def _pair_tsv(path):
    corpus = parallel.read_pairs(path)
    return corpus.sources, corpus.targets


_LINE_SAMPLES = {
    "label_tsv": b"pos\tgood film\nneg\tMARK film\npos\tgreat film\n",
    "sst": b"(3 (2 a) (4 good))\n(1 (2 MARK) (1 bad))\n(4 (4 great))\n",
    "babi": (
        b"1 Mary moved to the hall.\n2 MARK went to the garden.\n"
        b"3 Where is Mary?\thall\t1\n"
    ),
    "vectors": b"good 1 2 3\nMARK 4 5 6\nfilm 7 8 9\n",
    "line_pairs": b"a dog .\nMARK cat .\nthe bird .\n",
    "pair_tsv": b"Go.\tVe.\nMARK here\tHola.\nRun!\tCorre!\n",
}

# name -> (format, file extension, sample, read(path) -> (texts, labels))
READERS = {
    "table_csv": (
        "csv",
        ".csv",
        _TABLE_SAMPLES["csv"],
        lambda p: _labelled(labelled.read_labelled(p, "text", "label")),
    ),
    "table_tsv": (
        "tsv",
        ".tsv",
        _TABLE_SAMPLES["tsv"],
        lambda p: _labelled(labelled.read_labelled(p, "text", "label")),
    ),
    "table_jsonl": (
        "jsonl",
        ".jsonl",
        _TABLE_SAMPLES["jsonl"],
        lambda p: _labelled(labelled.read_labelled(p, "text", "label")),
    ),
    "table_csv_default_columns": (
        "csv",
        ".csv",
        _TABLE_SAMPLES["csv"],
        lambda p: _labelled(labelled.read_labelled(p)),
    ),
    "table_tsv_format_given": (
        "tsv",
        ".tsv",
        _TABLE_SAMPLES["tsv"],
        lambda p: _labelled(labelled.read_labelled(p, "text", "label", format="tsv")),
    ),
    "table_jsonl_default_columns": (
        "jsonl",
        ".jsonl",
        _TABLE_SAMPLES["jsonl"],
        lambda p: _labelled(labelled.read_labelled(p)),
    ),
    "label_tsv": (
        "label_tsv",
        ".tsv",
        _LINE_SAMPLES["label_tsv"],
        lambda p: _labelled(labelled.read_labelled(p)),
    ),
    "sst_trees": (
        "sst",
        ".txt",
        _LINE_SAMPLES["sst"],
        lambda p: _labelled(labelled.read_labelled(p, format="sst")),
    ),
    "babi": ("babi", ".txt", _LINE_SAMPLES["babi"], _babi),
    "word_vectors": ("vectors", ".txt", _LINE_SAMPLES["vectors"], _vectors),
    "parallel_line_pairs": (
        "line_pairs",
        ".en",
        _LINE_SAMPLES["line_pairs"],
        _line_pairs,
    ),
    "parallel_tsv": ("pair_tsv", ".txt", _LINE_SAMPLES["pair_tsv"], _pair_tsv),
}

CASES = [
    pytest.param(reader, case, id=f"{reader}-{case.name}")
    for reader, (fmt, *_) in READERS.items()
    for case in cases_for(fmt)
]


@pytest.fixture(autouse=True)
def _field_limit(monkeypatch):
    monkeypatch.setattr(files, "MAX_FIELD_CHARS", FIELD_LIMIT)


def _write(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("reader, case", CASES)
def test_reader_against_bad_file(tmp_path, reader, case):
    _, extension, sample, read = READERS[reader]
    path = _write(tmp_path, f"data{extension}{case.suffix}", case.content(sample))
    if case.error is not None:
        with pytest.raises(DataError) as info:
            read(path)
        message = str(info.value)
        where = f"{path}:{case.line}: " if case.line else f"{path}: "
        assert message.startswith(where), message[:300]
        assert case.error in message, message[:300]
        assert "\n" not in message.strip() or "line-aligned" in message
        return
    texts, labels = read(path)
    strings = [s for s in list(texts) + list(labels) if isinstance(s, str)]
    assert not any("\ufeff" in s for s in strings), strings
    if case.same_as_sample:
        clean = _write(tmp_path, f"clean{extension}", sample)
        assert (texts, labels) == read(clean)
    if case.contains is not None:
        assert any(case.contains in s for s in texts), [s[:80] for s in texts]


@pytest.mark.parametrize("reader", sorted(READERS))
def test_missing_path_is_a_missing_path_error(tmp_path, reader):
    _, extension, _, read = READERS[reader]
    path = tmp_path / f"missing{extension}"
    with pytest.raises(MissingPathError) as info:
        read(path)
    assert str(info.value).startswith(f"{path}: no such")
    assert isinstance(info.value, FileNotFoundError)


def test_every_case_applies_to_some_reader():
    used = {case.name for _, case in (p.values for p in CASES)}
    from tests.bad_inputs import BAD_FILES

    assert used == {case.name for case in BAD_FILES}


def test_specific_error_classes_are_data_errors():
    assert issubclass(embeddings.EmbeddingFormatError, DataError)
    assert issubclass(babi.TaskUnavailableError, DataError)
    assert issubclass(babi.TaskUnavailableError, FileNotFoundError)
    assert issubclass(DataError, ValueError)


@pytest.fixture
def _no_hang():
    """Fails the test, rather than hanging it, if a reader blocks on its input."""
    import signal

    def hung(signum, frame):
        raise TimeoutError("the reader blocked on a pipe or a device")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def _fifo(folder, name):
    path = folder / name
    os.mkfifo(path)
    return path


def _refused(read, path, kind):
    with pytest.raises(DataError) as info:
        read(path)
    message = str(info.value)
    assert message.startswith(
        f"{path}: not a regular file or folder ({kind}): pipes and devices are not "
        "read, give a "
    )
    assert "\n" not in message and not isinstance(info.value, MissingPathError)


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_named_pipe_or_a_device_is_refused_unread(tmp_path, reader, _no_hang):
    _, extension, _, read = READERS[reader]
    _refused(read, _fifo(tmp_path, f"data{extension}"), "a named pipe")
    _refused(read, pathlib.Path("/dev/zero"), "a character device")


def test_data_given_as_a_pipe_or_a_device_or_holding_one(tmp_path, _no_hang):
    """What `--data` reaches: the loaders of every recipe, and `fingerprint`."""
    from zoo.training import fingerprint

    loaders = (
        labelled.load_labelled,
        lambda p: babi.load_babi(p, tasks=[1]),
        lambda p: parallel.load_parallel(p, "en", "de"),
        lambda p: fingerprint(pathlib.Path(p)),
    )
    fifo = _fifo(tmp_path, "data")
    for load in loaders:
        _refused(load, fifo, "a named pipe")
        _refused(load, pathlib.Path("/dev/zero"), "a character device")
    folder = tmp_path / "splits"
    folder.mkdir()
    (folder / "train.tsv").write_text("text\tlabel\ngood film\tpos\n")
    inside = _fifo(folder, "test.tsv")
    _refused(labelled.load_labelled, inside, "a named pipe")
    _refused(lambda p: labelled.load_labelled(p.parent), inside, "a named pipe")
    _refused(lambda p: fingerprint(p.parent), inside, "a named pipe")
