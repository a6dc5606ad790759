"""WordPiece subword vocabularies learned from training text, tokenized in the graph.

`learn_subword_vocabulary` learns a WordPiece vocabulary with tensorflow-text's
`bert_vocab_from_dataset` (words are split on whitespace and punctuation, as BERT does);
`SubwordTokenizer` is a `tf.Module` that normalises, tokenizes and detokenizes string
tensors with `tensorflow_text.FastWordpieceTokenizer`, so a tf.data pipeline and an
exported SavedModel process text identically. Its vocabulary file is a
`tf.saved_model.Asset`, so an export carries it in `assets/`.

Reserved ids: `[PAD]`=0, `[UNK]`=1, `[START]`=2, `[END]`=3.

Detokenization joins word pieces (`##` marks a piece that continues a word) and then
removes the space the word splitting put before closing punctuation (`. , ! ? ; : ) ]
}`), after opening brackets and around apostrophes and hyphens. Spacing that was in the
original text around other symbols is not recoverable.
"""

import os

import tensorflow as tf
import tensorflow_text as tf_text
from tensorflow_text.tools.wordpiece_vocab import bert_vocab_from_dataset as bert_vocab

from zoo.data.files import iter_lines
from zoo.errors import DataError
from zoo.text.preprocessing import normalize

PAD, UNK, START, END = 0, 1, 2, 3
RESERVED_TOKENS = ["[PAD]", "[UNK]", "[START]", "[END]"]
# Longest input, in bytes, that is normalised and tokenized; the rest is cut off.
DEFAULT_MAX_BYTES = 2048


def learn_subword_vocabulary(texts, vocab_size=8000, lowercase=False, batch_size=1024):
    """Learns a WordPiece vocabulary from training sentences.

    Args:
        texts: iterable of Python strings (the training side of one language).
        vocab_size: the maximum vocabulary size, reserved tokens included.
        lowercase: case-fold before learning (then tokenize with the same setting).
        batch_size: texts per tf.data batch while counting words.

    Returns:
        A list of tokens starting with `RESERVED_TOKENS`.
    """
    texts = list(texts)
    if not texts:
        raise ValueError(f"Cannot learn a vocabulary from no text. Received: {texts!r}")
    if not isinstance(vocab_size, int) or vocab_size <= len(RESERVED_TOKENS):
        received = f"Received: vocab_size={vocab_size!r}"
        raise ValueError(f"`vocab_size` must exceed {len(RESERVED_TOKENS)}. {received}")
    dataset = tf.data.Dataset.from_tensor_slices(tf.constant(texts, tf.string))
    dataset = dataset.batch(batch_size).map(
        lambda t: normalize(t, lowercase, DEFAULT_MAX_BYTES)
    )
    # A narrow threshold search: tensorflow-text's default (up to 1e7, 4 iterations)
    # takes minutes on 30k sentences; this takes seconds and lands within 25% of
    # `vocab_size`.
    params = dict(upper_thresh=64, lower_thresh=2, num_iterations=2, slack_ratio=0.25)
    vocab = bert_vocab.bert_vocab_from_dataset(
        dataset,
        vocab_size=vocab_size,
        reserved_tokens=RESERVED_TOKENS,
        bert_tokenizer_params={"lower_case": False},
        learn_params=params,
    )
    return list(vocab)


