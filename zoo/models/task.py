"""`Task`: a network and its preprocessor, fit and run on raw text (keras-hub style).

A task is a Functional `keras.Model` over its network (the backbone, which reads
token ids) that owns its `Preprocessor` layer. `fit`, `evaluate` and `predict` take
raw strings (lists, NumPy arrays or a `tf.data.Dataset`) and run the preprocessor in
the `tf.data` pipeline before the network, as keras-hub's `PipelineModel` does; the
compiled graph itself reads ids. A `tf.data.Dataset` of batches already
preprocessed (no `tf.string` in its elements) is used as it is. Saved with
`save("x.keras")`, a task carries its vocabularies (the preprocessor's assets):
after `import zoo`, `keras.saving.load_model("x.keras").predict(["some text"])`
works in a fresh process. `save_to_preset(dir)` / `from_preset(dir)` write and read
keras-hub's preset layout in a local folder; `export(...)` writes the family's TF
Serving SavedModel.

`fit`, `evaluate` and `predict` run on any Keras backend (the `tf.data` pipeline
hands NumPy batches to JAX). The methods that run the network inside a
`tf.function` (`explain`, `translate`, `embed`, `export`, ...) need the TensorFlow
backend and say so in one line on another (`check_tensorflow_backend`).
"""

import datetime
import inspect
import json
import os
import shutil

import keras
import numpy as np
import tensorflow as tf

from zoo.errors import ConfigError, DiskFullError, is_disk_full

CONFIG_FILE = "config.json"
TASK_CONFIG_FILE = "task.json"
PREPROCESSOR_CONFIG_FILE = "preprocessor.json"
METADATA_FILE = "metadata.json"
MODEL_WEIGHTS_FILE = "model.weights.h5"
PREPROCESSOR_ASSETS = os.path.join("assets", "preprocessor")


