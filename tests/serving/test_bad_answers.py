"""Servers that answer wrongly, slowly or too much: the clients refuse each answer
with one `AnswerError` line naming the server (host:port and model) and the problem,
within the request's deadline and without reading past the answer limit."""

import copy
import time

import numpy as np
import pytest

from tests.serving import bad_servers
from tests.serving.bad_servers import MODEL, good_outputs, http_server, json_answer
from zoo import cli
from zoo.serving import AnswerError, GrpcClient, RestClient, ServingError
from zoo.serving.outputs import output_rows
from zoo.serving.server_client import MIN_ANSWER_BYTES

TEXTS = {"text": ["a", "b", "c"]}


def _refusal(answer, inputs=TEXTS, **kwargs):
    """The `AnswerError` a REST client raises for `answer`, and the server."""
    with http_server(answer) as server:
        client = RestClient(server.address, MODEL, **{"timeout": 10, **kwargs})
        with pytest.raises(AnswerError) as refused:
            client.predict(inputs)
    message = str(refused.value)
    assert "\n" not in message
    return message, server


def test_a_good_answer_passes():
    with http_server(json_answer({"outputs": good_outputs(3)})) as server:
        answer = RestClient(server.address, MODEL, timeout=10).predict(TEXTS)
    assert answer["label"].tolist() == [b"pos"] * 3
    assert answer["probabilities"].dtype == np.float32
    assert answer["probabilities"].shape == (3, 2)
    assert server.requests == [{"signature_name": "serving_default", "inputs": TEXTS}]


WRONG = [
    (
        {"label": ["pos"], "probabilities": [[0.5, 0.5]]},
        "output 'label' has 1 rows for a request of 3 rows",
    ),
    (
        {"label": ["pos"] * 3, "probabilities": [[0.5, 0.5]]},
        "output 'probabilities' has 1 rows for a request of 3 rows",
    ),
    (
        {"label": "pos", "probabilities": [[0.5, 0.5]] * 3},
        "output 'label' has no rows (a scalar) for a request of 3 rows",
    ),
    (
        {"label": ["pos"] * 3},
        "the answer lacks the declared output(s) probabilities of signature "
        "'serving_default'",
    ),
    (
        {**good_outputs(3), "extra": [1, 2, 3]},
        "the answer has output(s) extra that signature 'serving_default' does not "
        "declare (it declares label, probabilities)",
    ),
    (
        {"label": ["pos"] * 3, "probabilities": [[0.2, 0.3, 0.5]] * 3},
        "output 'probabilities' has shape (3, 3); the signature declares (?, 2)",
    ),
    (
        {"label": ["pos"] * 3, "probabilities": [0.5] * 3},
        "output 'probabilities' has shape (3); the signature declares (?, 2)",
    ),
    (
        {"label": [1, 2, 3], "probabilities": [[0.5, 0.5]] * 3},
        "output 'label' holds a number (1) where the signature declares strings",
    ),
    (
        {"label": ["pos"] * 3, "probabilities": [["a", "b"]] * 3},
        "output 'probabilities' holds text where the signature declares numbers",
    ),
    (
        {"label": ["pos"] * 3, "probabilities": [[True, False]] * 3},
        "output 'probabilities' holds a boolean (true) where the signature declares "
        "numbers",
    ),
    (
        {"label": ["pos"] * 3, "probabilities": [[0.5, 0.5], [0.5], [0.5, 0.5]]},
        "output 'probabilities' is a ragged array (lists of 1 to 2 values at depth 2)",
    ),
    (
        {"label": ["pos", ["pos"], "pos"], "probabilities": [[0.5, 0.5]] * 3},
        "output 'label' is a ragged array (lists and values side by side at depth 2)",
    ),
    (
        {"label": ["pos", {"b64": "!!"}, "pos"], "probabilities": [[0.5, 0.5]] * 3},
        "output 'label' holds a {\"b64\": ...} value that is not base64",
    ),
]


@pytest.mark.parametrize(("outputs", "problem"), WRONG)
def test_answers_that_do_not_fit_the_request_or_signature(outputs, problem):
    message, server = _refusal(json_answer({"outputs": outputs}))
    assert message == f"{server.address} (model 'm'): {problem}"


