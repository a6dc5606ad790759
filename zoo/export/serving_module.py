"""`ServingModule`: the `tf.Module` whose `tf.function`s become serving signatures."""

import tensorflow as tf

DEFAULT_MAX_BATCH_SIZE = 256
"""Rows per request a signature accepts unless the module is given another limit."""

BATCH_CHECK_SCOPE = "check_batch"
"""Name scope of the ops `ServingModule.check_batch` adds (how `export_model` finds
the signatures that enforce the limit)."""


class ServingModule(tf.Module):
    """A `tf.Module` holding a Keras model and its string-in serving functions.

    A task builds one in its `serving_module()` (its `export` writes it with
    `zoo.export.export_model`): it hands over its network, the Python functions of
    its signatures (`functions`, string tensors in, a dict of named outputs out),
    their common `input_signature` of named `tf.TensorSpec`s, and the TensorFlow
    resources those functions use (`resources`: lookup tables, tokenizers; their
    vocabulary files become the export's assets). Each function becomes a
    `tf.function` whose first step is `check_batch` on its inputs; `signatures()`
    gives them by signature name. A subclass may instead define `tf.function`
    methods itself (calling `self.check_batch` first). `export_model` saves the
    module with `tf.saved_model.save`.

    Keras objects (a `keras.Layer` or `keras.Model`, or a list/tuple/dict of them)
    assigned as attributes are deliberately *not* tracked as SavedModel children:
    a Keras 3 model saved as a child restores under TF2's loader but not under the
    graph-mode SavedModel loader TF Serving uses ("Could not find variable ...").
    `export_model` instead tracks the `tf.Variable`s that the signatures use, as
    `keras.export.ExportArchive` does. Hand TensorFlow resources such as lookup
    tables to the module itself (`resources`), not inside the Keras model.

    Every export should have a `preprocess` signature whose outputs are named like the
    Keras model's inputs, so the verifier can run preprocess -> Keras model and compare
    with the serving signature.

    Every signature bounds its work per request: its first step is
    `self.check_batch(...)` on its inputs, which refuses a request of more than
    `max_batch_size` rows (TF Serving answers InvalidArgument, HTTP 400) before any
    tokenization or model work. `export_model` records the limit in the manifest
    (`limits.max_batch_size`, and `max_batch_size` per signature: null for a signature
    that does not call `check_batch`).

    Args:
        model: the trained `keras.Model`, available as `self.model`.
        name: optional module name.
        max_batch_size: the most rows one request may hold (default
            `DEFAULT_MAX_BATCH_SIZE`).
        functions: `{signature name: function}`, `"serving_default"` among them;
            each function takes the inputs of `input_signature` (already checked
            by `check_batch`) and returns a dict of named outputs.
        input_signature: the `tf.TensorSpec`s of every function's inputs (their
            names are the signatures' input names).
        resources: the TensorFlow objects the functions use (tracked, so the
            SavedModel saves them and their asset files).
        autograph: trace the functions with autograph (False for explicit
            `tf.while_loop`s, such as the searches).

    Example:

    ```python
    spec = tf.TensorSpec([None], tf.string, name="text")
    lookup = VocabularyLookup(vocab_file)
    labels = tf.constant(["neg", "pos"])

    def preprocess(text):
        return {"token_ids": lookup(word_tokenize(normalize(text))).to_tensor()}

    def serve(text):
        probabilities = model(preprocess(text)["token_ids"])
        label = tf.gather(labels, tf.argmax(probabilities, axis=-1))
        return {"probabilities": probabilities, "label": label}

    module = ServingModule(
        model,
        functions={"serving_default": serve, "preprocess": preprocess},
        input_signature=[spec],
        resources=[lookup],
    )
    export_model(module, name="classifier", signatures=module.signatures())
    ```
    """

    def __init__(
        self,
        model,
        name=None,
        max_batch_size=DEFAULT_MAX_BATCH_SIZE,
        functions=None,
        input_signature=None,
        resources=(),
        autograph=True,
    ):
        from zoo.layers.arguments import check_positive_ints

        super().__init__(name=name)
        check_positive_ints(max_batch_size=max_batch_size)
        self.model = model
        self.max_batch_size = max_batch_size
        self.resources = list(resources)
        self.functions = {
            key: tf.function(
                self._checked(fn), input_signature=input_signature, autograph=autograph
            )
            for key, fn in (functions or {}).items()
        }

    def _checked(self, fn):
        """`fn` called on its inputs once `check_batch` passed."""
        return lambda *inputs: fn(*tf.nest.flatten(self.check_batch(*inputs)))

    def signatures(self):
        """`{signature name: tf.function}` of `functions`, for `export_model`."""
        return dict(self.functions)

    def check_batch(self, *inputs):
        """Refuses a request of more than `max_batch_size` rows; call it first.

        Returns the inputs unchanged (`tf.identity`) under a control dependency on the
        checks, so everything computed from the returned tensors runs only once the
        checks have passed. The checks: the first input's batch (its first dimension)
        is at most `max_batch_size`, and, when several inputs are given, every input
        has that same batch size.

        Args:
            *inputs: the signature's input tensors (batch first).

        Returns:
            The single input, or a tuple of the inputs in order.

        Raises:
            tf.errors.InvalidArgumentError: when the signature runs on a request
                over the limit, e.g. "assertion failed: [request batch of] [300]
                [rows exceeds max_batch_size=256; split the request]".

        Example:

        ```python
        @tf.function(input_signature=[
            tf.TensorSpec([None], tf.string, name="story"),
            tf.TensorSpec([None], tf.string, name="question"),
        ])
        def serve(self, story, question):
            story, question = self.check_batch(story, question)
            ...
        ```
        """
        if not inputs:
            raise ValueError("`check_batch` needs at least one input tensor.")
        limit = self.max_batch_size
        with tf.name_scope(BATCH_CHECK_SCOPE):
            sizes = [tf.shape(x, out_type=tf.int64)[0] for x in inputs]
            checks = [
                tf.debugging.Assert(
                    sizes[0] <= limit,
                    [
                        "request batch of",
                        sizes[0],
                        f"rows exceeds max_batch_size={limit}; split the request",
                    ],
                    name="max_batch_size",
                )
            ]
            # An eager tensor has no name.
            names = [
                getattr(x, "name", f"input {i}").split(":")[0]
                for i, x in enumerate(inputs)
            ]
            for name, size in zip(names[1:], sizes[1:], strict=True):
                checks.append(
                    tf.debugging.Assert(
                        tf.equal(size, sizes[0]),
                        [
                            "inputs of one request must have the same batch size: "
                            f"{name} has",
                            size,
                            f"rows, {names[0]} has",
                            sizes[0],
                        ],
                        name="same_batch_size",
                    )
                )
            with tf.control_dependencies(checks):
                outputs = tuple(tf.identity(x) for x in inputs)
        return outputs[0] if len(outputs) == 1 else outputs

    def __setattr__(self, name, value):
        if _is_keras(value):
            object.__setattr__(self, name, value)  # not a SavedModel child
        else:
            super().__setattr__(name, value)

    def track_variables_of(self, concrete_functions):
        """Tracks the `tf.Variable`s used by `concrete_functions` (called by
        `export_model`, also on a plain `tf.Module`), so the SavedModel saves and
        restores them."""
        variables = {
            id(v): v
            for fn in concrete_functions
            for v in (*fn.trainable_variables, *fn.variables)
        }
        self._serving_variables = list(variables.values())
        return self._serving_variables


def _is_keras(value):
    """A `keras.Layer`, or a non-empty list, tuple or dict of them."""
    import keras

    values = tf.nest.flatten(value)
    return bool(values) and all(isinstance(v, keras.Layer) for v in values)
