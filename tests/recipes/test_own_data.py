"""Every recipe on the user's own data: tiny generated corpora in every format.

The corpora (`tests/recipes/own_data.py`) are a few dozen generated examples, never
real data. Three kinds of checks:

- reading: the two text-classifier recipes read every layout through their own flags
  (`read_texts`): the split sizes, the classes, and every text with its label exactly
  as written (no header row read as data, no byte-order mark in a text);
- training: each recipe's `main` trains one epoch of a tiny model on corpora of each
  format family (classifier tables, folders and non-English text, translation folders
  and TSVs, bAbI task files); the
  headline metric is finite and `metrics.json` holds the classes and counts every
  test example (every test pair of a translation corpus, even one longer than the
  training length filter);
- errors: a missing path, a malformed file and a bad flag value are one line on
  stderr that names the file (and the line), exit status 2, no traceback.
"""

import ast
import dataclasses
import gzip
import json
import math
import os
import re

import pytest

from tests.recipes import own_data as od

HAN = "han_classification"
SAE = "self_attentive_embedding"


def _recipe(name):
    """The recipe module `zoo.recipes.<name>` (its `parse`, `read_texts`, `main`)."""
    import importlib

    if name not in (HAN, SAE, "translation"):
        name = "memn2n_babi"
    return importlib.import_module(f"zoo.recipes.{name}")


def _outputs(tmp_path):
    """Output folders under `tmp_path`, and the quiet, export-free training flags."""
    return [
        "--run-dir", str(tmp_path / "runs"),
        "--report-dir", str(tmp_path / "reports"),
        "--export-dir", str(tmp_path / "saved_models"),
        "--no-export", "--no-tensorboard", "--verbose", "0", "--report-samples", "0",
    ]  # fmt: skip


# Tiny models: one epoch, one batch (one trace of the training step).
TINY = {
    HAN: [
        "--epochs", "1", "--batch-size", "64", "--max-sentences", "4",
        "--max-words", "12", "--embedding-dim", "8", "--rnn-units", "4",
        "--context-units", "4", "--word2vec-epochs", "0", "--min-count", "1",
    ],
    SAE: [
        "--epochs", "1", "--batch-size", "64", "--max-length", "16",
        "--embedding-dim", "8", "--lstm-units", "4", "--attention-units", "4",
        "--num-hops", "2", "--hidden-units", "8",
    ],
    "translation": [
        "--epochs", "1", "--batch-size", "64", "--embedding-dim", "8",
        "--encoder-units", "8", "--decoder-units", "8", "--vocab-size", "100",
        "--beam-width", "1", "--select-on", "loss", "--ema", "0", "--max-words", "12",
    ],
    "memn2n_babi": [
        "--epochs", "1", "--no-ls", "--embedding-dim", "8", "--hops", "1", "--no-xla",
    ],
}  # fmt: skip


# --- Labelled-text corpora -------------------------------------------------------------


@dataclasses.dataclass
class Corpus:
    """A written corpus: the `--data` path and flags, and what a reader must find.

    Attributes:
        data: the `--data` path.
        flags: the column flags it needs.
        rows: every `(text, label)` written.
        classes: the class names, sorted.
        sizes: `{"train", "validation", "test"}` where the layout fixes them; None
            where the reader splits one file (only the total is known).
    """

    data: str
    flags: list
    rows: list
    classes: list
    sizes: dict = None


def _texts(sentences, n=36, language="en", seed=0):
    return od.labelled_texts(
        n, language, seed=seed, sentences=(1, 1) if sentences else (2, 4)
    )


def _csv_named(root, sentences):
    rows = _texts(sentences)
    columns = {"text": "review", "label": "category"}
    path = od.write_table(
        root / "reviews.csv", rows, "csv", columns, extra_column=("id", "r")
    )
    return Corpus(
        path,
        ["--text-column", "review", "--label-column", "category"],
        rows,
        od.classes(),
    )