BAD_BODIES = [
    (b"<html>oops</html>", "the answer is not JSON (Expecting value: line 1 column 1 "),
    (b'{"outputs": "caf\xe9"}', "the answer is not UTF-8 (byte 0xe9 at offset 16)"),
    (b'"just a string"', "the answer is a JSON string, not an object"),
    (b"[1, 2, 3]", "the answer is a JSON array, not an object"),
    (b"12", "the answer is a JSON number, not an object"),
    (b"null", "the answer is a JSON null, not an object"),
    (b"[" * 100_000 + b"]" * 100_000, "the answer's JSON nests too deeply"),
    (b'{"predictions": []}', "the answer has no 'outputs'"),
    (
        b'{"outputs": [1, 2]}',
        "'outputs' is an array, not an object naming the signature's outputs "
        "(label, probabilities)",
    ),
]


@pytest.mark.parametrize(("body", "problem"), BAD_BODIES)
def test_answers_that_are_not_json_objects(body, problem):
    message, server = _refusal(bad_servers.raw_answer(body))
    assert message.startswith(f"{server.address} (model 'm'): {problem}")


def test_answers_that_are_not_http():
    metadata = bad_servers.http_bytes(bad_servers.METADATA)
    cases = [
        (b"SSH-2.0-OpenSSH_9.6\r\n", "the answer is not HTTP (BadStatusLine: "),
        (b"HTTP/1.1 200 OK\r\n" + b"X" * 70_000, "the answer is not HTTP (LineTooLong"),
        (b"", "the server closed the connection without an answer"),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{}",
            "the answer ended after 2 bytes, before its end",
        ),
    ]
    for reply, problem in cases:
        with bad_servers.raw_server(metadata, reply) as server:
            client = RestClient(server.address, MODEL, timeout=10)
            with pytest.raises(AnswerError) as refused:
                client.predict(TEXTS)
        assert str(refused.value).startswith(
            f"{server.address} (model 'm'): {problem}"
        ), str(refused.value)
        assert server.connections == 2
    with bad_servers.raw_server(b"\x00\x01 not http") as server:
        with pytest.raises(AnswerError, match=r"\(model 'm'\): the answer is not HTTP"):
            RestClient(server.address, MODEL, timeout=10).signature_spec()


def test_a_redirect_is_refused_not_followed():
    with bad_servers.raw_server(b"") as target:
        location = f"http://{target.address}/v1/models/m:predict"
        message, server = _refusal(bad_servers.redirect(location))
        assert target.connections == 0
    assert message == (
        f"{server.address} (model 'm'): HTTP 302 redirect to {location} from "
        f"http://{server.address}/v1/models/m:predict; redirects are not followed "
        "(give the server that answers as --server)"
    )


@pytest.mark.parametrize("where", ["headers", "body"])
def test_one_deadline_bounds_a_server_that_drips(where):
    # One byte every 0.2 s never stalls a single socket read for 1.5 s; the deadline
    # of the whole request still ends it.
    start = time.monotonic()
    message, server = _refusal(bad_servers.drip(0.2, where), timeout=1.5)
    elapsed = time.monotonic() - start
    assert message == f"{server.address} (model 'm'): no complete answer within 1.5 s"
    assert 1.4 < elapsed < 1.5 + 2
    assert server.sent >= 3  # it did drip


def test_deadline_through_the_command(capsys):
    with http_server(bad_servers.drip(0.5)) as server:
        start = time.monotonic()
        argv = ["predict", "--server", server.address, "--model", MODEL, "--rest"]
        code = cli.main([*argv, "--timeout", "2", "--", "a fine film"])
        elapsed = time.monotonic() - start
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err == (
        f"error: {server.address} (model 'm'): no complete answer within 2 s\n"
    )
    assert elapsed < 2 + 2


def test_answer_limit_follows_the_signature_and_the_batch():
    client = RestClient("127.0.0.1:1", MODEL)
    client._specs = {"serving_default": {"inputs": {}, "outputs": {"a": 0, "b": 0}}}
    assert MIN_ANSWER_BYTES == 16 << 20
    assert client.answer_limit(3) == 16 << 20  # the floor
    assert client.answer_limit(64) == 64 * 2 << 20  # 1 MB per row and output
    assert RestClient("127.0.0.1:1", MODEL, max_answer_bytes=5).answer_limit(64) == 5


@pytest.mark.parametrize("declare_length", [True, False])
def test_a_huge_answer_is_refused_at_the_limit(declare_length):
    total = 400 << 20
    message, server = _refusal(
        bad_servers.endless(total, declare_length), max_answer_bytes=1 << 20
    )
    assert message == (
        f"{server.address} (model 'm'): the answer is larger than 1 MB, the limit "
        "given (--max-answer-mb raises it)"
    )
    # What the server got out before the client hung up: the limit, plus what the
    # kernel's socket buffers hold (a few MB on loopback), far from 400 MB.
    assert server.sent < 40 << 20
    if not declare_length:
        assert server.sent > 1 << 20


