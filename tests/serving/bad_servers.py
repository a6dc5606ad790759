"""Servers that answer TF Serving's REST API wrongly, for the client tests.

Each listens on 127.0.0.1 (an ephemeral port), answers the model metadata of a
small classifier signature (`text` in; `label`, strings, and `probabilities`, float
pairs, out) as TF Serving does, and answers a predict request with whatever the test
gives it: a JSON value, raw bytes, a redirect, a slow drip, an endless stream. Every
handler stops within `SECONDS` and every server stops when its `with` block ends.

```python
with http_server(json_answer({"outputs": {"label": ["x"]}})) as server:
    RestClient(server.address, MODEL).predict({"text": ["a", "b"]})
```
"""

import contextlib
import http.server
import json
import socket
import threading
import time

MODEL = "m"
SECONDS = 20  # the longest any handler runs


def _tensor_info(dtype, *dims):
    return {
        "dtype": dtype,
        "tensor_shape": {"dim": [{"size": str(d), "name": ""} for d in dims]},
        "name": "x:0",
    }


METADATA = {
    "model_spec": {"name": MODEL, "signature_name": "", "version": "1"},
    "metadata": {
        "signature_def": {
            "signature_def": {
                "serving_default": {
                    "inputs": {"text": _tensor_info("DT_STRING", -1)},
                    "outputs": {
                        "label": _tensor_info("DT_STRING", -1),
                        "probabilities": _tensor_info("DT_FLOAT", -1, 2),
                    },
                    "method_name": "tensorflow/serving/predict",
                }
            }
        }
    },
}


def good_outputs(rows):
    """The right answer's `outputs` for `rows` rows."""
    return {"label": ["pos"] * rows, "probabilities": [[0.25, 0.75]] * rows}


def _head(handler, status=200, length=None, headers=()):
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    if length is not None:
        handler.send_header("Content-Length", str(length))
    for key, value in headers:
        handler.send_header(key, value)
    handler.end_headers()


def raw_answer(data, status=200, headers=()):
    """Answers `data` (bytes) with `status` and a Content-Length."""

    def answer(handler, body):
        _head(handler, status, len(data), headers)
        handler.wfile.write(data)

    return answer


def json_answer(payload, status=200):
    """Answers `payload` as JSON."""
    return raw_answer(json.dumps(payload).encode("utf-8"), status)


def redirect(location, status=302):
    return raw_answer(b"", status, headers=[("Location", location)])


def drip(interval, where="body"):
    """Sends the answer one byte every `interval` seconds: the status line and
    headers (`where="headers"`) or the body after them (`"body"`)."""
    data = json.dumps({"outputs": good_outputs(1)}).encode("utf-8")

    def answer(handler, body):
        if where == "headers":
            handler.close_connection = True
            head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + (
                b"X-Pad: " + b"a" * 1000 + b"\r\n"
            )
            data_out = head
        else:
            _head(handler, 200, len(data) * 100)
            handler.wfile.flush()
            data_out = data * 100
        _send_slowly(handler, data_out, interval)

    return answer


def _send_slowly(handler, data, interval):
    stop = time.monotonic() + SECONDS
    for i in range(len(data)):
        if time.monotonic() > stop:
            return
        try:
            handler.wfile.write(data[i : i + 1])
            handler.wfile.flush()
        except OSError:  # the client hung up
            return
        handler.server.sent += 1
        time.sleep(interval)


def endless(total, declare_length):
    """An answer of `total` bytes (`{"outputs": ["xxx...", ...`), sent in 64 KB
    pieces until the client hangs up; with or without a Content-Length."""
    piece = b'"' + b"x" * (2**16 - 3) + b'",'

    def answer(handler, body):
        if declare_length:
            _head(handler, 200, total)
        else:
            handler.close_connection = True
            _head(handler, 200, None, [("Connection", "close")])
        stop = time.monotonic() + SECONDS
        try:
            handler.wfile.write(b'{"outputs": [')
            while handler.server.sent < total and time.monotonic() < stop:
                handler.wfile.write(piece)
                handler.server.sent += len(piece)
        except OSError:  # the client hung up
            pass

    return answer


@contextlib.contextmanager
def http_server(answer, metadata=METADATA):
    """Serves `metadata` and answers every predict request with `answer(handler,
    body)`. Yields the server: `.address` ("127.0.0.1:PORT"), `.requests` (the
    predict bodies received), `.sent` (bytes an answer function counted)."""

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = SECONDS

        def log_message(self, *args):
            pass

        def do_GET(self):  # noqa: N802
            if self.path.endswith("/metadata"):
                return json_answer(metadata)(self, None)
            return json_answer({"error": "no such path"}, 404)(self, None)

        def do_POST(self):  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length))
            self.server.requests.append(body)
            answer(self, body)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.requests, server.sent = [], 0
    server.address = f"127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def http_bytes(payload, status="200 OK"):
    """A whole HTTP/1.1 answer carrying `payload` (JSON) as raw bytes."""
    data = json.dumps(payload).encode("utf-8")
    return (
        f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n"
    ).encode("ascii") + data


@contextlib.contextmanager
def raw_server(*replies):
    """A TCP server that reads a request and writes the next of `replies` (raw
    bytes; the last is repeated), then hangs up. Yields an object with `.address`
    and `.connections` (how many it accepted)."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.05)
    stop = threading.Event()

    class Served:
        address = f"127.0.0.1:{listener.getsockname()[1]}"
        connections = 0

    def run():
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                reply = replies[min(Served.connections, len(replies) - 1)]
                Served.connections += 1
                conn.settimeout(SECONDS)
                try:
                    conn.recv(1 << 16)
                    conn.sendall(reply)
                    conn.shutdown(socket.SHUT_WR)
                    conn.settimeout(1)
                    while conn.recv(1 << 16):  # read the rest: no reset on close
                        pass
                except OSError:
                    pass

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield Served
    finally:
        stop.set()
        thread.join(timeout=10)
        listener.close()
