"""The gRPC and REST clients against stand-ins for TF Serving give the answers of the
local loader; errors are one `ServingError` / `ConfigError` line."""

import json
import socket
import urllib.error
import urllib.request

import numpy as np
import pytest

from tests.serving.tiny_exports import QUESTION, STORY
from zoo.errors import ConfigError
from zoo.serving import GrpcClient, RestClient, SavedModelSession, ServingError
from zoo.serving.outputs import output_rows

TEXTS = ["The film was good.", "awful plot", "", "caf\u00e9 \u4e2d\u6587"]
READER = {
    "story": [STORY, "One line only.", ""],
    "question": [QUESTION, "Why?", "Empty story?"],
}


def _rows(outputs):
    return output_rows(outputs, len(next(iter(outputs.values()))))


def _clients(served):
    return {
        "grpc": GrpcClient(served.grpc, served.model, timeout=30),
        "rest": RestClient(served.rest, served.model, timeout=30),
    }


def test_local_loader(small_exports):
    with SavedModelSession(small_exports["classifier"]) as model:
        assert (model.name, model.version) == ("tiny", 1)
        assert model.signature_spec() == {
            "inputs": {"text": "string"},
            "outputs": {"label": "string", "probabilities": "float32"},
        }
        out = model.predict({"text": TEXTS})
        assert out["label"].tolist()[:2] == [b"positive", b"negative"]
        np.testing.assert_allclose(out["probabilities"].sum(axis=1), 1.0, rtol=1e-5)
        with pytest.raises(ConfigError, match="no signature 'nope'.*preprocess"):
            model.predict({"text": TEXTS}, "nope")
        with pytest.raises(ConfigError) as wrong:
            model.predict({"txt": TEXTS})
        assert str(wrong.value) == (
            "signature 'serving_default' takes the inputs text; given: txt"
        )
        with pytest.raises(ServingError) as over:
            model.predict({"text": ["a"] * 257})
        assert over.value.code == "INVALID_ARGUMENT"
        assert over.value.message == (
            "assertion failed: [request batch of] [257] [rows exceeds "
            "max_batch_size=256; split the request]"
        )
    with SavedModelSession(small_exports["reader"]) as model:
        out = model.predict(READER)
        assert out["answer"].tolist() == [
            b"Mary moved to the bathroom.",
            b"One line only.",
            b"",
        ]
        assert out["attention"].shape == (3, 2)
        assert out["attention"][1].tolist()[1] == 0.0  # past the story's last line
        np.testing.assert_allclose(out["attention"].sum(axis=1), 1.0, rtol=1e-5)


def test_grpc_and_rest_answer_as_the_local_loader(small_exports, serve):
    served = {}
    for key, inputs in (("classifier", {"text": TEXTS}), ("reader", READER)):
        with SavedModelSession(small_exports[key]) as model:
            local = _rows(model.predict(inputs))
            served[key] = serve(small_exports[key])
            for protocol, client in _clients(served[key]).items():
                with client:
                    assert client.signature_spec() == model.signature_spec()
                    remote = _rows(client.predict(inputs))
                    assert remote == local, protocol
    # A single-output signature (REST then omits the output's name) and bytes that
    # are not UTF-8 (REST sends them as {"b64": ...}).
    bad_utf8 = np.array([b"caf\xe9 \xff good", b"ok"], dtype=object)
    with SavedModelSession(small_exports["classifier"]) as model:
        local = model.predict({"text": bad_utf8}, "preprocess")
    for protocol, client in _clients(served["classifier"]).items():
        remote = client.predict({"text": bad_utf8}, "preprocess")
        assert list(remote) == ["token_ids"], protocol
        np.testing.assert_array_equal(remote["token_ids"], local["token_ids"])
        assert remote["token_ids"].dtype == np.int64


