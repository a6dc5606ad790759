"""`ServerClient`: what the clients of a running TF Serving share, whatever the protocol.

Every answer is checked against its request and the signature before it is returned:
each declared output is present and no other, each has the request's row count as its
leading dimension, and its dtype and shape are the ones the signature declares (where
it declares them). An answer is also bounded in size (`answer_limit`).
"""

from zoo.errors import ConfigError
from zoo.serving.errors import AnswerError, ServingError
from zoo.serving.outputs import non_finite
from zoo.serving.saved_model_session import DEFAULT_SIGNATURE, as_input_array

# The largest answer read for a request, unless `max_answer_bytes` says otherwise:
# this much per row and per output (JSON text of a long attention matrix fits), and
# never less than the floor.
ANSWER_BYTES_PER_ROW = 1 << 20
MIN_ANSWER_BYTES = 16 << 20


def _shown(shape):
    return "(" + ", ".join("?" if d is None or d < 0 else str(d) for d in shape) + ")"


def _megabytes(n):
    if n < 2**20:
        return f"{n} bytes"
    return f"{n >> 20} MB" if n % 2**20 == 0 else f"{n / 2**20:.1f} MB"


def _tensor_shape(info):
    """A metadata `TensorInfo`'s shape: a tuple (-1: any size), or None (unknown)."""
    shape = info.get("tensor_shape")
    if not isinstance(shape, dict) or shape.get("unknown_rank"):
        return None
    return tuple(int(d.get("size", -1)) for d in shape.get("dim", []))


def _dtype(info):
    """A metadata `TensorInfo`'s `DataType` name (`"DT_FLOAT"`) -> `"float32"`."""
    name = info.get("dtype", "DT_STRING")
    wide = {"DT_FLOAT": "float32", "DT_DOUBLE": "float64", "DT_HALF": "float16"}
    return wide.get(name, name.removeprefix("DT_").lower())


