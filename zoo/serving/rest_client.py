"""`RestClient`: TF Serving's REST API (predict and model metadata), stdlib only.

`POST /v1/models/NAME[/versions/V]:predict` with the columnar body
`{"signature_name": S, "inputs": {input_name: [values]}}` answers
`{"outputs": {output_name: [values]}}` (or `{"outputs": [values]}` when the signature
has a single output); `GET /v1/models/NAME[/versions/V]/metadata` answers the
`GetModelMetadataResponse` as JSON, whose `signature_def` names the inputs. Strings
that are not UTF-8 travel as `{"b64": base64}`, as do the values of outputs whose
name ends in `_bytes`.
"""

import base64
import json
import urllib.error
import urllib.parse
import urllib.request

import numpy as np

from zoo.serving.errors import ServingError
from zoo.serving.saved_model_session import as_input_array
from zoo.serving.server_client import DEFAULT_SIGNATURE, ServerClient

# TensorFlow's DataType enum names -> numpy-style names.
_DTYPES = {
    "DT_STRING": "string",
    "DT_FLOAT": "float32",
    "DT_DOUBLE": "float64",
    "DT_HALF": "float16",
    "DT_BFLOAT16": "bfloat16",
    "DT_INT8": "int8",
    "DT_INT16": "int16",
    "DT_INT32": "int32",
    "DT_INT64": "int64",
    "DT_UINT8": "uint8",
    "DT_UINT16": "uint16",
    "DT_UINT32": "uint32",
    "DT_UINT64": "uint64",
    "DT_BOOL": "bool",
}


def encode_value(value):
    """A request value as JSON: text stays text, other bytes become `{"b64": ...}`."""
    if isinstance(value, np.ndarray):
        return encode_value(value.tolist())
    if isinstance(value, (list, tuple)):
        return [encode_value(v) for v in value]
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return {"b64": base64.b64encode(value).decode("ascii")}
    if isinstance(value, np.generic):
        return value.item()
    return value


def decode_value(value):
    """The inverse of `encode_value` for strings: `{"b64": ...}` -> bytes, str ->
    UTF-8 bytes."""
    if isinstance(value, list):
        return [decode_value(v) for v in value]
    if isinstance(value, dict) and set(value) == {"b64"}:
        return base64.b64decode(value["b64"])
    if isinstance(value, str):
        return value.encode("utf-8")
    return value


def _flatten(value):
    if isinstance(value, list):
        for v in value:
            yield from _flatten(v)
    else:
        yield value


def as_output_array(value, dtype):
    """An output's JSON value as an array of `dtype` (strings as `bytes`)."""
    if dtype == "string":
        decoded = decode_value(value)
        array = np.empty(np.shape(decoded), dtype=object)
        array.reshape(-1)[:] = list(_flatten(decoded))
        return array
    if dtype == "bfloat16":
        dtype = "float32"
    return np.asarray(value, dtype=dtype)


def _checked(values, dtype, name):
    """A string input's values as UTF-8 bytes; anything that is not text (a number,
    a boolean, None) is a `ConfigError` naming the input, as in the local loader."""
    return as_input_array(values, dtype, name) if dtype == "string" else values


class RestClient(ServerClient):
    """A client of a model served by TF Serving over REST (default port 8501).

    Args:
        address: `HOST:PORT` of the REST port (or a full `http://` URL).
        model: the served model name.
        version: optional model version (the latest by default).
        timeout: seconds per call.
    """

    def __init__(self, address, model, version=None, timeout=60.0):
        base = address if "://" in address else f"http://{address}"
        self.address = address
        self.model = model
        self.version = None if version is None else int(version)
        self.timeout = timeout
        self.url = f"{base.rstrip('/')}/v1/models/{urllib.parse.quote(model, safe='')}"
        if self.version is not None:
            self.url += f"/versions/{self.version}"
        self._specs = None

    def _request(self, url, body=None):
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(
            url,
            data=data,
            method="GET" if body is None else "POST",
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as e:
            try:
                message = json.loads(e.read().decode("utf-8")).get("error", "")
            except (ValueError, AttributeError):
                message = e.reason
            code = {400: "INVALID_ARGUMENT", 404: "NOT_FOUND"}.get(e.code, "UNKNOWN")
            raise ServingError(
                f"{url}: HTTP {e.code}: {' '.join(str(message).split())}", code=code
            ) from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise ServingError(
                f"cannot reach TF Serving's REST port at {self.address} ({reason})",
                code="UNAVAILABLE",
            ) from None

    def signature_specs(self):
        """`{signature: {"inputs": {name: dtype}, "outputs": {...}}}` of the model."""
        if self._specs is None:
            answer = self._request(self.url + "/metadata")
            try:
                signatures = answer["metadata"]["signature_def"]["signature_def"]
            except (KeyError, TypeError):
                raise ServingError(
                    f"{self.url}/metadata: no signature_def in the answer",
                    code="INTERNAL",
                ) from None
            self._specs = {
                name: {
                    kind: {
                        k: _DTYPES.get(v.get("dtype"), "string")
                        for k, v in sorted(sig.get(kind, {}).items())
                    }
                    for kind in ("inputs", "outputs")
                }
                for name, sig in signatures.items()
                if not name.startswith("__")
            }
        return self._specs

    def predict(self, inputs, signature=DEFAULT_SIGNATURE):
        """One columnar predict call; returns `{output_name: np.ndarray}`."""
        spec = self.signature_spec(signature)
        body = {
            "signature_name": signature,
            "inputs": {
                k: encode_value(_checked(v, spec["inputs"].get(k, "string"), k))
                for k, v in inputs.items()
            },
        }
        answer = self._request(self.url + ":predict", body)
        if "outputs" not in answer:
            raise ServingError(
                f"{self.url}:predict: no 'outputs' in the answer", code="INTERNAL"
            )
        outputs = answer["outputs"]
        names = sorted(spec["outputs"])
        named = isinstance(outputs, dict) and set(outputs) <= set(names) and outputs
        if len(names) == 1 and not named:
            outputs = {names[0]: outputs}  # a single output comes without its name
        elif not named:
            raise ServingError(
                f"{self.url}:predict: 'outputs' does not name the signature's "
                f"outputs ({', '.join(names)})",
                code="INTERNAL",
            )
        return {
            k: as_output_array(v, spec["outputs"].get(k, "float32"))
            for k, v in outputs.items()
        }
