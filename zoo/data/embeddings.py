"""Pretrained word vectors in word2vec/GloVe text format -> an embedding matrix.

Both formats are one word per line followed by its vector, separated by spaces:

    the 0.418 0.24968 -0.41242 ...

word2vec's text format adds a first line `<count> <dim>`, which is recognised and
skipped; GloVe has no header. Files may be gzip-compressed (`.gz`). The binary word2vec
format is not supported (convert it to text first). Only the words of the vocabulary
are kept in memory, so large files are read in one streaming pass.
"""

import dataclasses
import gzip

import numpy as np


class EmbeddingFormatError(ValueError):
    """A malformed vector file; the message starts with `path:line:`."""


@dataclasses.dataclass
class EmbeddingStats:
    """Coverage of a vocabulary by a vector file.

    Attributes:
        vocabulary_size: tokens in the vocabulary (reserved `[PAD]`/`[UNK]` included).
        found: vocabulary tokens that got a pretrained vector (exact or lowercase).
        found_lowercase: of those, the ones matched only through their lowercase form.
        file_words: vectors in the file.
        dim: the vector size.
    """

    vocabulary_size: int
    found: int
    found_lowercase: int
    file_words: int
    dim: int

    @property
    def coverage(self):
        """Fraction of the vocabulary's non-reserved tokens that got a vector."""
        real = max(self.vocabulary_size - 2, 1)
        return self.found / real

    def __str__(self):
        return (
            f"{self.found}/{max(self.vocabulary_size - 2, 0)} vocabulary words found "
            f"({100 * self.coverage:.1f}%, {self.found_lowercase} through lowercase) "
            f"in {self.file_words} vectors of dim {self.dim}"
        )


def _open(path):
    if str(path).endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def _tokens_of(vocabulary):
    tokens = getattr(vocabulary, "tokens", vocabulary)
    return [str(t) for t in tokens]


def load_embeddings(path, vocabulary, scale=0.1, seed=0, reserved=2):
    """Builds an embedding matrix for `vocabulary` from a word2vec/GloVe text file.

    Args:
        path: the vector file (text, optionally `.gz`).
        vocabulary: a `zoo.text.vocabulary.Vocabulary` (anything with `.tokens`) or a
            list of tokens, id order; ids `0..reserved-1` are the reserved tokens
            (`[PAD]`, `[UNK]`) and are never looked up.
        scale: words without a vector get `uniform(-scale, scale)` rows (seeded).
        seed: seed of those random rows.
        reserved: number of leading reserved ids; row 0 (`[PAD]`) is all zeros.

    Returns:
        `(matrix, stats)`: a float32 array `(len(vocabulary), dim)` and an
        `EmbeddingStats`. A token is matched exactly first, then by its lowercase
        form (the first vector in the file whose word lowercases to it).

    Raises:
        EmbeddingFormatError: a line whose vector size differs from the first line's,
            a non-number in a vector, a binary file, or a file with no vectors.
    """
    tokens = _tokens_of(vocabulary)
    wanted = {t: i for i, t in enumerate(tokens) if i >= reserved}
    lower_wanted = {}
    for t, i in wanted.items():
        lower_wanted.setdefault(t.lower(), []).append(i)
    exact, by_lower = {}, {}
    dim, file_words = None, 0
    try:
        with _open(path) as f:
            for line_number, line in enumerate(f, start=1):
                parts = line.rstrip("\r\n").rstrip(" ").split(" ")
                if not parts or parts == [""]:
                    continue
                if (
                    line_number == 1
                    and len(parts) == 2
                    and all(p.isdigit() for p in parts)
                ):
                    continue  # word2vec header "<count> <dim>"
                if dim is None:
                    dim = len(parts) - 1
                    if dim < 1:
                        raise EmbeddingFormatError(
                            f"{path}:{line_number}: expected 'word v1 v2 ...'. "
                            f"Received: {line[:80]!r}"
                        )
                if len(parts) - 1 != dim:
                    raise EmbeddingFormatError(
                        f"{path}:{line_number}: vector has {len(parts) - 1} values, "
                        f"expected {dim} (from the first vector). Received: "
                        f"{line[:80]!r}"
                    )
                file_words += 1
                word = parts[0]
                in_exact = word in wanted and word not in exact
                low = word.lower()
                in_lower = low in lower_wanted and low not in by_lower
                if not (in_exact or in_lower):
                    continue
                try:
                    vector = np.asarray(parts[1:], dtype="float32")
                except ValueError as e:
                    raise EmbeddingFormatError(
                        f"{path}:{line_number}: the vector of {word!r} holds a "
                        f"non-number. Received: {line[:80]!r}"
                    ) from e
                if in_exact:
                    exact[word] = vector
                if in_lower:
                    by_lower[low] = vector
    except UnicodeDecodeError as e:
        raise EmbeddingFormatError(
            f"{path}: not UTF-8 text (binary word2vec files must be converted to the "
            f"text format first). Received: {e}"
        ) from e
    if dim is None:
        raise EmbeddingFormatError(f"{path}: no vectors in file.")
    rng = np.random.default_rng(seed)
    matrix = rng.uniform(-scale, scale, size=(len(tokens), dim)).astype("float32")
    if reserved > 0:
        matrix[0] = 0.0
    found = found_lower = 0
    for token, i in wanted.items():
        if token in exact:
            matrix[i] = exact[token]
            found += 1
        elif token.lower() in by_lower:
            matrix[i] = by_lower[token.lower()]
            found += 1
            found_lower += 1
    stats = EmbeddingStats(
        vocabulary_size=len(tokens),
        found=found,
        found_lowercase=found_lower,
        file_words=file_words,
        dim=dim,
    )
    return matrix, stats


def assign_embedding_matrix(embedding_layer, matrix):
    """Loads `matrix` into a built `keras.layers.Embedding`, checking its shape first.

    Raises:
        ValueError: the matrix is not `(input_dim, output_dim)` of the layer.
    """
    expected = (embedding_layer.input_dim, embedding_layer.output_dim)
    if tuple(matrix.shape) != expected:
        raise ValueError(
            f"The embedding matrix must have shape {expected}. "
            f"Received: matrix.shape={tuple(matrix.shape)!r}"
        )
    embedding_layer.embeddings.assign(matrix)