def test_the_default_limit_names_the_batch():
    message, server = _refusal(bad_servers.endless(400 << 20, False))
    assert message.endswith(
        ": the answer is larger than 16 MB, the limit for 3 rows "
        "(--max-answer-mb raises it)"
    )
    assert (16 << 20) < server.sent < 64 << 20


def test_http_errors_name_the_server_and_stay_one_line():
    answer = json_answer({"error": "bad\ninput  here"}, status=400)
    with http_server(answer) as server:
        with pytest.raises(ServingError) as refused:
            RestClient(server.address, MODEL, timeout=10).predict(TEXTS)
    assert str(refused.value) == (
        f"http://{server.address}/v1/models/m:predict: HTTP 400: bad input here"
    )
    assert refused.value.code == "INVALID_ARGUMENT"


def test_output_rows_refuses_a_wrong_row_count_instead_of_copying():
    with pytest.raises(AnswerError) as refused:
        output_rows({"label": np.array([b"pos"], dtype=object)}, 3)
    assert str(refused.value) == "output 'label' has 1 rows for a request of 3 rows"
    rows = output_rows({"label": np.array([b"a", b"b"], dtype=object)}, 2)
    assert rows == [{"label": "a"}, {"label": "b"}]


def test_predict_command_refuses_a_one_row_answer_for_three_texts(capsys):
    one_row = json_answer({"outputs": good_outputs(1)})
    with http_server(one_row) as server:
        argv = ["predict", "--server", server.address, "--model", MODEL, "--rest"]
        code = cli.main([*argv, "a", "b", "c"])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err == (
        f"error: {server.address} (model 'm'): output 'label' has 1 rows for a "
        "request of 3 rows\n"
    )
    assert server.requests[0]["inputs"] == {"text": ["a", "b", "c"]}


# --- gRPC and REST against the stand-in for TF Serving, answering wrongly ---------


@pytest.fixture(scope="module")
def reader_export(tmp_path_factory):
    from tests.serving import tiny_exports

    return tiny_exports.export_reader(tmp_path_factory.mktemp("bad") / "saved_models")


READER = {"story": ["s one.\ns two."] * 3, "question": ["q?"] * 3}


def _clients(served, **kwargs):
    return [
        GrpcClient(served.grpc, served.model, timeout=30, **kwargs),
        RestClient(served.rest, served.model, timeout=30, **kwargs),
    ]


# (tamper, gRPC's problem, REST's problem where it differs)
TAMPERED = [
    (
        lambda out: {k: v[:1] for k, v in out.items()},
        "output 'answer' has 1 rows for a request of 3 rows",
        None,
    ),
    (
        lambda out: {"answer": out["answer"]},
        "the answer lacks the declared output(s) attention of signature "
        "'serving_default'",
        # TF Serving's REST API leaves the name out of a lone output
        "'outputs' is an array, not an object naming the signature's outputs "
        "(answer, attention)",
    ),
    (
        lambda out: {**out, "attention": out["attention"][:, 0]},
        "output 'attention' has shape (3); the signature declares (?, ?)",
        None,
    ),
    (
        lambda out: {**out, "answer": out["answer"][:2]},
        "output 'answer' has 2 rows for a request of 3 rows",
        None,
    ),
]


@pytest.mark.parametrize(("tamper", "problem", "rest_problem"), TAMPERED)
def test_both_protocols_refuse_wrong_answers(
    reader_export, serve, tamper, problem, rest_problem
):
    served = serve(reader_export, tamper=tamper)
    grpc_client, rest_client = _clients(served)
    for client, address, expected in (
        (grpc_client, served.grpc, problem),
        (rest_client, served.rest, rest_problem or problem),
    ):
        with client, pytest.raises(AnswerError) as refused:
            client.predict(READER)
        assert str(refused.value) == f"{address} (model 'reader'): {expected}"


def test_grpc_refuses_a_dtype_and_a_huge_declared_shape(reader_export, serve):
    import tensorflow as tf
    from tensorflow.core.framework import tensor_pb2

    served = serve(
        reader_export,
        tamper=lambda out: {**out, "attention": out["attention"].astype(np.float64)},
    )
    with GrpcClient(served.grpc, "reader", timeout=30) as client:
        with pytest.raises(AnswerError) as refused:
            client.predict(READER)
    assert str(refused.value) == (
        f"{served.grpc} (model 'reader'): output 'attention' is float64; the "
        "signature declares float32"
    )
    # A few bytes on the wire that would decode to 3 x 10^9 floats.
    bomb = tensor_pb2.TensorProto(dtype=tf.float32.as_datatype_enum, float_val=[0])
    for size in (3, 10**9):
        bomb.tensor_shape.dim.add(size=size)
    served = serve(reader_export, tamper=lambda out: {**out, "attention": bomb})
    with GrpcClient(served.grpc, "reader", timeout=30) as client:
        with pytest.raises(AnswerError) as refused:
            client.predict(READER)
    assert str(refused.value) == (
        f"{served.grpc} (model 'reader'): the answer is larger than 16 MB, the limit "
        "for 3 rows (--max-answer-mb raises it)"
    )


