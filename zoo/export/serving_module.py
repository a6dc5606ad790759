"""Base class of the `tf.Module`s whose `tf.function`s become serving signatures."""

import tensorflow as tf

DEFAULT_MAX_BATCH_SIZE = 256
"""Rows per request a signature accepts unless the module is given another limit."""

BATCH_CHECK_SCOPE = "check_batch"
"""Name scope of the ops `ServingModule.check_batch` adds (how `export_model` finds
the signatures that enforce the limit)."""


class ServingModule(tf.Module):
    """A `tf.Module` holding a Keras model and its string-in serving functions.

    Subclasses add in-graph preprocessing resources (e.g. `VocabularyLookup`) as
    attributes and define `tf.function` methods with an `input_signature` of named
    `tf.TensorSpec`s; each returns a dict of named outputs. `export_model` saves the
    module with `tf.saved_model.save`: the Keras 3 model is tracked as a child, so its
    variables (and the lookups' vocabulary assets) are saved with the signatures.

    Keras objects (a `keras.Layer` or `keras.Model`, or a list/tuple/dict of them)
    assigned as attributes are deliberately *not* tracked as SavedModel children:
    a Keras 3 model saved as a child restores under TF2's loader but not under the
    graph-mode SavedModel loader TF Serving uses ("Could not find variable ...").
    `export_model` instead tracks the `tf.Variable`s that the signatures use, as
    `keras.export.ExportArchive` does. Put TensorFlow resources such as lookup tables
    on the module itself (e.g. `VocabularyLookup`), not inside the Keras model.

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

    Example:

    ```python
    class ClassifierServing(ServingModule):
        def __init__(self, model, vocab_file, labels):
            super().__init__(model)
            self.lookup = VocabularyLookup(vocab_file)
            self.labels = tf.constant(labels)

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text")])
        def preprocess(self, text):
            text = self.check_batch(text)
            words = word_tokenize(normalize(text))
            return {"token_ids": self.lookup(words).to_tensor()}

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text")])
        def serve(self, text):
            text = self.check_batch(text)
            probabilities = self.model(self.preprocess(text)["token_ids"])
            label = tf.gather(self.labels, tf.argmax(probabilities, axis=-1))
            return {"probabilities": probabilities, "label": label}
    ```
    """

    def __init__(self, model, name=None, max_batch_size=DEFAULT_MAX_BATCH_SIZE):
        from zoo.layers.arguments import check_positive_ints

        super().__init__(name=name)
        check_positive_ints(max_batch_size=max_batch_size)
        self.model = model
        self.max_batch_size = max_batch_size

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
