"""`ServingError`: a request that a model, or a server in front of it, refused.

Stdlib-only, like `zoo.errors`, so the command line imports it for free.
"""

from zoo.errors import ZooError


class ServingError(ZooError):
    """A prediction request that failed: refused by the graph (e.g. a batch over
    `max_batch_size`), by a server, or a server that cannot be reached.

    Args:
        message: one line saying what failed.
        code: the canonical status name (gRPC's `StatusCode` names, e.g.
            `"INVALID_ARGUMENT"`, `"NOT_FOUND"`, `"UNAVAILABLE"`).
    """

    def __init__(self, message, code="UNKNOWN"):
        self.message = message
        self.code = code
        super().__init__(message)

    def __reduce__(self):
        return (type(self), (self.message, self.code))


class AnswerError(ServingError):
    """A server's answer that does not fit its request or the model's signature: not
    HTTP, not JSON, too large, too slow, a wrong row count, a missing output, a
    dtype or shape the signature does not declare. The message names the server.
    """

    def __init__(self, message, code="INTERNAL"):
        super().__init__(message, code=code)


def one_line_op_error(message):
    """The line of a TensorFlow error message that says what went wrong.

    TensorFlow's messages start with "Graph execution error:" and the node's
    creation stack; an assertion's own text is on the line that starts with
    "assertion failed:".
    """
    lines = [line.strip() for line in str(message).splitlines() if line.strip()]
    for line in lines:
        if "assertion failed:" in line:
            return line[line.index("assertion failed:") :].split(" [[{{node")[0]
    skip = ("Graph execution error", "Detected at node", "<stack traces", "File ")
    for line in lines:
        if not line.startswith(skip) and not line.startswith("[[{{node"):
            return line.split("\t [[{{node")[0].split(" [[{{node")[0]
    return lines[0] if lines else "unknown error"
