"""In-graph text preprocessing shared by training pipelines and exported signatures.

Every function takes a string tensor of shape `[B]` (or a `tf.RaggedTensor` of strings
where noted) and is built from TensorFlow and tensorflow-text graph ops only, so the
same code runs inside `tf.data` pipelines and inside SavedModel signatures that
TF Serving executes without Python. Training and serving therefore preprocess text
identically.

The pipeline a recipe normally uses is:

```python
text = normalize(raw)                       # (B,)   valid UTF-8, NFKC, case folded
sentences = split_sentences(text)           # (B, None)
words = word_tokenize(sentences)            # (B, None, None)
dense = pad_ragged(words, (30, 50))         # (B, 30, 50), "" = padding
```

Limits and well-defined results for bad input:

- invalid UTF-8 bytes are replaced by U+FFFD, never an error;
- control characters (C0 and C1, NUL and DEL included; not tab, line feed or carriage
  return, which are whitespace already) are spaces: a NUL never ends the text early
  (tensorflow-text's regex split stops at a NUL byte, so every splitting function
  replaces them first);
- inputs longer than `MAX_INPUT_BYTES` (64 KiB) are truncated to at most that many
  bytes, cut at a character boundary (`normalize` does this before any other work, so a
  1 MB request costs no more than a 64 KiB one);
- the empty string and whitespace-only strings give empty token lists;
- a batch of 0 strings gives empty outputs of the documented rank.
"""

import tensorflow as tf
import tensorflow_text as tf_text

MAX_INPUT_BYTES = 65536
"""Default byte limit applied by `normalize` (longer inputs are truncated)."""

# RE2 `\s` is ASCII only; add the Unicode separators (NBSP survives NFKC as a space,
# but U+2028/U+2029 do not).
_SPACE = r"[^\S\n]|[\p{Z}]"
_PUNCT = r"[\p{P}\p{S}]"
# Control characters other than \t \n \r (RE2 matches these code points, so \x80-\x9f
# are the C1 controls U+0080-U+009F, e.g. NEL, not bytes).
_CONTROL = r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]"


def _controls_to_spaces(t):
    """Replaces control characters (NUL included) by spaces in a flat string tensor."""
    return tf.strings.regex_replace(t, _CONTROL, " ")


def _as_string_tensor(text, name="text"):
    if not isinstance(text, tf.RaggedTensor):
        text = tf.convert_to_tensor(text)
    if text.dtype != tf.string:
        raise TypeError(
            f"Expected a string tensor. Received: {name} with dtype={text.dtype!r}"
        )
    return text


def _map(fn, text):
    """`fn` applied to the flat values of a string tensor or `tf.RaggedTensor`."""
    return tf.ragged.map_flat_values(fn, _as_string_tensor(text))


def fix_utf8(text):
    """Replaces invalid UTF-8 sequences by U+FFFD (the Unicode replacement character).

    Args:
        text: string tensor (any shape) or `tf.RaggedTensor` of strings.

    Returns:
        A string tensor of the same shape holding valid UTF-8.
    """
    return _map(lambda t: _transcode(t, "replace"), text)


def _transcode(t, errors):
    """UTF-8 `t` with invalid sequences replaced by U+FFFD or dropped (`errors`)."""
    return tf.strings.unicode_transcode(t, "UTF-8", "UTF-8", errors=errors)


def truncate(text, max_bytes=MAX_INPUT_BYTES):
    """Truncates each string to at most `max_bytes` bytes, keeping whole characters.

    Invalid UTF-8 is replaced first (see `fix_utf8`); a multi-byte character that does
    not fit entirely is dropped, so the result is always valid UTF-8 of at most
    `max_bytes` bytes.

    Args:
        text: string tensor (any shape) or `tf.RaggedTensor` of strings.
        max_bytes: positive int, the byte limit.

    Returns:
        A string tensor of the same shape.
    """
    if not isinstance(max_bytes, int) or max_bytes <= 0:
        raise ValueError(
            f"`max_bytes` must be a positive integer. Received: max_bytes={max_bytes!r}"
        )
    # The cut may split a multi-byte character: drop the incomplete tail.
    return tf.ragged.map_flat_values(
        lambda t: _transcode(tf.strings.substr(t, 0, max_bytes, unit="BYTE"), "ignore"),
        fix_utf8(text),
    )