def save_vocabulary(tokens, path):
    """Writes one token per line (UTF-8)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(tokens) + "\n")
    return path


def load_vocabulary(path):
    """Reads a vocabulary written by `save_vocabulary` and checks the reserved ids.

    The file is UTF-8 (a byte-order mark is ignored: the tokenizer is built from the
    tokens read here, not from the file).

    Raises:
        MissingPathError: the file does not exist.
        DataError: invalid UTF-8 (file and line), or reserved tokens missing.
    """
    tokens = [line for _, line in iter_lines(path) if line]
    if (start := tokens[: len(RESERVED_TOKENS)]) != RESERVED_TOKENS:
        message = f"a vocabulary must start with {RESERVED_TOKENS}. Received: {start!r}"
        raise DataError(message, os.fspath(path), line=1)
    return tokens


class SubwordTokenizer(tf.Module):
    """In-graph WordPiece tokenizer and detokenizer over string tensors `[None]`.

    Args:
        vocab_file: a vocabulary written by `save_vocabulary` (tracked as an asset).
        lowercase: case-fold inputs (must match how the vocabulary was learned).
        max_bytes: input bytes kept per string; longer strings are truncated.

    Example:

    >>> tok = SubwordTokenizer("vocab.txt")
    >>> ids = tok.encode(tf.constant(["A dog runs."]), max_length=16)  # (1, 16)
    >>> tok.detokenize(ids)  # [b"A dog runs."]
    """

    def __init__(self, vocab_file, lowercase=False, max_bytes=DEFAULT_MAX_BYTES):
        super().__init__()
        self.vocab_asset = tf.saved_model.Asset(vocab_file)
        tokens = load_vocabulary(vocab_file)
        self.vocab_size = len(tokens)
        self.lowercase = lowercase
        self.max_bytes = max_bytes
        self.vocab = tf.constant(tokens, tf.string)
        # int64 ids, "[UNK]" for unknown words, whitespace and punctuation split.
        self._tokenizer = tf_text.FastWordpieceTokenizer(
            tokens, support_detokenization=True
        )

    def tokenize(self, text):
        """string `[B]` -> int64 RaggedTensor `[B, None]` of subword ids (no markers)."""
        text = normalize(text, self.lowercase, self.max_bytes)
        ids = self._tokenizer.tokenize(text)
        if isinstance(ids, tf.RaggedTensor) and ids.ragged_rank > 1:
            ids = ids.merge_dims(-2, -1)
        return ids

    def encode(self, text, max_length, add_start=False, add_end=False):
        """Dense padded ids `[B, max_length]` (0 = padding), truncated to fit.

        With `add_start`/`add_end` the `[START]`/`[END]` markers are added; the end
        marker is kept even when the sentence is truncated.
        """
        ids = self.tokenize(text)[:, : max_length - int(add_start) - int(add_end)]
        marker = tf.ones([ids.nrows(), 1], tf.int64)
        parts = [marker * START] if add_start else []
        parts += [ids, marker * END] if add_end else [ids]
        ids = tf.concat(parts, axis=1) if len(parts) > 1 else ids
        return ids.to_tensor(default_value=PAD, shape=[None, max_length])

    def ids_to_tokens(self, ids):
        """Ids (dense or ragged) -> subword strings; padding becomes `""`."""
        tokens = tf.gather(self.vocab, ids)
        if isinstance(ids, tf.RaggedTensor):
            return tokens
        return tf.where(tf.equal(ids, PAD), tf.constant(""), tokens)

    def detokenize(self, ids):
        """Ids `[B, T]` (dense or ragged) -> strings `[B]`.

        Everything from the first `[END]` on is dropped, as are `[PAD]` and
        `[START]`; `[UNK]` stays visible.
        """
        if isinstance(ids, tf.RaggedTensor):
            ids = ids.to_tensor(default_value=PAD)
        ids = tf.cast(ids, tf.int64)
        ended = tf.cumsum(tf.cast(tf.equal(ids, END), tf.int32), axis=1) > 0
        keep = ~ended & (ids != PAD) & (ids != START)
        text = self._tokenizer.detokenize(tf.ragged.boolean_mask(ids, keep))
        # Drop the spaces that word splitting put around punctuation (module doc).
        text = tf.strings.regex_replace(text, r" ([.,!?;:)\]}%])", r"\1")
        text = tf.strings.regex_replace(text, r"([(\[{¿¡]) ", r"\1")
        text = tf.strings.regex_replace(text, r" ?([-'’]) ?", r"\1")
        text = tf.strings.regex_replace(text, r'" (.*?) "', r'"\1"')
        return tf.strings.strip(text)
