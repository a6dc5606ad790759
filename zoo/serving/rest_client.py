"""`RestClient`: TF Serving's REST API (predict and model metadata), stdlib only.

`POST /v1/models/NAME[/versions/V]:predict` with the columnar body
`{"signature_name": S, "inputs": {input_name: [values]}}` answers
`{"outputs": {output_name: [values]}}` (or `{"outputs": [values]}` when the signature
has a single output); `GET /v1/models/NAME[/versions/V]/metadata` answers the
`GetModelMetadataResponse` as JSON, whose `signature_def` names the inputs. Strings
that are not UTF-8 travel as `{"b64": base64}`, as do the values of outputs whose
name ends in `_bytes`.

Each request has one deadline, `timeout` seconds for connecting, sending and reading
together (a server that sends a byte now and then cannot stretch it); its answer is
read up to `ServerClient.answer_limit` bytes and no further; a redirect is refused,
not followed. An answer that is not HTTP, not UTF-8 JSON, not an object, or whose
arrays are ragged or of another type than the signature declares is an
`AnswerError` naming the server.
"""

import base64
import binascii
import http.client
import json
import socket
import ssl
import time
import urllib.parse

import numpy as np

from zoo.errors import ConfigError
from zoo.serving.errors import ServingError
from zoo.serving.saved_model_session import as_input_array
from zoo.serving.server_client import (
    DEFAULT_SIGNATURE,
    MIN_ANSWER_BYTES,
    ServerClient,
    request_rows,
)

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
_CHUNK_BYTES = 1 << 16
_ERROR_BODY_BYTES = 1 << 20


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


def _kind(value):
    """How an error names a JSON value."""
    if isinstance(value, bool):
        return f"a boolean ({json.dumps(value)})"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return f"a number ({value!r})"
    if isinstance(value, str):
        return "text"
    if isinstance(value, dict):
        return "an object"
    return "an array"


def _shape_and_leaves(value):
    """The shape of nested JSON lists and their values in order; a `ValueError`
    saying where the lists are ragged."""
    shape, level = [], [value]
    while level and all(isinstance(v, list) for v in level):
        lengths = {len(v) for v in level}
        if len(lengths) > 1:
            raise ValueError(
                f"is a ragged array (lists of {min(lengths)} to {max(lengths)} "
                f"values at depth {len(shape) + 1})"
            )
        shape.append(lengths.pop())
        level = [x for v in level for x in v]
    if any(isinstance(v, list) for v in level):
        raise ValueError(
            f"is a ragged array (lists and values side by side at depth {len(shape) + 1})"
        )
    return tuple(shape), level


def _string_leaf(value):
    if isinstance(value, str):
        return value.encode("utf-8")
    if (
        isinstance(value, dict)
        and set(value) == {"b64"}
        and isinstance(value["b64"], str)
    ):
        try:
            return base64.b64decode(value["b64"], validate=True)
        except (binascii.Error, ValueError):
            raise ValueError('holds a {"b64": ...} value that is not base64') from None
    raise ValueError(f"holds {_kind(value)} where the signature declares strings")


def as_output_array(value, dtype):
    """An output's JSON value as an array of `dtype` (strings as `bytes`).

    Raises:
        ValueError: ragged lists, or values of another type than `dtype` (a string
            where numbers are declared, a float where integers are, a number out of
            the dtype's range); the message completes "output 'NAME' ...".
    """
    shape, leaves = _shape_and_leaves(value)
    if dtype == "string":
        array = np.empty(len(leaves), dtype=object)
        array[:] = [_string_leaf(v) for v in leaves]
        return array.reshape(shape)
    if dtype == "bool":
        wanted, accepted = "booleans", (bool,)
    elif dtype.startswith(("int", "uint")):
        wanted, accepted = "integers", (int,)
    else:
        wanted, accepted = "numbers", (int, float)
    for v in leaves:
        if not isinstance(v, accepted) or (dtype != "bool" and isinstance(v, bool)):
            raise ValueError(f"holds {_kind(v)} where the signature declares {wanted}")
    try:
        array = np.asarray(leaves, dtype="float32" if dtype == "bfloat16" else dtype)
    except (OverflowError, ValueError):
        raise ValueError(f"holds a number out of the range of {dtype}") from None
    return array.reshape(shape)


def _checked(values, dtype, name):
    """A string input's values as UTF-8 bytes; anything that is not text (a number,
    a boolean, None) is a `ConfigError` naming the input, as in the local loader."""
    return as_input_array(values, dtype, name) if dtype == "string" else values


def _tensor_shape(info):
    """A metadata `TensorInfo`'s shape: a tuple (-1: any size), or None (unknown)."""
    shape = info.get("tensor_shape")
    if not isinstance(shape, dict) or shape.get("unknown_rank"):
        return None
    return tuple(int(d.get("size", -1)) for d in shape.get("dim", []))


