"""Base class of the `tf.Module`s whose `tf.function`s become serving signatures."""

import tensorflow as tf


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

    Args:
        model: the trained `keras.Model`, available as `self.model`.
        name: optional module name.

    Example:

    ```python
    class ClassifierServing(ServingModule):
        def __init__(self, model, vocab_file, labels):
            super().__init__(model)
            self.lookup = VocabularyLookup(vocab_file)
            self.labels = tf.constant(labels)

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text")])
        def preprocess(self, text):
            words = word_tokenize(normalize(text))
            return {"token_ids": self.lookup(words).to_tensor()}

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text")])
        def serve(self, text):
            probabilities = self.model(self.preprocess(text)["token_ids"])
            label = tf.gather(self.labels, tf.argmax(probabilities, axis=-1))
            return {"probabilities": probabilities, "label": label}
    ```
    """

    def __init__(self, model, name=None):
        super().__init__(name=name)
        self.model = model

    def __setattr__(self, name, value):
        if _is_keras(value):
            object.__setattr__(self, name, value)  # not a SavedModel child
        else:
            super().__setattr__(name, value)

    def track_variables_of(self, concrete_functions):
        """Tracks the `tf.Variable`s used by `concrete_functions` (called by
        `export_model`), so the SavedModel saves and restores them."""
        seen, variables = set(), []
        for fn in concrete_functions:
            for v in list(fn.trainable_variables) + list(fn.variables):
                if id(v) not in seen:
                    seen.add(id(v))
                    variables.append(v)
        super().__setattr__("_serving_variables", variables)
        return variables


def _is_keras(value):
    import keras

    if isinstance(value, keras.Layer):
        return True
    if isinstance(value, (list, tuple)) and value:
        return all(isinstance(v, keras.Layer) for v in value)
    if isinstance(value, dict) and value:
        return all(isinstance(v, keras.Layer) for v in value.values())
    return False
