"""`TextClassifier`: the task base of the zoo's text classifiers (HAN, self-attentive).

`fit(texts, labels)` with labels as class ids or as class names, `predict(texts)` ->
probabilities `(B, C)`, `predict_labels(texts)` -> class names, `explain(texts)` ->
per text: label, probabilities, the attention maps and the words they weigh.
"""

import keras
import numpy as np
import tensorflow as tf

from zoo.export.serving_module import DEFAULT_MAX_BATCH_SIZE
from zoo.models.task import Task, _decoded, encode_ids


class TextClassifier(Task):
    """A network whose dict output holds `"probabilities"`, on raw text.

    Args:
        backbone: the network: token ids -> dict with `"probabilities"` `(B, C)` and
            attention maps (e.g. `zoo.models.han.HANClassifier`).
        preprocessor: its `Preprocessor` layer (raw strings -> token ids).
        label_names: the class names in class-id order (default `"0"`, `"1"`, ...).
        compile: compile with the family's defaults (`default_compile`).
        **kwargs: `keras.Model` keyword arguments (`name`, ...).

    Labels given to `fit`/`evaluate` may be ids (ints) or names from
    `label_names`; an unknown name is a `ValueError` naming it.

    `from_preset(dir, num_classes=C)` puts a new, freshly initialised head of `C`
    classes on the preset's trained network (`label_names` then default to
    `"0"`, `"1"`, ... unless given).
    """

    head_arguments = ("label_names",)
    explain_extra = None
    """`predict_texts`' `extra`: more per-text outputs of `explain`."""
    signature_names = ("serving_default", "preprocess")
    """The export's signatures (`TextClassifierServing`'s)."""
    export_name = None
    example_text = None
    """The export's default name and warm-up text."""
    warmup_signatures = ("serving_default",)
    keras_outputs = ("probabilities",)
    """The signatures given warm-up requests, and the outputs `serving_default`
    shares with the network (the verifier compares them)."""

    def __init__(
        self, backbone, preprocessor=None, label_names=None, compile=True, **kwargs
    ):
        self.check_parts(backbone, preprocessor)
        num_classes = backbone.output["probabilities"].shape[-1]
        if label_names is None:
            label_names = [str(i) for i in range(num_classes)]
        label_names = [str(name) for name in label_names]
        if len(label_names) != num_classes:
            raise ValueError(
                f"`label_names` must name the network's {num_classes} classes. "
                f"Received: label_names={label_names!r}"
            )
        if len(set(label_names)) != len(label_names):
            raise ValueError(
                f"`label_names` must be distinct. Received: label_names={label_names!r}"
            )
        # === Layers ===
        self.backbone = backbone
        self.preprocessor = preprocessor

        # === Functional Model ===
        inputs = backbone.input
        outputs = backbone(inputs)["probabilities"]
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)

        # === Config ===
        self.label_names = label_names
        if compile:
            self.default_compile()

    def default_compile(self, learning_rate=1e-3, clipnorm=None, jit_compile="auto"):
        """Adam (`learning_rate`, gradient norm clipped at `clipnorm`), sparse
        categorical cross-entropy on the probabilities, accuracy."""
        optimizer = keras.optimizers.Adam(learning_rate, clipnorm=clipnorm)
        compile_classifier(self, optimizer, jit_compile)

    @property
    def num_classes(self):
        return len(self.label_names)

    def encode_labels(self, labels):
        """Class ids (int32) of labels given as ids or as names."""
        if isinstance(labels, tf.Tensor):
            if labels.dtype != tf.string:
                return tf.cast(labels, tf.int32)
            names = tf.constant(self.label_names)
            matches = tf.equal(tf.expand_dims(labels, -1), names)
            check = tf.debugging.assert_equal(
                tf.reduce_all(tf.reduce_any(matches, axis=-1)),
                True,
                message=f"a label is none of the task's label_names {self.label_names}",
            )
            with tf.control_dependencies([check]):
                return tf.cast(tf.argmax(tf.cast(matches, tf.int32), axis=-1), tf.int32)
        return encode_ids(
            labels,
            {name: i for i, name in enumerate(self.label_names)},
            self.num_classes,
            f"a class id of {self.label_names} (0..{self.num_classes - 1})",
            f"none of the task's label_names {self.label_names}",
        )

    def encode_targets(self, y):
        return self.encode_labels(y)

    def predict_labels(self, texts, batch_size=None):
        """The most probable class name of each text."""
        probabilities = self.predict(texts, batch_size=batch_size, verbose=0)
        return [self.label_names[i] for i in np.argmax(probabilities, axis=-1)]

    def explain(self, texts, batch_size=32):
        """Label, probabilities and attention of each text.

        Returns:
            One dict per text: `"label"`, `"probabilities"` `(C,)`, every attention
            map of the network (its dict outputs ending in `attention`) and the
            string features of the preprocessor they refer to (`"words"`,
            `"sentences"`, `"tokens"`: "" where padded, weight 0 there), each as
            this text's row of its padded batch.

        Needs the TensorFlow backend (the network runs in a `tf.function`).
        """
        self.check_tensorflow_backend("explain")
        texts = self.checked_texts(texts)
        rows = predict_texts(
            self.backbone, self.preprocessor, texts, batch_size, self.explain_extra
        )
        for row in rows:
            row["label"] = self.label_names[int(np.argmax(row["probabilities"]))]
        return rows

    def export(
        self,
        base_dir="saved_models",
        name=None,
        warmup_texts=None,
        metadata=None,
        max_batch_size=DEFAULT_MAX_BATCH_SIZE,
        preprocessor=None,
    ):
        """Writes `base_dir/name/VERSION/` (TF Serving) and `VERSION.keras` (this
        task, which predicts on raw strings); returns the version folder.

        The network, the class names, the in-graph `preprocessor` and the batch limit
        make the `serving_module`; `zoo.export.export_model` writes it with
        warm-up requests, the verifier's check of `serving_default` against the
        network, and the manifest's labels and limits.

        Args:
            base_dir: the TF Serving base folder.
            name: the model name (default: the family's `export_name`).
            warmup_texts: example texts for the warm-up requests (default: a short
                example).
            metadata: manifest entries (`"recipe"`, `"data"`, `"metrics"`, ...).
            max_batch_size: the most texts one request may hold.
            preprocessor: the family's preprocessor layer (default: this task's);
                its settings named `max_*` are the manifest's limits.
        """
        from zoo.export import export_model
        from zoo.text.preprocessing import MAX_INPUT_BYTES

        self.check_tensorflow_backend("export")
        preprocessor = preprocessor or self.preprocessor
        module = self.serving_module(preprocessor, max_batch_size)
        config = preprocessor.get_config()
        limits = {k: v for k, v in config.items() if k.startswith("max_")}
        texts = list(warmup_texts or [self.example_text])
        extra_metadata, extra_files = self.export_files(preprocessor)
        return export_model(
            module,
            name=name or self.export_name,
            signatures=module.serving_signatures(),
            base_dir=base_dir,
            keras_model=self,
            warmup={signature: {"text": texts} for signature in self.warmup_signatures},
            keras_check={
                "signature": "serving_default",
                "outputs": {key: key for key in self.keras_outputs},
            },
            metadata={
                **(metadata or {}),
                **extra_metadata,
                "labels": list(self.label_names),
                "limits": {**limits, "max_input_bytes": MAX_INPUT_BYTES},
            },
            extra_files=extra_files,
        )

    def serving_module(self, preprocessor=None, max_batch_size=DEFAULT_MAX_BATCH_SIZE):
        """The `TextClassifierServing` of the export: this task's network, class
        names and `signature_names`, on `preprocessor` (the family's preprocessor
        layer; default: this task's)."""
        from zoo.models.text_classifier_serving import TextClassifierServing

        return TextClassifierServing(
            self.backbone,
            preprocessor or self.preprocessor,
            self.label_names,
            max_batch_size,
            self.signature_names,
            self.keras_outputs,
        )

    def export_files(self, preprocessor):
        """The family's more manifest entries and `{suffix: write(path)}` files
        beside the version folder."""
        return {}, None

    def get_config(self):
        return {**super().get_config(), "label_names": list(self.label_names)}