class _DeadlineMixin:
    """A socket whose every send and receive waits at most until `deadline` (a
    `time.monotonic()` value; None: no limit)."""

    deadline = None

    def _arm(self):
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the deadline passed")
            self.settimeout(left)

    def recv(self, *args, **kwargs):
        self._arm()
        return super().recv(*args, **kwargs)

    def recv_into(self, *args, **kwargs):
        self._arm()
        return super().recv_into(*args, **kwargs)

    def send(self, *args, **kwargs):
        self._arm()
        return super().send(*args, **kwargs)

    def sendall(self, *args, **kwargs):
        self._arm()
        return super().sendall(*args, **kwargs)


class _DeadlineSocket(_DeadlineMixin, socket.socket):
    pass


class _DeadlineSSLSocket(_DeadlineMixin, ssl.SSLSocket):
    pass


class _Connection(http.client.HTTPConnection):
    """One HTTP(S) connection under one deadline, from connect to the last byte."""

    def __init__(self, host, port, deadline, tls):
        super().__init__(host, port)
        self.deadline = deadline
        self.tls = tls

    def connect(self):
        left = None if self.deadline is None else self.deadline - time.monotonic()
        if left is not None and left <= 0:
            raise TimeoutError("the deadline passed")
        raw = socket.create_connection((self.host, self.port), timeout=left)
        sock = _DeadlineSocket(fileno=raw.detach())
        sock.settimeout(left)  # also for the TLS handshake
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.tls:
            context = ssl.create_default_context()
            context.sslsocket_class = _DeadlineSSLSocket
            sock = context.wrap_socket(sock, server_hostname=self.host)
        sock.deadline = self.deadline
        self.sock = sock


