import pytest

from zoo.data.labelled import (
    SST2_LABELS,
    SST5_LABELS,
    load_labelled,
    parse_tree,
    read_class_folder,
    read_labelled,
)
from zoo.errors import DataError, MissingPathError


def load_sentences(path, **kwargs):
    """`load_labelled` with the sentence embedder's split seed."""
    return load_labelled(path, seed=0, **kwargs)


def read_sst_trees(path, task="sst5", phrases=False):
    return read_labelled(path, format="sst", task=task, phrases=phrases)


TREES = [
    "(3 (2 It) (4 (4 (2 's) (4 (3 (2 a) (4 lovely)) (2 film))) (2 .)))",
    "(1 (2 A) (1 (1 dull) (2 -LRB- movie -RRB-)))",
    "(2 (2 Just) (2 okay))",
    "(0 (2 The) (0 worst))",
]


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_parse_tree_words_and_nodes():
    words, nodes = parse_tree(TREES[0])
    assert words == ["It", "'s", "a", "lovely", "film", "."]
    assert nodes[-1] == (3, 0, 6)  # root spans the sentence
    assert (3, 2, 4) in nodes and (4, 3, 4) in nodes  # "a lovely", "lovely"
    assert len(nodes) == 11


def test_ptb_escapes_are_undone():
    words, _ = parse_tree(TREES[1])
    assert words == ["A", "dull", "(", "movie", ")"]


def test_sst5_and_sst2_root_labels(tmp_path):
    path = _write(tmp_path, "t.txt", "\n".join(TREES) + "\n\n")
    sst5 = read_sst_trees(path, "sst5")
    assert sst5.texts[0] == "It 's a lovely film ."
    assert sst5.labels.tolist() == [3, 1, 2, 0]
    assert sst5.label_names == SST5_LABELS
    sst2 = read_sst_trees(path, "sst2")
    assert sst2.labels.tolist() == [1, 0, 0]  # neutral dropped, 0/1 -> 0, 3/4 -> 1
    assert sst2.texts[2] == "The worst"
    assert sst2.label_names == SST2_LABELS


def test_sst2_phrase_expansion_dedupes_and_drops_neutral(tmp_path):
    path = _write(tmp_path, "t.txt", TREES[0] + "\n" + TREES[0] + "\n")
    data = read_sst_trees(path, "sst2", phrases=True)
    # non-neutral nodes of the tree: root(3), "'s a lovely film"(4), "'s a lovely
    # film ."... count them from the parse instead of by hand
    words, nodes = parse_tree(TREES[0])
    expected = {" ".join(words[s:e]) for lab, s, e in nodes if lab != 2}
    assert set(data.texts) == expected
    assert len(data.texts) == len(expected)  # second copy of the tree deduplicated
    assert data.texts[0] == "It 's a lovely film ."  # root first
    assert set(data.labels.tolist()) == {1}


@pytest.mark.parametrize(
    "bad, fragment",
    [
        ("(3 (2 a) (4 good)", "not closed"),
        ("(3 (2 a)) (4 good))", "text after the end"),
        ("(7 (2 a) (4 good))", "invalid sentiment label '7'"),
        ("(x (2 a))", "invalid sentiment label 'x'"),
        ("(3 (2 a) ())", "expected a label"),
        ("(3 (2 a) (4))", "has no words"),
        ("(3 (2 a) (4 good)))", "unbalanced"),
    ],
)
def test_malformed_tree_names_file_and_line(tmp_path, bad, fragment):
    path = _write(tmp_path, "bad.txt", TREES[0] + "\n" + TREES[1] + "\n" + bad + "\n")
    with pytest.raises(DataError) as info:
        read_sst_trees(path)
    message = str(info.value)
    assert message.startswith(f"{path}:3:")
    assert fragment in message


def test_load_sst_missing_files(tmp_path):
    for name in ("train.txt", "dev.txt"):
        _write(tmp_path, name, TREES[0] + "\n")
    with pytest.raises(MissingPathError, match=r"test\.txt: no such SST tree file"):
        load_sentences(tmp_path)