def test_grpc_deadline_and_given_limit(reader_export, serve):
    def slow(out):
        time.sleep(2.5)
        return out

    served = serve(reader_export, tamper=slow)
    client = GrpcClient(served.grpc, "reader", timeout=1)
    client.signature_spec()
    start = time.monotonic()
    with client, pytest.raises(AnswerError) as refused:
        client.predict(READER)
    assert time.monotonic() - start < 1 + 1
    assert str(refused.value) == (
        f"{served.grpc} (model 'reader'): no complete answer within 1 s"
    )
    assert refused.value.code == "DEADLINE_EXCEEDED"
    served = serve(reader_export)
    with GrpcClient(served.grpc, "reader", timeout=30, max_answer_bytes=16) as client:
        with pytest.raises(AnswerError) as refused:
            client.predict(READER)  # attention: 3 x 2 float32, 24 bytes
    assert str(refused.value) == (
        f"{served.grpc} (model 'reader'): the answer is larger than 16 bytes, the "
        "limit given (--max-answer-mb raises it)"
    )


NOT_FINITE = [
    (
        b"NaN",
        "{server} (model 'm'): output 'probabilities' holds nan, not a finite number",
    ),
    (
        b"-Infinity",
        "{server} (model 'm'): output 'probabilities' holds -inf, not a finite number",
    ),
    (
        b"1e39",
        "{server} (model 'm'): output 'probabilities' holds a number out of "
        "the range of float32",
    ),
]


@pytest.mark.parametrize(("number", "problem"), NOT_FINITE)
def test_a_number_that_is_not_finite_is_refused_not_printed(capsys, number, problem):
    body = b'{"outputs": {"label": ["pos"], "probabilities": [[%s, 0.5]]}}' % number
    with http_server(bad_servers.raw_answer(body)) as server:
        argv = ["predict", "--server", server.address, "--model", MODEL, "--rest"]
        code = cli.main([*argv, "--", "a fine film"])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err == f"error: {problem.format(server=server.address)}\n"


def test_control_characters_from_a_server_are_shown_not_obeyed(capsys):
    said = {"error": "overloaded \x1b]0;title\x07\x1b[2J"}
    with http_server(json_answer(said, status=500)) as server:
        argv = ["predict", "--server", server.address, "--model", MODEL, "--rest"]
        code = cli.main([*argv, "--", "a fine film"])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err == (
        f"error: http://{server.address}/v1/models/m:predict: HTTP 500: overloaded "
        "\\x1b]0;title\\x07\\x1b[2J\n"
    )


def test_the_python_client_refuses_a_nan_answer_too():
    body = b'{"outputs": {"label": ["pos"], "probabilities": [[NaN, 0.5]]}}'
    with http_server(bad_servers.raw_answer(body)) as server:
        with pytest.raises(AnswerError) as refused:
            RestClient(server.address, MODEL, timeout=10).predict({"text": ["a"]})
    assert str(refused.value) == (
        f"{server.address} (model 'm'): output 'probabilities' holds nan, not a "
        "finite number"
    )


@pytest.mark.parametrize("dtype", ["DT_RESOURCE", "DT_COMPLEX64", "DT_NO_SUCH"])
def test_an_output_type_the_client_cannot_read_is_refused(dtype):
    metadata = copy.deepcopy(bad_servers.METADATA)
    signatures = metadata["metadata"]["signature_def"]["signature_def"]
    signatures["serving_default"]["outputs"]["probabilities"]["dtype"] = dtype
    answer = json_answer({"outputs": good_outputs(3)})
    with http_server(answer, metadata=metadata) as server:
        with pytest.raises(AnswerError) as refused:
            RestClient(server.address, MODEL, timeout=10).predict(TEXTS)
    declared = dtype.removeprefix("DT_").lower()
    assert str(refused.value) == (
        f"{server.address} (model 'm'): output 'probabilities' is declared "
        f"{declared}, a type this client does not read"
    )
