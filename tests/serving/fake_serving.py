"""Stand-ins for TF Serving, for tests: its gRPC and REST predict contracts over an
export loaded as TF Serving loads it (`SavedModelSession`).

```python
from tests.serving.fake_serving import serve_export

with serve_export("saved_models/han") as served:
    GrpcClient(served.grpc, served.model).predict({"text": ["A fine film."]})
    RestClient(served.rest, served.model).predict({"text": ["A fine film."]})
```

Both servers listen on 127.0.0.1 only (an ephemeral port each), serve a bounded
number of requests (`max_requests`; then they answer UNAVAILABLE / 503) and stop when
the `with` block ends. They implement what the clients use: gRPC
`PredictionService.Predict` and `GetModelMetadata`; REST `POST
/v1/models/NAME[/versions/V]:predict` (columnar `inputs` or row `instances`), `GET
/v1/models/NAME[/versions/V]/metadata` and the model status `GET
/v1/models/NAME[/versions/V]`. Errors follow TF Serving: gRPC status codes, REST
`{"error": message}` with HTTP 400 or 404.
"""

import base64
import contextlib
import dataclasses
import http.server
import json
import re
import threading

import numpy as np

from zoo.errors import ConfigError
from zoo.serving.errors import ServingError
from zoo.serving.saved_model_session import (
    DEFAULT_SIGNATURE,
    SavedModelSession,
    as_input_array,
)

DEFAULT_MAX_REQUESTS = 10_000


@dataclasses.dataclass
class ServedExport:
    """Where `serve_export` serves an export."""

    grpc: str  # "127.0.0.1:PORT" for GrpcClient / `zoo predict --server`
    rest: str  # "127.0.0.1:PORT" for RestClient / `zoo predict --server --rest`
    model: str
    version: int
    session: SavedModelSession


class _Budget:
    def __init__(self, limit):
        self.left = limit
        self.lock = threading.Lock()

    def take(self):
        with self.lock:
            if self.left <= 0:
                return False
            self.left -= 1
            return True


class _NotFound(Exception):
    pass


class _Model:
    """The request handling shared by both servers."""

    def __init__(self, session, name, tamper=None):
        self.session = session
        self.name = name
        self.tamper = tamper

    def check(self, name, version):
        wanted = (
            f"Latest({name})" if version is None else f"Specific({name}, {version})"
        )
        if name != self.name or version not in (None, self.session.version):
            raise _NotFound(f"Servable not found for request: {wanted}")

    def predict(self, signature, inputs, output_names=None):
        signature = signature or DEFAULT_SIGNATURE
        if signature not in self.session.signature_defs:
            raise ConfigError(
                f'Serving signature name: "{signature}" not found in signature def'
            )
        spec = self.session.signature_spec(signature)
        arrays = {
            k: as_input_array(v, spec["inputs"][k]) if k in spec["inputs"] else v
            for k, v in inputs.items()
        }
        outputs = self.session.predict(arrays, signature)
        if output_names:
            outputs = {k: outputs[k] for k in output_names}
        return outputs if self.tamper is None else self.tamper(outputs)


