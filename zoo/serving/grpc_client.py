"""`GrpcClient`: TF Serving's gRPC `PredictionService` (Predict, GetModelMetadata)."""

from zoo.serving.errors import ServingError
from zoo.serving.saved_model_session import (
    DEFAULT_SIGNATURE,
    as_input_array,
    signature_spec,
)
from zoo.serving.server_client import ServerClient

MAX_MESSAGE_BYTES = 256 << 20


class GrpcClient(ServerClient):
    """A client of a model served by TF Serving over gRPC (default port 8500).

    Requests are `tensorflow.serving.PredictRequest`s with one `TensorProto` per
    input; the signature's input names and types come from `GetModelMetadata`.

    Args:
        address: `HOST:PORT` of the server's gRPC port.
        model: the served model name.
        version: optional model version (the latest by default).
        timeout: seconds per call.

    Example:

    ```python
    client = GrpcClient("localhost:8500", "han")
    outputs = client.predict({"text": ["A fine film."]})  # {"label": ..., ...}
    ```
    """

    def __init__(self, address, model, version=None, timeout=60.0):
        import grpc
        from tensorflow_serving.apis import prediction_service_pb2_grpc

        self.address = address
        self.model = model
        self.version = None if version is None else int(version)
        self.timeout = timeout
        self._grpc = grpc
        self._channel = grpc.insecure_channel(
            address,
            options=[
                ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
                ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ],
        )
        self._stub = prediction_service_pb2_grpc.PredictionServiceStub(self._channel)
        self._specs = None

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
            code = e.code() if callable(getattr(e, "code", None)) else None
            name = code.name if code is not None else "UNKNOWN"
            details = (
                e.details() if callable(getattr(e, "details", None)) else ""
            ) or ""
            if name == "UNAVAILABLE":
                raise ServingError(
                    f"cannot reach TF Serving's gRPC port at {self.address} "
                    f"({' '.join(details.split())})",
                    code=name,
                ) from None
            raise ServingError(
                f"{self.address} ({self.model}): {name}: {' '.join(details.split())}",
                code=name,
            ) from None

    def signature_specs(self):
        """`{signature: {"inputs": {name: dtype}, "outputs": {...}}}` of the model."""
        if self._specs is None:
            from tensorflow_serving.apis import get_model_metadata_pb2

            request = get_model_metadata_pb2.GetModelMetadataRequest(
                model_spec=self._model_spec(), metadata_field=["signature_def"]
            )
            response = self._call(self._stub.GetModelMetadata, request)
            signature_map = get_model_metadata_pb2.SignatureDefMap()
            response.metadata["signature_def"].Unpack(signature_map)
            self._specs = {
                k: signature_spec(v)
                for k, v in signature_map.signature_def.items()
                if not k.startswith("__")
            }
        return self._specs

    def predict(self, inputs, signature=DEFAULT_SIGNATURE):
        """One `Predict` call; returns `{output_name: np.ndarray}` (strings as bytes)."""
        import tensorflow as tf
        from tensorflow_serving.apis import predict_pb2

        spec = self.signature_spec(signature)
        request = predict_pb2.PredictRequest(model_spec=self._model_spec(signature))
        for name, values in inputs.items():
            dtype = spec["inputs"].get(name, "string")
            request.inputs[name].CopyFrom(
                tf.make_tensor_proto(as_input_array(values, dtype, name))
            )
        response = self._call(self._stub.Predict, request)
        return {k: tf.make_ndarray(v) for k, v in response.outputs.items()}

    def close(self):
        self._channel.close()
