"""`SavedModelSession`: a SavedModel loaded the way TF Serving loads it.

TF Serving's session bundle loads the `serve` MetaGraph with TensorFlow's C++
SavedModel loader into a session (variables restored, asset-initialised lookup tables)
and runs a signature by feeding and fetching its SignatureDef's tensor names. This
class does the same through `tf.compat.v1.saved_model.loader.load` in a
`tf.compat.v1.Session`, with only TensorFlow and tensorflow-text imported (the
tensorflow-text ops are registered first, as TF Serving links them). `zoo predict`,
the verifier, the serving benchmark and the test servers all use it.
"""

import os

import numpy as np

from zoo.errors import ConfigError, DataError
from zoo.serving.errors import ServingError, one_line_op_error

DEFAULT_SIGNATURE = "serving_default"


def dtype_name(enum_value):
    """A `DataType` enum value -> TensorFlow's numpy-style name (`"float32"`)."""
    import tensorflow as tf

    return tf.dtypes.as_dtype(enum_value).name


def as_input_array(values, dtype, name=None):
    """A request's values for one input as the array a session is fed.

    Strings become an object array of UTF-8 `bytes` (any `str` is encoded); other
    types are converted to `dtype` (a name such as `"int64"`).

    Args:
        values: the input's values (a list, nested lists or a NumPy array).
        dtype: the input's dtype name.
        name: the input's name, for the error message.

    Raises:
        zoo.errors.ConfigError: a value of a string input that is not text (`str`
            or `bytes`), e.g. a number (`bytes(5)` would be five NUL bytes), or
            values that cannot be converted to `dtype`; the message names the
            input, the position and the value.
    """
    what = "the input" if name is None else f"input {name!r}"
    if dtype == "string":
        array = np.array(values, dtype=object)
        flat = array.reshape(-1)
        for position, v in enumerate(flat):
            if not isinstance(v, (str, bytes, bytearray)):
                shown = repr(v)
                shown = shown if len(shown) <= 40 else shown[:37] + "..."
                raise ConfigError(
                    f"{what} takes text (str or bytes); value {position} is "
                    f"{type(v).__name__} {shown}"
                )
            flat[position] = v.encode("utf-8") if isinstance(v, str) else bytes(v)
        return array
    try:
        return np.asarray(values, dtype=dtype)
    except (TypeError, ValueError, OverflowError) as e:
        raise ConfigError(
            f"{what} takes {dtype} values; {' '.join(str(e).split())}"
        ) from None


class SavedModelSession:
    """A SavedModel export loaded as TF Serving loads it, to run its signatures.

    Args:
        path: `saved_models/NAME/VERSION`, or `saved_models/NAME` for its latest
            version.
        tags: the MetaGraph tags (TF Serving loads `serve`).
        config: optional `tf.compat.v1.ConfigProto` for the session.

    Attributes:
        version_dir: the version folder loaded.
        name, version: the model name (the folder above) and the integer version.
        session, graph: the `tf.compat.v1.Session` and its graph.
        meta_graph: the loaded `MetaGraphDef`.
        signature_defs: `{name: SignatureDef}`, without TensorFlow's internal
            `__saved_model_init_op`.

    Raises:
        zoo.errors.MissingPathError: the path does not exist or holds no version.
        zoo.errors.DataError: the export's files cannot be loaded (a truncated
            variables file, a missing index, a `saved_model.pb` that does not
            parse or lacks the tags); one line naming the version folder.

    Example:

    ```python
    with SavedModelSession("saved_models/memn2n") as model:
        model.signature_spec()["inputs"]  # {"question": "string", "story": "string"}
        outputs = model.predict({"story": ["Mary went to the kitchen."],
                                 "question": ["Where is Mary?"]})
    ```
    """

    def __init__(self, path, tags=("serve",), config=None):
        from zoo.export.paths import resolve_version_dir, version_of

        self.version_dir = resolve_version_dir(path)
        self.version = version_of(self.version_dir)
        self.name = os.path.basename(os.path.dirname(os.path.abspath(self.version_dir)))
        import tensorflow as tf
        import tensorflow_text  # noqa: F401  (registers the tensorflow-text ops)

        tf.get_logger().setLevel("ERROR")  # the v1 loader's deprecation notice
        self.graph = tf.Graph()
        self.session = tf.compat.v1.Session(graph=self.graph, config=config)
        try:
            self.meta_graph = tf.compat.v1.saved_model.loader.load(
                self.session, list(tags), self.version_dir
            )
        except BaseException as e:
            self.session.close()
            reason = _load_failure(e)
            if reason is None:
                raise
            raise DataError(
                f"cannot load the export ({reason}); export it again or pick "
                "another version",
                path=self.version_dir,
            ) from e
        self.signature_defs = {
            k: v
            for k, v in self.meta_graph.signature_def.items()
            if not k.startswith("__")
        }

    def signature_def(self, signature=DEFAULT_SIGNATURE):
        """The SignatureDef called `signature`.

        Raises:
            zoo.errors.ConfigError: when the export has no such signature.
        """
        if signature not in self.signature_defs:
            raise ConfigError(
                f"{self.version_dir} has no signature {signature!r}; its signatures: "
                f"{', '.join(sorted(self.signature_defs))}"
            )
        return self.signature_defs[signature]

    def signature_spec(self, signature=DEFAULT_SIGNATURE):
        """`{"inputs": {name: dtype}, "outputs": {name: dtype}}` of a signature."""
        sig = self.signature_def(signature)
        return {
            kind: {
                k: dtype_name(v.dtype) for k, v in sorted(getattr(sig, kind).items())
            }
            for kind in ("inputs", "outputs")
        }

    def predict(self, inputs, signature=DEFAULT_SIGNATURE):
        """Runs a signature on one request.

        Args:
            inputs: `{input_name: values}` for every input of the signature (lists,
                NumPy arrays; strings as `str` or `bytes`).
            signature: the signature name.

        Returns:
            `{output_name: np.ndarray}` (strings as `bytes`).

        Raises:
            zoo.errors.ConfigError: unknown signature, unknown or missing inputs.
            ServingError: the graph refused the request (e.g. a batch over
                `max_batch_size`); `code` is the TensorFlow error's status name.
        """
        import tensorflow as tf
        from tensorflow.core.protobuf import error_codes_pb2

        sig = self.signature_def(signature)
        if set(inputs) != set(sig.inputs):
            raise ConfigError(
                f"signature {signature!r} takes the inputs {', '.join(sorted(sig.inputs))}"
                f"; given: {', '.join(sorted(inputs)) or 'none'}"
            )
        feed = {
            sig.inputs[k].name: as_input_array(v, dtype_name(sig.inputs[k].dtype), k)
            for k, v in inputs.items()
        }
        fetches = {k: sig.outputs[k].name for k in sorted(sig.outputs)}
        try:
            return self.session.run(fetches, feed_dict=feed)
        except tf.errors.OpError as e:
            raise ServingError(
                one_line_op_error(e.message),
                code=error_codes_pb2.Code.Name(e.error_code),
            ) from e

    def close(self):
        self.session.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _load_failure(error):
    """What a damaged export's load error says, in one line (None for an error that
    is not about the files: an interrupt, a bug)."""
    import tensorflow as tf
    from google.protobuf.message import DecodeError

    if isinstance(error, tf.errors.OpError):  # truncated variables, a bad index
        return one_line_op_error(error.message)
    if isinstance(error, (OSError, ValueError, RuntimeError, DecodeError)):
        text = " ".join(str(error).split()) or type(error).__name__
        return text if len(text) <= 300 else text[:297] + "..."
    return None