def _grpc_server(model, budget, workers):
    from concurrent import futures

    import grpc
    import tensorflow as tf
    from tensorflow.core.framework import tensor_pb2
    from tensorflow_serving.apis import (
        get_model_metadata_pb2,
        predict_pb2,
        prediction_service_pb2_grpc,
    )

    class Servicer(prediction_service_pb2_grpc.PredictionServiceServicer):
        def _enter(self, request, context):
            if not budget.take():
                context.abort(grpc.StatusCode.UNAVAILABLE, "request budget spent")
            spec = request.model_spec
            version = spec.version.value if spec.HasField("version") else None
            try:
                model.check(spec.name, version)
            except _NotFound as e:
                context.abort(grpc.StatusCode.NOT_FOUND, str(e))

        def _model_spec(self, out, signature=""):
            out.name = model.name
            out.version.value = model.session.version
            out.signature_name = signature

        def Predict(self, request, context):  # noqa: N802 (the gRPC method name)
            self._enter(request, context)
            signature = request.model_spec.signature_name or DEFAULT_SIGNATURE
            inputs = {k: tf.make_ndarray(v) for k, v in request.inputs.items()}
            try:
                outputs = model.predict(
                    signature, inputs, list(request.output_filter) or None
                )
            except ConfigError as e:
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
            except ServingError as e:
                code = getattr(grpc.StatusCode, e.code, grpc.StatusCode.UNKNOWN)
                context.abort(code, e.message)
            response = predict_pb2.PredictResponse()
            self._model_spec(response.model_spec, signature)
            for key, value in outputs.items():
                if not isinstance(value, tensor_pb2.TensorProto):
                    value = tf.make_tensor_proto(value)
                response.outputs[key].CopyFrom(value)
            return response

        def GetModelMetadata(self, request, context):  # noqa: N802
            self._enter(request, context)
            if list(request.metadata_field) != ["signature_def"]:
                context.abort(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    "Metadata field signature_def is the only one supported",
                )
            response = get_model_metadata_pb2.GetModelMetadataResponse()
            self._model_spec(response.model_spec)
            signature_map = get_model_metadata_pb2.SignatureDefMap()
            for key, value in model.session.meta_graph.signature_def.items():
                signature_map.signature_def[key].CopyFrom(value)
            response.metadata["signature_def"].Pack(signature_map)
            return response

    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=workers),
        maximum_concurrent_rpcs=4 * workers,
        options=[
            ("grpc.max_send_message_length", 256 << 20),
            ("grpc.max_receive_message_length", 256 << 20),
        ],
    )
    prediction_service_pb2_grpc.add_PredictionServiceServicer_to_server(
        Servicer(), server
    )
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    return server, port


_PREDICT = re.compile(r"^/v1/models/([^/:]+)(?:/versions/(\d+))?:(predict)$")
_METADATA = re.compile(r"^/v1/models/([^/:]+)(?:/versions/(\d+))?/metadata$")
_STATUS = re.compile(r"^/v1/models/([^/:]+)(?:/versions/(\d+))?$")


def _rest_value(value, binary):
    """Output values as TF Serving's REST API writes them."""
    if isinstance(value, list):
        return [_rest_value(v, binary) for v in value]
    if isinstance(value, bytes):
        if binary:
            return {"b64": base64.b64encode(value).decode("ascii")}
        return value.decode("utf-8", errors="replace")
    return value


def _request_value(value):
    if isinstance(value, list):
        return [_request_value(v) for v in value]
    if isinstance(value, dict) and set(value) == {"b64"}:
        return base64.b64decode(value["b64"])
    return value


