"""Word vocabularies: built and stored in Python, looked up inside the graph.

`Vocabulary` is the Python side: it counts tokens, keeps the most frequent ones and
reads/writes a plain text file with one token per line (line number = id). Ids 0 and 1
are reserved for `"[PAD]"` and `"[UNK]"`.

`VocabularyLookup` is the graph side: a `tf.Module` that maps string tokens to int64
ids with a `tf.lookup.StaticHashTable` initialised from the same file. The file is a
`tf.saved_model.Asset`, so a SavedModel that tracks the lookup copies it into its
`assets/` folder and the reloaded table reads it from there (TF Serving included).
"""

import collections
import os
import uuid

import tensorflow as tf

from zoo.data.files import decode_document
from zoo.errors import DataError, MissingPathError

PAD = "[PAD]"
UNK = "[UNK]"
PAD_ID = 0
UNK_ID = 1
RESERVED = (PAD, UNK)


class Vocabulary:
    """An ordered token list with reserved `"[PAD]"` (id 0) and `"[UNK]"` (id 1).

    Args:
        tokens: sequence of str, the full vocabulary in id order; it must start with
            `"[PAD]"`, `"[UNK]"` and hold no duplicates, no empty tokens and no line
            breaks.

    Example:

    >>> vocab = Vocabulary.build([["a", "b", "a"], ["c", "a"]], min_count=1)
    >>> vocab.tokens
    ['[PAD]', '[UNK]', 'a', 'b', 'c']
    >>> vocab.encode(["a", "zzz"])
    [2, 1]
    """

    def __init__(self, tokens):
        tokens = list(tokens)
        if problem := _first_problem(tokens):
            raise ValueError(f"tokens[{problem[0]}]: {problem[1]}")
        self._tokens = tokens
        self._ids = {token: i for i, token in enumerate(tokens)}

    @classmethod
    def build(cls, token_lists, max_size=None, min_count=1):
        """Builds a vocabulary from token lists, most frequent first.

        Ties are broken alphabetically, so the result does not depend on input order.
        Empty tokens and the reserved tokens are skipped.

        Args:
            token_lists: iterable of iterables of tokens (`str` or UTF-8 `bytes`, as
                `tf.RaggedTensor.to_list()` returns them).
            max_size: int or None, the largest vocabulary size, reserved tokens
                included.
            min_count: int, tokens seen fewer times are left out (they map to UNK).

        Returns:
            A `Vocabulary`.
        """
        if max_size is not None and (not isinstance(max_size, int) or max_size < 2):
            raise ValueError(
                "`max_size` must be None or an int >= 2 (room for [PAD] and [UNK]). "
                f"Received: max_size={max_size!r}"
            )
        if not isinstance(min_count, int) or min_count < 1:
            received = f"Received: min_count={min_count!r}"
            raise ValueError(f"`min_count` must be a positive int. {received}")
        counts = collections.Counter()
        for tokens in token_lists:
            for token in tokens:
                if isinstance(token, bytes):
                    token = token.decode("utf-8", errors="replace")
                if token and token not in RESERVED:
                    counts[token] += 1
        ranked = sorted(
            (t for t, c in counts.items() if c >= min_count),
            key=lambda t: (-counts[t], t),
        )
        if max_size is not None:
            ranked = ranked[: max_size - len(RESERVED)]
        ranked = [t for t in ranked if "\n" not in t and "\r" not in t]
        return cls(list(RESERVED) + ranked)

    @classmethod
    def load(cls, path):
        """Reads a vocabulary file (UTF-8, one token per line, line i = id i).

        Raises:
            MissingPathError: the file does not exist.
            DataError: (a `ValueError`) naming the file and line of an invalid
                entry: invalid UTF-8, a byte-order mark (the in-graph lookup reads
                the file as it is, so the mark would become part of `[PAD]`), a
                wrong reserved token, a duplicate.
        """
        path = os.fspath(path)
        if not os.path.isfile(path):
            raise MissingPathError(path, what="vocabulary file")
        with open(path, "rb") as f:
            data = f.read()
        if data.startswith(b"\xef\xbb\xbf"):
            raise DataError(
                "the vocabulary file starts with a UTF-8 byte-order mark, which the "
                "in-graph lookup would read as part of the first token; save it "
                "without one",
                path=path,
                line=1,
            )
        if not data:
            raise DataError("the vocabulary file is empty.", path=path)
        # Invalid UTF-8 raises naming file:line; the last line's end ends no token.
        tokens = decode_document(data, path).removesuffix("\n").split("\n")
        if problem := _first_problem(tokens):
            raise DataError(problem[1], path, problem[0] + 1)
        return cls(tokens)

    def save(self, path):
        """Writes the vocabulary, one token per line, UTF-8, "\\n" line ends."""
        path = os.fspath(path)
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.writelines(token + "\n" for token in self._tokens)
        return path

    @property
    def tokens(self):
        """The tokens in id order (a copy)."""
        return list(self._tokens)

    def __len__(self):
        return len(self._tokens)

    def __contains__(self, token):
        return token in self._ids

    def __eq__(self, other):
        return isinstance(other, Vocabulary) and self._tokens == other._tokens

    def __repr__(self):
        return f"Vocabulary(size={len(self)})"

    def token_to_id(self, token):
        """The id of `token`, `UNK_ID` when unknown, `PAD_ID` for ""."""
        return PAD_ID if token == "" else self._ids.get(token, UNK_ID)

    def id_to_token(self, index):
        """The token of `index`; out-of-range ids give `"[UNK]"`."""
        return self._tokens[index] if 0 <= index < len(self._tokens) else UNK

    def encode(self, tokens):
        """Maps a list of tokens to a list of ids."""
        return [self.token_to_id(t) for t in tokens]

    def decode(self, ids):
        """Maps a list of ids to a list of tokens."""
        return [self.id_to_token(int(i)) for i in ids]


