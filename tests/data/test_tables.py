"""CSV, TSV and JSON-lines tables of labelled text (`zoo.data.labelled.read_labelled`).

What a label is (a string or an integer, never JSON `null`, `true`, `1.5`, a list or
an object), the text and label columns being different, and the line every record
and every error names when blank lines and quoted line breaks come before it. The
shared bad-file table (`tests/data/test_bad_inputs.py`) covers the malformed files.
"""

import pytest

from zoo.data.labelled import load_labelled, read_labelled
from zoo.errors import ConfigError, DataError

LABEL_RULE = "a label is a string or an integer"


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


# --- what a label is -----------------------------------------------------------------


@pytest.mark.parametrize(
    "label, described",
    [
        ("null", "null"),
        ("true", "true"),
        ("false", "false"),
        ("1.5", "1.5"),
        ("NaN", "NaN"),
        ("[1]", "a list"),
        ('{"stars": 5}', "a dict"),
    ],
)
def test_a_json_label_that_is_not_a_string_or_an_integer_is_refused(
    tmp_path, label, described
):
    path = _write(
        tmp_path / "r.jsonl",
        f'{{"text": "fine", "label": "pos"}}\n{{"text": "awful", "label": {label}}}\n',
    )
    with pytest.raises(DataError) as refused:
        read_labelled(path)
    assert (
        str(refused.value) == f"{path}:2: field 'label' holds {described}; {LABEL_RULE}"
    )


def test_json_labels_are_strings_and_integers(tmp_path):
    path = _write(
        tmp_path / "r.jsonl",
        '{"text": "a", "label": 5}\n'
        '{"text": "b", "label": 5.0}\n'
        '{"text": "c", "label": " 5.0 "}\n'
        '{"text": "d", "label": -2}\n'
        '{"text": "e", "label": "null"}\n'
        '{"text": "f", "label": "pos"}\n',
    )
    data = read_labelled(path)
    assert data.texts == ["a", "b", "c", "d", "e", "f"]
    assert data.names == ["5", "5", "5", "-2", "null", "pos"]
    assert data.label_names == ("-2", "5", "null", "pos")


@pytest.mark.parametrize(
    "text, described", [("null", "null"), ("5", "5"), ("true", "true")]
)
def test_a_json_text_that_is_not_a_string_is_refused(tmp_path, text, described):
    path = _write(tmp_path / "r.jsonl", f'{{"body": {text}, "stars": 1}}\n')
    with pytest.raises(DataError) as refused:
        read_labelled(path, "body", "stars")
    assert str(refused.value) == (
        f"{path}:1: field 'body' holds {described}; expected a string"
    )


def test_an_unpaired_surrogate_in_a_json_text_is_refused(tmp_path):
    path = _write(
        tmp_path / "r.jsonl",
        '{"text": "ok \\ud83d\\ude00", "label": 1}\n{"text": "x\\ud800", "label": 2}\n',
    )
    with pytest.raises(DataError) as refused:
        read_labelled(path)
    assert str(refused.value) == (
        f"{path}:2: field 'text' holds an unpaired surrogate (\\ud800), which is not "
        "text"
    )
    path.write_text('{"text": "ok \\ud83d\\ude00", "label": 1}\n', encoding="utf-8")
    assert read_labelled(path).texts == ["ok \U0001f600"]  # a surrogate pair is text


def test_csv_fields_are_strings_never_missing_values(tmp_path):
    path = _write(tmp_path / "r.csv", "text,label\nNA,null\nnan,true\nNone,NA\n")
    data = read_labelled(path)
    assert data.texts == ["NA", "nan", "None"]
    assert data.names == ["null", "true", "NA"]


# --- the text column is not the label column ------------------------------------------


def test_the_text_column_equal_to_the_label_column_is_refused(tmp_path):
    rows = "".join(f"review {i},{'ab'[i % 2]}\n" for i in range(20))
    table = _write(tmp_path / "r.csv", "text,label\n" + rows)
    message = (
        "The text and label columns must differ (training on the labels teaches "
        "nothing). Received: text_column={!r}, label_column={!r}"
    )
    for read, columns, shown in (
        (read_labelled, ("label", "label"), ("label", "label")),
        (read_labelled, (None, "text"), ("text", "text")),  # the default text column
        (load_labelled, ("label", "label"), ("label", "label")),
        (load_labelled, (1, 1), (1, 1)),
    ):
        with pytest.raises(ConfigError) as refused:
            read(table, *columns)
        assert str(refused.value) == message.format(*shown)
    lines = _write(tmp_path / "r.jsonl", '{"text": "a", "label": "b"}\n')
    with pytest.raises(ConfigError, match=r"text_column='text', label_column='text'"):
        read_labelled(lines, "text", "text")


