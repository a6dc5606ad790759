import os
import stat

import pytest

from zoo.io import TEMPORARY_PREFIX, atomic_path, atomic_write, remove_temporaries


def test_atomic_write_replaces_the_file_whole(tmp_path):
    path = tmp_path / "metrics.json"
    with atomic_write(path) as f:
        f.write("première\n")
    assert path.read_text(encoding="utf-8") == "première\n"
    with atomic_write(path, "wb") as f:
        f.write(b"\x00\x01")
    assert path.read_bytes() == b"\x00\x01"
    assert os.listdir(tmp_path) == ["metrics.json"]


def test_a_write_that_fails_midway_leaves_the_previous_file(tmp_path):
    path = tmp_path / "report.txt"
    path.write_text("old report\n")
    with pytest.raises(RuntimeError, match="killed"):
        with atomic_write(path) as f:
            f.write("half of a new")
            f.flush()
            raise RuntimeError("killed")
    assert path.read_text() == "old report\n"
    assert os.listdir(tmp_path) == ["report.txt"]


def test_atomic_path_names_keep_the_extension_and_need_a_file(tmp_path):
    path = tmp_path / "model.weights.h5"
    with atomic_path(path) as tmp:
        assert os.path.dirname(tmp) == str(tmp_path)
        assert os.path.basename(tmp).startswith(TEMPORARY_PREFIX)
        assert tmp.endswith("-model.weights.h5")
        with open(tmp, "wb") as f:
            f.write(b"weights")
    assert path.read_bytes() == b"weights"
    with pytest.raises(FileNotFoundError, match="nothing was written"):
        with atomic_path(tmp_path / "empty.txt"):
            pass
    assert not (tmp_path / "empty.txt").exists()


def test_atomic_files_get_the_permissions_of_a_plain_open(tmp_path):
    old = os.umask(0o022)
    try:
        with atomic_write(tmp_path / "manifest.json") as f:
            f.write("{}")
    finally:
        os.umask(old)
    mode = stat.S_IMODE(os.stat(tmp_path / "manifest.json").st_mode)
    assert mode == 0o644  # readable by others, unlike tempfile.mkstemp's 0600


def test_remove_temporaries_deletes_only_leftovers(tmp_path):
    (tmp_path / f"{TEMPORARY_PREFIX}abcd-best.keras").write_bytes(b"half")
    (tmp_path / "best.keras").write_bytes(b"whole")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / f"{TEMPORARY_PREFIX}x-y").write_bytes(b"")
    removed = remove_temporaries(tmp_path)
    assert [os.path.basename(p) for p in removed] == [
        f"{TEMPORARY_PREFIX}abcd-best.keras"
    ]
    assert sorted(os.listdir(tmp_path)) == ["best.keras", "sub"]
    assert remove_temporaries(tmp_path / "missing") == []


def test_content_keyed_files_never_overwrite_each_other(tmp_path):
    import hashlib

    from zoo.io import content_keyed

    def writer(text):
        def write(path):
            with open(path, "w") as f:
                f.write(text)

        return write

    a = content_keyed(writer("a\nb\n"), tmp_path / "vocab.txt", "vocabularies")
    b = content_keyed(writer("x\n"), tmp_path / "vocab.txt", "vocabularies")
    again = content_keyed(writer("a\nb\n"), tmp_path / "vocab.txt", "vocabularies")
    digest = hashlib.sha256(b"a\nb\n").hexdigest()[:12]
    assert a == again == str(tmp_path / "vocabularies" / digest / "vocab.txt")
    assert b != a and os.path.basename(b) == "vocab.txt"
    assert open(a).read() == "a\nb\n" and open(b).read() == "x\n"
    assert sorted(os.listdir(tmp_path / "vocabularies")) == sorted(
        [digest, os.path.basename(os.path.dirname(b))]
    )  # no staging folder left
    assert os.listdir(tmp_path) == ["vocabularies"]  # nothing at tmp_path/vocab.txt

    def fails(path):
        raise OSError("boom")

    with pytest.raises(OSError, match="boom"):
        content_keyed(fails, tmp_path / "vocab.txt", "vocabularies")
    assert len(os.listdir(tmp_path / "vocabularies")) == 2
