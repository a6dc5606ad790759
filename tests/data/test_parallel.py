import gzip

import pytest

from zoo.data.parallel import LengthStats, load_parallel, read_pairs, split_corpus
from zoo.demo.parallel import demo_corpus
from zoo.errors import ConfigError, DataError, MissingPathError


def _write(path, text, gz=False):
    if gz:
        with gzip.open(path, "wt", encoding="utf-8") as f:
            f.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_read_pairs_tsv_columns_attribution_and_report(tmp_path):
    path = _write(
        tmp_path / "spa.txt",
        "Go.\tVe.\tCC-BY 2.0 (France) Attribution: tatoeba.org #2877272\n"
        "\n"
        "Hi.\tHola.\n"
        "no tab here\n"
        "One two three four five.\tUno.\n"
        "Run!\t \n",
    )
    corpus = read_pairs(path, max_words=4)
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
    swapped = read_pairs(path, source_column=1)
    assert swapped.sources[0] == "Ve." and swapped.targets[0] == "Go."


def test_read_line_pairs_gzip_and_empty_lines(tmp_path):
    src = _write(tmp_path / "train.en.gz", "a dog .\n\na cat .\n", gz=True)
    tgt = _write(tmp_path / "train.de", "ein hund .\nleer\neine katze .\n")
    corpus = read_pairs((src, tgt))
    assert corpus.sources == ["a dog .", "a cat ."]
    assert corpus.targets == ["ein hund .", "eine katze ."]
    assert corpus.report.empty == 1
    assert f"{src}:2: empty" in str(corpus.report)


def test_read_line_pairs_mismatch_names_files_and_line(tmp_path):
    src = _write(tmp_path / "a.en", "1\n2\n3\n")
    tgt = _write(tmp_path / "a.de", "1\n2\n")
    with pytest.raises(ValueError, match=r"has 3.*has 2.*a\.en:3 has no partner"):
        read_pairs((src, tgt))


def test_bad_max_words():
    with pytest.raises(ValueError, match="Received: max_words=0"):
        read_pairs("unused", max_words=0)


def test_split_is_fixed_and_disjoint():
    corpus = demo_corpus(500, seed=3)
    a = split_corpus(corpus, (0.1, 0.1), seed=7)
    b = split_corpus(corpus, (0.1, 0.1), seed=7)
    # demo_corpus repeats a few sentences: the held-out splits keep each source once
    # (50 of the 495 distinct ones each) and drop its repeats.
    assert len(set(corpus.sources)) == 495
    assert [len(p) for p in a] == [399, 50, 50]
    assert a[1].duplicates_dropped + a[2].duplicates_dropped == 1
    assert not set(a[0].sources) & set(a[1].sources + a[2].sources)
    assert a[1].sources == b[1].sources and a[2].targets == b[2].targets
    with pytest.raises(ValueError, match="Received: fractions"):
        split_corpus(corpus, (0.6, 0.5))


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
    spa = shared_data / "anki_spa_eng" / "spa-eng" / "spa.txt"
    corpus = read_pairs(spa, limit=50)
    assert corpus.sources[0] == "Go." and len(corpus) == 50


# --- layouts: any line-aligned folder, explicit files, TSV column order ---------------


def _pairs(folder, split, langs, pairs, gz=False):
    for lang, side in zip(langs, zip(*pairs, strict=True), strict=True):
        name = f"{split}.{lang}" + (".gz" if gz else "")
        _write(folder / name, "".join(s + "\n" for s in side), gz=gz)


def test_line_aligned_folder_with_any_split_names(tmp_path):
    train = [(f"hello number {i}", f"xin chao so {i}") for i in range(50)]
    _pairs(tmp_path, "train", ("en", "vi"), train)
    _pairs(tmp_path, "dev", ("en", "vi"), [("good morning", "chao buoi sang")])
    _pairs(tmp_path, "test", ("en", "vi"), [("thank you", "cam on")], gz=True)
    splits = load_parallel(tmp_path, "en", "vi")
    assert len(splits["train"]) == 50
    assert splits["val"].sources == ["good morning"]
    assert splits["test"].targets == ["cam on"]
    assert "dev.en / dev.vi" in splits["val"].description
    reverse = load_parallel(tmp_path, "vi", "en")
    assert reverse["test"].sources == ["cam on"]


def test_line_aligned_folder_without_val_and_test_splits_train(tmp_path):
    train = [(f"s{i}", f"t{i}") for i in range(100)]
    _pairs(tmp_path, "train", ("src", "tgt"), train)
    splits = load_parallel(tmp_path, "en", "fr", seed=5)
    assert [len(splits[k]) for k in ("train", "val", "test")] == [96, 2, 2]
    every = splits["train"].sources + splits["val"].sources + splits["test"].sources
    assert sorted(every) == sorted(s for s, _ in train)
    assert "2% of train.src / train.tgt" in splits["test"].description
    again = load_parallel(tmp_path, "en", "fr", seed=5)
    assert again["test"].sources == splits["test"].sources