# --- lines: blank lines, quoted line breaks ------------------------------------------


def test_sources_count_blank_lines_and_quoted_line_breaks(tmp_path):
    path = _write(
        tmp_path / "r.csv",
        "\n"  # 1: blank lines before the header are skipped
        "text,label\n"  # 2
        "\n"  # 3
        '"one\n'  # 4: a record of three lines
        "\n"
        'three",pos\n'
        "   \n"  # 7: blank
        "plain,neg\n"  # 8
        '""\n'  # 9: one empty field, a blank record
        '"say ""hi""",pos\n',  # 10
    )
    data = read_labelled(path)
    assert data.texts == ["one\n\nthree", "plain", 'say "hi"']
    assert data.names == ["pos", "neg", "pos"]
    assert data.sources == [f"{path}:4", f"{path}:8", f"{path}:10"]


_AFTER_A_QUOTED_LINE_BREAK = 'text,label\n"two\nlines",pos\n\n'  # record 2 at line 5


@pytest.mark.parametrize(
    "record, message",
    [
        (
            "hello, world,neg\n",
            "expected 2 comma-separated fields (as the header's columns ['text', "
            "'label']), found 3; quote a field that contains a comma "
            '("hello, world")',
        ),
        (
            "no label\n",
            "expected 2 comma-separated fields (as the header's columns ['text', "
            "'label']), found 1",
        ),
        (
            '"never closed,neg\nok,pos\n',
            "unclosed quote: the quoted field that starts on this line never ends; "
            'close it, and double every quote inside a field ("")',
        ),
        (
            '"He said "hi" there",neg\n',
            "malformed CSV (',' expected after '\"'); a field that contains a quote, "
            'a comma or a line break must be quoted, with inner quotes doubled ("")',
        ),
        (",neg\n", "empty 'text' (the text column)"),
    ],
)
def test_a_bad_record_names_its_first_line(tmp_path, record, message):
    path = _write(tmp_path / "r.csv", _AFTER_A_QUOTED_LINE_BREAK + record)
    with pytest.raises(DataError) as refused:
        read_labelled(path)
    assert str(refused.value) == f"{path}:5: {message}"


def test_line_ends_inside_a_quoted_field_read_as_newlines(tmp_path):
    path = tmp_path / "r.csv"
    path.write_bytes(b'text,label\r\n"first\r\nsecond",pos\r\nthird,neg\r\n')
    data = read_labelled(path)
    assert data.texts == ["first\nsecond", "third"]
    assert data.names == ["pos", "neg"]
    assert data.sources == [f"{path}:2", f"{path}:4"]


def test_tsv_columns_by_position_keep_quotes_as_text(tmp_path):
    path = _write(tmp_path / "r.tsv", '1\t"quoted\n\n0\tplain "text"\n')
    data = read_labelled(path, text_column=1, label_column=0)
    assert data.texts == ['"quoted', 'plain "text"']
    assert data.names == ["1", "0"]
    assert data.sources == [f"{path}:1", f"{path}:3"]
    with pytest.raises(DataError) as refused:
        read_labelled(path, text_column=2, label_column=0)
    assert str(refused.value) == (
        f"{path}:1: column 2 requested, but the first record has 2 tab-separated "
        "field(s)"
    )


def test_a_bad_json_label_in_a_split_file_names_that_file(tmp_path):
    rows = "".join(f'{{"text": "t{i}", "label": {i % 2}}}\n' for i in range(10))
    _write(tmp_path / "train.jsonl", rows)
    valid = _write(tmp_path / "valid.jsonl", '{"text": "v", "label": true}\n')
    with pytest.raises(DataError) as refused:
        load_labelled(tmp_path)
    assert str(refused.value) == f"{valid}:1: field 'label' holds true; {LABEL_RULE}"


def test_json_lines_fields_are_chosen_by_name(tmp_path):
    lines = _write(tmp_path / "r.jsonl", '{"text": "a", "label": "b"}\n')
    with pytest.raises(ConfigError) as refused:
        read_labelled(lines, 0, 1)
    assert str(refused.value) == (
        "JSON lines fields are chosen by name. Received: columns=(0, 1)"
    )
