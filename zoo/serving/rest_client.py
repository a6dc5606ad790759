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
import contextlib
import http.client
import json
import math
import socket
import threading
import time
import urllib.parse

import numpy as np

from zoo.errors import ConfigError
from zoo.serving.errors import ServingError
from zoo.serving.inputs import json_kind
from zoo.serving.server_client import MIN_ANSWER_BYTES, ServerClient

_ERROR_BODY_BYTES = 1 << 20


def encode_value(value):
    """A request array as JSON: text stays text, other bytes become `{"b64": ...}`."""
    if isinstance(value, np.ndarray):
        return encode_value(value.tolist())
    if isinstance(value, list):
        return [encode_value(v) for v in value]
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return {"b64": base64.b64encode(value).decode("ascii")}
    return value.item() if isinstance(value, np.generic) else value


def _kind(value):
    """How an error names a JSON value (`inputs.json_kind`, a value shown)."""
    if isinstance(value, (bool, int, float)):
        return f"{json_kind(value)} ({json.dumps(value)})"
    return {str: "text", list: "an array"}.get(type(value)) or json_kind(value)


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
    if isinstance(value, dict) and set(value) == {"b64"}:
        try:
            return base64.b64decode(value["b64"], validate=True)
        except (binascii.Error, ValueError, TypeError):
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
    elif dtype.startswith(("float", "bfloat16")):
        wanted, accepted = "numbers", (int, float)
    else:  # resource, variant, complex64, or no TensorFlow type at all
        raise ValueError(f"is declared {dtype}, a type this client does not read")
    for v in leaves:
        if not isinstance(v, accepted) or (dtype != "bool" and isinstance(v, bool)):
            raise ValueError(f"holds {_kind(v)} where the signature declares {wanted}")
    try:
        with np.errstate(over="raise"):  # 1e39 as float32
            array = np.asarray(
                leaves, dtype="float32" if dtype == "bfloat16" else dtype
            )
    except (OverflowError, ValueError, FloatingPointError):
        raise ValueError(f"holds a number out of the range of {dtype}") from None
    return array.reshape(shape)


def _shut_down(connection):
    """Ends a request at its deadline: a send or receive under way returns at once."""
    with contextlib.suppress(OSError, AttributeError):  # already closed
        connection.sock.shutdown(socket.SHUT_RDWR)


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
        try:
            parts = urllib.parse.urlsplit(base)
            port = parts.port if base == address else parts.port or 0  # not HOST:80
        except ValueError:  # a port out of range, "[::1" (no closing bracket)
            parts, port = urllib.parse.urlsplit(""), 0
        if (
            parts.scheme not in ("http", "https")
            or not parts.hostname
            or port == 0
            or any(c.isspace() for c in address)
        ):
            raise ConfigError(
                "the REST address must be HOST:PORT or an http:// URL. "
                f"Received: {address!r}"
            )
        super().__init__(address, model, version, timeout, max_answer_bytes)
        self._host, self._port = parts.hostname, port
        self._tls = parts.scheme == "https"
        self._path = f"{parts.path.rstrip('/')}/v1/models/" + urllib.parse.quote(
            model, safe=""
        )
        if self.version is not None:
            self._path += f"/versions/{self.version}"
        self.url = f"{parts.scheme}://{parts.netloc}{self._path}"

    def _request(self, path, body=None, limit=MIN_ANSWER_BYTES, rows=None):
        """One HTTP exchange under one deadline: at `timeout` seconds a timer shuts
        the socket down, so a server that sends a byte now and then cannot stretch
        it. Returns the answer's JSON object."""
        url = self.url + path
        kind = http.client.HTTPSConnection if self._tls else http.client.HTTPConnection
        connection = kind(self._host, self._port, timeout=self.timeout)
        seconds = math.inf if self.timeout is None else self.timeout
        deadline = time.monotonic() + seconds
        timer = threading.Timer(self.timeout or 0, _shut_down, [connection])
        timer.daemon = True
        if self.timeout is not None:
            timer.start()
        try:
            try:
                connection.connect()
            except (OSError, ValueError) as e:
                reason = (
                    f"no connection within {self.timeout:g} s"
                    if isinstance(e, TimeoutError) or time.monotonic() >= deadline
                    else " ".join(str(e).split()) or type(e).__name__
                )
                raise self.unreachable("REST", reason) from None
            try:
                raw = self._exchange(connection, url, path, body, limit, rows)
            except (OSError, http.client.HTTPException) as e:
                if time.monotonic() >= deadline:
                    raise self.late() from None
                raise self._broken(e) from None
            if time.monotonic() >= deadline:  # an answer cut short at the deadline
                raise self.late()
            return self._json(raw)
        finally:
            timer.cancel()
            connection.close()

    def _broken(self, error):
        """The `AnswerError` of an exchange that broke off before the deadline."""
        if isinstance(error, http.client.RemoteDisconnected):
            problem = "the server closed the connection without an answer"
        elif isinstance(error, http.client.IncompleteRead):
            problem = (
                f"the answer ended after {len(error.partial)} bytes, before its end"
            )
        elif isinstance(error, http.client.HTTPException):
            detail = " ".join(str(error).split())[:120]
            kind = type(error).__name__ + (f": {detail}" if detail else "")
            return self.answer_error(f"the answer is not HTTP ({kind})")
        else:
            problem = (
                "the connection broke before the answer was complete "
                f"({type(error).__name__}: {' '.join(str(error).split())})"
            )
        return self.answer_error(problem, code="UNAVAILABLE")

    def _exchange(self, connection, url, path, body, limit, rows):
        """Sends the request; the answer's body (a `ServingError` for an HTTP
        error or a redirect)."""
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
        return self._read(response, limit, rows)

    def _read(self, response, limit, rows):
        """The answer's body, read up to `limit` bytes and no further."""
        length = response.getheader("Content-Length")
        length = int(length) if length and length.strip().isdigit() else None
        if length is not None and length > limit:
            raise self.too_large(limit, rows)
        body = response.read(limit + 1)
        if len(body) > limit:
            raise self.too_large(limit, rows)
        if length is not None and len(body) < length:
            raise http.client.IncompleteRead(body, length - len(body))
        return body

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
            kinds = {str: "string", list: "array", bool: "boolean", type(None): "null"}
            kind = kinds.get(type(answer), "number")
            raise self.answer_error(f"the answer is a JSON {kind}, not an object")
        return answer

    def _signature_defs(self):
        limit = max(MIN_ANSWER_BYTES, self.max_answer_bytes or 0)
        answer = self._request("/metadata", limit=limit)
        # a KeyError or TypeError: no readable signature_def (`signature_specs`)
        return answer["metadata"]["signature_def"]["signature_def"]

    def _predict(self, arrays, signature, limit, rows):
        """One columnar predict call."""
        spec = self.signature_spec(signature)
        inputs = {k: encode_value(v) for k, v in arrays.items()}
        body = {"signature_name": signature, "inputs": inputs}
        answer = self._request(":predict", body, limit, rows)
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
        return arrays
