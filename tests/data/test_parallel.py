import gzip

import pytest

from zoo.data.parallel import (
    demo_corpus,
    load_parallel,
    read_line_pairs,
    read_tsv,
    split_corpus,
)


def _write(path, text, gz=False):
    if gz:
        with gzip.open(path, "wt", encoding="utf-8") as f:
            f.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_read_tsv_columns_attribution_and_report(tmp_path):
    path = _write(
        tmp_path / "spa.txt",
        "Go.\tVe.\tCC-BY 2.0 (France) Attribution: tatoeba.org #2877272\n"
        "\n"
        "Hi.\tHola.\n"
        "no tab here\n"
        "One two three four five.\tUno.\n"
        "Run!\t \n",
    )
    corpus = read_tsv(path, max_words=4)
    assert corpus.sources == ["Go.", "Hi."]
    assert corpus.targets == ["Ve.", "Hola."]
    report = corpus.report
    assert (report.read, report.empty, report.malformed, report.too_long) == (
        2,
        2,
        1,
        1,
    )
    text = str(report)
    assert f"{path}:2: empty" in text
    assert f"{path}:4: malformed" in text
    assert f"{path}:5: too_long" in text
    assert f"{path}:6: empty" in text
    swapped = read_tsv(path, swap=True)
    assert swapped.sources[0] == "Ve." and swapped.targets[0] == "Go."


def test_read_line_pairs_gzip_and_empty_lines(tmp_path):
    src = _write(tmp_path / "train.en.gz", "a dog .\n\na cat .\n", gz=True)
    tgt = _write(tmp_path / "train.de", "ein hund .\nleer\neine katze .\n")
    corpus = read_line_pairs(src, tgt)
    assert corpus.sources == ["a dog .", "a cat ."]
    assert corpus.targets == ["ein hund .", "eine katze ."]
    assert corpus.report.empty == 1
    assert f"{src}:2: empty" in str(corpus.report)


def test_read_line_pairs_mismatch_names_files_and_line(tmp_path):
    src = _write(tmp_path / "a.en", "1\n2\n3\n")
    tgt = _write(tmp_path / "a.de", "1\n2\n")
    with pytest.raises(ValueError, match=r"has 3.*has 2.*a\.en:3 has no partner"):
        read_line_pairs(src, tgt)


def test_bad_max_words():
    with pytest.raises(ValueError, match="Received: max_words=0"):
        read_tsv("unused", max_words=0)


def test_split_is_fixed_and_disjoint():
    corpus = demo_corpus(500, seed=3)
    a = split_corpus(corpus, (0.1, 0.1), seed=7)
    b = split_corpus(corpus, (0.1, 0.1), seed=7)
    assert [len(p) for p in a] == [400, 50, 50]
    assert a[1].sources == b[1].sources and a[2].targets == b[2].targets
    with pytest.raises(ValueError, match="Received: fractions"):
        split_corpus(corpus, (0.6, 0.5))


def test_demo_corpus_reorders_verb_last():
    corpus = demo_corpus(20, seed=1)
    assert len(corpus) == 20
    for src, tgt in zip(corpus.sources, corpus.targets, strict=True):
        assert len(src.split()) == len(tgt.split())
        assert tgt.split()[-2] in {"sieht", "mag", "folgt", "findet", "ruft"}
    assert demo_corpus(20, seed=1).sources == corpus.sources


def test_load_parallel_folder_and_tsv(tmp_path):
    for split in ("train", "val", "test_2016_flickr"):
        _write(tmp_path / f"{split}.en.gz", "a b\nc d\n", gz=True)
        _write(tmp_path / f"{split}.de.gz", "x y\nz w\n", gz=True)
    splits = load_parallel(tmp_path, "en", "de")
    assert splits["test"].targets == ["x y", "z w"]
    tsv = _write(tmp_path / "spa.txt", "".join(f"e{i}\ts{i}\n" for i in range(100)))
    splits = load_parallel(tsv, "es", "en")
    assert [len(splits[k]) for k in ("train", "val", "test")] == [96, 2, 2]
    assert splits["train"].sources[0].startswith("s")
    with pytest.raises(ValueError, match="Received: source='de'"):
        load_parallel(tsv, "de", "fr")


def test_multi30k_reader(shared_data):
    root = shared_data / "multi30k"
    splits = load_parallel(root, "de", "en", limit=100)
    assert len(splits["train"]) == 100
    assert len(splits["test"]) == 1000
    assert splits["test"].sources[0].startswith("Ein Mann mit einem")


def test_anki_reader(shared_data):
    corpus = read_tsv(shared_data / "anki_spa_eng" / "spa-eng" / "spa.txt", limit=50)
    assert corpus.sources[0] == "Go." and len(corpus) == 50