class ServerClient:
    """Base of `GrpcClient` and `RestClient`: the arguments they share (see theirs).

    A subclass implements `_signature_defs()` (the model metadata's `signature_def`
    map as JSON, the REST API's form; a `KeyError` or `TypeError` in it reads as an
    answer with no readable `signature_def`), `_predict(arrays, signature, limit, rows)`
    (the answer `{output: np.ndarray}` of one request, its output names checked
    with `check_names` and each output read up to `limit` bytes), and may override
    `close()`.
    """

    def __init__(
        self, address, model, version=None, timeout=60.0, max_answer_bytes=None
    ):
        self.address = address
        self.model = model
        self.version = None if version is None else int(version)
        self.timeout = timeout
        self.max_answer_bytes = max_answer_bytes
        self._specs = None
        self._shapes = None

    def signature_specs(self):
        """`{signature: {"inputs": {name: dtype}, "outputs": {...}}}` of the model
        (read once); `_shapes` gets `{signature: {output: shape}}` (-1 for a
        dimension of any size; None for an output of unknown rank)."""
        if self._specs is None:
            try:
                specs, shapes = {}, {}
                for name, sig in self._signature_defs().items():
                    if not name.startswith("__"):
                        specs[name] = {
                            kind: {
                                k: _dtype(v)
                                for k, v in sorted(sig.get(kind, {}).items())
                            }
                            for kind in ("inputs", "outputs")
                        }
                        outputs = sig.get("outputs", {}).items()
                        shapes[name] = {k: _tensor_shape(v) for k, v in outputs}
            except (KeyError, TypeError, AttributeError, ValueError):
                raise self.answer_error(
                    "the metadata answer has no readable signature_def"
                ) from None
            self._specs, self._shapes = specs, shapes
        return self._specs

    def signature_spec(self, signature=DEFAULT_SIGNATURE):
        """The inputs and outputs of `signature`; a `ConfigError` naming the served
        signatures when the model has no such signature."""
        specs = self.signature_specs()
        if signature not in specs:
            raise ConfigError(
                f"model {self.model!r} at {self.address} has no signature "
                f"{signature!r}; its signatures: {', '.join(sorted(specs))}"
            )
        return specs[signature]

    def answer_error(self, problem, code="INTERNAL"):
        """An `AnswerError` naming the server: `HOST:PORT (model 'm'): problem`."""
        version = "" if self.version is None else f" version {self.version}"
        server = f"{self.address} (model {self.model!r}{version})"
        return AnswerError(f"{server}: {problem}", code=code)

    def unreachable(self, port, reason):
        """The `ServingError` of a server that cannot be reached."""
        return ServingError(
            f"cannot reach TF Serving's {port} port at {self.address} ({reason})",
            code="UNAVAILABLE",
        )

    def late(self):
        """The `AnswerError` of an answer not complete within `timeout`."""
        return self.answer_error(
            f"no complete answer within {self.timeout:g} s", code="DEADLINE_EXCEEDED"
        )

    def answer_limit(self, rows, signature=DEFAULT_SIGNATURE):
        """The most bytes read for the answer of a request of `rows` rows:
        `max_answer_bytes` when given, else `ANSWER_BYTES_PER_ROW` per row and per
        output of the signature, at least `MIN_ANSWER_BYTES`."""
        if self.max_answer_bytes is not None:
            return self.max_answer_bytes
        outputs = max(1, len(self.signature_spec(signature)["outputs"]))
        return max(MIN_ANSWER_BYTES, (rows or 1) * outputs * ANSWER_BYTES_PER_ROW)

    def too_large(self, limit, rows):
        """The `AnswerError` of an answer over `limit` bytes."""
        given = self.max_answer_bytes is not None
        return self.answer_error(
            f"the answer is larger than {_megabytes(limit)}, the "
            + ("limit given" if given else f"limit for {rows or 1} rows")
            + " (--max-answer-mb raises it)",
            code="RESOURCE_EXHAUSTED",
        )

    def check_names(self, outputs, signature):
        """Refuses an answer (any mapping of output names) that lacks an output of
        the signature or has one the signature does not declare."""
        declared = self.signature_spec(signature)["outputs"]
        missing = sorted(set(declared) - set(outputs))
        if missing:
            raise self.answer_error(
                f"the answer lacks the declared output(s) {', '.join(missing)} of "
                f"signature {signature!r}"
            )
        extra = sorted(set(outputs) - set(declared))
        if extra:
            raise self.answer_error(
                f"the answer has output(s) {', '.join(extra)} that signature "
                f"{signature!r} does not declare (it declares "
                f"{', '.join(sorted(declared))})"
            )

    def check_answer(self, outputs, rows, signature):
        """Refuses an answer `{output: np.ndarray}` that does not fit the request
        of `rows` rows (None: unknown) or the signature's shapes, with an
        `AnswerError` naming the server and the problem (NaN and infinities
        included); returns `outputs`. Its
        output names (`check_names`) and dtypes were checked as it was decoded."""
        shapes = self._shapes[signature]
        for name in sorted(outputs):
            value, shape = outputs[name], shapes.get(name)
            if (bad := non_finite(value)) is not None:
                raise self.answer_error(
                    f"output {name!r} holds {bad}, not a finite number"
                )
            if shape == () and value.ndim == 0:
                continue  # a declared scalar (any other shape is refused below)
            if rows is not None and (value.ndim == 0 or value.shape[0] != rows):
                found = f"{value.shape[0]} rows" if value.ndim else "no rows (a scalar)"
                raise self.answer_error(
                    f"output {name!r} has {found} for a request of {rows} rows"
                )
            if shape is not None and (
                len(shape) != value.ndim
                or any(
                    d >= 0 and d != n
                    for d, n in zip(shape[1:], value.shape[1:], strict=True)
                )
            ):
                raise self.answer_error(
                    f"output {name!r} has shape {_shown(value.shape)}; the signature "
                    f"declares {_shown(shape)}"
                )
        return outputs

    def predict(self, inputs, signature=DEFAULT_SIGNATURE):
        """One request; returns `{output_name: np.ndarray}` (strings as bytes),
        checked against the request and the signature (`check_answer`).

        Args:
            inputs: `{input_name: values}`; a value that does not fit the input's
                dtype (e.g. a number for a string input) is a `ConfigError` naming
                it, refused before anything is sent.
            signature: the signature name.
        """
        spec = self.signature_spec(signature)
        arrays = {
            name: as_input_array(values, spec["inputs"].get(name, "string"), name)
            for name, values in inputs.items()
        }
        # None when the inputs do not agree or have no leading dimension: the
        # server is left to refuse them
        counts = {a.shape[0] if a.ndim else None for a in arrays.values()}
        rows = counts.pop() if len(counts) == 1 else None
        limit = self.answer_limit(rows, signature)
        return self.check_answer(
            self._predict(arrays, signature, limit, rows), rows, signature
        )

    def close(self):
        """Releases the connection (nothing to release by default)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
