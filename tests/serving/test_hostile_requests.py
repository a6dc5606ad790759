"""Values that are not text where a signature takes text: refused with one line
naming the input (and, from a file, the file and line), never fed to the model."""

import json

import numpy as np
import pytest

from zoo import cli
from zoo.errors import ConfigError, DataError
from zoo.serving import GrpcClient, RestClient, SavedModelSession
from zoo.serving.inputs import read_rows
from zoo.serving.saved_model_session import as_input_array

# (JSON value, how the error names it)
NOT_TEXT = [
    (5, "a number (5)"),
    (400000000, "a number (400000000)"),
    (2.5, "a number (2.5)"),
    (True, "a boolean (true)"),
    (None, "null"),
    (["a", "b"], 'a list (["a", "b"])'),
    ({"b64": "AAAA"}, 'an object ({"b64": "AAAA"})'),
]


@pytest.mark.parametrize(("value", "named"), NOT_TEXT)
def test_jsonl_refuses_what_is_not_a_string(tmp_path, value, named):
    path = tmp_path / "in.jsonl"
    path.write_text(
        json.dumps({"text": "fine"}) + "\n\n" + json.dumps({"text": value}) + "\n"
    )
    with pytest.raises(DataError) as refused:
        read_rows(path, ["text"])
    assert str(refused.value) == (
        f"{path}:3: input field 'text' must be a string, found {named}"
    )


def test_jsonl_nan_and_long_values_are_named_briefly(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text('{"text": NaN}\n')
    with pytest.raises(DataError, match=r":1: .* found a number \(NaN\)$"):
        read_rows(path, ["text"])
    path.write_text(json.dumps({"text": list(range(100))}) + "\n")
    with pytest.raises(DataError) as refused:
        read_rows(path, ["text"])
    assert str(refused.value).endswith(
        "found a list ([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11...)"
    )


@pytest.mark.parametrize(
    "value", [5, 400000000, 2.5, True, None, np.int64(3), np.float32(1.0)]
)
def test_as_input_array_refuses_non_text_for_a_string_input(value):
    with pytest.raises(ConfigError) as refused:
        as_input_array(["ok", value], "string", "text")
    message = str(refused.value)
    assert message.startswith("input 'text' takes text (str or bytes); value 1 is ")
    assert "\n" not in message


def test_as_input_array_keeps_text_and_converts_numbers():
    out = as_input_array([["caf\u00e9", b"\xff"]], "string")
    assert out.dtype == object and out.shape == (1, 2)
    assert out.tolist() == [["caf\u00e9".encode(), b"\xff"]]
    np.testing.assert_array_equal(as_input_array([1, 2], "int64"), [1, 2])
    with pytest.raises(ConfigError, match=r"^input 'ids' takes int64 values; "):
        as_input_array(["x"], "int64", "ids")


def test_predict_command_refuses_numbers_with_file_and_line(
    small_exports, tmp_path, capsys
):
    path = tmp_path / "numbers.jsonl"
    path.write_text('{"text": "A fine film."}\n{"text": 5}\n')
    code = cli.main(["predict", small_exports["classifier"], "-i", str(path)])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert err == (
        f"error: {path}:2: input field 'text' must be a string, found a number (5)\n"
    )


def test_local_and_server_clients_refuse_numbers(small_exports, serve):
    with SavedModelSession(small_exports["classifier"]) as model:
        with pytest.raises(ConfigError, match=r"^input 'text' takes text .* int 5$"):
            model.predict({"text": ["fine", 5]})
    served = serve(small_exports["classifier"])
    for cls, address in ((GrpcClient, served.grpc), (RestClient, served.rest)):
        with cls(address, served.model, timeout=30) as client:
            with pytest.raises(ConfigError) as refused:
                client.predict({"text": ["fine", 2.5]})
            assert str(refused.value) == (
                "input 'text' takes text (str or bytes); value 1 is float 2.5"
            ), cls.__name__
            answer = client.predict({"text": ["fine"]})
            assert answer["label"].shape == (1,)
