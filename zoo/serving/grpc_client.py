"""`GrpcClient`: TF Serving's gRPC `PredictionService` (Predict, GetModelMetadata).

Each call has one gRPC deadline, `timeout` seconds for the whole call. An answer is
received up to the channel's message limit (`max_answer_bytes`, else 256 MB); each
output's size is checked against `ServerClient.answer_limit` before it is decoded,
and the decoded answer is checked against the request and the signature
(`ServerClient.check_answer`).
"""

import math
import urllib.parse

from zoo.errors import ConfigError
from zoo.serving.errors import ServingError
from zoo.serving.saved_model_session import dtype_name
from zoo.serving.server_client import ServerClient

MAX_MESSAGE_BYTES = 256 << 20
_MESSAGE_SLACK_BYTES = 1 << 16  # framing around the outputs of a PredictResponse


def _is_target(address):
    """Whether `address` is `HOST:PORT` (port 1-65535) or `unix:PATH` (TF Serving's
    --grpc_socket_path), not a bare host (gRPC would pick port 443)."""
    if address.startswith("unix:"):
        return True
    try:
        parts = urllib.parse.urlsplit(f"//{address}")
        found = parts.netloc == address and parts.hostname and parts.port  # not 0
    except ValueError:  # a port out of range, "[::1" (no closing bracket)
        return False
    return bool(found) and "@" not in address and not any(map(str.isspace, address))


class GrpcClient(ServerClient):
    """A client of a model served by TF Serving over gRPC (default port 8500).

    Requests are `tensorflow.serving.PredictRequest`s with one `TensorProto` per
    input; the signature's input names and types come from `GetModelMetadata`.

    Args:
        address: `HOST:PORT` of the server's gRPC port.
        model: the served model name.
        version: optional model version (the latest by default).
        timeout: seconds per call, all told (None: no limit).
        max_answer_bytes: the largest answer received; by default the channel
            takes up to 256 MB and each output is held to
            `ServerClient.answer_limit`.

    Example:

    ```python
    client = GrpcClient("localhost:8500", "han")
    outputs = client.predict({"text": ["A fine film."]})  # {"label": ..., ...}
    ```
    """

    def __init__(
        self, address, model, version=None, timeout=60.0, max_answer_bytes=None
    ):
        import grpc
        from tensorflow_serving.apis import prediction_service_pb2_grpc

        if not _is_target(address):
            raise ConfigError(
                "the gRPC address must be HOST:PORT (TF Serving's --port, 8500 by "
                f"default). Received: {address!r}"
            )
        super().__init__(address, model, version, timeout, max_answer_bytes)
        receive = (
            MAX_MESSAGE_BYTES
            if max_answer_bytes is None
            else min(max_answer_bytes + _MESSAGE_SLACK_BYTES, 2**31 - 1)
        )
        self._grpc = grpc
        self._channel = grpc.insecure_channel(
            address,
            options=[
                ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
                ("grpc.max_receive_message_length", receive),
            ],
        )
        self._stub = prediction_service_pb2_grpc.PredictionServiceStub(self._channel)

    def _model_spec(self, signature=""):
        from tensorflow_serving.apis import model_pb2

        spec = model_pb2.ModelSpec(name=self.model, signature_name=signature)
        if self.version is not None:
            spec.version.value = self.version
        return spec

    def _call(self, method, request):
        try:
            return method(request, timeout=self.timeout)
        except self._grpc.RpcError as e:
            name = e.code().name  # the RpcError of a call is a grpc.Call
            details = " ".join((e.details() or "").split())
            if name == "UNAVAILABLE":
                raise self.unreachable("gRPC", details) from None
            if name == "DEADLINE_EXCEEDED":
                raise self.late() from None
            if name == "RESOURCE_EXHAUSTED" and "larger than max" in details:
                raise self.answer_error(
                    f"the answer is larger than the channel's limit ({details}; "
                    "--max-answer-mb raises it)",
                    code=name,
                ) from None
            raise ServingError(
                f"{self.address} ({self.model}): {name}: {details}", code=name
            ) from None

    def _signature_defs(self):
        from google.protobuf import json_format
        from tensorflow_serving.apis import get_model_metadata_pb2

        request = get_model_metadata_pb2.GetModelMetadataRequest(
            model_spec=self._model_spec(), metadata_field=["signature_def"]
        )
        response = self._call(self._stub.GetModelMetadata, request)
        signature_map = get_model_metadata_pb2.SignatureDefMap()
        metadata = response.metadata
        if "signature_def" not in metadata or not metadata["signature_def"].Unpack(
            signature_map
        ):
            raise self.answer_error("the metadata answer has no signature_def")
        # as the REST API writes it: {"signature_def": {name: SignatureDef as JSON}}
        as_json = json_format.MessageToDict(
            signature_map, preserving_proto_field_name=True
        )
        return as_json.get("signature_def", {})

    def _decoded(self, name, proto, declared, limit, rows):
        """An output's `TensorProto` as an array, once its dtype and its size are
        known to fit (a small proto can declare a huge shape)."""
        import tensorflow as tf

        try:
            found = dtype_name(proto.dtype)
        except (TypeError, ValueError):
            found = f"DataType {proto.dtype}"
        if found != declared:
            raise self.answer_error(
                f"output {name!r} is {found}; the signature declares {declared}"
            )
        dims = [d.size for d in proto.tensor_shape.dim]
        if any(d < 0 for d in dims):
            raise self.answer_error(f"output {name!r} has a negative dimension {dims}")
        itemsize = 8 if declared == "string" else tf.dtypes.as_dtype(proto.dtype).size
        if math.prod(dims) * max(itemsize, 1) > limit:
            raise self.too_large(limit, rows)
        try:
            return tf.make_ndarray(proto)
        except (TypeError, ValueError) as e:
            raise self.answer_error(
                f"output {name!r} is not a readable tensor ({' '.join(str(e).split())})"
            ) from None

    def _predict(self, arrays, signature, limit, rows):
        """One `Predict` call."""
        import tensorflow as tf
        from tensorflow_serving.apis import predict_pb2

        request = predict_pb2.PredictRequest(model_spec=self._model_spec(signature))
        for name, array in arrays.items():
            request.inputs[name].CopyFrom(tf.make_tensor_proto(array))
        response = self._call(self._stub.Predict, request)
        self.check_names(response.outputs, signature)
        declared = self.signature_spec(signature)["outputs"]
        return {
            name: self._decoded(name, proto, declared[name], limit, rows)
            for name, proto in response.outputs.items()
        }

    def close(self):
        self._channel.close()