class Task(keras.Model):
    """Base of the zoo's tasks: `backbone` (ids in) + `preprocessor` (strings in).

    Subclasses build their Functional graph over `backbone.input` in `__init__`, set
    `self.backbone` and `self.preprocessor` before `super().__init__(inputs=...,
    outputs=...)`, and list their own arguments in `get_config` (after this one's).
    `preprocess_samples(x, y, sample_weight)` maps a batch of raw examples to the
    network's inputs and targets; the default runs the preprocessor and keeps the
    features the backbone reads.

    A `tf.data.Dataset` whose elements hold no string is taken as already
    preprocessed batches and used as it is; one whose features are ids but whose
    targets are strings (class names) has only its targets mapped. Set
    `task.preprocessor = None` to fit or predict on preprocessed lists or arrays
    (as keras-hub allows).
    """

    head_arguments = ()
    """The task's saved arguments that describe the backbone's head (e.g. a
    classifier's `label_names`): `from_preset` leaves them out when it builds a new
    head (`num_classes` changed)."""

    backbone_class = None
    preprocessor_class = None
    """The classes `check_parts` asks of the backbone and the preprocessor."""

    def check_parts(self, backbone, preprocessor):
        """Refuses a backbone or a preprocessor of another class than the task's
        (`backbone_class`, `preprocessor_class`); a missing preprocessor is allowed."""
        for key, value, expected in (
            ("backbone", backbone, self.backbone_class),
            ("preprocessor", preprocessor, self.preprocessor_class),
        ):
            needed = value is not None or key == "backbone"
            if needed and not isinstance(value, expected or object):
                raise ValueError(
                    f"`{key}` must be a {expected.__name__}. Received: "
                    f"{type(value).__name__}"
                )

    @staticmethod
    def check_vocabulary(preprocessor, vocabulary_size):
        """Refuses a preprocessor whose vocabulary has not `vocabulary_size` words."""
        if preprocessor is not None and preprocessor.asset_paths:
            if preprocessor.vocabulary_size != vocabulary_size:
                raise ValueError(
                    "The preprocessor's vocabulary must have the network's "
                    f"vocabulary_size ({vocabulary_size}) words. Received: "
                    f"{preprocessor.vocabulary_size} words"
                )

    def check_tensorflow_backend(self, method):
        """Raises a one-line `ConfigError` when Keras runs on another backend than
        TensorFlow: `method` runs the network inside a `tf.function`."""
        check_tensorflow_backend(f"{type(self).__name__}.{method}")

    # --- Preprocessing --------------------------------------------------------------

    @property
    def backbone(self):
        """The network (a Functional `keras.Model` over token ids)."""
        return getattr(self, "_backbone", None)

    @backbone.setter
    def backbone(self, value):
        self._backbone = value

    @property
    def preprocessor(self):
        """The `Preprocessor` layer (raw strings -> the backbone's inputs)."""
        return getattr(self, "_preprocessor", None)

    @preprocessor.setter
    def preprocessor(self, value):
        self._preprocessor = value

    def preprocess_features(self, x):
        """A batch of raw inputs -> the backbone's inputs (the preprocessor's
        features it reads)."""
        features = self.preprocessor(x)
        names = [t.name.split(":")[0] for t in self.backbone.inputs]
        if not isinstance(features, dict):
            return features
        missing = [n for n in names if n not in features]
        if missing:
            raise ValueError(
                f"{type(self.preprocessor).__name__} gives {sorted(features)}, the "
                f"network reads {names}"
            )
        if len(names) == 1:
            return features[names[0]]
        return {n: features[n] for n in names}

    def encode_targets(self, y):
        """The network's targets of the targets `y` given to `fit` / `evaluate`
        (lists, arrays or tensors); as they are by default."""
        return y

    def preprocess_samples(self, x, y=None, sample_weight=None):
        """A batch of raw examples -> `(inputs, targets, sample weights)`; features
        that hold no string are taken as the backbone's inputs already."""
        if y is not None:
            y = self.encode_targets(y)
        if self.preprocessor is not None and _holds_strings(x):
            x = self.preprocess_features(x)
        return keras.utils.pack_x_y_sample_weight(x, y, sample_weight)

    def _compile_if_needed(self):
        if not self.compiled and hasattr(self, "default_compile"):
            self.default_compile()

    def check_inputs(self, x):
        """Refuses raw inputs that are not strings, naming the first bad one, and
        dict inputs whose lists differ in length."""
        if self.preprocessor is None:
            return
        if isinstance(x, dict):
            lengths = {
                k: len(v)
                for k, v in x.items()
                if hasattr(v, "__len__") and not isinstance(v, (str, bytes))
            }
            if len(set(lengths.values())) > 1:
                raise ValueError(
                    f"The inputs must hold the same number of examples. Received "
                    f"lengths {lengths}"
                )
        named = x.items() if isinstance(x, dict) else [(None, x)]
        for key, value in named:
            if isinstance(value, (str, bytes, list, tuple)) or (
                isinstance(value, np.ndarray) and value.dtype == object
            ):
                check_strings(value, "x" if key is None else f"x[{key!r}]")

    def checked_texts(self, texts):
        """`texts` as a list, after `check_inputs` (one string is refused, not read
        as a list of characters)."""
        if not isinstance(texts, (str, bytes)):
            texts = list(texts)
        self.check_inputs(texts)
        return texts

    # --- keras.Model overrides: preprocessing in the tf.data pipeline ---------------

    def _pipeline(self, x, y=None, sample_weight=None, batch_size=None, shuffle=False):
        if not isinstance(x, tf.data.Dataset):
            self.check_inputs(x)
        ds = _as_dataset(x, y, sample_weight, batch_size, shuffle)
        if isinstance(x, tf.data.Dataset) and not _holds_strings(ds.element_spec):
            return ds  # preprocessed batches
        if self.preprocessor is not None:
            self.preprocessor.check_vocabulary()  # one line, before the map's graph
        ds = ds.map(self.preprocess_samples, num_parallel_calls=tf.data.AUTOTUNE)
        return ds.prefetch(tf.data.AUTOTUNE)

    def fit(
        self,
        x=None,
        y=None,
        batch_size=None,
        sample_weight=None,
        validation_data=None,
        validation_split=None,
        **kwargs,
    ):
        self._compile_if_needed()
        if y is not None and not isinstance(y, tf.Tensor):
            y = self.encode_targets(y)
        if isinstance(validation_data, (tuple, list)) and len(validation_data) >= 2:
            vx, vy, *rest = validation_data
            validation_data = (vx, self.encode_targets(vy), *rest)
        if validation_split and validation_data is None:
            if isinstance(x, tf.data.Dataset):
                raise ValueError(
                    "validation_split needs lists or arrays; pass validation_data "
                    "with a tf.data.Dataset"
                )
            self.check_inputs(x)
            (x, y, sample_weight), validation_data = _split(
                (_as_arrays(x), _as_arrays(y), _as_arrays(sample_weight)),
                validation_split,
            )
        # Lists and arrays are reshuffled every epoch (keras.Model.fit's default);
        # a tf.data.Dataset keeps its own order.
        shuffle = kwargs.pop("shuffle", True)
        ds = self._pipeline(x, y, sample_weight, batch_size, shuffle)
        if validation_data is not None:  # a dataset unpacks as (dataset, None, None)
            vx, vy, vsw = keras.utils.unpack_x_y_sample_weight(validation_data)
            validation_data = _as_dataset(vx, vy, vsw, batch_size)
        return super().fit(ds, validation_data=validation_data, shuffle=False, **kwargs)

    def evaluate(self, x=None, y=None, batch_size=None, sample_weight=None, **kwargs):
        # `fit` passes its validation data here with `_use_cached_eval_dataset`;
        # it is raw and still needs the preprocessor.
        kwargs.pop("_use_cached_eval_dataset", None)
        self._compile_if_needed()
        if y is not None and not isinstance(y, tf.Tensor):
            y = self.encode_targets(y)
        ds = self._pipeline(x, y, sample_weight, batch_size)
        return super().evaluate(ds, **kwargs)

    def predict(self, x=None, batch_size=None, **kwargs):
        ds = self._pipeline(x, batch_size=batch_size)
        return super().predict(ds, **kwargs)

    # --- Saving -----------------------------------------------------------------------

    def get_config(self):
        # Not chained to the Functional config: tasks are rebuilt from their
        # arguments, as keras-hub's are.
        return {
            "backbone": keras.saving.serialize_keras_object(self.backbone),
            "preprocessor": keras.saving.serialize_keras_object(self.preprocessor),
            "name": self.name,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        # Compiled again by `keras.saving.load_model` when the file holds a compile
        # config (its optimizer state then loads into it); otherwise `fit` compiles
        # with the task's defaults on first use.
        config.setdefault("compile", False)
        for key in ("backbone", "preprocessor"):
            if isinstance(config.get(key), dict):
                config[key] = keras.saving.deserialize_keras_object(config[key])
        return cls(**config)

    def save_to_preset(self, preset_dir):
        """Writes a local preset folder (keras-hub's layout).

        `config.json` and `model.weights.h5`: the network; `preprocessor.json` and
        `assets/preprocessor/`: the preprocessor and its vocabularies;
        `task.json`: the task's own arguments; `metadata.json`: versions and size.
        The folder must not exist or be empty: a preset is never overwritten
        (`ConfigError`). It is written in a staging folder beside it and renamed into
        place, so a failure leaves none; a full disk is a `DiskFullError`.
        """
        from zoo.io import temporary_path

        preset_dir = os.path.abspath(os.fspath(preset_dir))
        if os.path.lexists(preset_dir) and not (
            os.path.isdir(preset_dir) and not os.listdir(preset_dir)
        ):
            raise ConfigError(
                f"save_to_preset: {preset_dir} exists and is not empty (a preset is "
                "never overwritten); pass another folder"
            )
        if self.preprocessor is None:
            raise ValueError("save_to_preset: the task has no preprocessor")
        os.makedirs(os.path.dirname(preset_dir), exist_ok=True)
        # Written in a staging folder beside the target and renamed into place: a
        # failure (a full disk) leaves no half-written preset.
        staging = temporary_path(preset_dir)
        os.mkdir(staging)
        try:
            self._write_preset(staging)
            if os.path.isdir(preset_dir):
                os.rmdir(preset_dir)  # empty
            os.rename(staging, preset_dir)
        except Exception as e:
            if not is_disk_full(e):
                raise
            reason = " ".join((getattr(e, "strerror", None) or str(e)).split())[:120]
            raise DiskFullError(
                f"{preset_dir}: the disk is full ({reason}); no preset written", reason
            ) from None
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return preset_dir

    def _write_preset(self, preset_dir):
        import zoo
        from zoo.training.checkpoints import InMemoryWeightsFile

        os.makedirs(os.path.join(preset_dir, PREPROCESSOR_ASSETS))
        _write_json(
            preset_dir, CONFIG_FILE, keras.saving.serialize_keras_object(self.backbone)
        )
        # Made in memory, then written with a plain write: h5py writing straight to
        # a full disk can crash the process.
        weights = InMemoryWeightsFile()
        self.backbone.save_weights(weights)
        with open(os.path.join(preset_dir, MODEL_WEIGHTS_FILE), "wb") as f:
            f.write(weights.getbuffer())
        _write_json(
            preset_dir,
            PREPROCESSOR_CONFIG_FILE,
            keras.saving.serialize_keras_object(self.preprocessor),
        )
        self.preprocessor.save_assets(os.path.join(preset_dir, PREPROCESSOR_ASSETS))
        task = keras.saving.serialize_keras_object(self)
        task["config"] = {
            k: v
            for k, v in task["config"].items()
            if k not in ("backbone", "preprocessor")
        }
        _write_json(preset_dir, TASK_CONFIG_FILE, task)
        _write_json(
            preset_dir,
            METADATA_FILE,
            {
                "zoo_version": zoo.__version__,
                "keras_version": keras.__version__,
                "task": type(self).__name__,
                "backbone": type(self.backbone).__name__,
                "parameter_count": int(self.backbone.count_params()),
                "date_saved": datetime.datetime.now(datetime.UTC).isoformat(
                    timespec="seconds"
                ),
            },
        )

    @classmethod
    def from_preset(cls, preset, load_weights=True, **kwargs):
        """Loads a task from a local preset folder written by `save_to_preset`.

        Keyword arguments replace saved entries, as in keras-hub: the task's own
        constructor arguments (e.g. `label_names`, `compile`, `name`),
        `preprocessor` (a layer of your own, or None for preprocessed inputs) and
        `num_classes` where the backbone has a classification head. A
        `num_classes` other than the preset's builds a new head, freshly
        initialised, and loads every other weight of the backbone from the preset
        (the task's `head_arguments`, such as `label_names`, then take their
        defaults unless given). Any other keyword is a `ConfigError` listing the
        accepted ones.

        Args:
            preset: the folder. Hub handles (`kaggle://`, `hf://`, preset names) need
                a network this package never uses: they are a `ValueError`.
            load_weights: load the trained weights (False: fresh initialisation).
            **kwargs: arguments that replace the saved ones (see above).

        Example:

        ```python
        # The IMDB classifier's encoder under a new 5-class head.
        task = HANTextClassifier.from_preset("imdb_preset", num_classes=5)
        ```
        """
        preset = os.fspath(preset)
        if "://" in preset or not os.path.isdir(preset):
            raise ValueError(
                f"from_preset: {preset!r} is not a local preset folder (presets are "
                "read from local folders written by save_to_preset; hub handles "
                "need a network and are not supported)"
            )
        for name in (CONFIG_FILE, TASK_CONFIG_FILE, PREPROCESSOR_CONFIG_FILE):
            if not os.path.isfile(os.path.join(preset, name)):
                raise ValueError(f"from_preset: {preset!r} has no {name}")
        task = _read_json(preset, TASK_CONFIG_FILE)
        task_cls = (
            keras.saving.get_registered_object(task.get("registered_name")) or cls
        )
        if cls is not Task and not issubclass(task_cls, cls):
            raise ValueError(
                f"from_preset: {preset!r} holds a {task_cls.__name__}, not a "
                f"{cls.__name__}"
            )
        saved_backbone = _read_json(preset, CONFIG_FILE)
        config = dict(task["config"])
        backbone_config = dict(saved_backbone.get("config", {}))
        # The named arguments of the task's constructor a preset may replace.
        parameters = inspect.signature(task_cls.__init__).parameters.values()
        task_arguments = {
            p.name
            for p in parameters
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
            and p.name not in ("self", "backbone", "preprocessor")
        }
        head = "num_classes" in backbone_config and "num_classes" not in task_arguments
        accepted = task_arguments | set(config) | {"load_weights", "preprocessor"}
        if head:
            accepted.add("num_classes")
        unknown = sorted(set(kwargs) - accepted)
        if unknown:
            raise ConfigError(
                f"from_preset: {task_cls.__name__} takes no argument {unknown[0]!r}. "
                f"Accepted: {', '.join(sorted(accepted))}"
            )
        new_head = False
        if head and "num_classes" in kwargs:
            num_classes = kwargs.pop("num_classes")
            new_head = num_classes != backbone_config["num_classes"]
            backbone_config["num_classes"] = num_classes
        if new_head:
            for key in task_cls.head_arguments:
                config.pop(key, None)
        backbone = keras.saving.deserialize_keras_object(
            {**saved_backbone, "config": backbone_config}
        )
        if load_weights:
            weights = os.path.join(preset, MODEL_WEIGHTS_FILE)
            if new_head:
                _load_weights_but_head(backbone, saved_backbone, weights)
            else:
                backbone.load_weights(weights)
        if "preprocessor" in kwargs:
            preprocessor = kwargs.pop("preprocessor")
        else:
            preprocessor = keras.saving.deserialize_keras_object(
                _read_json(preset, PREPROCESSOR_CONFIG_FILE)
            )
            preprocessor.load_assets(os.path.join(preset, PREPROCESSOR_ASSETS))
        config.update(kwargs)
        return task_cls(backbone=backbone, preprocessor=preprocessor, **config)


def check_tensorflow_backend(what):
    """Raises a one-line `ConfigError` when Keras does not run on TensorFlow.

    Args:
        what: the method or command that needs TensorFlow (named in the message).
    """
    backend = keras.backend.backend()
    if backend != "tensorflow":
        raise ConfigError(
            f"{what} needs the TensorFlow backend (KERAS_BACKEND=tensorflow); "
            f"running on {backend}"
        )


# --- Helpers ----------------------------------------------------------------------------


def _write_json(directory, name, value):
    with open(os.path.join(directory, name), "w", encoding="utf-8") as f:
        json.dump(value, f, indent=2)
        f.write("\n")


def _read_json(directory, name):
    path = os.path.join(directory, name)
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}:{e.lineno}: not valid JSON ({e.msg})") from None