def predict_texts(model, preprocessor, texts, batch_size=64, extra=None):
    """Runs preprocessor + model over raw texts; returns one dict per text.

    The texts are run in order of length (less padding), in batches, inside one
    `tf.function`; results come back in the order of `texts`. Every output of the
    model (`"probabilities"` and the attention maps) and every string output of the
    preprocessor (the words the attention refers to) is returned, as that text's row
    of its padded batch (strings decoded; padding is `""` and zero weight).

    Args:
        model: a network following the models' convention: `model(token_ids)`
            returns a dict holding `"probabilities"`.
        preprocessor: string tensor `[B]` -> dict holding `"token_ids"`.
        texts: list of str.
        batch_size: texts per batch.
        extra: optional `extra(outputs, features) -> dict` of more per-text tensors
            computed in the same graph (e.g. a penalty norm).

    Returns:
        A list of `{name: NumPy row}` dicts.
    """

    preprocessor.check_vocabulary()  # one line, before the graph

    @tf.function(reduce_retracing=True)
    def run(text):
        features = preprocessor(text)
        outputs = dict(model(features["token_ids"], training=False))
        if extra is not None:
            outputs.update(extra(outputs, features))
        for key, value in features.items():
            if value.dtype == tf.string:
                outputs[key] = value
        return outputs

    texts = list(texts)
    order = np.argsort([len(t) for t in texts], kind="stable")
    results = [None] * len(texts)
    for start in range(0, len(texts), batch_size):
        index = order[start : start + batch_size]
        batch = {
            k: v.numpy() for k, v in run(tf.constant([texts[i] for i in index])).items()
        }
        for j, i in enumerate(index):
            results[i] = {k: _decoded(v[j]) for k, v in batch.items()}
    return results


def compile_classifier(task, optimizer, jit_compile="auto"):
    """Compiles the `TextClassifier` `task` with `optimizer` and returns it.

    The loss and metric of the tasks' `default_compile`: sparse categorical
    cross-entropy on the probabilities (plus the losses the network adds itself,
    such as a self-attention penalty) and accuracy. The recipes compile with the
    run's optimizer this way (its learning rate, schedule and weight averaging).

    Args:
        task: a `TextClassifier`.
        optimizer: a Keras optimizer.
        jit_compile: `keras.Model.compile`'s (`False` for networks whose batches
            vary in shape, which XLA would recompile for every new shape).
    """
    task.compile(
        optimizer=optimizer,
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
        jit_compile=jit_compile,
    )
    return task
