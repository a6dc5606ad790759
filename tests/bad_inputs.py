"""Bad data files: one shared table that every reader is tested against.

Each `BadFile` is a file's bytes (or a function that spoils a reader's valid sample),
the readers ("formats") it applies to, and what must happen: `error`, a fragment of
the `zoo.errors.DataError` message, with the `line` it must name; or `error=None`,
the file must be read, and then never with a byte-order mark in a text or label.
`tests/data/test_bad_inputs.py` runs every reader over every case that applies
(`cases_for(format)`); a new case added here is tested against every reader at once.

Samples given to the spoiling functions hold the word `MARK` on their line 2, inside
a text field, and end with a newline. The serving side has its own table of bad
request strings (`tests.export.export_testing.BAD_TEXT_INPUTS`).
"""

import dataclasses
import gzip

FIELD_LIMIT = 300_000
"""`zoo.data.files.MAX_FIELD_CHARS` while these cases run (above `csv`'s 128 Ki)."""

TABLE_FORMATS = ("csv", "tsv", "jsonl")
"""Documents and sentences read as tables (header `text`, `label`)."""

LINE_FORMATS = ("label_tsv", "sst", "babi", "vectors", "line_pairs", "pair_tsv")
"""The other readers: sentence `label<TAB>text`, SST trees, bAbI, word vectors,
line-aligned parallel files, parallel TSV."""

ALL_FORMATS = TABLE_FORMATS + LINE_FORMATS


@dataclasses.dataclass(frozen=True)
class BadFile:
    """One bad (or merely awkward) data file and what a reader must do with it.

    Attributes:
        name: the case's name (the test id).
        formats: the readers it applies to (see `ALL_FORMATS`).
        data: the file's bytes, or `sample -> bytes` spoiling a reader's sample.
        error: fragment of the expected `DataError` message; None: must be read.
        line: the line the message must name (None: the file only).
        suffix: appended to the file name (".gz" for compressed cases).
        same_as_sample: (accepted cases) the result equals the sample's.
        contains: (accepted cases) a text or token that the result must hold.
    """

    name: str
    formats: tuple
    data: object
    error: str = None
    line: int = None
    suffix: str = ""
    same_as_sample: bool = False
    contains: str = None

    def content(self, sample):
        return self.data(sample) if callable(self.data) else self.data


