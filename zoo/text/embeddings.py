"""Pretrained word vectors in word2vec/GloVe text format -> an embedding matrix.

Both formats are one word per line followed by its vector, separated by spaces:

    the 0.418 0.24968 -0.41242 ...

word2vec's text format adds a first line `<count> <dim>`, which is recognised and
skipped; GloVe has no header. Files may be gzip-compressed (`.gz`). The binary word2vec
format is not supported (convert it to text first). Only the words of the vocabulary
are kept in memory, so large files are read in one streaming pass. Files are UTF-8 (a
byte-order mark is ignored); a token may contain spaces (the last `dim` fields of a
line are its vector).
"""

import collections
import dataclasses
import itertools

import numpy as np

from zoo.data.files import check_exists, iter_lines
from zoo.errors import DataError

_PROBE_LINES = 1000
_FLOAT32_MAX = float(np.finfo("float32").max)


class EmbeddingFormatError(DataError):
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
        return self.found / max(self.vocabulary_size - 2, 1)

    def __str__(self):
        return (
            f"{self.found}/{max(self.vocabulary_size - 2, 0)} vocabulary words found "
            f"({100 * self.coverage:.1f}%, {self.found_lowercase} through lowercase) "
            f"in {self.file_words} vectors of dim {self.dim}"
        )


def _lines(path):
    """`iter_lines`, with invalid UTF-8 reported as a binary-format hint."""
    try:
        yield from iter_lines(path)
    except DataError as e:
        if "UTF-8" not in e.message or isinstance(e, EmbeddingFormatError):
            raise
        raise EmbeddingFormatError(
            f"not UTF-8 text (binary word2vec files must be converted to the text "
            f"format first): {e.message}",
            path=e.path,
            line=e.line,
        ) from None


def _split(line):
    parts = line.rstrip(" ").split(" ")
    return [] if parts == [""] else parts


def _vector_size(path, lines):
    """`(dim, lines)`: the vector size and the line iterator to go on reading.

    The size is the header's (`<count> <dim>`, word2vec) or else the most common
    number of fields minus one among the first `_PROBE_LINES` lines (ties: the
    earliest), so a token with spaces on the first line does not mislead it.
    """
    buffered, sizes = [], collections.Counter()
    for number, line in lines:
        if not (parts := _split(line)):
            continue
        if not buffered and len(parts) == 2 and all(map(str.isdigit, parts)):
            return int(parts[1]), lines  # word2vec header "<count> <dim>"
        buffered.append((number, line))
        sizes[len(parts) - 1] += 1
        if len(buffered) >= _PROBE_LINES:
            break
    if not buffered:
        return None, iter(())
    return sizes.most_common(1)[0][0], itertools.chain(buffered, lines)


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
        form (the first vector in the file whose word lowercases to it). A line with
        more than `dim + 1` fields holds a token with spaces (GloVe 840B has
        some): its last `dim` fields are the vector, the rest the token.

    Raises:
        MissingPathError: the file does not exist.
        EmbeddingFormatError: (a `zoo.errors.DataError`) a line with fewer than
            `dim` values, a non-number in a vector, a NaN, an infinity or a value
            beyond float32's range (1e39) in a vector the vocabulary uses, a binary
            or otherwise non-UTF-8 file, a truncated `.gz`, or a file with no
            vectors; with file and line. It is raised while the file is read,
            before any training starts (a NaN vector would make the first loss
            NaN).
    """
    path = check_exists(path, "file")
    tokens = [str(t) for t in getattr(vocabulary, "tokens", vocabulary)]
    wanted = {t: i for i, t in enumerate(tokens) if i >= reserved}
    lower_wanted = {t.lower() for t in wanted}
    exact, by_lower, file_words = {}, {}, 0
    dim, lines = _vector_size(path, _lines(path))
    for line_number, line in lines:
        if not (parts := _split(line)):
            continue
        if dim < 1 or len(parts) < dim + 1:
            raise EmbeddingFormatError(
                f"vector has {len(parts) - 1} values, expected {dim} (the size of "
                f"most vectors) after a word. Received: {line[:80]!r}",
                path,
                line_number,
            )
        file_words += 1
        word = " ".join(parts[:-dim])
        in_exact = word in wanted and word not in exact
        low = word.lower()
        in_lower = low in lower_wanted and low not in by_lower
        if not (in_exact or in_lower):
            continue
        try:
            vector = np.asarray(parts[-dim:], dtype="float64")
        except ValueError:
            raise EmbeddingFormatError(
                f"the vector of {word!r} holds a non-number. Received: {line[:80]!r}",
                path,
                line_number,
            ) from None
        unusable = ~(np.abs(vector) <= _FLOAT32_MAX)  # NaN, infinities, overflows
        if unusable.any():
            value = parts[-dim:][int(np.argmax(unusable))]
            raise EmbeddingFormatError(
                f"the vector of {word!r} holds {value!r}: values must be finite "
                f"float32 numbers (at most {_FLOAT32_MAX:.4g} in magnitude)",
                path=path,
                line=line_number,
            )
        vector = vector.astype("float32")
        if in_exact:
            exact[word] = vector
        if in_lower:
            by_lower[low] = vector
    if dim is None or file_words == 0:
        raise EmbeddingFormatError("no vectors in file.", path=path)
    rng = np.random.default_rng(seed)
    matrix = rng.uniform(-scale, scale, size=(len(tokens), dim)).astype("float32")
    if reserved > 0:
        matrix[0] = 0.0
    found = found_lower = 0
    for token, i in wanted.items():
        if (vector := exact.get(token, by_lower.get(token.lower()))) is not None:
            matrix[i] = vector
            found += 1
            found_lower += token not in exact
    return matrix, EmbeddingStats(len(tokens), found, found_lower, file_words, dim)


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
