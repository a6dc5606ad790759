import io
import os
import tarfile

import numpy as np
import pytest

from zoo.data.documents import (
    Documents,
    demo_corpus,
    demo_splits,
    encode_labels,
    load_documents,
    read_csv_documents,
    read_imdb,
    split_documents,
)

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
        assert from_dir[split].labels == from_tar[split].labels
        assert from_parent[split].texts == from_dir[split].texts
    assert sorted(from_tar["train"].labels) == ["neg", "neg", "pos", "pos"]
    assert from_tar["test"].sources[0].endswith("aclImdb/test/neg/5_3.txt")
    i = from_tar["train"].texts.index("Wonderful<br />acting.")
    assert from_tar["train"].labels[i] == "pos"


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
    splits = load_documents(archive, validation_fraction=0.5)
    assert splits.label_names == ["neg", "pos"]
    assert len(splits.test) == 2 and len(splits.train) + len(splits.validation) == 4
    assert len(splits.validation) == 2  # stratified: one of each label
    assert sorted(splits.validation.labels) == ["neg", "pos"]
    # A folder holding one archive is read too.
    assert load_documents(tmp_path, validation_fraction=0.5).test.texts == (
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
    docs = read_csv_documents(csv_path, "text", "stars")
    assert docs.texts == ["Good food.\nNice staff.", "Bad.", "Okay, I guess."]
    assert docs.labels == ["5", "1", "3"]  # "3.0" -> "3"
    # Sources give the first physical line of each record (quoted newline counted).
    assert list(docs.sources) == [f"{csv_path}:2", f"{csv_path}:4", f"{csv_path}:5"]
    tsv = tmp_path / "r.tsv"
    tsv.write_text('sentence\tlabel\nIt\'s "fine"\t1\nNo.\t0\n', encoding="utf-8")
    docs = read_csv_documents(tsv, "sentence", "label")
    assert docs.texts == ['It\'s "fine"', "No."] and docs.labels == ["1", "0"]


def test_csv_errors_name_file_line_and_columns(tmp_path):
    path = _write_csv(tmp_path / "a.csv", ["hello,5"], header="review,stars")
    with pytest.raises(
        ValueError, match=r"a\.csv.*'text'.*columns \['review', 'stars'\]"
    ):
        read_csv_documents(path, "text", "stars")
    empty = tmp_path / "e.csv"
    empty.write_text("")
    with pytest.raises(ValueError, match=r"e\.csv: the file is empty"):
        read_csv_documents(empty, "text", "stars")
    header_only = tmp_path / "h.csv"
    header_only.write_text("text,stars\n")
    with pytest.raises(ValueError, match=r"h\.csv: the file has a header but no rows"):
        read_csv_documents(header_only, "text", "stars")
    blank = _write_csv(tmp_path / "b.csv", ['"two\nlines",4', '"   ",2'])
    with pytest.raises(ValueError, match=r"b\.csv:4: empty text in column 'text'"):
        read_csv_documents(blank, "text", "stars")
    no_label = _write_csv(tmp_path / "n.csv", ["ok,4", "fine,"])
    with pytest.raises(ValueError, match=r"n\.csv:3: empty label in column 'stars'"):
        read_csv_documents(no_label, "text", "stars")
    with pytest.raises(FileNotFoundError, match="missing.csv"):
        read_csv_documents(tmp_path / "missing.csv")


def test_unknown_label_names_label_and_line(tmp_path):
    path = _write_csv(tmp_path / "u.csv", ["a,1", "b,2", "c,7"])
    docs = read_csv_documents(path, "text", "stars")
    with pytest.raises(ValueError, match=r"u\.csv:4: unknown label '7'"):
        encode_labels(docs, ["1", "2"])
    rows = [f"doc {i},{1 + i % 2}" for i in range(20)] + ["odd one,9"]
    path = _write_csv(tmp_path / "v.csv", rows)
    with pytest.raises(ValueError, match=r"unknown label '9'"):
        load_documents(path, label_column="stars", label_names=["1", "2"])
    ids = encode_labels(read_csv_documents(path, "text", "stars"), ["1", "2", "9"])
    assert ids.tolist()[:3] == [0, 1, 0] and ids[-1] == 2


def test_split_is_fixed_seeded_stratified_and_disjoint():
    docs = Documents([f"d{i}" for i in range(100)], ["a"] * 60 + ["b"] * 40)
    train, val, test = split_documents(docs, (0.8, 0.1, 0.1), seed=3)
    again = split_documents(docs, (0.8, 0.1, 0.1), seed=3)
    other = split_documents(docs, (0.8, 0.1, 0.1), seed=4)
    assert (len(train), len(val), len(test)) == (80, 10, 10)
    assert train.texts == again[0].texts and test.texts == again[2].texts
    assert test.texts != other[2].texts
    assert set(train.texts) | set(val.texts) | set(test.texts) == set(docs.texts)
    assert not set(train.texts) & set(test.texts)
    assert test.label_counts() == {"a": 6, "b": 4}
    with pytest.raises(ValueError, match="fractions"):
        split_documents(docs, (0.5, 0.2))


def test_csv_without_test_set_gets_a_three_way_split(tmp_path):
    rows = [f"review number {i},{1 + i % 3}" for i in range(50)]
    path = _write_csv(tmp_path / "y.csv", rows)
    splits = load_documents(path, label_column="stars")
    assert splits.label_names == ["1", "2", "3"]
    sizes = (len(splits.train), len(splits.validation), len(splits.test))
    assert sum(sizes) == 50  # per-label rounding: about 40 / 5 / 5
    assert 38 <= sizes[0] <= 42 and sizes[1] >= 3 and sizes[2] >= 3
    assert "seed" in splits.description
    assert load_documents(path, label_column="stars").test.texts == splits.test.texts


def test_demo_corpus_is_seeded_balanced_and_keyword_labelled():
    docs = demo_corpus(60, seed=5)
    assert docs.texts == demo_corpus(60, seed=5).texts
    assert docs.texts != demo_corpus(60, seed=6).texts
    assert docs.label_counts() == {"neg": 30, "pos": 30}
    for text, label in zip(docs.texts, docs.labels, strict=True):
        assert text.count(".") + text.count("!") >= 3  # multi-sentence
        lower = text.lower()
        pos = any(w in lower for w in ("wonderful", "brilliant", "superb", "moving"))
        neg = any(w in lower for w in ("boring", "awful", "dull", "terrible"))
        assert (pos, neg) != (True, True)
        if pos or neg:
            assert label == ("pos" if pos else "neg")
    splits = demo_splits(50, seed=1)
    assert splits.label_names == ["neg", "pos"]
    assert len(splits.train) == 40
    np.testing.assert_array_equal(
        encode_labels(splits.test, splits.label_names) >= 0, True
    )


@pytest.mark.data
def test_shared_data_imdb_and_yelp(shared_data):
    yelp = read_csv_documents(shared_data / "yelp_10k" / "yelp.csv", "text", "stars")
    assert len(yelp) == 10000
    assert sorted(set(yelp.labels)) == ["1", "2", "3", "4", "5"]
    assert yelp.label_counts()["4"] == 3526
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