def _csv_position(root, sentences):
    rows = _texts(sentences, seed=1)
    columns = {"label": "label", "text": "text"}  # label first, no header row
    path = od.write_table(root / "corpus.csv", rows, "csv", columns, header=False)
    return Corpus(
        path, ["--text-column", "1", "--label-column", "0"], rows, od.classes()
    )


def _csv_position_text_first(root, sentences):
    rows = _texts(sentences, seed=13)
    path = od.write_table(root / "corpus.csv", rows, "csv", header=False)
    return Corpus(
        path, ["--text-column", "0", "--label-column", "1"], rows, od.classes()
    )


def _tsv(root, sentences):
    rows = _texts(sentences, seed=2)
    path = od.write_table(root / "corpus.tsv", rows, "tsv")
    # The sentence recipe reads a TSV without column flags as label<TAB>sentence.
    flags = ["--text-column", "text", "--label-column", "label"] if sentences else []
    return Corpus(path, flags, rows, od.classes())


def _label_tsv(root, sentences):
    rows = _texts(sentences, seed=3)
    return Corpus(
        od.write_label_tsv(root / "sentences.tsv", rows), [], rows, od.classes()
    )


def _jsonl(root, sentences):
    rows = _texts(sentences, seed=4)
    return Corpus(
        od.write_table(root / "corpus.jsonl", rows, "jsonl"), [], rows, od.classes()
    )


def _split_files(root, sentences):
    rows = _texts(sentences, n=42, seed=5)
    parts = {"train": rows[:30], "valid": rows[30:36], "test": rows[36:]}
    for stem, part in parts.items():
        od.write_table(root / "splits" / f"{stem}.csv", part, "csv")
    return Corpus(
        str(root / "splits"), [], rows, od.classes(), od.split_sizes(30, 6, 6)
    )


def _class_folders(root, sentences):
    rows = _texts(sentences, n=30, seed=6)
    folder = od.write_class_folders(root / "topics", rows)
    return Corpus(folder, [], rows, od.classes())


def _class_folders_splits(root, sentences):
    train, test = _texts(sentences, n=30, seed=7), _texts(sentences, n=9, seed=8)
    od.write_class_folders(root / "topics", train, "train")
    od.write_class_folders(root / "topics", test, "test")
    # validation: a seeded 10% of train
    return Corpus(str(root / "topics"), [], train + test, od.classes(), {"test": 9})


def _gz(root, sentences):
    rows = _texts(sentences, seed=9)
    path = od.write_table(root / "corpus.csv.gz", rows, "csv", gz=True)
    return Corpus(path, [], rows, od.classes())


def _bom(root, sentences):
    rows = _texts(sentences, seed=10)
    path = od.write_table(root / "corpus.csv", rows, "csv", bom=True)
    return Corpus(path, [], rows, od.classes())


def _german(root, sentences):
    rows = _texts(sentences, language="de", seed=11)
    path = od.write_table(
        root / "nachrichten.csv", rows, "csv", {"text": "Text", "label": "Thema"}
    )
    flags = ["--text-column", "Text", "--label-column", "Thema"]
    return Corpus(path, flags, rows, od.classes("de"))


def _vietnamese(root, sentences):
    rows = _texts(sentences, language="vi", seed=12)
    path = od.write_table(root / "tin_tức.jsonl", rows, "jsonl")
    return Corpus(path, [], rows, od.classes("vi"))


FORMATS = {
    "csv_named_columns": _csv_named,
    "csv_positions": _csv_position,
    "csv_positions_text_first": _csv_position_text_first,
    "tsv": _tsv,
    "jsonl": _jsonl,
    "split_files": _split_files,
    "class_folders": _class_folders,
    "class_folders_train_test": _class_folders_splits,
    "csv_gz": _gz,
    "csv_bom": _bom,
    "german_csv": _german,
    "vietnamese_jsonl": _vietnamese,
}
SENTENCE_FORMATS = {**FORMATS, "label_tab_sentence": _label_tsv}