def _truncated_gzip(sample):
    packed = gzip.compress(sample * 50)
    return packed[: len(packed) // 2]


def _second_line(sample, replacement):
    assert b"MARK" in sample.split(b"\n")[1], "samples hold MARK on line 2"
    return sample.replace(b"MARK", replacement, 1)


_BIG = "x" * (FIELD_LIMIT + 1)
_LARGE = "y" * 200_000  # over csv's default limit of 131,072, under FIELD_LIMIT

BAD_FILES = [
    # --- every reader ---------------------------------------------------------------
    BadFile(
        "byte_order_mark",
        ALL_FORMATS,
        lambda sample: b"\xef\xbb\xbf" + sample,
        same_as_sample=True,
    ),
    BadFile(
        "crlf_line_ends",
        ALL_FORMATS,
        lambda sample: sample.replace(b"\n", b"\r\n"),
        same_as_sample=True,
    ),
    BadFile(
        "invalid_utf8",
        ALL_FORMATS,
        lambda sample: _second_line(sample, b"caf\xe9 \xff"),
        error="invalid UTF-8",
        line=2,
    ),
    BadFile(
        "nul_and_control_characters",
        ALL_FORMATS,
        lambda sample: _second_line(sample, b"nul\x00in\x01side"),
        contains="nul\x00in\x01side",
    ),
    BadFile(
        "truncated_gzip",
        ALL_FORMATS,
        _truncated_gzip,
        error="truncated or corrupt gzip",
        suffix=".gz",
    ),
    BadFile(
        "not_gzip",
        ALL_FORMATS,
        lambda sample: sample,
        error="truncated or corrupt gzip",
        suffix=".gz",
    ),
    # --- CSV ------------------------------------------------------------------------
    BadFile(
        "csv_extra_field",
        ("csv",),
        b"text,label\ngood film,pos\nhello, world,neg\n",
        error="expected 2 comma-separated fields (as the header's columns "
        "['text', 'label']), found 3; quote a field that contains a comma",
        line=3,
    ),
    BadFile(
        "csv_missing_field",
        ("csv",),
        b"text,label\ngood film,pos\nno label here\n",
        error="expected 2 comma-separated fields",
        line=3,
    ),
    BadFile(
        "csv_unclosed_quote",
        ("csv",),
        b'text,label\ngood film,pos\n"never closed,neg\nbad film,neg\n',
        error="unclosed quote",
        line=3,
    ),
    BadFile(
        "csv_unclosed_quote_in_last_column",
        ("csv",),
        b'text,label\ngood film,pos\nbad film,"neg\nworse film,neg\n',
        error="unclosed quote",
        line=3,
    ),
    BadFile(
        "csv_text_after_closing_quote",
        ("csv",),
        b'text,label\ngood film,pos\n"quoted" then more,neg\n',
        error="malformed CSV",
        line=3,
    ),
    BadFile(
        "csv_field_over_limit",
        ("csv",),
        f'text,label\ngood film,pos\n"{_BIG}",neg\n'.encode(),
        error=f"longer than {FIELD_LIMIT} characters",
        line=3,
    ),
    BadFile(
        "csv_large_field_within_limit",
        ("csv",),
        f'text,label\n"{_LARGE}",pos\nbad film,neg\n'.encode(),
        contains=_LARGE,
    ),
    BadFile(
        "csv_quoted_comma_and_line_break",
        ("csv",),
        b'text,label\n"hello, world\nsecond line",pos\n"say ""hi""",neg\n',
        contains='say "hi"',
    ),
    BadFile(
        "csv_missing_column",
        ("csv",),
        b"review,label\ngood film,pos\n",
        error="missing column(s) ['text']; the header has columns ['review', 'label']",
        line=1,
    ),
    BadFile("csv_empty_file", ("csv",), b"", error="the file is empty"),
    BadFile("csv_header_only", ("csv",), b"text,label\n", error="a header but no rows"),
    # --- TSV with a header ----------------------------------------------------------
    BadFile(
        "tsv_extra_field",
        ("tsv",),
        b"text\tlabel\ngood film\tpos\nhello\tworld\tneg\n",
        error="expected 2 tab-separated fields",
        line=3,
    ),
    BadFile(
        "tsv_missing_field",
        ("tsv",),
        b"text\tlabel\ngood film\tpos\nno label\n",
        error="found 1",
        line=3,
    ),
    BadFile(
        "tsv_field_over_limit",
        ("tsv",),
        f"text\tlabel\ngood film\tpos\n{_BIG}\tneg\n".encode(),
        error=f"longer than {FIELD_LIMIT} characters",
        line=3,
    ),
    BadFile(
        "tsv_quotes_are_text",
        ("tsv",),
        b'text\tlabel\n"unclosed quote\tpos\nbad film\tneg\n',
        contains='"unclosed quote',
    ),
    # --- JSON lines -----------------------------------------------------------------
    BadFile(
        "jsonl_invalid_json",
        ("jsonl",),
        b'{"text": "good", "label": "pos"}\n{"text": "bad", "label": \n',
        error="invalid JSON",
        line=2,
    ),
    BadFile(
        "jsonl_not_an_object",
        ("jsonl",),
        b'{"text": "good", "label": "pos"}\n["bad", "neg"]\n',
        error="a JSON list, expected an object",
        line=2,
    ),
    BadFile(
        "jsonl_missing_field",
        ("jsonl",),
        b'{"text": "good", "label": "pos"}\n{"text": "bad"}\n',
        error="missing field(s) ['label']",
        line=2,
    ),
    BadFile(
        "jsonl_nested_value",
        ("jsonl",),
        b'{"text": "good", "label": "pos"}\n{"text": {"a": 1}, "label": "neg"}\n',
        error="field 'text' holds a dict",
        line=2,
    ),
    BadFile(
        "jsonl_array_file",
        ("jsonl",),
        b'[{"text": "good", "label": "pos"}]\n',
        error="a JSON array; expected JSON lines",
        line=1,
    ),
    BadFile(
        "jsonl_field_over_limit",
        ("jsonl",),
        f'{{"text": "ok", "label": "pos"}}\n{{"text": "{_BIG}", "label": "neg"}}\n'.encode(),
        error=f"longer than {FIELD_LIMIT} characters",
        line=2,
    ),
    BadFile("jsonl_empty_file", ("jsonl",), b"\n\n", error="no records"),
    # --- sentence TSV (label<TAB>sentence) ------------------------------------------
    BadFile(
        "label_tsv_no_tab",
        ("label_tsv",),
        b"pos\tgood film\nno tab here\n",
        error="expected 'label<TAB>sentence'",
        line=2,
    ),
    BadFile(
        "label_tsv_empty_sentence",
        ("label_tsv",),
        b"pos\tgood film\nneg\t  \n",
        error="empty 'sentence'",
        line=2,
    ),
    # --- SST trees ------------------------------------------------------------------
    BadFile(
        "sst_unbalanced",
        ("sst",),
        b"(3 (2 a) (4 good))\n(3 (2 a) (4 good)\n",
        error="not closed",
        line=2,
    ),
    # --- bAbI -----------------------------------------------------------------------
    BadFile(
        "babi_line_without_number",
        ("babi",),
        b"1 Mary moved to the hall.\nMary went home.\n",
        error="must start with a number",
        line=2,
    ),
    BadFile(
        "babi_id_out_of_order",
        ("babi",),
        b"1 Mary moved to the hall.\n3 John went home.\n",
        error="restart at 1 or follow 1",
        line=2,
    ),
    BadFile(
        "babi_question_without_answer",
        ("babi",),
        b"1 Mary moved to the hall.\n2 Where is Mary?\t\t1\n",
        error="question<TAB>answer",
        line=2,
    ),
    BadFile(
        "babi_bad_supporting_id",
        ("babi",),
        b"1 Mary moved to the hall.\n2 Where is Mary?\thall\tone\n",
        error="supporting ids must be integers",
        line=2,
    ),
    # --- word vectors ---------------------------------------------------------------
    BadFile(
        "vectors_token_with_spaces",
        ("vectors",),
        b"new york 0.5 0.25 0.125\ngood 1 2 3\nfilm 4 5 6\n",
        contains="new york",
    ),
    BadFile(
        "vectors_short_vector",
        ("vectors",),
        b"good 1 2 3\nfilm 4 5\nbad 7 8 9\n",
        error="vector has 2 values, expected 3",
        line=2,
    ),
    BadFile(
        "vectors_not_a_number",
        ("vectors",),
        b"good 1 2 3\nfilm 4 x 6\n",
        error="non-number",
        line=2,
    ),
    BadFile(
        "vectors_binary_word2vec",
        ("vectors",),
        b"2 3\ngood \x00\x00\x80?\xcd\xcc\xcc=\x00\x00\x00@\n",
        error="not UTF-8",
        line=2,
    ),
    BadFile("vectors_empty_file", ("vectors",), b"\n", error="no vectors"),
]
"""Every case; `cases_for(format)` selects those of one reader."""


def cases_for(format):
    """The cases of `BAD_FILES` that apply to the reader `format`."""
    if format not in ALL_FORMATS:
        raise ValueError(f"Unknown format {format!r}; expected one of {ALL_FORMATS}")
    return [case for case in BAD_FILES if format in case.formats]
