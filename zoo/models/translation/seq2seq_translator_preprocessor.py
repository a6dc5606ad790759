"""`Seq2SeqTranslatorPreprocessor`: sentence pairs -> `Seq2SeqTranslator` inputs, as a
Keras layer."""

import tempfile
import types

import keras
import tensorflow as tf

from zoo.layers.arguments import check_optional_positive_ints
from zoo.models.preprocessor import Preprocessor
from zoo.models.task import check_strings
from zoo.models.translation.translation_preprocessor import TranslationPreprocessor
from zoo.text.subword import PAD, load_vocabulary

SOURCE_VOCABULARY = "source_vocabulary.txt"
TARGET_VOCABULARY = "target_vocabulary.txt"


@keras.saving.register_keras_serializable(package="zoo")
class Seq2SeqTranslatorPreprocessor(Preprocessor):
    """Sources (and targets) -> `{"source_ids", "target_ids"}` and the labels.

    The Keras layer of `TranslationPreprocessor` (one WordPiece vocabulary per
    language, tensorflow-text in the graph). Its two assets are the source and the
    target vocabularies (`source_vocabulary.txt`, `target_vocabulary.txt`): learned
    with `adapt(sources, targets)` (`zoo.text.subword.learn_subword_vocabulary`, as
    the recipe learns them), given as `assets=`, or taken from an existing module
    with `from_module`.

    A pair is encoded by `TranslationPreprocessor.encode_pair`, as the recipe's
    training batches are (`translation_dataset`): the source cut to `max_length`
    subwords, the target `[START] subwords [END]` (at most `max_length + 1` ids);
    the decoder input `target_ids` is its first ids (`[START] subwords`) and the
    labels its last (`subwords [END]`). Each batch is padded with 0 to its longest
    row, and the source to at least one column (an all-empty batch still has a
    shape the encoder runs over; the padding is masked).

    The defaults (cased, `max_length` learned by `adapt`, 8000 subwords per
    language) are the translation recipe's with `--data`.

    Args:
        lowercase: case-fold the texts (vocabularies are learned the same way;
            default False).
        max_length: the longest source and target, in subwords (default `None`:
            `adapt` sets it to the longest training source or target, as the
            recipe does).
        assets: `{"source_vocabulary.txt": path, "target_vocabulary.txt": path}` or
            None.
        **kwargs: `keras.layers.Layer` keyword arguments (`name`, ...).

    Call arguments:
        x: source strings `[B]` (tensor, list or array).
        y: target strings `[B]`, or None.
        sample_weight: optional per-pair weights, passed through.

    Returns:
        Without `y`: `{"source_ids": int32 (B, Ts)}`. With `y`: `(inputs, labels)`
        (and the sample weights when given): `inputs` is `{"source_ids" (B, Ts),
        "target_ids" (B, Tt)}` int32 and `labels` int32 `(B, Tt)`, 0 = padding.

    Example:

    >>> pre = Seq2SeqTranslatorPreprocessor()
    >>> pre.adapt(["a dog runs ."] * 4, ["ein hund läuft ."] * 4)
    >>> pre.max_length  # the longest training text, in subwords
    4
    >>> inputs, labels = pre(["a dog runs ."], ["ein hund läuft ."])
    >>> inputs["target_ids"][0, 0] == 2  # [START]; labels end with [END] (3)
    """

    asset_names = (SOURCE_VOCABULARY, TARGET_VOCABULARY)

    def __init__(self, lowercase=False, max_length=None, assets=None, **kwargs):
        check_optional_positive_ints(max_length=max_length)
        self.lowercase = lowercase
        self.max_length = max_length
        super().__init__(assets=assets, **kwargs)

    @classmethod
    def from_module(cls, module, **kwargs):
        """The layer of an existing `TranslationPreprocessor` (same vocabularies,
        casing and `max_length`)."""
        if not isinstance(module, TranslationPreprocessor):
            raise ValueError(
                "`module` must be a TranslationPreprocessor. Received: "
                f"{type(module).__name__}"
            )
        files = (module.source_vocabulary, module.target_vocabulary)
        assets = dict(zip(cls.asset_names, files, strict=True))
        return cls(module.lowercase, module.max_length, assets, **kwargs)

    def make_module(self, paths):
        files = (paths[name] for name in self.asset_names)
        # max_length None (a layer not adapted yet) is refused, naming the value
        return TranslationPreprocessor(*files, self.lowercase, self.max_length)

    def adapt(self, sources, targets, vocab_size=8000):
        """Learns the source and the target vocabularies from training pairs.

        `zoo.text.subword.learn_subword_vocabulary` on each side (the recipe's
        vocabulary learning), with this layer's casing. With `max_length=None` the
        layer takes the longest training source or target, in subwords.

        Args:
            sources, targets: the training pairs (lists of str of one length).
            vocab_size: the largest size of each vocabulary, reserved tokens
                (`[PAD]`, `[UNK]`, `[START]`, `[END]`) included.

        Returns:
            `(source tokens, target tokens)`: the two vocabularies, as lists.
        """
        sources, targets = list(sources), list(targets)
        for name, texts in (("sources", sources), ("targets", targets)):
            check_strings(texts, f"adapt: {name}")
        if len(sources) != len(targets):
            raise ValueError(
                "adapt: sources and targets must be pairs of one length. Received: "
                f"{len(sources)} sources, {len(targets)} targets"
            )
        corpus = types.SimpleNamespace(sources=sources, targets=targets)
        with tempfile.TemporaryDirectory() as tmp:
            module = TranslationPreprocessor.from_corpus(
                corpus, tmp, vocab_size=vocab_size, lowercase=self.lowercase,
                max_length=self.max_length, log=None,
            )  # fmt: skip
            paths = (module.source_vocabulary, module.target_vocabulary)
            self.max_length = module.max_length
            self.set_assets(dict(zip(self.asset_names, paths, strict=True)))
            return tuple(load_vocabulary(path) for path in paths)

    @property
    def source_vocab_size(self):
        return self.module.source_vocab_size

    @property
    def target_vocab_size(self):
        return self.module.target_vocab_size

    def call(self, x, y=None, sample_weight=None):
        module = self.module
        x = tf.convert_to_tensor(x, tf.string)
        source_ids = module.source_ids(x)  # (B, Ts), encode_pair's source, padded
        if y is None:
            return {"source_ids": source_ids}
        _, target = module.encode_pair(x, tf.convert_to_tensor(y, tf.string))
        # the decoder reads `[START] subwords`, the labels are `subwords [END]`
        inputs = {"source_ids": source_ids, "target_ids": _padded(target[:, :-1])}
        labels = _padded(target[:, 1:])
        return keras.utils.pack_x_y_sample_weight(inputs, labels, sample_weight)

    def get_config(self):
        return {
            **super().get_config(),
            "lowercase": self.lowercase,
            "max_length": self.max_length,
        }


def _padded(ids):
    """Ragged ids -> int32 `(B, T)`, 0 = padding."""
    return tf.cast(ids.to_tensor(default_value=PAD), tf.int32)
