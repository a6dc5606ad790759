import gzip

import numpy as np
import pytest

from zoo.errors import DataError, MissingPathError
from zoo.text.embeddings import EmbeddingFormatError, load_embeddings

VOCAB = ["[PAD]", "[UNK]", "good", "Film", "zebra"]


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_glove_format_exact_lowercase_and_missing(tmp_path):
    path = _write(tmp_path, "g.txt", "good 1 2 3\nfilm 4 5 6\nbad 7 8 9\n")
    matrix, stats = load_embeddings(path, VOCAB, scale=0.05)
    assert matrix.shape == (5, 3) and matrix.dtype == np.float32
    np.testing.assert_array_equal(matrix[0], np.zeros(3))  # [PAD]
    np.testing.assert_array_equal(matrix[2], [1, 2, 3])
    np.testing.assert_array_equal(matrix[3], [4, 5, 6])  # "Film" via "film"
    assert np.all(np.abs(matrix[4]) <= 0.05)  # "zebra": random row
    assert (stats.found, stats.found_lowercase, stats.file_words, stats.dim) == (
        2,
        1,
        3,
        3,
    )
    assert stats.coverage == pytest.approx(2 / 3)
    assert "2/3 vocabulary words found" in str(stats)


def test_word2vec_header_and_gzip(tmp_path):
    path = tmp_path / "w.txt.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write("2 2\nzebra 0.5 -0.5\nFilm 1 1\n")
    matrix, stats = load_embeddings(str(path), VOCAB)
    np.testing.assert_array_equal(matrix[4], [0.5, -0.5])
    np.testing.assert_array_equal(matrix[3], [1, 1])
    assert stats.found == 2 and stats.found_lowercase == 0 and stats.file_words == 2


def test_exact_match_wins_over_lowercase(tmp_path):
    path = _write(tmp_path, "g.txt", "film 0 0\nFilm 1 1\n")
    matrix, _ = load_embeddings(path, VOCAB)
    np.testing.assert_array_equal(matrix[3], [1, 1])


def test_errors_name_file_and_line(tmp_path):
    path = _write(tmp_path, "bad.txt", "good 1 2 3\nfilm 4 5\n")
    with pytest.raises(EmbeddingFormatError, match=r"bad\.txt:2: vector has 2 values"):
        load_embeddings(path, VOCAB)
    path = _write(tmp_path, "nan.txt", "good 1 x 3\n")
    with pytest.raises(EmbeddingFormatError, match=r"nan\.txt:1: .*non-number"):
        load_embeddings(path, VOCAB)
    path = _write(tmp_path, "empty.txt", "\n")
    with pytest.raises(EmbeddingFormatError, match="no vectors"):
        load_embeddings(path, VOCAB)
    binary = tmp_path / "b.bin"
    binary.write_bytes(b"3 2\ngood \xff\xfe\x00\x01\n")
    with pytest.raises(EmbeddingFormatError, match="not UTF-8"):
        load_embeddings(str(binary), VOCAB)


def test_token_with_spaces_and_byte_order_mark(tmp_path):
    path = tmp_path / "glove.txt"
    path.write_bytes(
        b"\xef\xbb\xbfgood 1 2 3\nnew york 4 5 6\n. . . 7 8 9\nfilm 0 0 1\n"
    )
    vocab = ["[PAD]", "[UNK]", "good", "new york", ". . .", "film"]
    matrix, stats = load_embeddings(path, vocab)
    np.testing.assert_array_equal(matrix[2], [1, 2, 3])  # no mark in "good"
    np.testing.assert_array_equal(matrix[3], [4, 5, 6])
    np.testing.assert_array_equal(matrix[4], [7, 8, 9])
    assert (stats.found, stats.file_words, stats.dim) == (4, 4, 3)


def test_vector_size_is_not_taken_from_a_first_line_with_spaces(tmp_path):
    path = tmp_path / "g.txt"
    path.write_text("new york 4 5\ngood 1 2\nfilm 3 4\n")
    matrix, stats = load_embeddings(path, ["[PAD]", "[UNK]", "good", "new york"])
    assert stats.dim == 2
    np.testing.assert_array_equal(matrix[3], [4, 5])


def test_missing_and_truncated_files(tmp_path):
    with pytest.raises(MissingPathError, match="no such file"):
        load_embeddings(tmp_path / "none.txt", VOCAB)
    path = tmp_path / "v.txt.gz"
    text = "".join(f"w{i} {i} {i * 7 % 13} {i * 3 % 11}\n" for i in range(5000))
    packed = gzip.compress(text.encode())
    path.write_bytes(packed[: len(packed) // 2])
    with pytest.raises(DataError, match=rf"^{path}: truncated or corrupt gzip"):
        load_embeddings(path, VOCAB)


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-Infinity", "1e39", "-3.5e38"])
def test_non_finite_or_float32_overflowing_values_name_file_and_line(tmp_path, value):
    path = _write(tmp_path, "v.txt", f"good 1 2 3\nfilm 4 {value} 6\n")
    with pytest.raises(EmbeddingFormatError) as caught:
        load_embeddings(path, VOCAB)
    assert str(caught.value) == (
        f"{path}:2: the vector of 'film' holds {value!r}: values must be finite "
        "float32 numbers (at most 3.403e+38 in magnitude)"
    )


def test_unusable_values_of_words_out_of_the_vocabulary_are_not_read(tmp_path):
    path = _write(tmp_path, "v.txt", "good 1 2 3\nbad nan 1e39 inf\n")
    matrix, stats = load_embeddings(path, VOCAB)
    assert np.isfinite(matrix).all() and stats.file_words == 2
    np.testing.assert_array_equal(matrix[2], [1, 2, 3])
    big = _write(tmp_path, "big.txt", "good 3e38 -3e38 1\n")  # the largest float32s
    matrix, _ = load_embeddings(big, VOCAB)
    np.testing.assert_array_equal(matrix[2], np.float32([3e38, -3e38, 1]))


def test_a_recipe_refuses_them_before_any_run_state_twice_alike(tmp_path, capsys):
    """`--embeddings` with a NaN: one line naming file and line, exit status 2, and
    nothing of the run written, so the same command again says the same."""
    from zoo.recipes import han_classification

    vectors = _write(tmp_path, "v.txt", "film 0.1 0.2 0.3\nthe 1e39 0.1 0.2\n")
    argv = ["--demo-size", "200", "--embeddings", vectors]
    for name in ("run-dir", "report-dir", "export-dir"):
        argv += [f"--{name}", str(tmp_path / name)]
    errors = []
    for _ in range(2):
        with pytest.raises(SystemExit) as exit_info:
            han_classification.main(argv)
        assert exit_info.value.code == 2
        errors.append(capsys.readouterr().err)
    assert (
        errors[0]
        == errors[1]
        == (
            f"error: {vectors}:2: the vector of 'the' holds '1e39': values must be "
            "finite float32 numbers (at most 3.403e+38 in magnitude)\n"
        )
    )
    run_dir = tmp_path / "run-dir"
    assert not (run_dir / "run.json").exists() and not (run_dir / "backup").exists()