def _first_problem(tokens):
    """`(id, message)` of the first entry a vocabulary cannot hold, or None."""
    seen = {}
    for i, token in enumerate(tokens):
        if i < len(RESERVED) and token != RESERVED[i]:
            problem = f"expected the reserved token {RESERVED[i]!r}"
        elif not isinstance(token, str):
            problem = "Tokens must be str"
        elif not token:
            problem = "Tokens must not be empty"
        elif "\n" in token or "\r" in token:
            problem = "Tokens must not contain line breaks"
        elif token in seen:
            problem = f"duplicate token {token!r} (first at id {seen[token]})"
        else:
            seen[token] = i
            continue
        return i, f"{problem}. Received: {token!r}"
    if len(tokens) < len(RESERVED):
        return len(tokens), f"a vocabulary must start with {list(RESERVED)!r}"


class _TextFileInitializer(tf.lookup.TextFileInitializer):
    """A `TextFileInitializer` whose table gets a name of its own.

    TensorFlow names the table of a file initializer after the file argument, and
    `hash_table_v2` hands back an existing table of the same name in the process
    (initialised, with the old contents). For a `tf.saved_model.Asset` that name holds
    the object's memory address, which Python reuses once the object is collected: a
    lookup made after an earlier one was freed could silently read the earlier
    vocabulary (every token `[UNK]`). A random suffix keeps tables apart; the name is
    stored in an export, so its reloaded tables keep theirs.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._table_id = uuid.uuid4().hex

    @property
    def _shared_name(self):
        return f"zoo_vocabulary_{self._key_index}_{self._value_index}_{self._table_id}"


class VocabularyLookup(tf.Module):
    """In-graph token -> id lookup (and id -> token) backed by a vocabulary file.

    The file (as written by `Vocabulary.save`) is tracked as a
    `tf.saved_model.Asset`: exporting a module that holds this lookup copies the file
    into the SavedModel's `assets/` folder, and the reloaded tables read it from there.

    Args:
        vocab_file: path of a vocabulary file (one token per line, line i = id i,
            starting with `"[PAD]"` and `"[UNK]"`).
        name: optional module name.

    Call arguments:
        tokens: string `tf.Tensor` (any shape) or `tf.RaggedTensor` of strings.

    Returns:
        int64 ids of the same shape: unknown tokens give 1 (`[UNK]`), the empty
        string gives 0 (`[PAD]`), so padding with "" maps to padding ids.

    Example:

    >>> lookup = VocabularyLookup("vocab.txt")
    >>> lookup(tf.constant([["good", ""], ["zzz", "film"]]))  # -> [[5, 0], [1, 9]]
    """

    def __init__(self, vocab_file, name=None):
        super().__init__(name=name)
        vocab_file = os.fspath(vocab_file)
        # Fail early, with file and line, rather than inside the table initializer.
        self._size = len(Vocabulary.load(vocab_file))
        self.vocab_file = tf.saved_model.Asset(vocab_file)
        index = tf.lookup.TextFileIndex
        word, number = index.WHOLE_LINE, index.LINE_NUMBER

        def table(keys, values, default):
            init = _TextFileInitializer(self.vocab_file, *keys, *values)
            return tf.lookup.StaticHashTable(init, default_value=default)

        self.table = table((tf.string, word), (tf.int64, number), UNK_ID)
        self.inverse_table = table((tf.int64, number), (tf.string, word), UNK)

    @property
    def size(self):
        """Number of entries, reserved tokens included (a Python int)."""
        return self._size

    def __call__(self, tokens):
        def lookup(tokens):
            tokens = tf.convert_to_tensor(tokens, dtype=tf.string)
            pad = tf.constant(PAD_ID, tf.int64)
            return tf.where(tokens == "", pad, self.table.lookup(tokens))

        return tf.ragged.map_flat_values(lookup, tokens)

    def inverse(self, ids):
        """Maps int ids (any shape, dense or ragged) back to tokens (`"[UNK]"` when
        out of range)."""
        lookup = self.inverse_table.lookup
        return tf.ragged.map_flat_values(lambda i: lookup(tf.cast(i, tf.int64)), ids)
