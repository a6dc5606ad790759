"""`Preprocessor`: the base of the task preprocessors (raw strings -> model inputs).

A task (`zoo.models.task.Task`) owns its preprocessor as a Keras layer, as keras-hub's
tasks do, so that it travels inside `.keras` files and presets. The layer does the
in-graph work itself (tensorflow-text, lookup tables); the same layer runs in the
`tf.data` training pipeline, in `predict` and inside the SavedModel's signatures, so
training and TF Serving preprocess identically.

The vocabulary files are the layer's assets: `save_assets` / `load_assets` write them
into and read them from the `.keras` archive (and a preset's `assets/` folder).
The layer keeps its own copy of each file in a private temporary folder for as long as
it lives, so the files it was built from (a run folder, the archive's temporary
extraction) may go away.
"""

import os
import shutil
import tempfile
import weakref

import keras

EXPORT_VOCABULARY = "vocab.txt"
"""The word vocabulary's file name in an export's `assets/` (and in a run folder)."""


class Preprocessor(keras.layers.Layer):
    """Base of the task preprocessors: raw strings -> the network's inputs.

    Subclasses set `asset_names` (the file names of their vocabularies), implement
    `call`, and list their settings in `get_config` (never the vocabularies: those are
    assets). The default `load_vocabularies` builds `self.lookup`, the
    `zoo.text.vocabulary.VocabularyLookup` of the word vocabulary
    (`"vocabulary.txt"`); a family with other vocabularies overrides it.

    Args:
        assets: `{asset name: path}` of the vocabulary files, or None (a layer made
            by `from_config` gets them from `load_assets`; `adapt` learns them).
        **kwargs: `keras.layers.Layer` keyword arguments (`name`, ...).

    A layer without vocabularies cannot run: calling it raises a `ValueError` that
    says so.
    """

    asset_names = ("vocabulary.txt",)

    def __init__(self, assets=None, **kwargs):
        super().__init__(**kwargs)
        # Strings in, tf tensors out (tf.data and the export graph): no conversion to
        # backend tensors, Python strings allowed.
        self._convert_input_args = False
        self._allow_non_tensor_positional_args = True
        self.built = True
        self._asset_dir = None
        if assets is not None:
            self.set_assets(assets)

    def load_vocabularies(self, paths):
        """Builds the layer's lookup tables on its own copies of the vocabulary files
        (`{asset name: path}`): by default `self.lookup` on the word vocabulary, read
        from a copy named `vocab.txt`, the name the export's `assets/` gives it."""
        from zoo.text.vocabulary import VocabularyLookup

        path = os.path.join(os.path.dirname(paths["vocabulary.txt"]), EXPORT_VOCABULARY)
        shutil.copyfile(paths["vocabulary.txt"], path)
        self.lookup = VocabularyLookup(path)

    def check_vocabulary(self):
        """Raises the one-line `ValueError` of a layer without vocabularies."""
        if self._asset_dir is None:
            raise ValueError(
                f"{type(self).__name__} {self.name!r} has no vocabulary yet: call "
                "`adapt(texts)`, pass `assets=`, or load it from a `.keras` file or "
                "a preset"
            )

    @property
    def vocabulary_size(self):
        """Word ids, `[PAD]` and `[UNK]` included."""
        self.check_vocabulary()
        return self.lookup.size

    def learn_word_vocabulary(
        self, texts, tokenize, vocab_size, min_count, batch_size=512
    ):
        """Builds the word vocabulary of `texts` through the in-graph `tokenize`
        (strings `[B]` -> ragged words) and sets it as the `"vocabulary.txt"` asset.

        Returns the `zoo.text.vocabulary.Vocabulary`.
        """
        from zoo.models.task import check_strings

        texts = list(texts)
        check_strings(texts, "adapt: texts")
        vocab = word_vocabulary(texts, tokenize, vocab_size, min_count, batch_size)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "vocabulary.txt")
            vocab.save(path)
            self.set_assets({"vocabulary.txt": path})
        return vocab

    # --- Assets ---------------------------------------------------------------------

    def set_assets(self, paths):
        """Copies the vocabulary files `{name: path}` and builds the lookups on them."""
        missing = sorted(set(self.asset_names) - set(paths))
        if missing:
            raise ValueError(
                f"{type(self).__name__} needs the assets {list(self.asset_names)}. "
                f"Received: {sorted(paths)}"
            )
        directory = tempfile.mkdtemp(prefix="zoo-assets-")
        weakref.finalize(self, shutil.rmtree, directory, True)
        for name in self.asset_names:
            source = os.fspath(paths[name])
            if not os.path.isfile(source):
                raise ValueError(
                    f"{type(self).__name__}: no vocabulary file {source!r} "
                    f"(asset {name!r})"
                )
            shutil.copyfile(source, os.path.join(directory, name))
        # The layer has vocabularies only once its lookups are built from them.
        self.load_vocabularies(
            {n: os.path.join(directory, n) for n in self.asset_names}
        )
        self._asset_dir = directory

    @property
    def asset_paths(self):
        """`{asset name: path}` of the layer's own copies of its vocabulary files."""
        if self._asset_dir is None:
            return {}
        return {name: os.path.join(self._asset_dir, name) for name in self.asset_names}

    def save_assets(self, dir_path):
        for name, path in self.asset_paths.items():
            shutil.copyfile(path, os.path.join(dir_path, name))

    def load_assets(self, dir_path):
        self.set_assets(
            {name: os.path.join(dir_path, name) for name in self.asset_names}
        )

    def get_build_config(self):
        return None

    def build_from_config(self, config):
        self.built = True

    def compute_output_spec(self, *args, **kwargs):
        raise NotImplementedError(
            f"{type(self).__name__} runs on strings in tf.data or in a tf.function; "
            "it is not a layer of a Functional graph"
        )


def pad_batch(ragged, value):
    """A ragged tensor `[B, None(, None)]` as a dense one padded with `value`, every
    inner dimension at least 1 long (an empty text is one padded position)."""
    import tensorflow as tf

    dense = ragged.to_tensor(default_value=tf.constant(value, ragged.dtype))
    shape = tf.shape(dense)
    extra = [[0, 0]] + [
        [0, tf.maximum(1 - shape[i], 0)] for i in range(1, dense.shape.rank)
    ]
    return tf.pad(dense, extra, constant_values=value)


def word_vocabulary(texts, tokenize, max_size=None, min_count=1, batch_size=512):
    """The word `zoo.text.vocabulary.Vocabulary` of `texts` (list of str).

    Args:
        texts: the raw texts.
        tokenize: the in-graph tokenization, string tensor `[B]` -> ragged string
            tensor of any rank (its flat values are the words counted).
        max_size: largest vocabulary size, reserved tokens included.
        min_count: words seen fewer times are left out (they map to `[UNK]`).
        batch_size: texts tokenized per step.
    """
    import tensorflow as tf

    from zoo.text.vocabulary import Vocabulary

    ds = tf.data.Dataset.from_tensor_slices(tf.constant(list(texts), tf.string))
    ds = ds.batch(batch_size).map(lambda t: tokenize(t).flat_values)
    token_lists = (batch.tolist() for batch in ds.as_numpy_iterator())
    return Vocabulary.build(token_lists, max_size=max_size, min_count=min_count)