def _check_sizes(sizes, corpus):
    assert sum(sizes.values()) == len(corpus.rows), sizes
    assert all(n > 0 for n in sizes.values()), sizes
    for part, n in (corpus.sizes or {}).items():
        assert sizes[part] == n, (part, sizes)


def _reading_cases():
    for fmt in FORMATS:
        yield pytest.param(HAN, fmt, id=f"{HAN}-{fmt}")
    for fmt in SENTENCE_FORMATS:
        yield pytest.param(SAE, fmt, id=f"{SAE}-{fmt}")


@pytest.mark.parametrize("recipe, fmt", list(_reading_cases()))
def test_classifiers_read_every_layout(recipe, fmt, tmp_path):
    corpus = SENTENCE_FORMATS[fmt](tmp_path, recipe == SAE)
    cls = _recipe(recipe)
    config = cls.parse(["--data", corpus.data, *corpus.flags, *_outputs(tmp_path)])
    data = cls.read_texts(config)
    assert list(data.label_names) == corpus.classes
    sizes = data.sizes()
    _check_sizes(sizes, corpus)
    # Every text comes back with its label, exactly as written (a header read as
    # data, a byte-order mark or a quote left in a text would not match).
    written = {(text.strip(), label) for text, label in corpus.rows}
    read = set()
    for part in ("train", "validation", "test"):
        texts = getattr(data, part)
        names = [data.label_names[y] for y in texts.labels]
        read |= {(t.strip(), y) for t, y in zip(texts.texts, names, strict=True)}
    assert read == written, (sorted(read - written)[:3], sorted(written - read)[:3])
    if recipe == HAN:  # the description names the split sizes
        expected = "train {train}, validation {validation}, test {test}"
        assert expected.format(**sizes) in data.description, data.description


def test_sentence_description_names_no_sst_for_tables(tmp_path):
    corpus = _csv_named(tmp_path, True)
    cls = _recipe(SAE)
    config = cls.parse(["--data", corpus.data, *corpus.flags, *_outputs(tmp_path)])
    description = cls.read_texts(config).description
    assert corpus.data in description
    assert "sst5" not in description and "phrase" not in description, description


def test_sentence_tsv_with_text_label_header_is_not_misread(tmp_path):
    rows = _texts(True, seed=14)
    path = od.write_table(tmp_path / "corpus.tsv", rows, "tsv")  # text<TAB>label
    cls = _recipe(SAE)
    try:
        data = cls.read_texts(cls.parse(["--data", path, *_outputs(tmp_path)]))
    except Exception as error:  # an error that says what to do is fine too
        from zoo.errors import DataError

        assert isinstance(error, DataError) and "corpus.tsv" in str(error)
        return
    assert list(data.label_names) == od.classes()


# --- Training on each format family -----------------------------------------------------


def _logged_sizes(out):
    """The `examples: {...}; classes: [...]` line of a classifier recipe's log."""
    match = re.search(r"examples: (\{[^}]*\}); classes: (\[[^\]]*\])", out)
    assert match, out[-2000:]
    return ast.literal_eval(match.group(1)), ast.literal_eval(match.group(2))


def _metrics(tmp_path):
    return json.loads((tmp_path / "reports" / "metrics.json").read_text())


# Three corpora per classifier train, one of each kind (a table, a folder layout, a
# language other than English). The other formats differ only in how the texts are
# read, which `test_classifiers_read_every_layout` checks for every layout: past
# `read_texts`, training runs the same code whatever the file format.
TRAINED = [
    (HAN, "csv_positions"),
    (HAN, "class_folders_train_test"),
    (HAN, "german_csv"),
    (SAE, "label_tab_sentence"),
    (SAE, "split_files"),
    (SAE, "vietnamese_jsonl"),
]


