"""`TextClassifier`: the task base of the zoo's text classifiers (HAN, self-attentive).

`fit(texts, labels)` with labels as class ids or as class names, `predict(texts)` ->
probabilities `(B, C)`, `predict_labels(texts)` -> class names, `explain(texts)` ->
per text: label, probabilities, the attention maps and the words they weigh,
`export(...)` -> the TF Serving SavedModel of its string-in signatures.
"""

import keras
import numpy as np
import tensorflow as tf

from zoo.export.serving_module import DEFAULT_MAX_BATCH_SIZE
from zoo.models.task import Task, _decoded, encode_ids, run_in_length_order


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

    `export(...)` writes the TF Serving SavedModel: string-in signatures made by
    the task itself (`serving_module`), listed in `export`'s docstring.
    """

    head_arguments = ("label_names",)
    explain_extra = None
    """`predict_texts`' `extra`: more per-text outputs of `explain`."""
    signature_names = ("serving_default", "preprocess")
    """The export's signatures (see `export`)."""
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

    def encode_targets(self, labels):
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
    ):
        """Writes `base_dir/name/VERSION/` (TF Serving) and `VERSION.keras` (this
        task, which predicts on raw strings); returns the version folder.

        The signatures of `serving_module` (this task's network, class names and
        in-graph preprocessor, the batch limit); `zoo.export.export_model` writes
        them with warm-up requests, the verifier's check of `serving_default`
        against the network, and the manifest's labels and limits (the
        preprocessor's settings named `max_*`, and `max_input_bytes`).

        Signatures (those of `signature_names`), each on `text: string [None]`:

        - `serving_default(text)` -> `probabilities` float [None, C], `label` string
          [None] and the network's attention maps listed in `keras_outputs`
          (HAN: `sentence_attention` [None, S], `word_attention` [None, S, W]);
        - `explain(text)` (HAN) -> the same plus the preprocessor's string
          features, the units the weights refer to (HAN: `sentences` [None, S],
          `words` [None, S, W]; "" where padded);
        - `embed(text)` (the sentence embedder) -> `embedding` float [None, r, 2u],
          `attention` float [None, r, T] and `tokens` string [None, T] (the words
          the attention columns refer to, "" where padded);
        - `preprocess(text)` -> `token_ids` int32, the network's input (which the
          verifier feeds to the `.keras` model's backbone).

        `S`, `W` and `T` are the longest (truncated) document, sentence or text of
        the request, at least 1. An empty or whitespace-only text has no words: all
        its attention weights (and its embedding) are 0 and its probabilities are
        the classifier's output for an all-zero document vector or embedding
        (finite, never NaN). A request holds at most `max_batch_size` texts (more
        is refused with InvalidArgument before any work). The vocabulary is the
        export's `assets/vocab.txt`; the family's `export_files` are written beside
        the version folder.

        Args:
            base_dir: the TF Serving base folder.
            name: the model name (default: the family's `export_name`).
            warmup_texts: example texts for the warm-up requests (default: a short
                example).
            metadata: manifest entries (`"recipe"`, `"data"`, `"metrics"`, ...).
            max_batch_size: the most texts one request may hold.
        """
        from zoo.export import export_model
        from zoo.text.preprocessing import MAX_INPUT_BYTES

        self.check_tensorflow_backend("export")
        module = self.serving_module(max_batch_size)
        config = self.preprocessor.get_config()
        limits = {k: v for k, v in config.items() if k.startswith("max_")}
        texts = list(warmup_texts or [self.example_text])
        extra_metadata, extra_files = self.export_files()
        return export_model(
            module,
            name=name or self.export_name,
            signatures=module.signatures(),
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

    def serving_module(self, max_batch_size=DEFAULT_MAX_BATCH_SIZE):
        """The `zoo.export.ServingModule` of `export`: the functions of
        `signature_names` (see `export`) on this task's network, class names and
        preprocessor, whose lookup table (and vocabulary file) it tracks.

        Example:

        ```python
        signatures = task.serving_module().signatures()
        signatures["serving_default"](tf.constant(["A moving film."]))
        # {"label": [b"pos"], "probabilities": ..., ...}
        ```
        """
        from zoo.export import ServingModule

        pre, network = self.preprocessor, self.backbone
        pre.check_vocabulary()
        label_names = tf.constant(self.label_names, tf.string)

        def classify(text):  # serving_default's outputs and the string features
            features = pre(text)
            out = network(features["token_ids"], training=False)
            result = {key: tf.cast(out[key], tf.float32) for key in self.keras_outputs}
            best = tf.argmax(result["probabilities"], axis=-1)
            result["label"] = tf.gather(label_names, best)
            strings = {k: v for k, v in features.items() if v.dtype == tf.string}
            return result, strings

        def embed(text):
            features = pre(text)
            out = network.encoder(features["token_ids"], training=False)
            return {
                "embedding": tf.cast(out["embedding"], tf.float32),
                "attention": tf.cast(out["attention"], tf.float32),
                "tokens": features["tokens"],
            }

        def explain(text):
            result, strings = classify(text)
            return {**result, **strings}

        functions = {
            "serving_default": lambda text: classify(text)[0],
            "explain": explain,
            "embed": embed,
            "preprocess": lambda text: {"token_ids": pre(text)["token_ids"]},
        }
        return ServingModule(
            network,
            max_batch_size=max_batch_size,
            functions={key: functions[key] for key in self.signature_names},
            input_signature=[tf.TensorSpec([None], tf.string, name="text")],
            resources=[pre.lookup],
        )

    def export_files(self):
        """The family's more manifest entries and `{suffix: write(path)}` files
        beside the version folder."""
        return {}, None

    def get_config(self):
        return {**super().get_config(), "label_names": list(self.label_names)}


def predict_texts(model, preprocessor, texts, batch_size=64, extra=None):
    """Runs preprocessor + model over raw texts; returns one dict per text.

    The texts are run in order of length (less padding, `run_in_length_order`), in
    batches, inside one `tf.function`; results come back in the order of `texts`.
    Every output of the model (`"probabilities"` and the attention maps) and every
    string output of the preprocessor (the words the attention refers to) is
    returned, as that text's row of its padded batch (strings decoded; padding is
    `""` and zero weight).

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

    rows = run_in_length_order(run, list(texts), batch_size)
    return [{k: _decoded(v) for k, v in row.items()} for row in rows]


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