def _http_server(model, budget):
    from google.protobuf import json_format
    from tensorflow_serving.apis import get_model_metadata_pb2

    def metadata():
        response = get_model_metadata_pb2.GetModelMetadataResponse()
        response.model_spec.name = model.name
        response.model_spec.version.value = model.session.version
        signature_map = get_model_metadata_pb2.SignatureDefMap()
        for key, value in model.session.meta_graph.signature_def.items():
            signature_map.signature_def[key].CopyFrom(value)
        response.metadata["signature_def"].Pack(signature_map)
        return json_format.MessageToDict(response, preserving_proto_field_name=True)

    def predict(body):
        signature = body.get("signature_name") or DEFAULT_SIGNATURE
        if signature not in model.session.signature_defs:
            raise ConfigError(
                f'Serving signature name: "{signature}" not found in signature def'
            )
        input_names = sorted(model.session.signature_defs[signature].inputs)
        if ("inputs" in body) == ("instances" in body):
            raise ConfigError(
                "Missing 'inputs' or 'instances' key (exactly one is needed)"
            )
        if "inputs" in body:
            inputs = body["inputs"]
            if not (isinstance(inputs, dict) and set(inputs) <= set(input_names)):
                if len(input_names) != 1:
                    raise ConfigError("inputs must be an object naming every input")
                inputs = {input_names[0]: inputs}
            inputs = {k: _request_value(v) for k, v in inputs.items()}
            columnar = True
        else:
            instances = body["instances"]
            if not isinstance(instances, list):
                raise ConfigError("instances must be a list")
            if len(input_names) == 1 and not (
                instances and isinstance(instances[0], dict)
            ):
                inputs = {input_names[0]: _request_value(instances)}
            else:
                inputs = {
                    k: [_request_value(row[k]) for row in instances]
                    for k in input_names
                }
            columnar = False
        outputs = model.predict(signature, inputs)
        encoded = {
            k: _rest_value(np.asarray(v).tolist(), k.endswith("_bytes"))
            for k, v in outputs.items()
        }
        if columnar:
            if len(encoded) == 1:
                return {"outputs": next(iter(encoded.values()))}
            return {"outputs": encoded}
        names = sorted(encoded)
        rows = len(next(iter(outputs.values())))
        if len(names) == 1:
            return {"predictions": encoded[names[0]]}
        return {"predictions": [{k: encoded[k][i] for k in names} for i in range(rows)]}

    class Handler(http.server.BaseHTTPRequestHandler):
        timeout = 60  # a stalled client cannot hold a handler thread forever
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # quiet test output
            pass

        def _answer(self, status, payload):
            data = json.dumps(payload, allow_nan=True).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _route(self, pattern):
            match = pattern.match(self.path)
            if match is None:
                return None
            name, version = match.group(1), match.group(2)
            model.check(name, None if version is None else int(version))
            return match

        def _handle(self, method):
            if not budget.take():
                return self._answer(503, {"error": "request budget spent"})
            try:
                if method == "POST" and self._route(_PREDICT):
                    length = int(self.headers.get("Content-Length") or 0)
                    try:
                        body = json.loads(self.rfile.read(length).decode("utf-8"))
                    except (UnicodeDecodeError, json.JSONDecodeError) as e:
                        raise ConfigError(f"JSON Parse error: {e}") from None
                    if not isinstance(body, dict):
                        raise ConfigError("the request body must be a JSON object")
                    return self._answer(200, predict(body))
                if method == "GET" and self._route(_METADATA):
                    return self._answer(200, metadata())
                if method == "GET" and self._route(_STATUS):
                    version = str(model.session.version)
                    return self._answer(
                        200,
                        {
                            "model_version_status": [
                                {
                                    "version": version,
                                    "state": "AVAILABLE",
                                    "status": {"error_code": "OK", "error_message": ""},
                                }
                            ]
                        },
                    )
                raise ConfigError(f"Malformed request: {method} {self.path}")
            except _NotFound as e:
                return self._answer(404, {"error": str(e)})
            except ConfigError as e:
                return self._answer(400, {"error": str(e)})
            except ServingError as e:
                status = 404 if e.code == "NOT_FOUND" else 400
                return self._answer(status, {"error": e.message})

        def do_GET(self):  # noqa: N802
            self._handle("GET")

        def do_POST(self):  # noqa: N802
            self._handle("POST")

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    return server, thread


@contextlib.contextmanager
def serve_export(
    export_dir, model_name=None, max_requests=DEFAULT_MAX_REQUESTS, tamper=None
):
    """Serves an export over gRPC and REST on 127.0.0.1 for the `with` block.

    Args:
        export_dir: `saved_models/NAME[/VERSION]` (the latest version by default).
        model_name: the served name (default: the folder name, as TF Serving's
            `models.config` written by `zoo deploy` uses).
        max_requests: requests each server answers before refusing every other one.
        tamper: optional `outputs -> outputs` applied to every predict answer, for a
            server that answers wrongly (gRPC also sends a `TensorProto` as it is).

    Yields:
        A `ServedExport` with the `grpc` and `rest` addresses, `model`, `version`
        and the `session` behind both.
    """
    session = SavedModelSession(export_dir)
    model = _Model(session, model_name or session.name, tamper)
    grpc_server = http_server = None
    try:
        grpc_server, grpc_port = _grpc_server(model, _Budget(max_requests), workers=2)
        http_server, thread = _http_server(model, _Budget(max_requests))
        yield ServedExport(
            grpc=f"127.0.0.1:{grpc_port}",
            rest=f"127.0.0.1:{http_server.server_address[1]}",
            model=model.name,
            version=session.version,
            session=session,
        )
    finally:
        if http_server is not None:
            http_server.shutdown()
            http_server.server_close()
            thread.join(timeout=10)
        if grpc_server is not None:
            grpc_server.stop(grace=None).wait(timeout=10)
        session.close()
