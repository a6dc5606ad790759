import io
import os
import tarfile

import pytest

from zoo.data.files import seeded_split
from zoo.data.labelled import (
    LabelledTexts,
    load_labelled,
    read_class_folder,
    read_imdb,
    read_labelled,
)
from zoo.errors import ConfigError, DataError, MissingPathError

REVIEWS = {
    "train/pos/0_9.txt": "Great film. Loved it!",
    "train/pos/1_8.txt": "Wonderful<br />acting.",
    "train/neg/2_1.txt": "Awful. Boring.",
    "train/neg/3_2.txt": "Terrible plot.",
    "test/pos/4_10.txt": "Brilliant!",
    "test/neg/5_3.txt": "Dull film.",
}


def _write_imdb_dir(root):
    for name, text in REVIEWS.items():
        path = root / "aclImdb" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / "aclImdb" / "README").write_text("not a review")
    return root / "aclImdb"


def _write_imdb_tar(path):
    with tarfile.open(path, "w:gz") as tar:
        for name, text in REVIEWS.items():
            data = text.encode("utf-8")
            info = tarfile.TarInfo(f"aclImdb/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_read_imdb_folder_and_tar_give_the_same_documents(tmp_path):
    folder = _write_imdb_dir(tmp_path)
    archive = _write_imdb_tar(tmp_path / "imdb.tar.gz")
    from_dir = read_imdb(folder)
    from_parent = read_imdb(tmp_path)  # the folder that holds aclImdb/
    from_tar = read_imdb(archive)
    for split, n in (("train", 4), ("test", 2)):
        assert len(from_dir[split]) == n
        assert from_dir[split].texts == from_tar[split].texts
        assert from_dir[split].names == from_tar[split].names
        assert from_parent[split].texts == from_dir[split].texts
    assert from_tar["train"].label_names == ("neg", "pos")
    assert from_tar["train"].labels.tolist() == [0, 0, 1, 1]  # by file name
    assert from_tar["test"].sources[0].endswith("aclImdb/test/neg/5_3.txt")
    i = from_tar["train"].texts.index("Wonderful<br />acting.")
    assert from_tar["train"].names[i] == "pos"


def test_imdb_errors_name_the_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope"):
        read_imdb(tmp_path / "nope")
    empty = tmp_path / "empty.tar.gz"
    with tarfile.open(empty, "w:gz"):
        pass
    with pytest.raises(ValueError, match="empty.tar.gz.*no IMDB reviews"):
        read_imdb(empty)
    folder = _write_imdb_dir(tmp_path / "x")
    (folder / "train" / "neg" / "9_1.txt").write_text("   \n")
    with pytest.raises(ValueError, match=r"9_1\.txt: empty review"):
        read_imdb(folder)


def test_load_documents_imdb_keeps_test_and_splits_validation(tmp_path):
    archive = _write_imdb_tar(tmp_path / "imdb.tar.gz")
    splits = load_labelled(archive, validation_fraction=0.5)
    assert splits.label_names == ("neg", "pos")
    assert len(splits.test) == 2 and len(splits.train) + len(splits.validation) == 4
    assert len(splits.validation) == 2  # stratified: one of each label
    assert sorted(splits.validation.names) == ["neg", "pos"]
    # A folder holding one archive is read too.
    assert load_labelled(tmp_path, validation_fraction=0.5).test.texts == (
        splits.test.texts
    )


def _write_csv(path, rows, header="text,stars"):
    path.write_text(header + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_read_csv_and_tsv(tmp_path):
    csv_path = _write_csv(
        tmp_path / "r.csv",
        ['"Good food.\nNice staff.",5', "Bad.,1", '"Okay, I guess.",3.0'],
    )
    docs = read_labelled(csv_path, "text", "stars")
    assert docs.texts == ["Good food.\nNice staff.", "Bad.", "Okay, I guess."]
    assert docs.names == ["5", "1", "3"]  # "3.0" -> "3"
    assert docs.label_names == ("1", "3", "5") and docs.labels.tolist() == [2, 0, 1]
    # Sources give the first physical line of each record (quoted newline counted).
    assert list(docs.sources) == [f"{csv_path}:2", f"{csv_path}:4", f"{csv_path}:5"]
    tsv = tmp_path / "r.tsv"
    tsv.write_text('sentence\tlabel\nIt\'s "fine"\t1\nNo.\t0\n', encoding="utf-8")
    docs = read_labelled(tsv, "sentence", "label")
    assert docs.texts == ['It\'s "fine"', "No."] and docs.names == ["1", "0"]


def test_csv_errors_name_file_line_and_columns(tmp_path):
    path = _write_csv(tmp_path / "a.csv", ["hello,5"], header="review,stars")
    with pytest.raises(
        ValueError, match=r"a\.csv.*'text'.*columns \['review', 'stars'\]"
    ):
        read_labelled(path, "text", "stars")
    empty = tmp_path / "e.csv"
    empty.write_text("")
    with pytest.raises(ValueError, match=r"e\.csv: the file is empty"):
        read_labelled(empty, "text", "stars")
    header_only = tmp_path / "h.csv"
    header_only.write_text("text,stars\n")
    with pytest.raises(ValueError, match=r"h\.csv: the file has a header but no rows"):
        read_labelled(header_only, "text", "stars")
    blank = _write_csv(tmp_path / "b.csv", ['"two\nlines",4', '"   ",2'])
    with pytest.raises(ValueError, match=r"b\.csv:4: empty 'text'"):
        read_labelled(blank, "text", "stars")
    no_label = _write_csv(tmp_path / "n.csv", ["ok,4", "fine,"])
    with pytest.raises(ValueError, match=r"n\.csv:3: empty 'stars'"):
        read_labelled(no_label, "text", "stars")
    with pytest.raises(FileNotFoundError, match="missing.csv"):
        read_labelled(tmp_path / "missing.csv")


def test_unknown_label_names_label_and_line(tmp_path):
    path = _write_csv(tmp_path / "u.csv", ["a,1", "b,2", "c,7"])
    docs = read_labelled(path, "text", "stars")
    with pytest.raises(ValueError, match=r"u\.csv:4: unknown label '7'"):
        docs.relabel(["1", "2"])
    rows = [f"doc {i},{1 + i % 2}" for i in range(20)] + ["odd one,9"]
    path = _write_csv(tmp_path / "v.csv", rows)
    with pytest.raises(ValueError, match=r"unknown label '9'"):
        load_labelled(path, label_column="stars", label_names=["1", "2"])
    ids = read_labelled(path, "text", "stars", label_names=["1", "2", "9"]).labels
    assert ids.tolist()[:3] == [0, 1, 0] and ids[-1] == 2


def test_split_is_fixed_seeded_stratified_and_disjoint():
    docs = LabelledTexts.encode([f"d{i}" for i in range(100)], ["a"] * 60 + ["b"] * 40)

    def split(seed):
        parts, _ = seeded_split(len(docs), (0.1, 0.1), seed, strata=docs.names)
        return [docs.subset(part) for part in parts]

    train, val, test = split(3)
    again, other = split(3), split(4)
    assert (len(train), len(val), len(test)) == (80, 10, 10)
    assert train.texts == again[0].texts and test.texts == again[2].texts
    assert test.texts != other[2].texts
    assert set(train.texts) | set(val.texts) | set(test.texts) == set(docs.texts)
    assert not set(train.texts) & set(test.texts)
    assert test.counts() == {"a": 6, "b": 4}
    with pytest.raises(ConfigError, match="fractions"):
        seeded_split(len(docs), (0.5, 0.5), 3)


def test_csv_without_test_set_gets_a_three_way_split(tmp_path):
    rows = [f"review number {i},{1 + i % 3}" for i in range(50)]
    path = _write_csv(tmp_path / "y.csv", rows)
    splits = load_labelled(path, label_column="stars")
    assert splits.label_names == ("1", "2", "3")
    sizes = (len(splits.train), len(splits.validation), len(splits.test))
    assert sum(sizes) == 50  # per-label rounding: about 40 / 5 / 5
    assert 38 <= sizes[0] <= 42 and sizes[1] >= 3 and sizes[2] >= 3
    assert "seed" in splits.description
    assert load_labelled(path, label_column="stars").test.texts == splits.test.texts


@pytest.mark.data
def test_shared_data_imdb_and_yelp(shared_data):
    yelp = read_labelled(shared_data / "yelp_10k" / "yelp.csv", "text", "stars")
    assert len(yelp) == 10000
    assert yelp.label_names == ("1", "2", "3", "4", "5")
    assert yelp.counts()["4"] == 3526
    archive = shared_data / "aclImdb" / "aclImdb_train_test_posneg.tar.gz"
    if not os.path.exists(archive):
        pytest.skip(f"{archive} not present")
    # Read a few reviews straight from the archive by streaming (no extraction).
    with tarfile.open(archive, "r|gz") as tar:
        for member in tar:
            if member.name.endswith("train/pos/0_9.txt"):
                text = tar.extractfile(member).read().decode("utf-8")
                break
    assert text.startswith("Bromwell High is a cartoon comedy.")


# --- formats: JSON lines, class folders, split files, detection ---------------------


def test_jsonl_documents_with_chosen_fields(tmp_path):
    path = tmp_path / "reviews.jsonl"
    path.write_text(
        '{"body": "Good food.\\nNice staff.", "stars": 5, "id": 1}\n'
        "\n"
        '{"body": "Bad.", "stars": 1.0, "id": 2}\n'
        '{"body": "Okay.", "stars": "3", "id": 3}\n',
        encoding="utf-8",
    )
    docs = read_labelled(path, "body", "stars")
    assert docs.texts == ["Good food.\nNice staff.", "Bad.", "Okay."]
    assert docs.names == ["5", "1", "3"]  # 1.0 -> "1"
    assert list(docs.sources) == [f"{path}:1", f"{path}:3", f"{path}:4"]
    rows = [f'{{"text": "review {i}", "label": "{"ab"[i % 2]}"}}' for i in range(30)]
    many = tmp_path / "many.ndjson"
    many.write_text("\n".join(rows) + "\n", encoding="utf-8")
    splits = load_labelled(many)
    assert splits.label_names == ("a", "b")
    assert len(splits.train) + len(splits.validation) + len(splits.test) == 30


def test_positional_columns_without_header(tmp_path):
    path = tmp_path / "noheader.tsv"
    path.write_text("great movie\t1\nawful movie\t0\n", encoding="utf-8")
    docs = read_labelled(path, text_column=0, label_column=1)
    assert docs.texts == ["great movie", "awful movie"] and docs.names == ["1", "0"]
    assert list(docs.sources) == [f"{path}:1", f"{path}:2"]


def _write_class_folders(root, layout):
    for relative, text in layout.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_class_folders_flat_layout(tmp_path):
    root = _write_class_folders(
        tmp_path / "topics",
        {
            **{f"sport/{i}.txt": f"match report {i}" for i in range(10)},
            **{f"politics/{i}.txt": f"election news {i}" for i in range(10)},
            "sport/notes.md": "not a document",
            ".hidden/0.txt": "not a class",
            "README.txt": "not a class either",
        },
    )
    docs = read_class_folder(root)
    assert docs.counts() == {"politics": 10, "sport": 10}
    assert docs.texts[0] == "election news 0"
    assert docs.sources[0] == str(root / "politics" / "0.txt")
    splits = load_labelled(root)
    assert splits.label_names == ("politics", "sport")
    sizes = (len(splits.train), len(splits.validation), len(splits.test))
    assert sizes == (16, 2, 2)  # stratified 80/10/10
    assert "one folder per class" in splits.description
    every = load_labelled(root, pattern="*")  # notes.md is a document too
    assert sum(map(len, (every.train, every.validation, every.test))) == 21


def test_class_folders_with_split_folders(tmp_path):
    layout = {}
    for split, n in (("train", 8), ("dev", 2), ("test", 3)):
        for label in ("business", "science", "sport"):
            for i in range(n):
                layout[f"{split}/{label}/{i}.txt"] = f"{split} {label} text {i}"
    root = _write_class_folders(tmp_path / "news", layout)
    splits = load_labelled(root)
    assert splits.label_names == ("business", "science", "sport")
    assert (len(splits.train), len(splits.validation), len(splits.test)) == (24, 6, 9)
    assert all(t.startswith("dev ") for t in splits.validation.texts)
    assert all(t.startswith("test ") for t in splits.test.texts)
    # Without a validation folder, validation is a seeded part of train.
    import shutil

    shutil.rmtree(root / "dev")
    splits = load_labelled(root, validation_fraction=0.25)
    assert (len(splits.train), len(splits.validation), len(splits.test)) == (18, 6, 9)
    assert all(t.startswith("train ") for t in splits.validation.texts)


def test_class_folder_test_label_outside_train(tmp_path):
    root = _write_class_folders(
        tmp_path / "c",
        {
            "train/a/0.txt": "x",
            "train/b/0.txt": "y",
            "test/a/0.txt": "z",
            "test/c/0.txt": "w",
        },
    )
    with pytest.raises(DataError, match=r"c/0\.txt: unknown label 'c'"):
        load_labelled(root)


def test_split_files_folder(tmp_path):
    root = tmp_path / "corpus"
    root.mkdir()
    train = [f'"train text {i}, long",{"xy"[i % 2]}' for i in range(20)]
    (root / "train.csv").write_text("text,label\n" + "\n".join(train) + "\n")
    (root / "valid.csv").write_text("text,label\nvalid one,x\nvalid two,y\n")
    (root / "test.csv").write_text("text,label\ntest one,x\n")
    splits = load_labelled(root)
    assert (len(splits.train), len(splits.validation), len(splits.test)) == (20, 2, 1)
    assert splits.train.texts[0].startswith("train text ")
    assert splits.test.texts == ["test one"]
    assert "train.csv" in splits.description and "valid.csv" in splits.description


def test_imdb_folder_takes_precedence_and_ignores_unsup(tmp_path):
    folder = _write_imdb_dir(tmp_path)
    unsup = folder / "train" / "unsup"
    unsup.mkdir()
    (unsup / "0_0.txt").write_text("unlabelled review")
    splits = load_labelled(folder, validation_fraction=0.5)
    assert splits.label_names == ("neg", "pos")
    assert "unlabelled review" not in splits.train.texts + splits.validation.texts


def test_detection_errors_name_the_expected_layouts(tmp_path):
    with pytest.raises(MissingPathError, match="nope"):
        load_labelled(tmp_path / "nope")
    odd = tmp_path / "data.parquet"
    odd.write_bytes(b"PAR1")
    with pytest.raises(
        DataError, match=r"data\.parquet: cannot tell the format.*\.csv"
    ):
        load_labelled(odd)
    # The name can be overridden.
    weird = tmp_path / "reviews.data"
    weird.write_text("text,label\na,1\nb,2\nc,1\nd,2\ne,1\nf,2\ng,1\nh,2\ni,1\nj,2\n")
    assert load_labelled(weird, format="csv").label_names == ("1", "2")
    empty = tmp_path / "empty_folder"
    (empty / "stuff").mkdir(parents=True)
    (empty / "notes.md").write_text("x")
    with pytest.raises(DataError) as info:
        load_labelled(empty)
    message = str(info.value)
    assert message.startswith(f"{empty}: no known document layout")
    assert "<class>/*.txt" in message and "train.csv" in message
    assert "notes.md" in message and "stuff/" in message
    with pytest.raises(ConfigError, match="format='xml'"):
        load_labelled(weird, format="xml")


def test_truncated_archive_and_bad_review_name_the_file(tmp_path):
    archive = _write_imdb_tar(tmp_path / "imdb.tar.gz")
    data = archive.read_bytes()
    truncated = tmp_path / "cut.tar.gz"
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises(DataError, match=rf"^{truncated}: truncated or corrupt archive"):
        read_imdb(truncated)
    with pytest.raises(DataError, match=rf"^{truncated}: truncated or corrupt archive"):
        load_labelled(truncated)
    folder = _write_imdb_dir(tmp_path / "x")
    review = folder / "train" / "pos" / "7_8.txt"
    review.write_bytes(b"\xef\xbb\xbfFine first line.\nthen caf\xe9 here\n")
    with pytest.raises(DataError, match=rf"^{review}:2: invalid UTF-8"):
        read_imdb(folder)
    review.write_bytes(b"\xef\xbb\xbfFine review.")
    texts = read_imdb(folder)["train"].texts
    assert "Fine review." in texts  # the byte-order mark is not text


def test_class_folder_document_errors(tmp_path):
    root = tmp_path / "c"
    (root / "a").mkdir(parents=True)
    (root / "a" / "0.txt").write_bytes(b"ok\nline two \xff\n")
    with pytest.raises(DataError, match=rf"^{root / 'a' / '0.txt'}:2: invalid UTF-8"):
        read_class_folder(root)
    (root / "a" / "0.txt").write_text("  \n")
    with pytest.raises(DataError, match=r"0\.txt: empty document"):
        read_class_folder(root)
    with pytest.raises(MissingPathError):
        read_class_folder(tmp_path / "none")


@pytest.mark.data
def test_real_imdb_folder_with_archive(shared_data):
    splits = load_labelled(shared_data / "aclImdb")
    assert (len(splits.train), len(splits.validation), len(splits.test)) == (
        22500,
        2500,
        25000,
    )
    assert splits.test.counts() == {"neg": 12500, "pos": 12500}


def _folder_with_one_latin1_file(root):
    for label in ("neg", "pos"):
        os.makedirs(root / label)
        for i in range(6):
            (root / label / f"{i}.txt").write_text(f"A {label} review number {i}.")
    (root / "pos" / "latin.txt").write_bytes(
        "Un film trop long, très ennuyeux.".encode("latin-1")
    )
    return root


def test_a_latin1_file_stops_the_read_with_file_and_line(tmp_path):
    from zoo.errors import DataError

    root = _folder_with_one_latin1_file(tmp_path / "data")
    with pytest.raises(DataError, match=r"latin\.txt:1"):
        load_labelled(str(root))


def test_encoding_reads_it_and_skip_unreadable_skips_it(tmp_path, capsys):
    root = _folder_with_one_latin1_file(tmp_path / "data")
    # every file of this folder is valid latin-1 (ASCII included)
    splits = load_labelled(str(root), encoding="latin-1")
    texts = splits.train.texts + splits.validation.texts + splits.test.texts
    assert "Un film trop long, très ennuyeux." in texts and len(texts) == 13
    splits = load_labelled(str(root), skip_unreadable=True)
    texts = splits.train.texts + splits.validation.texts + splits.test.texts
    assert len(texts) == 12 and not any("ennuyeux" in t for t in texts)
    err = capsys.readouterr().err
    assert err.count("skipped:") == 1 and "latin.txt:1" in err
    assert "1 unreadable file(s) skipped" in splits.description
    from zoo.errors import DataError

    with pytest.raises(DataError, match="unknown encoding 'klingon'"):
        load_labelled(str(root), encoding="klingon")
