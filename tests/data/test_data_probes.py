"""Data a hostile or unlucky user might give: a plain tar cut at a member boundary,
symbolic links out of the data folder, one class only. Each is one `DataError` line
naming the file."""

import gzip
import io
import os
import tarfile

import pytest

from zoo.data.labelled import load_labelled, read_class_folder, read_imdb
from zoo.data.parallel import load_parallel
from zoo.errors import DataError


def _imdb_tar_bytes():
    """A plain tar of six IMDB reviews and the offset of each member's header."""
    buf = io.BytesIO()
    offsets = []
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for i in range(6):
            split = "train" if i < 4 else "test"
            label = "pos" if i % 2 else "neg"
            data = f"Review number {i}, a fine text.".encode()
            info = tarfile.TarInfo(f"aclImdb/{split}/{label}/{i}_7.txt")
            info.size = len(data)
            offsets.append(tar.offset)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue(), offsets


def test_a_complete_plain_tar_reads(tmp_path):
    data, _ = _imdb_tar_bytes()
    path = tmp_path / "imdb.tar"
    path.write_bytes(data)
    splits = read_imdb(path)
    assert {k: len(v) for k, v in splits.items()} == {"train": 4, "test": 2}
    assert splits["test"].names == ["neg", "pos"]


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("cut", ["member_boundary", "inside_header"])
def test_a_tar_cut_short_is_an_error(tmp_path, gz, cut):
    data, offsets = _imdb_tar_bytes()
    end = offsets[5] + (0 if cut == "member_boundary" else 100)
    path = tmp_path / ("cut.tar.gz" if gz else "cut.tar")
    path.write_bytes(gzip.compress(data[:end]) if gz else data[:end])
    message = (
        f"{path}: truncated or corrupt archive: it ends after 5 members (byte "
        f"{offsets[5]}) without tar's end-of-archive block; expected a complete "
        ".tar.gz/.tgz/.tar of aclImdb"
    )
    with pytest.raises(DataError) as refused:
        read_imdb(path, splits=("train",))
    assert str(refused.value) == message
    with pytest.raises(DataError) as refused:
        load_labelled(path)
    assert str(refused.value) == message


def _class_folder(root):
    for label in ("neg", "pos"):
        (root / label).mkdir(parents=True)
        for i in range(5):
            (root / label / f"{i}.txt").write_text(f"{label} text {i}")
    return root


def test_a_link_out_of_a_class_folder_is_refused(tmp_path):
    secret = tmp_path / "credentials.txt"
    secret.write_text("aws_secret_access_key = hunter2")
    data = _class_folder(tmp_path / "data")
    link = data / "pos" / "9.txt"
    os.symlink(secret, link)
    message = (
        f"{link}: a symbolic link to {secret}, outside the data folder {data}; copy "
        "the file into the folder"
    )
    for read in (read_class_folder, load_labelled):
        with pytest.raises(DataError) as refused:
            read(data)
        assert str(refused.value) == message, read.__name__


def test_a_linked_class_folder_and_split_file_out_of_the_data_are_refused(tmp_path):
    outside = _class_folder(tmp_path / "elsewhere")
    data = _class_folder(tmp_path / "data")
    os.symlink(outside / "neg", data / "other")
    with pytest.raises(DataError, match=r"other/0\.txt: a symbolic link to .*outside"):
        load_labelled(data)

    table = tmp_path / "table"
    table.mkdir()
    (tmp_path / "train.csv").write_text("text,label\na,x\nb,y\n")
    os.symlink(tmp_path / "train.csv", table / "train.csv")
    with pytest.raises(DataError, match=r"train\.csv: a symbolic link to .*outside"):
        load_labelled(table)

    pairs = tmp_path / "pairs"
    pairs.mkdir()
    (pairs / "train.en").write_text("a b\n")
    (tmp_path / "train.de").write_text("x y\n")
    os.symlink(tmp_path / "train.de", pairs / "train.de")
    with pytest.raises(DataError) as refused:
        load_parallel(pairs, "en", "de")
    assert str(refused.value).startswith(
        f"{pairs / 'train.de'}: a symbolic link to {tmp_path / 'train.de'}"
    )


def test_links_inside_the_data_folder_are_read(tmp_path):
    data = _class_folder(tmp_path / "data")
    os.symlink(data / "neg" / "0.txt", data / "pos" / "9.txt")
    docs = read_class_folder(data)
    assert docs.texts[docs.sources.index(str(data / "pos" / "9.txt"))] == "neg text 0"
    assert docs.counts() == {"neg": 5, "pos": 6}


def test_imdb_folder_link_out_is_refused(tmp_path):
    secret = tmp_path / "environ"
    secret.write_text("TOKEN=abc")
    root = tmp_path / "aclImdb"
    for split in ("train", "test"):
        for label in ("pos", "neg"):
            (root / split / label).mkdir(parents=True)
            (root / split / label / "1_9.txt").write_text("fine")
    os.symlink(secret, root / "train" / "pos" / "2_9.txt")
    with pytest.raises(DataError, match=r"2_9\.txt: a symbolic link to .*environ"):
        read_imdb(root)


def test_one_class_is_one_line(tmp_path):
    table = tmp_path / "one.csv"
    table.write_text("text,label\n" + "".join(f"text {i},pos\n" for i in range(30)))
    with pytest.raises(DataError) as refused:
        load_labelled(table)
    assert str(refused.value) == (
        f"{table}: one class only ('pos'): all 24 training examples have the same "
        "label, and a classifier needs at least two classes"
    )
    folder = tmp_path / "folder"
    (folder / "only").mkdir(parents=True)
    for i in range(5):
        (folder / "only" / f"{i}.txt").write_text(f"text {i}")
    with pytest.raises(DataError, match=r"folder: one class only \('only'\)"):
        load_labelled(folder)


def test_an_sst_file_linked_out_of_its_folder_is_refused(tmp_path):
    folder = tmp_path / "sst"
    folder.mkdir()
    tree = "(3 (2 It) (4 (2 is) (4 good)))\n"
    for name in ("train.txt", "dev.txt"):
        (folder / name).write_text(tree)
    (tmp_path / "elsewhere.txt").write_text(tree)
    os.symlink(tmp_path / "elsewhere.txt", folder / "test.txt")
    with pytest.raises(DataError) as refused:
        load_labelled(folder)
    assert str(refused.value) == (
        f"{folder / 'test.txt'}: a symbolic link to {tmp_path / 'elsewhere.txt'}, "
        f"outside the data folder {folder}; copy the file into the folder"
    )
    os.remove(folder / "test.txt")
    (folder / "test.txt").write_text(tree)
    assert len(load_labelled(folder).test) == 1
