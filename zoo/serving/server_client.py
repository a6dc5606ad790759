"""`ServerClient`: what the clients of a running TF Serving share, whatever the protocol.

Every answer is checked against its request and the signature before it is returned:
each declared output is present and no other, each has the request's row count as its
leading dimension, and its dtype and shape are the ones the signature declares (where
it declares them). An answer is also bounded in size (`answer_limit`).
"""

from zoo.errors import ConfigError
from zoo.serving.errors import AnswerError

DEFAULT_SIGNATURE = "serving_default"

# The largest answer read for a request, unless `max_answer_bytes` says otherwise:
# this much per row and per output (JSON text of a long attention matrix fits), and
# never less than the floor.
ANSWER_BYTES_PER_ROW = 1 << 20
MIN_ANSWER_BYTES = 16 << 20


def request_rows(inputs):
    """The row count of a request `{input_name: values}` (None when the inputs do
    not agree or have no leading dimension: the server is left to refuse them)."""
    counts = set()
    for values in inputs.values():
        try:
            counts.add(len(values))
        except TypeError:
            return None
    return counts.pop() if len(counts) == 1 else None


def _shown(shape):
    return "(" + ", ".join("?" if d is None or d < 0 else str(d) for d in shape) + ")"


def _dtype_of(array):
    return (
        "string"
        if array.dtype == object or array.dtype.kind in "SU"
        else (array.dtype.name)
    )


def _megabytes(n):
    if n < 2**20:
        return f"{n} bytes"
    return f"{n >> 20} MB" if n % 2**20 == 0 else f"{n / 2**20:.1f} MB"


class ServerClient:
    """Base of `GrpcClient` and `RestClient`.

    A subclass sets `address`, `model` and `max_answer_bytes`, implements
    `signature_specs()` (`{signature: {"inputs": {name: dtype}, "outputs": {name:
    dtype}}}` from the server's model metadata; it also fills `_shapes`, `{signature:
    {output: shape tuple with -1 for unknown dims, or None for an unknown rank}}`) and
    `predict(inputs, signature)`, and may override `close()`.
    """

    address = None
    model = None
    max_answer_bytes = None
    _shapes = None

    def signature_specs(self):
        raise NotImplementedError

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

    def output_shapes(self, signature=DEFAULT_SIGNATURE):
        """`{output: shape}` as the signature declares them (-1 for a dimension of
        any size; None for an output of unknown rank)."""
        self.signature_spec(signature)
        return dict((self._shapes or {}).get(signature, {}))

    def server(self):
        """The server and model, as error messages name them."""
        version = (
            ""
            if getattr(self, "version", None) is None
            else (f" version {self.version}")
        )
        return f"{self.address} (model {self.model!r}{version})"

    def answer_error(self, problem, code="INTERNAL"):
        """An `AnswerError` naming the server: `HOST:PORT (model 'm'): problem`."""
        return AnswerError(f"{self.server()}: {problem}", code=code)

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

    def check_answer(self, outputs, rows, signature, dtypes=True):
        """Refuses an answer `{output: np.ndarray}` that does not fit the request
        of `rows` rows (None: unknown) or the signature, with an `AnswerError` naming
        the server and the problem; returns `outputs`.

        Args:
            dtypes: whether to compare the arrays' dtypes with the signature's (a
                client that converted the answer to the declared dtypes skips it).
        """
        self.check_names(outputs, signature)
        declared = self.signature_spec(signature)["outputs"]
        shapes = self.output_shapes(signature)
        for name in sorted(outputs):
            value = outputs[name]
            if dtypes and _dtype_of(value) != declared[name]:
                raise self.answer_error(
                    f"output {name!r} is {_dtype_of(value)}; the signature declares "
                    f"{declared[name]}"
                )
            shape = shapes.get(name)
            if shape is not None and len(shape) == 0:
                if value.ndim != 0:
                    raise self.answer_error(
                        f"output {name!r} has shape {_shown(value.shape)}; the "
                        "signature declares a scalar"
                    )
                continue
            if rows is not None and (value.ndim == 0 or value.shape[0] != rows):
                found = (
                    "no rows (a scalar)"
                    if value.ndim == 0
                    else (f"{value.shape[0]} rows")
                )
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

    def close(self):
        """Releases the connection (nothing to release by default)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