def test_refusals_are_serving_errors(small_exports, serve):
    served = serve(small_exports["reader"])
    for protocol, client in _clients(served).items():
        with pytest.raises(ServingError) as over:
            client.predict({"story": ["s"] * 9, "question": ["q"] * 9})
        assert over.value.code == "INVALID_ARGUMENT", protocol
        assert "[9] [rows exceeds max_batch_size=8; split the request]" in str(
            over.value
        )
        with pytest.raises(ServingError) as mismatch:
            client.predict({"story": ["s"] * 2, "question": ["q"]})
        assert "same batch size" in str(mismatch.value), protocol
        with pytest.raises(ConfigError, match="no signature 'nope'"):
            client.predict({"story": ["s"], "question": ["q"]}, "nope")
    for cls, address in ((GrpcClient, served.grpc), (RestClient, served.rest)):
        for kwargs in ({"model": "other"}, {"model": "reader", "version": 7}):
            with pytest.raises(ServingError) as missing:
                cls(address, **kwargs).predict({"story": ["s"], "question": ["q"]})
            assert missing.value.code == "NOT_FOUND"
            assert "Servable not found" in str(missing.value)
        assert cls(address, "reader", version=1).signature_spec()["inputs"] == {
            "question": "string",
            "story": "string",
        }
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        closed = f"127.0.0.1:{s.getsockname()[1]}"
    for cls in (GrpcClient, RestClient):
        with pytest.raises(ServingError) as down:
            cls(closed, "reader", timeout=5).predict(
                {"story": ["s"], "question": ["q"]}
            )
        assert down.value.code == "UNAVAILABLE"
        assert "cannot reach TF Serving's" in str(down.value)
        assert closed in str(down.value)


def _http(url, body=None):
    data = None if body is None else json.dumps(body).encode()
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=data)) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_rest_contract(small_exports, serve):
    served = serve(small_exports["reader"])
    url = f"http://{served.rest}/v1/models/reader"
    status, answer = _http(
        url + ":predict", {"inputs": {"story": [STORY], "question": [QUESTION]}}
    )
    assert status == 200
    assert answer["outputs"]["answer"] == ["Mary moved to the bathroom."]
    assert len(answer["outputs"]["attention"][0]) == 2
    status, rows = _http(
        url + "/versions/1:predict",
        {"instances": [{"story": STORY, "question": QUESTION}]},
    )
    assert (
        status == 200
        and rows["predictions"][0]["answer"] == answer["outputs"]["answer"][0]
    )
    status, meta = _http(url + "/metadata")
    assert status == 200 and meta["model_spec"]["name"] == "reader"
    signature = meta["metadata"]["signature_def"]["signature_def"]["serving_default"]
    assert signature["inputs"]["story"]["dtype"] == "DT_STRING"
    assert sorted(signature["outputs"]) == ["answer", "attention"]
    status, health = _http(url)
    assert health["model_version_status"][0]["state"] == "AVAILABLE"
    assert _http(url + ":predict", {"inputs": {"story": ["s"]}})[0] == 400
    status, error = _http(
        url + ":predict", {"signature_name": "x", "inputs": {"story": ["s"]}}
    )
    assert (status, error) == (
        400,
        {"error": 'Serving signature name: "x" not found in signature def'},
    )
    assert (
        _http(f"http://{served.rest}/v1/models/nope:predict", {"inputs": {}})[0] == 404
    )


def test_request_budget_bounds_the_servers(small_exports, serve):
    served = serve(small_exports["reader"], max_requests=2)
    client = RestClient(served.rest, "reader")
    client.signature_spec()  # request 1
    client.predict({"story": ["s"], "question": ["q"]})  # request 2
    with pytest.raises(ServingError, match="HTTP 503: request budget spent"):
        client.predict({"story": ["s"], "question": ["q"]})


def test_rest_encodes_arrays_of_any_rank():
    from zoo.serving.rest_client import encode_value

    assert encode_value(np.array(b"hi", dtype=object)) == "hi"
    assert encode_value(np.array(5)) == 5
    assert encode_value(np.array([[b"a", b"\xff"]], dtype=object)) == [
        ["a", {"b64": "/w=="}]
    ]


@pytest.mark.parametrize(
    "address", ["localhost", "", "a b:1", "h:99999", "h:0", "http://[::1", "h:1/x"]
)
def test_an_address_that_is_not_host_port_is_refused(address):
    with pytest.raises(ConfigError) as grpc_refused:
        GrpcClient(address, "m")
    assert str(grpc_refused.value) == (
        "the gRPC address must be HOST:PORT (TF Serving's --port, 8500 by default). "
        f"Received: {address!r}"
    )
    if address != "h:1/x":  # a REST address may carry a path
        with pytest.raises(ConfigError) as rest_refused:
            RestClient(address, "m")
        assert str(rest_refused.value) == (
            "the REST address must be HOST:PORT or an http:// URL. "
            f"Received: {address!r}"
        )