def test_read_tsv_with_header_and_errors(tmp_path):
    path = _write(tmp_path, "a.tsv", "label\tsentence\n1\tgood film\n0\tbad film\n\n")
    data = read_labelled(path)
    assert data.texts == ["good film", "bad film"]
    assert data.labels.tolist() == [1, 0]
    assert data.label_names == ("0", "1")
    bad = _write(tmp_path, "b.tsv", "1\tgood\nno tab here\n")
    with pytest.raises(DataError, match=r"b\.tsv:2: expected 'label<TAB>"):
        read_labelled(bad)
    unknown = _write(tmp_path, "c.tsv", "1\tgood\n7\tbad\n")
    with pytest.raises(DataError, match=r"c\.tsv:2: unknown label"):
        read_labelled(unknown, label_names=("0", "1"))
    numeric = _write(tmp_path, "d.tsv", "10\ta\n9\tb\n")
    assert read_labelled(numeric).label_names == ("9", "10")  # numeric order
    with pytest.raises(DataError, match="no examples"):
        read_labelled(_write(tmp_path, "e.tsv", "\n"))


def test_read_csv_columns_and_errors(tmp_path):
    path = _write(
        tmp_path, "r.csv", 'text,stars\n"Great, really great.",5\nmeh,3\nawful,1\n'
    )
    data = read_labelled(path, label_column="stars")
    assert data.texts[0] == "Great, really great."
    assert data.label_names == ("1", "3", "5")
    assert data.labels.tolist() == [2, 1, 0]
    with pytest.raises(DataError, match=r"missing column\(s\) \['label'\]"):
        read_labelled(path)
    empty = _write(tmp_path, "empty.csv", "")
    with pytest.raises(DataError, match=r"empty\.csv: the file is empty"):
        read_labelled(empty)
    blank = _write(tmp_path, "blank.csv", "text,label\nfine,1\n,0\n")
    with pytest.raises(DataError, match=r"blank\.csv:3: empty 'text'"):
        read_labelled(blank)


@pytest.mark.data
def test_real_sst_counts(shared_data):
    sst5 = load_sentences(shared_data / "sst", task="sst5")
    assert list(sst5.sizes().values()) == [8544, 1101, 2210]
    assert list(sst5.train.counts().values()) == [1092, 2218, 1624, 2322, 1288]
    sst2 = load_sentences(shared_data / "sst", task="sst2")
    assert list(sst2.sizes().values()) == [6920, 872, 1821]
    assert sst2.test.texts[0].startswith("If you sometimes like to go to the movies")


@pytest.mark.data
def test_real_yelp_and_glue_tsv(shared_data):
    yelp = read_labelled(shared_data / "yelp_10k" / "yelp.csv", label_column="stars")
    assert len(yelp) == 10000 and list(yelp.counts().values()) == [
        749,
        927,
        1461,
        3526,
        3337,
    ]
    dev = read_labelled(shared_data / "sst" / "sst2_glue_variant" / "dev.tsv")
    assert len(dev) == 872 and list(dev.counts().values()) == [428, 444]


# --- formats: JSON lines, named TSV columns, class folders, layouts ------------------


def test_read_jsonl_and_named_tsv_columns(tmp_path):
    path = _write(
        tmp_path,
        "s.jsonl",
        '{"sentence": "a fine film", "stars": 4}\n'
        '{"sentence": "a dull film", "stars": 1}\n',
    )
    data = read_labelled(path, text_column="sentence", label_column="stars")
    assert data.texts == ["a fine film", "a dull film"]
    assert data.label_names == ("1", "4") and data.labels.tolist() == [1, 0]
    tsv = _write(tmp_path, "s.tsv", "id\tsentence\tlabel\n1\tgood\tpos\n2\tbad\tneg\n")
    data = read_labelled(tsv, text_column="sentence", label_column="label")
    assert data.texts == ["good", "bad"] and data.label_names == ("neg", "pos")
    reversed_order = _write(tmp_path, "yelp_like.txt", "Loved it.\t1\nMeh.\t0\n")
    data = read_labelled(reversed_order, text_column=0, label_column=1)
    assert data.texts == ["Loved it.", "Meh."] and data.labels.tolist() == [1, 0]
    # One column named: the other is the default name (`label`).
    data = read_labelled(tsv, text_column="sentence")
    assert data.texts == ["good", "bad"] and data.label_names == ("neg", "pos")


def test_read_class_folder_sentences(tmp_path):
    for label, texts in (("neg", ["bad", "dull"]), ("pos", ["good", "fine", "great"])):
        (tmp_path / "c" / label).mkdir(parents=True)
        for i, text in enumerate(texts):
            (tmp_path / "c" / label / f"{i}.txt").write_text(text + "\n")
    data = read_class_folder(tmp_path / "c")
    assert data.texts == ["bad", "dull", "good", "fine", "great"]  # stripped
    assert data.counts() == {"neg": 2, "pos": 3}


