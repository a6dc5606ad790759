"""Skip-gram word vectors: they learn co-occurrence, are reproducible, and bad input
gets a clear error."""

import os

import numpy as np
import pytest

from zoo.text.embeddings import load_embeddings
from zoo.text.word2vec import train_word2vec, write_word2vec


def _topic_corpus(docs=300, length=50, seed=0):
    """Even documents use only ids 2..31, odd ones only ids 32..61."""
    rng = np.random.default_rng(seed)
    return [
        rng.integers(2 if n % 2 == 0 else 32, 32 if n % 2 == 0 else 62, size=length)
        for n in range(docs)
    ]


def _cosine(v):
    u = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-9)
    return u @ u.T


def test_words_that_share_documents_get_similar_vectors():
    vectors, report = train_word2vec(
        _topic_corpus(), 62, dim=16, epochs=3, seed=1, return_report=True
    )
    sim = _cosine(vectors)
    within = sim[2:32, 2:32][~np.eye(30, dtype=bool)].mean()
    across = sim[2:32, 32:62].mean()
    assert within > 0.5 and across < 0.2, (within, across)
    # The loss falls and every reported number is finite.
    assert report.loss[-1] < report.loss[0] and np.isfinite(report.loss).all()
    assert report.tokens == 300 * 50 and report.pairs > 0
    # Reserved ids (padding, unknown) are zero rows.
    assert not vectors[:2].any()


def test_windows_do_not_cross_documents():
    # Word 2 only ever ends a document and word 3 only ever starts the next one:
    # they never share a window, so no pair may link them.
    docs = [np.array([4, 5, 6, 2]), np.array([3, 7, 8, 9])] * 100
    from zoo.text.word2vec import _corpus, _pairs

    ids, doc = _corpus(docs, 10, reserved=2)
    centers, contexts = _pairs(
        ids, doc, np.ones(10), window=5, rng=np.random.default_rng(0)
    )
    linked = ((centers == 2) & (contexts == 3)) | ((centers == 3) & (contexts == 2))
    assert len(centers) > 0 and not linked.any()


def test_same_seed_same_vectors_and_other_seed_differs():
    corpus = _topic_corpus(docs=40)
    a = train_word2vec(corpus, 62, dim=8, epochs=1, seed=3)
    b = train_word2vec(corpus, 62, dim=8, epochs=1, seed=3)
    c = train_word2vec(corpus, 62, dim=8, epochs=1, seed=4)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)


@pytest.mark.parametrize(
    "sequences, kwargs, message",
    [
        ([np.array([2, 3, 10])], {}, "holds id 10"),
        ([np.array([2, -1])], {}, "holds id -1"),
        ([np.array([[2, 3]])], {}, "1-D array"),
        ([np.array([0, 1, 1])], {}, "fewer than 2 known words"),
        ([], {}, "fewer than 2 known words"),
        ([np.array([2, 3])], {"dim": 0}, "`dim` must be a positive int"),
        ([np.array([2, 3])], {"learning_rate": float("nan")}, "`learning_rate`"),
        ([np.array([2, 3])], {"reserved": 10}, "`reserved`"),
    ],
)
def test_bad_input_names_the_problem(sequences, kwargs, message):
    with pytest.raises(ValueError, match=message):
        train_word2vec(sequences, 10, **kwargs)


def test_written_vectors_load_back_for_a_vocabulary(tmp_path):
    tokens = ["[PAD]", "[UNK]", "good", "bad\x85", "film"]  # NEL is not a break
    vectors = np.arange(15, dtype=np.float32).reshape(5, 3) / 7
    path = tmp_path / "sub" / "vectors.txt"
    write_word2vec(path, tokens, vectors)
    assert os.listdir(path.parent) == ["vectors.txt"]  # no temp file left
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask  # not mkstemp's 0600
    assert path.read_text().splitlines()[0] == "3 3"
    matrix, stats = load_embeddings(
        path, ["[PAD]", "[UNK]", "film", "good", "bad\x85", "new"]
    )
    assert stats.found == 3 and stats.dim == 3
    np.testing.assert_allclose(matrix[4], vectors[3], rtol=1e-5)
    np.testing.assert_allclose(matrix[2], vectors[4], rtol=1e-5)
    np.testing.assert_allclose(matrix[3], vectors[2], rtol=1e-5)
    for token in ("a b", "a\nb", "a\rb", ""):
        with pytest.raises(ValueError, match="space or line break"):
            write_word2vec(tmp_path / "x.txt", ["[PAD]", "[UNK]", token], vectors[:3])
    with pytest.raises(ValueError, match="shape"):
        write_word2vec(tmp_path / "x.txt", tokens, vectors[:3])
    assert not (tmp_path / "x.txt").exists()