@pytest.mark.parametrize(
    "recipe, fmt", TRAINED, ids=[f"{recipe}-{fmt}" for recipe, fmt in TRAINED]
)
def test_classifiers_train_on_own_data(recipe, fmt, tmp_path, capsys):
    corpus = SENTENCE_FORMATS[fmt](tmp_path, recipe == SAE)
    cls = _recipe(recipe)
    result = cls.main(
        ["--data", corpus.data, *corpus.flags, *TINY[recipe], *_outputs(tmp_path)]
    )
    assert result["metric"] == "accuracy" and result["export"] is None
    sizes, classes = _logged_sizes(capsys.readouterr().out)
    assert classes == corpus.classes
    _check_sizes(sizes, corpus)
    metrics = _metrics(tmp_path)
    assert metrics["recipe"] == recipe
    assert metrics["accuracy"] == pytest.approx(result["value"])
    assert metrics["labels"] == corpus.classes
    assert metrics["support"] == sizes["test"]
    assert sum(map(sum, metrics["confusion_matrix"])) == sizes["test"]
    right = sum(row[i] for i, row in enumerate(metrics["confusion_matrix"]))
    assert result["value"] == pytest.approx(right / sizes["test"])
    assert corpus.data in metrics["data"]
    if recipe == HAN:
        assert f"test {sizes['test']}" in metrics["data"]
    assert (tmp_path / "reports" / "metrics.txt").is_file()
    assert not (tmp_path / "saved_models").exists()  # --no-export


# --- Translation --------------------------------------------------------------------------