def test_explicit_files_and_tsv_column_order(tmp_path):
    tsv = _write(
        tmp_path / "pairs.tsv", "".join(f"ziel {i}\tsource {i}\n" for i in range(20))
    )
    src = _write(tmp_path / "t.src", "a\nb\n")
    tgt = _write(tmp_path / "t.tgt", "x\ny\n")
    splits = load_parallel(
        None, "xx", "yy", files={"train": tsv, "dev": (src, tgt)}, source_column=1
    )
    assert splits["train"].sources[0].startswith("source ")
    assert splits["train"].targets[0].startswith("ziel ")
    assert splits["val"].sources == ["a", "b"] and splits["val"].targets == ["x", "y"]
    assert len(splits["test"]) == 1 and len(splits["train"]) == 19
    # A TSV file in either column order.
    first = load_parallel(tsv, "de", "xx", source_column=0)
    assert first["train"].sources[0].startswith("ziel ")
    with pytest.raises(ConfigError, match="source_column"):
        load_parallel(tsv, "de", "xx")
    with pytest.raises(ConfigError, match="'train'"):
        load_parallel(None, "en", "de", files={"test": tsv})
    with pytest.raises(ConfigError, match="Unknown split 'eval'"):
        load_parallel(None, "en", "de", files={"train": tsv, "eval": tsv})
    with pytest.raises(ConfigError, match="source_column=2"):
        read_pairs(tsv, source_column=2)


def test_length_filter_applies_to_training_data_only(tmp_path):
    long = " ".join(["word"] * 12)
    train = [("short one", "kurz eins"), (long, "lang"), ("two words", long)]
    _pairs(tmp_path, "train", ("en", "de"), train)
    _pairs(tmp_path, "val", ("en", "de"), [(long, "lang"), ("ok", "gut")])
    _pairs(tmp_path, "test", ("en", "de"), [("fine", long)])
    splits = load_parallel(tmp_path, "en", "de", max_words=10)
    assert splits["train"].sources == ["short one"]
    assert splits["val"].sources == [long, "ok"]  # every validation pair kept
    assert splits["test"].targets == [long]  # every test pair kept
    report = splits["train"].report
    assert report.too_long == 2 and report.read == 1
    assert f"{tmp_path / 'train.en'}:2: too_long (12/1 words > 10)" in str(report)
    assert splits["val"].report.too_long == 0
    lengths = report.lengths  # measured before the filter
    assert lengths["source"].max == 12 and lengths["target"].max == 12
    assert lengths["source"].count == 3 and lengths["source"].p50 == 2
    assert lengths["target"].as_dict()["max"] == 12
    assert "source words: mean" in str(report)
    # A TSV: the held-out pairs are drawn before the filter, and all kept.
    rows = [(" ".join([f"w{i}"] + ["w"] * (i % 15)), f"t{i}") for i in range(200)]
    tsv = _write(tmp_path / "a.tsv", "".join(f"{s}\t{t}\n" for s, t in rows))
    splits = load_parallel(tsv, "en", "xx", max_words=10)
    held = splits["val"].sources + splits["test"].sources
    unfiltered = load_parallel(tsv, "en", "xx")
    assert held == unfiltered["val"].sources + unfiltered["test"].sources
    assert len(held) == 8
    n_long = sum(1 for s, _ in rows if len(s.split()) > 10)
    held_long = sum(1 for s in held if len(s.split()) > 10)
    assert splits["train"].report.too_long == n_long - held_long
    assert max(len(s.split()) for s in splits["train"].sources) == 10
    assert len(splits["train"]) == 200 - 8 - (n_long - held_long)


def test_length_stats():
    stats = LengthStats.from_texts(["a", "a b", "a b c", "a b c d"])
    assert (stats.count, stats.max, stats.p50, stats.p99) == (4, 4, 2, 4)
    assert stats.mean == pytest.approx(2.5)
    assert stats.percentile(75) == 3
    assert LengthStats.from_lengths([]).count == 0
    assert stats.as_dict() == {
        "count": 4, "mean": 2.5, "max": 4, "p50": 2, "p90": 4, "p95": 4, "p99": 4
    }  # fmt: skip
    assert str(stats) == "mean 2.5, median 2, 95% <= 4, 99% <= 4, max 4"
    corpus = demo_corpus(50, seed=0)
    stats = corpus.length_stats(count=len)  # in characters
    chars = sorted(len(s) for s in corpus.sources)
    assert (stats["source"].max, stats["source"].p50) == (chars[-1], chars[24])


def test_folder_errors_name_the_expected_layouts(tmp_path):
    with pytest.raises(MissingPathError, match="nowhere"):
        load_parallel(tmp_path / "nowhere", "en", "de")
    _write(tmp_path / "train.en", "a\n")
    with pytest.raises(DataError, match=r"train\.en has no line-aligned partner"):
        load_parallel(tmp_path, "en", "de")
    other = tmp_path / "other"
    other.mkdir()
    _write(other / "corpus.txt", "a\n")
    with pytest.raises(DataError) as info:
        load_parallel(other, "en", "vi")
    message = str(info.value)
    assert message.startswith(f"{other}: no line-aligned training files train.en")
    assert "{train,valid|val|dev,test}" in message and "corpus.txt" in message


@pytest.mark.data
def test_real_length_filter_keeps_every_test_pair(shared_data):
    splits = load_parallel(shared_data / "multi30k", "en", "de", max_words=10)
    assert [len(splits["val"]), len(splits["test"])] == [1014, 1000]
    assert splits["train"].report.too_long > 10000  # training pairs over 10 words
    assert splits["train"].report.lengths["source"].count == 29000
    assert len(splits["train"]) == 29000 - splits["train"].report.too_long
    assert max(len(s.split()) for s in splits["test"].sources) > 10


def test_file_specs_turn_flags_into_load_parallel_arguments():
    from zoo.data.parallel import file_specs

    assert file_specs("corpus/") == ("corpus/", None)
    assert file_specs("pairs.tsv") == ("pairs.tsv", None)
    assert file_specs("train.en,train.vi") == (
        None,
        {"train": ("train.en", "train.vi")},
    )
    assert file_specs("a.tsv", test="t.en,t.vi") == (
        None,
        {"train": "a.tsv", "test": ("t.en", "t.vi")},
    )
