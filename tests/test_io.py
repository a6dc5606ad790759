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


def test_check_writable_dir_accepts_a_folder_or_one_to_create_leaving_nothing(
    tmp_path,
):
    from zoo.io import check_writable_dir

    (tmp_path / "kept").write_text("x")
    assert check_writable_dir(tmp_path, "--export-dir") == tmp_path
    nested = tmp_path / "a" / "b"
    assert check_writable_dir(str(nested), "--export-dir") == str(nested)
    assert os.listdir(tmp_path) == ["kept"]  # nothing created, no probe left


def test_check_writable_dir_refuses_a_file_on_the_way(tmp_path):
    from zoo.errors import ConfigError
    from zoo.io import check_writable_dir

    (tmp_path / "file").write_text("x")
    for path in (tmp_path / "file", tmp_path / "file" / "sub"):
        with pytest.raises(ConfigError) as caught:
            check_writable_dir(path, "--export-dir")
        assert str(caught.value) == (
            f"--export-dir {path}: {tmp_path / 'file'} is not a folder; pass another "
            "--export-dir"
        )


def test_check_writable_dir_names_the_flag_the_path_and_the_reason(
    tmp_path, monkeypatch
):
    import errno

    from zoo.errors import ConfigError
    from zoo.io import check_writable_dir

    real_open = os.open

    def read_only(path, *args, **kwargs):
        if os.path.basename(path).startswith(TEMPORARY_PREFIX):
            raise OSError(errno.EROFS, "Read-only file system")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", read_only)
    with pytest.raises(ConfigError) as caught:
        check_writable_dir(tmp_path, "--export-dir")
    assert str(caught.value) == (
        f"--export-dir {tmp_path}: the folder is not writable (Read-only file "
        "system); pass another --export-dir"
    )
    with pytest.raises(ConfigError) as caught:
        check_writable_dir(tmp_path / "new" / "v1", "--run-dir")
    assert str(caught.value) == (
        f"--run-dir {tmp_path / 'new' / 'v1'}: it cannot be created in {tmp_path} "
        "(Read-only file system); pass another --run-dir"
    )


def test_check_writable_dir_on_a_really_read_only_folder(tmp_path):
    """chmod 555 for a user; root writes there anyway, so for root a read-only
    tmpfs (skipped where it cannot be mounted)."""
    import subprocess

    from zoo.errors import ConfigError
    from zoo.io import check_writable_dir

    folder = tmp_path / "ro"
    folder.mkdir()
    mounted = False
    if os.geteuid() == 0:
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "ro,size=16k", "tmpfs", str(folder)],
            capture_output=True,
        )
        if done.returncode != 0:
            pytest.skip("root, and no read-only tmpfs can be mounted")
        mounted, reason = True, "Read-only file system"
    else:
        folder.chmod(0o555)
        reason = "Permission denied"
    try:
        with pytest.raises(ConfigError) as caught:
            check_writable_dir(folder / "exports", "--export-dir")
    finally:
        if mounted:
            subprocess.run(["umount", str(folder)], check=False)
        folder.chmod(0o755)
    assert str(caught.value) == (
        f"--export-dir {folder / 'exports'}: it cannot be created in {folder} "
        f"({reason}); pass another --export-dir"
    )