def _load_weights_but_head(backbone, saved_config, path):
    """Loads the preset's weights `path` (of the backbone `saved_config`) into
    `backbone`, a copy of it with another number of classes: every weight of the
    same shape, in the same order; the head (shapes that differ) keeps its fresh
    initialisation."""
    saved = keras.saving.deserialize_keras_object(saved_config)
    saved.load_weights(path)
    if len(saved.weights) != len(backbone.weights):
        raise ValueError(
            f"from_preset: the backbone with a new head has {len(backbone.weights)} "
            f"weights, the preset's {len(saved.weights)}"
        )
    for new, old in zip(backbone.weights, saved.weights, strict=True):
        if tuple(new.shape) == tuple(old.shape):
            new.assign(keras.ops.convert_to_numpy(old))


def _short(value, limit=60):
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _holds_strings(structure):
    """Whether a nest of tensors or `tf.TensorSpec`s holds a `tf.string` one."""
    return any(
        getattr(leaf, "dtype", None) == tf.string for leaf in tf.nest.flatten(structure)
    )


def encode_ids(y, index, size, id_text, name_text, normalize=None):
    """Ids (int32 NumPy) of targets `y` given as ids (`0..size - 1`) or as names
    (keys of `index`, after `normalize` when given); the first bad one is a
    one-line `ValueError`: "y[i] = value is " + `id_text` or `name_text`."""
    values = np.asarray(y)
    if values.dtype.kind in "iu":
        bad = np.flatnonzero((values < 0) | (values >= size))
        if bad.size:
            raise ValueError(f"y[{bad[0]}] = {values[bad[0]]} is not {id_text}")
        return values.astype("int32")
    ids = []
    for i, value in enumerate(values.tolist()):
        if isinstance(value, bytes):
            value = value.decode("utf-8")
        key = normalize(value) if normalize and isinstance(value, str) else value
        if not isinstance(key, str) or key not in index:
            raise ValueError(f"y[{i}] = {_short(value)} is {name_text}")
        ids.append(index[key])
    return np.asarray(ids, "int32")