def _lines(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return f.read().splitlines()


def _logged_pairs(out):
    """`{split: pairs}` from the translation recipe's `[split] N pairs` lines."""
    found = dict(re.findall(r"\[(train|val|test)\] (\d+) pairs", out))
    assert set(found) == {"train", "val", "test"}, out[-2000:]
    return {k: int(v) for k, v in found.items()}


def _translate(tmp_path, data, source="en", target="vi", extra=()):
    from zoo.recipes.translation import main

    return main(
        ["--data", str(data), "--source", source, "--target", target, *extra]
        + TINY["translation"]
        + _outputs(tmp_path)
    )


def _check_translation(result, metrics):
    assert result["metric"] == "test BLEU (sacrebleu, detokenized, cased)"
    assert metrics["bleu"] == pytest.approx(result["value"])
    assert metrics["search"] == "greedy" and result["export"] is None


@pytest.mark.parametrize(
    "layout", ["valid", "dev_gz"], ids=["folder_valid", "folder_dev_gz"]
)
def test_translation_on_line_aligned_folder(layout, tmp_path, capsys):
    pairs = od.sentence_pairs(58, seed=1)
    # one pair longer than --max-words 12 in train (skipped) and in test (scored)
    long_train, long_test = od.sentence_pairs(2, seed=2, clauses=4)
    valid = "dev" if layout == "dev_gz" else "valid"
    folder = od.write_line_aligned(
        tmp_path / "corpus",
        {
            "train": pairs[:40] + [long_train],
            valid: pairs[40:48],
            "test": pairs[48:53] + [long_test] + pairs[53:],
        },
        gz=layout == "dev_gz",
    )
    suffix = ".gz" if layout == "dev_gz" else ""
    test_lines = _lines(os.path.join(folder, f"test.en{suffix}"))
    assert len(test_lines) == 11 and len(long_test[0].split()) > 12
    result = _translate(tmp_path, folder)
    metrics = _metrics(tmp_path)
    _check_translation(result, metrics)
    assert metrics["test_pairs"] == len(test_lines)  # every test pair scored
    assert metrics["train_pairs"] == 40  # the long training pair is skipped
    out = capsys.readouterr().out
    assert _logged_pairs(out) == {"train": 40, "val": 8, "test": 11}
    train_en = os.path.join(folder, f"train.en{suffix}")
    assert f"{train_en}:41: too_long" in out  # reported with file and line


@pytest.mark.parametrize(
    "source, target", [("en", "vi"), ("vi", "en")], ids=["en_vi", "vi_en"]
)
def test_translation_on_english_first_tsv(source, target, tmp_path, capsys):
    pairs = od.sentence_pairs(60, seed=3)
    tsv = od.write_pair_tsv(tmp_path / "pairs.tsv", pairs, english_first=True)
    with open(tsv, "a", encoding="utf-8") as f:
        f.write("a line without a tab\n")  # line 61: skipped and reported
    result = _translate(tmp_path, tsv, source, target)
    metrics = _metrics(tmp_path)
    _check_translation(result, metrics)
    out = capsys.readouterr().out
    assert f"{tsv}:61: malformed (no tab)" in out
    logged = _logged_pairs(out)
    # Pairs repeating a held-out source sentence leave every split (and are counted).
    repeats = re.search(r"(\d+) pairs repeating a held-out source sentence", out)
    dropped = int(repeats.group(1)) if repeats else 0
    sources = [en for en, _ in pairs] if source == "en" else [o for _, o in pairs]
    assert dropped <= len(sources) - len(set(sources))
    assert sum(logged.values()) + dropped == 60
    assert logged["test"] == metrics["test_pairs"] > 0
    assert metrics["train_pairs"] == logged["train"]
    # The source side is the language asked for, whichever TSV column holds it.
    english = {en for en, _ in pairs}
    for example in metrics["greedy"]["examples"]:
        assert (example["source"] in english) == (source == "en"), example
        assert (example["reference"] in english) == (target == "en"), example


# --- bAbI ----------------------------------------------------------------------------------


def test_memn2n_on_own_babi_task_files(tmp_path):
    from zoo.recipes.memn2n_babi import main

    folder, train_questions, test_questions = od.write_babi(tmp_path / "babi", 40, 10)
    assert sorted(os.listdir(folder)) == ["qa1_single_test.txt", "qa1_single_train.txt"]
    result = main(
        ["--data", folder, "--tasks", "1", "--no-joint", *TINY["memn2n_babi"],
         *_outputs(tmp_path)]
    )  # fmt: skip
    assert result["metric"] == "mean_test_error_percent" and result["export"] is None
    metrics = _metrics(tmp_path)
    assert metrics["mean_test_error_percent"] == pytest.approx(result["value"])
    assert metrics["test_error_percent"]["1"] == pytest.approx(result["value"])
    assert metrics["measured_tasks"] == [1] and metrics["unavailable"] == {}
    # Errors are whole numbers of questions: every test question was answered, and
    # training used the questions left after the 10% validation split.
    wrong = metrics["test_error_percent"]["1"] * test_questions / 100
    assert wrong == pytest.approx(round(wrong), abs=1e-6)
    train_kept = train_questions - round(train_questions * 0.1)
    wrong = metrics["train_error_percent"]["task1"] * train_kept / 100
    assert wrong == pytest.approx(round(wrong), abs=1e-6)
    assert metrics["mean_test_error_percent"] == pytest.approx(result["value"])
    assert "tasks [1]" in metrics["data"]


@pytest.mark.parametrize(
    "layout, flags, language, size, paper",
    [
        # a bAbI root with another language's folder (English stories under hn/)
        ("root/hn", ["--language", "hn"], "hn", "1k", False),
        # the task files' folder itself, named as a bAbI release folder
        ("shuffled-10k", ["--size", "1k"], "shuffled", "10k", False),
        # any other folder: neither language nor size is claimed
        ("my_tasks", [], None, None, False),
        # the English bAbI 1k: the only data compared with the paper
        ("copy/en", [], "en", "1k", True),
    ],
)
def test_memn2n_names_the_data_it_read(tmp_path, capsys, layout, flags, language,
                                       size, paper):  # fmt: skip
    from zoo.recipes.memn2n_babi import main

    folder = od.write_babi(tmp_path / "data" / layout, 20, 5)[0]
    data = str(tmp_path / "data" / "root") if layout == "root/hn" else folder
    result = main(["--data", data, "--tasks", "1", *flags, *TINY["memn2n_babi"],
                   *_outputs(tmp_path)])  # fmt: skip
    out = capsys.readouterr().out
    named = f"bAbI {language} {size} ({folder})" if language else f"({folder})"
    metrics = _metrics(tmp_path)
    assert named in metrics["data"] and named in out
    assert language == "en" or "bAbI en" not in metrics["data"]
    assert metrics["data_source"] == {"folder": folder, "language": language,
                                      "size": size}  # fmt: skip
    report = (tmp_path / "reports" / "test_errors.md").read_text()
    assert report.startswith(f"# MemN2N test error, {metrics['data']}\n")
    assert ("paper (%)" in report) == paper
    assert ("no paper column" in out) == (not paper)
    assert math.isfinite(result["value"])


# --- One-line errors -------------------------------------------------------------------------


def _binary(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe\x00\x01" * 8)
    return str(path)


def _error_cases(recipe, root):
    """`(case id, argv, fragments the error line must hold)` for `recipe`."""
    root.mkdir(parents=True, exist_ok=True)
    cases = [
        ("missing_path", ["--data", "/nonexistent/corpus"], ["/nonexistent/corpus"]),
        ("zero_epochs", ["--data", str(root), "--epochs", "0"], ["--epochs", "'0'"]),
        (
            "negative_batch",
            ["--data", str(root), "--batch-size", "-8"],
            ["--batch-size"],
        ),
    ]
    if recipe in (HAN, SAE):
        sentences = recipe == SAE
        rows = _texts(sentences, n=6)
        stars = {"text": "text", "label": "stars"}
        cases += [
            ("binary_file", ["--data", _binary(root / "corpus.csv")], ["corpus.csv:1"]),
            (
                "missing_label_column",
                ["--data", od.write_table(root / "stars.csv", rows, "csv", stars)],
                ["stars.csv:1", "'label'", "'stars'"],
            ),
            (
                "broken_jsonl_line",
                ["--data", _broken_jsonl(root / "broken.jsonl", rows)],
                ["broken.jsonl:3", "JSON"],
            ),
            (
                "column_out_of_range",
                [
                    "--data",
                    od.write_table(root / "plain.csv", rows, "csv", header=False),
                    "--text-column", "1", "--label-column", "5",
                ],
                ["plain.csv:1", "column 5"],
            ),
            ("unknown_layout", ["--data", _unknown_folder(root)], ["notes", "expected"]),
            (
                "unknown_extension",
                ["--data", od.write_table(root / "corpus.xyz", rows, "csv")],
                ["corpus.xyz"],
            ),
        ]  # fmt: skip
    if recipe == HAN:
        cases.append(("zero_sentences", ["--max-sentences", "0"], ["--max-sentences"]))
    if recipe == SAE:
        cases.append(("zero_length", ["--max-length", "0"], ["--max-length"]))
        cases.append(("zero_hops", ["--num-hops", "0"], ["--num-hops"]))
    if recipe == "translation":
        pairs = od.sentence_pairs(6)
        mismatched = od.write_line_aligned(root / "mismatched", {"train": pairs})
        with open(os.path.join(mismatched, "train.vi"), "a", encoding="utf-8") as f:
            f.write("một dòng thừa\n")
        binary = od.write_line_aligned(root / "binary", {"train": pairs})
        _binary(root / "binary" / "train.vi")
        no_train = od.write_line_aligned(root / "no_train", {"test": pairs})
        languages = ["--source", "en", "--target", "vi"]
        cases += [
            ("binary_file", ["--data", binary, *languages], ["train.vi:1"]),
            (
                "mismatched_lines",
                ["--data", mismatched, *languages],
                ["train.vi:7", "train.en"],
            ),
            (
                "no_training_files",
                ["--data", no_train, *languages],
                ["no_train", "train.en"],
            ),
            (
                "tsv_without_english",
                [
                    "--data", od.write_pair_tsv(root / "de_vi.tsv", pairs),
                    "--source", "de", "--target", "vi",
                ],
                ["de_vi.tsv", "source"],
            ),
            ("zero_vocab", ["--vocab-size", "0"], ["--vocab-size"]),
            ("zero_max_words", ["--max-words", "0"], ["--max-words"]),
        ]  # fmt: skip
    if recipe == "memn2n_babi":
        folder = od.write_babi(root / "babi", 3, 2)[0]
        bad = od.write_babi(root / "bad", 3, 2)[0]
        with open(os.path.join(bad, "qa1_single_train.txt"), encoding="utf-8") as f:
            lines = f.read().splitlines()
        lines[4] = "Mary went to the kitchen."  # no line number
        with open(
            os.path.join(bad, "qa1_single_train.txt"), "w", encoding="utf-8"
        ) as f:
            f.write("\n".join(lines) + "\n")
        binary = od.write_babi(root / "binary", 3, 2)[0]
        _binary(root / "binary" / "qa1_single_test.txt")
        cases += [
            ("zero_hops", ["--data", folder, "--hops", "0"], ["--hops"]),
            ("zero_memory", ["--data", folder, "--memory-size", "0"], ["--memory-size"]),
            ("task_zero", ["--data", folder, "--tasks", "0"], ["--tasks"]),
            ("malformed_line", ["--data", bad, "--tasks", "1"], ["qa1_single_train.txt:5"]),
            ("binary_file", ["--data", binary, "--tasks", "1"], ["qa1_single_test.txt:1"]),
            ("missing_task", ["--data", folder, "--tasks", "2"], ["task 2", "babi"]),
            ("no_babi_files", ["--data", _unknown_folder(root)], ["notes", "qa"]),
        ]  # fmt: skip
    return cases


def _broken_jsonl(path, rows):
    lines = [json.dumps({"text": t, "label": y}, ensure_ascii=False) for t, y in rows]
    lines[2] = lines[2][:-5]  # cut off: invalid JSON on line 3
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def _unknown_folder(root):
    folder = root / "notes"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "README.md").write_text("not a corpus\n")
    return str(folder)


ERROR_CASES = {
    HAN: ["binary_file", "missing_label_column", "broken_jsonl_line",
          "column_out_of_range", "unknown_layout", "unknown_extension",
          "zero_sentences"],
    SAE: ["binary_file", "missing_label_column", "broken_jsonl_line",
          "column_out_of_range", "unknown_layout", "unknown_extension", "zero_length",
          "zero_hops"],
    "translation": ["binary_file", "mismatched_lines", "no_training_files",
                    "tsv_without_english", "zero_vocab", "zero_max_words"],
    "memn2n_babi": ["zero_hops", "zero_memory", "task_zero", "malformed_line",
                    "binary_file", "missing_task", "no_babi_files"],
}  # fmt: skip


@pytest.mark.parametrize(
    "recipe, case",
    [
        (recipe, case)
        for recipe, cases in ERROR_CASES.items()
        for case in ["missing_path", "zero_epochs", "negative_batch", *cases]
    ],
)
def test_errors_are_one_line_with_exit_status_2(recipe, case, tmp_path, capsys):
    cases = {c[0]: c[1:] for c in _error_cases(recipe, tmp_path / "data")}
    assert set(cases) == {"missing_path", "zero_epochs", "negative_batch"} | set(
        ERROR_CASES[recipe]
    )
    argv, fragments = cases[case]
    with pytest.raises(SystemExit) as exit_info:
        _recipe(recipe).main([*argv, *_outputs(tmp_path / "out")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "error: " in lines[0]
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