def normalize(text, lowercase=True, max_bytes=MAX_INPUT_BYTES):
    """Normalizes raw text: valid UTF-8, byte limit, NFKC, case folding, whitespace.

    Steps: invalid UTF-8 replaced by U+FFFD; truncated to `max_bytes` bytes at a
    character boundary; control characters (NUL included) replaced by spaces;
    Unicode NFKC normalization; optional case folding
    (`tf_text.case_fold_utf8`, i.e. NFKC_Casefold, which also maps "ß" to "ss");
    runs of spaces and tabs collapsed to one space, runs of whitespace that contain a
    line break collapsed to a single "\\n" (kept so `split_sentences` can use it);
    leading and trailing whitespace removed.

    Args:
        text: string tensor `[B]` (any shape works) or `tf.RaggedTensor` of strings.
        lowercase: bool, whether to case fold.
        max_bytes: int or None, the byte limit applied before any other work
            (`None` disables it).

    Returns:
        A string tensor of the same shape.

    Example:

    >>> normalize(tf.constant(["  Héllo\\tWORLD  "])).numpy()[0].decode()
    'héllo world'
    """
    text = _as_string_tensor(text)
    text = truncate(text, max_bytes) if max_bytes is not None else fix_utf8(text)

    def _norm(t):
        t = _controls_to_spaces(t)
        if lowercase:  # NFKC_Casefold includes NFKC.
            t = tf_text.case_fold_utf8(t)
        else:
            t = tf_text.normalize_utf8(t, "NFKC")
        t = tf.strings.regex_replace(t, r"\r\n?", "\n")
        t = tf.strings.regex_replace(t, r"(?:" + _SPACE + r")*\n\s*", "\n")
        t = tf.strings.regex_replace(t, r"(?:" + _SPACE + r")+", " ")
        return tf.strings.strip(t)

    return tf.ragged.map_flat_values(_norm, text)


def word_tokenize(text):
    """Splits text into words, keeping punctuation and symbols as separate tokens.

    Splits on whitespace (including Unicode separators and line breaks) and around
    every punctuation or symbol character (`\\p{P}`, `\\p{S}`), which becomes a token
    of its own: "don't stop." -> ["don", "'", "t", "stop", "."]. Control characters,
    NUL included, separate words like spaces. Apply `normalize` first.

    Args:
        text: string tensor `[B]` or `tf.RaggedTensor` of strings `[B, None]`.

    Returns:
        `tf.RaggedTensor` with one more ragged dimension: `[B, None]` for a `[B]`
        input, `[B, None, None]` for a `[B, None]` input. Empty and whitespace-only
        strings give empty rows.
    """

    def _split(t):
        return tf_text.regex_split(
            _controls_to_spaces(t),
            delim_regex_pattern=r"[\s\p{Z}]+|" + _PUNCT,
            keep_delim_regex_pattern=_PUNCT,
        )

    return _map(_split, text)


def split_sentences(text):
    """Splits text into sentences on `.`, `!`, `?` followed by whitespace, and on "\\n".

    The sentence-final punctuation stays with its sentence; empty sentences are
    dropped. Apply `normalize` first (it keeps line breaks).

    Args:
        text: string tensor `[B]` or `tf.RaggedTensor` of strings.

    Returns:
        `tf.RaggedTensor` of strings with one more ragged dimension (`[B, None]` for a
        `[B]` input). Empty or whitespace-only strings give empty rows.

    Example:

    >>> split_sentences(tf.constant(["Good food. Bad service!\\nWhy?"])).to_list()
    [[b'Good food.', b'Bad service!', b'Why?']]
    """

    def _split(t):
        t = _controls_to_spaces(t)
        t = tf.strings.regex_replace(t, r"([.!?]+)(?:[\s\p{Z}])+", "\\1\n")
        pieces = tf_text.regex_split(
            t, delim_regex_pattern=r"(?:[\s\p{Z}]*\n)+[\s\p{Z}]*"
        )
        pieces = pieces.with_flat_values(tf.strings.strip(pieces.flat_values))
        return tf.ragged.boolean_mask(pieces, tf.strings.length(pieces) > 0)

    return _map(_split, text)


def pad_ragged(ragged, max_len, pad=None):
    """Pads (and truncates) a ragged tensor to a dense tensor of fixed inner lengths.

    Args:
        ragged: `tf.RaggedTensor` `[B, None]` or `[B, None, None]` (a dense tensor is
            accepted and treated the same way).
        max_len: int for a rank-2 input, or a sequence of ints, one per dimension
            after the batch dimension.
        pad: padding value; `None` means `""` for strings and `0` otherwise.

    Returns:
        A dense tensor `[B, *max_len]`; rows longer than `max_len` are truncated (the
        first items are kept).

    Example:

    >>> pad_ragged(tf.ragged.constant([["a", "b", "c"], []]), 2).numpy().tolist()
    [[b'a', b'b'], [b'', b'']]
    """
    lengths = [max_len] if isinstance(max_len, int) else list(max_len)
    if not lengths or any(not isinstance(n, int) or n <= 0 for n in lengths):
        raise ValueError(
            "`max_len` must be a positive int or a sequence of positive ints. "
            f"Received: max_len={max_len!r}"
        )
    if not isinstance(ragged, tf.RaggedTensor):
        ragged = tf.RaggedTensor.from_tensor(tf.convert_to_tensor(ragged))
    if ragged.shape.rank != len(lengths) + 1:
        raise ValueError(
            f"`max_len` must give one length per inner dimension of a rank "
            f"{ragged.shape.rank} tensor. Received: max_len={max_len!r}"
        )
    if pad is None:
        pad = "" if ragged.dtype == tf.string else 0
    return ragged.to_tensor(
        default_value=tf.constant(pad, dtype=ragged.dtype), shape=[None, *lengths]
    )