def check_strings(values, name):
    """Refuses one string where a batch is needed and a batch item that is not a
    string, naming it (`name`, `name[i]`) in a one-line `ValueError`."""
    if isinstance(values, (str, bytes)):
        raise ValueError(
            f"{name} must be a batch of strings (a list), not one string. "
            f"Received: {name}={_short(values)}"
        )
    for i, item in enumerate(values):
        if not isinstance(item, (str, bytes)):
            raise ValueError(
                f"{name}[{i}] must be a string. Received: "
                f"{type(item).__name__} {_short(item)}"
            )


def _as_dataset(x, y=None, sample_weight=None, batch_size=None, shuffle=False):
    """Raw inputs (lists, arrays or a `tf.data.Dataset`) as a batched dataset;
    lists and arrays reshuffled every iteration with `shuffle` (seeded by
    `keras.utils.set_random_seed`). A dataset of single examples is batched by
    `batch_size` (default 32); an already batched one keeps its batches."""
    if isinstance(x, tf.data.Dataset):
        if y is not None or sample_weight is not None:
            raise ValueError(
                "With a tf.data.Dataset as x, the targets come from the dataset: "
                f"do not pass y or sample_weight. Received: y of type "
                f"{type(y).__name__}"
            )
        first = tf.nest.flatten(x.element_spec)[0]
        return x.batch(batch_size or 32) if first.shape.rank == 0 else x

    data = keras.utils.pack_x_y_sample_weight(
        _as_arrays(x), _as_arrays(y), _as_arrays(sample_weight)
    )
    lengths = {len(v) for v in tf.nest.flatten(data) if hasattr(v, "__len__")}
    if len(lengths) > 1:
        raise ValueError(
            f"Inputs and targets must hold the same number of examples. Received "
            f"lengths {sorted(lengths)}"
        )
    if any(np.ndim(v) == 0 for v in tf.nest.flatten(data)):
        raise ValueError(
            "Inputs need a batch dimension: wrap a single text in a list, e.g. "
            "predict([text])"
        )
    ds = tf.data.Dataset.from_tensor_slices(data)
    if shuffle:
        ds = ds.shuffle(
            lengths.pop() if lengths else 1024, reshuffle_each_iteration=True
        )
    return ds.batch(batch_size or 32)