def test_load_sentences_layouts(tmp_path):
    # An SST tree folder.
    sst = tmp_path / "sst"
    sst.mkdir()
    for name in ("train.txt", "dev.txt", "test.txt"):
        (sst / name).write_text("\n".join(TREES) + "\n")
    splits = load_sentences(sst, task="sst2")
    assert splits.test.label_names == SST2_LABELS
    assert len(splits.train) == 3
    # Trees whatever table columns are given (a recipe passes its defaults).
    assert len(load_sentences(sst, task="sst2", text_column="text").train) == 3
    # Split TSV files with different headers (as in GLUE's SST-2) share label ids.
    glue = tmp_path / "glue"
    glue.mkdir()
    train = "".join(f"{i % 2}\tsentence {i}\r\n" for i in range(10))
    (glue / "train.tsv").write_text("label\tsentence\r\n" + train)
    (glue / "dev.tsv").write_text("label\tcontent\n1\tgreat\n")
    splits = load_sentences(glue)
    assert splits.validation.texts == ["great"]
    assert splits.validation.labels.tolist() == [1]
    assert splits.train.label_names == ("0", "1")
    # No test file: 10% of train, seeded, held out as the test set.
    assert (len(splits.train), len(splits.test)) == (9, 1)
    assert splits.test.texts[0].startswith("sentence ")
    assert set(splits.train.texts).isdisjoint(splits.test.texts)
    # One file of each table format, split 80/10/10.
    rows = [(f"sentence number {i}", "ab"[i % 2]) for i in range(20)]
    csv_path = _write(
        tmp_path, "d.csv", "text,label\n" + "".join(f"{t},{y}\n" for t, y in rows)
    )
    jsonl_path = _write(
        tmp_path,
        "d.jsonl",
        "".join(f'{{"text": "{t}", "label": "{y}"}}\n' for t, y in rows),
    )
    tsv_path = _write(tmp_path, "d.tsv", "".join(f"{y}\t{t}\n" for t, y in rows))
    for path in (csv_path, jsonl_path, tsv_path):
        splits = load_sentences(path)
        assert list(splits.sizes().values()) == [16, 2, 2]
        assert splits.train.label_names == ("a", "b")
        assert sorted(
            t
            for split in (splits.train, splits.validation, splits.test)
            for t in split.texts
        ) == sorted(t for t, _ in rows)
    # Class folders.
    for i in range(10):
        for label in ("neg", "pos"):
            folder = tmp_path / "folders" / "train" / label
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{i}.txt").write_text(f"{label} {i}")
    splits = load_sentences(tmp_path / "folders")
    assert splits.train.label_names == ("neg", "pos")
    assert sum(splits.sizes().values()) == 20


def test_load_sentences_errors(tmp_path):
    with pytest.raises(MissingPathError, match="nope"):
        load_sentences(tmp_path / "nope")
    with pytest.raises(MissingPathError, match=r"dev\.txt"):
        (tmp_path / "sst").mkdir()
        (tmp_path / "sst" / "train.txt").write_text(TREES[0] + "\n")
        load_sentences(tmp_path / "sst")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "x.md").write_text("x")
    with pytest.raises(DataError, match=r"other: no known document layout.*x\.md"):
        load_sentences(tmp_path / "other")
    odd = _write(tmp_path, "s.xml", "<a/>")
    with pytest.raises(DataError, match=r"s\.xml: cannot tell the format"):
        load_sentences(odd)


@pytest.mark.data
def test_real_layouts_through_load_sentences(shared_data):
    glue = load_sentences(shared_data / "sst" / "sst2_glue_variant")
    assert list(glue.sizes().values()) == [
        67349,
        872,
        1821,
    ]
    assert list(glue.validation.counts().values()) == [428, 444]
    sst = load_sentences(shared_data / "sst", task="sst2")
    assert list(sst.sizes().values()) == [6920, 872, 1821]
    yelp = load_sentences(
        shared_data / "yelp_10k" / "yelp_labelled.txt", text_column=0, label_column=1
    )
    assert sum(yelp.sizes().values()) == 1000
    assert yelp.train.label_names == ("0", "1")
    assert yelp.train.texts[0] != "0" and len(yelp.train) == 800


def test_read_tsv_reads_a_named_header_in_either_order(tmp_path):
    for header, rows in (
        ("text\tlabel", ["a fine film\tpos", "dull\tneg"]),
        ("Label\tSentence", ["pos\ta fine film", "neg\tdull"]),
    ):
        path = tmp_path / "s.tsv"
        path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
        data = read_labelled(str(path))
        assert list(data.texts) == ["a fine film", "dull"], header
        assert [data.label_names[i] for i in data.labels] == ["pos", "neg"], header