class RestClient(ServerClient):
    """A client of a model served by TF Serving over REST (default port 8501).

    Args:
        address: `HOST:PORT` of the REST port (or a full `http://` URL).
        model: the served model name.
        version: optional model version (the latest by default).
        timeout: seconds per request, all told: connecting, sending and reading the
            whole answer (None: no limit).
        max_answer_bytes: the largest answer read; by default
            `ServerClient.answer_limit` derives it from the signature and the batch.
    """

    def __init__(
        self, address, model, version=None, timeout=60.0, max_answer_bytes=None
    ):
        base = address if "://" in address else f"http://{address}"
        parts = urllib.parse.urlsplit(base)
        try:
            port = parts.port
        except ValueError:
            port = -1
        if parts.scheme not in ("http", "https") or not parts.hostname or port == -1:
            raise ConfigError(
                "the REST address must be HOST:PORT or an http:// URL. "
                f"Received: {address!r}"
            )
        self.address = address
        self.model = model
        self.version = None if version is None else int(version)
        self.timeout = timeout
        self.max_answer_bytes = max_answer_bytes
        self._host, self._port = parts.hostname, port
        self._tls = parts.scheme == "https"
        self._path = f"{parts.path.rstrip('/')}/v1/models/" + urllib.parse.quote(
            model, safe=""
        )
        if self.version is not None:
            self._path += f"/versions/{self.version}"
        self.url = f"{parts.scheme}://{parts.netloc}{self._path}"
        self._specs = None
        self._shapes = None

    def _request(self, path, body=None, limit=MIN_ANSWER_BYTES, rows=None):
        """One HTTP exchange under one deadline; the answer's JSON object."""
        url = self.url + path
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        connection = _Connection(self._host, self._port, deadline, self._tls)
        try:
            try:
                connection.connect()
            except (OSError, ValueError) as e:
                reason = (
                    f"no connection within {self.timeout:g} s"
                    if isinstance(e, TimeoutError)
                    else " ".join(str(e).split()) or type(e).__name__
                )
                raise ServingError(
                    f"cannot reach TF Serving's REST port at {self.address} ({reason})",
                    code="UNAVAILABLE",
                ) from None
            try:
                return self._exchange(connection, url, path, body, limit, rows)
            except TimeoutError:
                raise self.answer_error(
                    f"no complete answer within {self.timeout:g} s",
                    code="DEADLINE_EXCEEDED",
                ) from None
            except http.client.RemoteDisconnected:
                raise self.answer_error(
                    "the server closed the connection without an answer",
                    code="UNAVAILABLE",
                ) from None
            except http.client.IncompleteRead as e:
                raise self.answer_error(
                    f"the answer ended after {len(e.partial)} bytes, before its end",
                    code="UNAVAILABLE",
                ) from None
            except http.client.HTTPException as e:
                detail = " ".join(str(e).split())[:120]
                raise self.answer_error(
                    f"the answer is not HTTP ({type(e).__name__}"
                    + (f": {detail})" if detail else ")")
                ) from None
            except OSError as e:
                raise self.answer_error(
                    "the connection broke before the answer was complete "
                    f"({type(e).__name__}: {' '.join(str(e).split())})",
                    code="UNAVAILABLE",
                ) from None
        finally:
            connection.close()

    def _exchange(self, connection, url, path, body, limit, rows):
        data = None if body is None else json.dumps(body).encode("utf-8")
        connection.request(
            "GET" if body is None else "POST",
            self._path + path,
            body=data,
            headers={"Content-Type": "application/json"},
        )
        response = connection.getresponse()
        status = response.status
        if 300 <= status < 400:
            target = urllib.parse.urljoin(url, response.getheader("Location") or "")
            raise self.answer_error(
                f"HTTP {status} redirect to {target[:200]} from {url}; redirects are "
                "not followed (give the server that answers as --server)",
                code="UNAVAILABLE",
            )
        if status != 200:
            try:
                raw = self._read(response, min(limit, _ERROR_BODY_BYTES), rows)
                message = json.loads(raw.decode("utf-8")).get("error", "")
            except (ValueError, AttributeError, RecursionError, ServingError):
                message = response.reason
            code = {400: "INVALID_ARGUMENT", 404: "NOT_FOUND"}.get(status, "UNKNOWN")
            message = " ".join(str(message).split())
            raise ServingError(
                f"{url}: HTTP {status}: {message[:300]}", code=code
            ) from None
        return self._json(self._read(response, limit, rows))

    def _read(self, response, limit, rows):
        """The answer's body, read in chunks up to `limit` bytes and no further."""
        length = response.getheader("Content-Length")
        length = int(length) if length and length.strip().isdigit() else None
        if length is not None and length > limit:
            raise self.too_large(limit, rows)
        chunks, total = [], 0
        while True:
            chunk = response.read(_CHUNK_BYTES)
            if not chunk:
                if length is not None and total < length:
                    raise http.client.IncompleteRead(b"".join(chunks), length - total)
                return b"".join(chunks)
            total += len(chunk)
            if total > limit:
                raise self.too_large(limit, rows)
            chunks.append(chunk)

    def _json(self, raw):
        """The answer's body as a JSON object."""
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise self.answer_error(
                f"the answer is not UTF-8 (byte 0x{raw[e.start]:02x} at offset "
                f"{e.start})"
            ) from None
        try:
            answer = json.loads(text)
        except ValueError as e:
            raise self.answer_error(f"the answer is not JSON ({e})") from None
        except RecursionError:
            raise self.answer_error("the answer's JSON nests too deeply") from None
        if not isinstance(answer, dict):
            kind = _kind(answer).split(" (")[0].removeprefix("a ").removeprefix("an ")
            kind = {"text": "string"}.get(kind, kind)
            raise self.answer_error(f"the answer is a JSON {kind}, not an object")
        return answer

    def signature_specs(self):
        """`{signature: {"inputs": {name: dtype}, "outputs": {...}}}` of the model."""
        if self._specs is None:
            limit = max(MIN_ANSWER_BYTES, self.max_answer_bytes or 0)
            answer = self._request("/metadata", limit=limit)
            try:
                signatures = answer["metadata"]["signature_def"]["signature_def"]
                specs, shapes = {}, {}
                for name, sig in signatures.items():
                    if name.startswith("__"):
                        continue
                    specs[name] = {
                        kind: {
                            k: _DTYPES.get(v.get("dtype"), "string")
                            for k, v in sorted(sig.get(kind, {}).items())
                        }
                        for kind in ("inputs", "outputs")
                    }
                    shapes[name] = {
                        k: _tensor_shape(v) for k, v in sig.get("outputs", {}).items()
                    }
            except (KeyError, TypeError, AttributeError, ValueError):
                raise self.answer_error(
                    "the metadata answer has no readable signature_def"
                ) from None
            self._specs, self._shapes = specs, shapes
        return self._specs

    def predict(self, inputs, signature=DEFAULT_SIGNATURE):
        """One columnar predict call; returns `{output_name: np.ndarray}`, checked
        against the request and the signature (`ServerClient.check_answer`)."""
        spec = self.signature_spec(signature)
        checked = {
            k: _checked(v, spec["inputs"].get(k, "string"), k)
            for k, v in inputs.items()
        }
        rows = request_rows(checked)
        body = {
            "signature_name": signature,
            "inputs": {k: encode_value(v) for k, v in checked.items()},
        }
        answer = self._request(
            ":predict", body, self.answer_limit(rows, signature), rows
        )
        if "outputs" not in answer:
            raise self.answer_error("the answer has no 'outputs'")
        outputs = answer["outputs"]
        names = sorted(spec["outputs"])
        named = isinstance(outputs, dict) and set(outputs) != {"b64"}
        if not named and len(names) == 1:
            outputs = {names[0]: outputs}  # a single output comes without its name
        elif not named:
            raise self.answer_error(
                f"'outputs' is {_kind(outputs)}, not an object naming the "
                f"signature's outputs ({', '.join(names)})"
            )
        self.check_names(outputs, signature)
        arrays = {}
        for name, value in outputs.items():
            try:
                arrays[name] = as_output_array(value, spec["outputs"][name])
            except ValueError as e:
                raise self.answer_error(f"output {name!r} {e}") from None
        return self.check_answer(arrays, rows, signature, dtypes=False)