def _as_arrays(value):
    """Lists of strings as NumPy object arrays, other lists as arrays; tensors, arrays
    and None as they are; dicts value by value."""
    if value is None or isinstance(value, (tf.Tensor, tf.RaggedTensor, np.ndarray)):
        return value
    if isinstance(value, dict):
        return {k: _as_arrays(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and all(
        isinstance(v, (str, bytes)) for v in value
    ):
        return np.asarray(value, dtype=object)
    return np.asarray(value)


def _split(arrays, validation_split):
    """The last `validation_split` of lists or arrays held out, in order (as
    `keras.Model.fit` does)."""
    flat = [a for a in tf.nest.flatten(arrays) if a is not None]
    n = len(flat[0])
    cut = int(n * (1.0 - validation_split))
    if cut in (0, n):
        raise ValueError(
            f"validation_split={validation_split!r} leaves no training or no "
            f"validation example of {n}"
        )

    train = tf.nest.map_structure(lambda a: None if a is None else a[:cut], arrays)
    held = tf.nest.map_structure(lambda a: None if a is None else a[cut:], arrays)
    return train, held


def run_in_length_order(fn, texts, batch_size=64):
    """Runs a string-batch function (a `tf.function`, a serving signature, a
    `Translator`) over texts.

    The texts are batched in order of length (characters) and the outputs put back
    in the input order: a batch is padded to (and a batched search runs until) its
    longest text, so batches of similar lengths waste fewer steps (the results are
    the same up to rounding; only the speed changes).

    Args:
        fn: a function from a string tensor `(B,)` to a dict of tensors whose first
            dimension is `B`.
        texts: a list of str.
        batch_size: texts per call.

    Returns:
        One dict of NumPy outputs per text, in the order of `texts`.
    """
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    outputs = [None] * len(texts)
    for start in range(0, len(texts), batch_size):
        batch = order[start : start + batch_size]
        out = fn(tf.constant([texts[i] for i in batch]))
        out = {k: v.numpy() for k, v in out.items()}
        for j, i in enumerate(batch):
            outputs[i] = {k: v[j] for k, v in out.items()}
    return outputs


def _decoded(row):
    """A row of a NumPy batch with its bytes decoded (str, or an object array)."""
    if isinstance(row, bytes):
        return row.decode("utf-8")
    if row.dtype == object:
        return np.vectorize(lambda b: b.decode("utf-8"), otypes=[object])(row)
    return row
