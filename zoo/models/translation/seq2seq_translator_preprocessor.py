"""`Seq2SeqTranslatorPreprocessor`: sentence pairs -> `Seq2SeqTranslator` inputs, and
target ids back to strings, as a Keras layer (tensorflow-text in the graph)."""

import hashlib
import json
import os
import tempfile
import time
import types

import keras
import tensorflow as tf

from zoo.layers.arguments import check_optional_positive_ints, check_positive_ints
from zoo.models.preprocessor import Preprocessor, pad_batch
from zoo.models.task import check_strings
from zoo.text.subword import (
    END,
    PAD,
    START,
    SubwordTokenizer,
    learn_subword_vocabulary,
    load_vocabulary,
    save_vocabulary,
)

SOURCE_VOCABULARY = "source_vocabulary.txt"
TARGET_VOCABULARY = "target_vocabulary.txt"


@keras.saving.register_keras_serializable(package="zoo")
class Seq2SeqTranslatorPreprocessor(Preprocessor):
    """Sources (and targets) -> `{"source_ids", "target_ids"}` and the labels.

    One `zoo.text.subword.SubwordTokenizer` (WordPiece, tensorflow-text) per
    language. The same methods build the training batches (`encode_pair`, in
    `translation_dataset`), run in `call` and inside the exported signatures
    (`source_ids`, `detokenize`, `decoder_inputs`, `source_tokens`,
    `target_tokens`), so a served model sees exactly the preprocessing it was
    trained with. Its two assets are the source and the target vocabularies
    (`source_vocabulary.txt`, `target_vocabulary.txt`, ids 0-3: `[PAD]`, `[UNK]`,
    `[START]`, `[END]`): learned with `adapt(sources, targets)` or `from_corpus`
    (`zoo.text.subword.learn_subword_vocabulary`), given as `assets=`, or read from
    an export with `from_export`. An export (`tf.saved_model.save` tracks the layer)
    carries them in `assets/`.

    The steps: a text is normalised (`lowercase`) and cut into subwords; the source
    keeps at most `max_length` of them, the target is `[START] subwords [END]` (at
    most `max_length + 1` ids, `[END]` kept when cut); the decoder input
    `target_ids` is its first ids (`[START] subwords`) and the labels its last
    (`subwords [END]`). Each batch is padded with 0 to its longest row, and the
    source to at least one column (an all-empty batch still has a shape the encoder
    runs over; the padding is masked). Decoding stops after `max_length` target
    subwords, and `detokenize` cuts at `[END]`.

    The defaults (cased, `max_length` learned by `adapt`, 8000 subwords per
    language) are the translation recipe's with `--data`.

    Args:
        lowercase: case-fold the texts (vocabularies are learned the same way;
            default False).
        max_length: the longest source and target, in subwords (default `None`:
            `adapt` sets it to the longest training source or target, as the
            recipe does; a layer given vocabularies needs it).
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
    >>> pre.detokenize(labels)  # string (B,): [b"ein hund läuft."]
    """

    asset_names = (SOURCE_VOCABULARY, TARGET_VOCABULARY)

    def __init__(self, lowercase=False, max_length=None, assets=None, **kwargs):
        check_optional_positive_ints(max_length=max_length)
        self.lowercase = lowercase
        self.max_length = max_length
        super().__init__(assets=assets, **kwargs)

    def load_vocabularies(self, paths):
        check_positive_ints(max_length=self.max_length)  # None: not adapted yet
        source, target = (paths[name] for name in self.asset_names)
        self.source_tokenizer = SubwordTokenizer(source, lowercase=self.lowercase)
        self.target_tokenizer = SubwordTokenizer(target, lowercase=self.lowercase)

    @classmethod
    def from_corpus(
        cls,
        corpus,
        directory,
        languages=("src", "tgt"),
        vocab_size=8000,
        lowercase=False,
        max_length=64,
        tag="vocab",
        log=print,
    ):
        """Learns one vocabulary per language from training text, or reuses them.

        The vocabularies are written to `directory/vocab.{source,target}.<lang>.<tag>
        .txt`; a file that exists already is read back instead of learned again, so
        `tag` must name what the vocabulary is learned from
        (`vocabulary_cache_key`).

        Args:
            corpus: the training pairs (`sources` and `targets` lists of str, e.g.
                a `zoo.data.parallel.ParallelCorpus`).
            directory: where the vocabulary files are kept.
            languages: `(source, target)` language codes (used in the file names).
            vocab_size: the largest vocabulary size, reserved tokens included.
            lowercase, max_length: as for the constructor; `max_length=None`
                takes the longest training source or target, in subwords.
            tag: the cache key in the file names.
            log: where a line per learned vocabulary goes (`None`: nowhere).
        """
        os.makedirs(directory, exist_ok=True)
        paths = []
        for side, lang, texts in (
            ("source", languages[0], corpus.sources),
            ("target", languages[1], corpus.targets),
        ):
            path = os.path.join(directory, f"vocab.{side}.{lang}.{tag}.txt")
            if not os.path.exists(path):
                start = time.time()
                tokens = learn_subword_vocabulary(texts, vocab_size, lowercase)
                save_vocabulary(tokens, path)
                if log is not None:
                    log(
                        f"learned {len(tokens)} {lang} subwords in "
                        f"{time.time() - start:.1f} s -> {path}"
                    )
            paths.append(path)
        if max_length is None:
            max_length = longest_subwords(corpus, paths, lowercase)
            if log is not None:
                log(f"max length: {max_length} subwords (the longest training text)")
        return cls(
            lowercase, max_length, dict(zip(cls.asset_names, paths, strict=True))
        )

    @classmethod
    def from_export(cls, version_dir):
        """The preprocessor of a `Seq2SeqTextTranslator.export`: its
        vocabularies from `assets/`, its settings from the manifest."""
        from zoo.export import load_manifest

        settings = load_manifest(version_dir)["metadata"]["preprocessing"]
        assets = os.path.join(os.fspath(version_dir), "assets")
        files = [os.path.join(assets, name) for name in settings["vocabularies"]]
        paths = dict(zip(cls.asset_names, files, strict=True))
        return cls(settings["lowercase"], settings["max_length"], paths)

    def adapt(self, sources, targets, vocab_size=8000):
        """Learns the source and the target vocabularies from training pairs.

        `zoo.text.subword.learn_subword_vocabulary` on each side (the recipe's
        vocabulary learning, `from_corpus`), with this layer's casing. With
        `max_length=None` the layer takes the longest training source or target,
        in subwords.

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
            learned = self.from_corpus(
                corpus, tmp, vocab_size=vocab_size, lowercase=self.lowercase,
                max_length=self.max_length, log=None,
            )  # fmt: skip
            self.max_length = learned.max_length
            self.set_assets(learned.asset_paths)
        return tuple(load_vocabulary(path) for path in self.asset_paths.values())

    @property
    def vocabulary_size(self):
        """Not one number: the layer has a source and a target vocabulary."""
        raise ValueError(
            f"{type(self).__name__} has two vocabularies: read `source_vocab_size` "
            "and `target_vocab_size`"
        )

    @property
    def source_vocab_size(self):
        self.check_vocabulary()
        return self.source_tokenizer.vocab_size

    @property
    def target_vocab_size(self):
        self.check_vocabulary()
        return self.target_tokenizer.vocab_size

    def source_ids(self, text):
        """string `(B,)` -> int32 `(B, Ts)` source ids, 0 = padding.

        At most `max_length` subwords per source, and at least one (padding)
        column: an empty batch of texts still has a shape the encoder can run over.
        """
        self.check_vocabulary()
        ids = self.source_tokenizer.tokenize(text)[:, : self.max_length]
        return tf.cast(pad_batch(ids, PAD), tf.int32)  # (B, Ts)

    def encode_pair(self, source, target):
        """A batch of sentence pairs -> ragged `(source ids, target ids)`, int64.

        The source has at most `max_length` subwords; the target is
        `[START] subwords [END]`, at most `max_length + 1` ids (the decoder input
        and the labels are its first and last `max_length`).
        """
        self.check_vocabulary()
        source_ids = self.source_tokenizer.tokenize(source)[:, : self.max_length]
        target_ids = self.target_tokenizer.encode(
            target, self.max_length + 1, add_start=True, add_end=True
        )
        return source_ids, tf.RaggedTensor.from_tensor(target_ids, padding=PAD)

    def decoder_inputs(self, target_ids):
        """Target ids `(B, T)` (a translation, ending with `[END]` or padding) -> the
        decoder input `[START] + ids` without `[END]`, `(B, T)` int32."""
        target_ids = tf.cast(target_ids, tf.int32)
        start = tf.fill([tf.shape(target_ids)[0], 1], START)
        inputs = tf.concat([start, target_ids], axis=1)[:, :-1]
        return tf.where(tf.equal(inputs, END), PAD, inputs)

    def detokenize(self, target_ids):
        """Target ids `(B, T)` -> strings `(B,)` (cut at `[END]`)."""
        self.check_vocabulary()
        return self.target_tokenizer.detokenize(target_ids)

    def source_tokens(self, source_ids):
        """Source ids -> subword strings (`""` for padding)."""
        self.check_vocabulary()
        return self.source_tokenizer.ids_to_tokens(source_ids)

    def target_tokens(self, target_ids):
        """Target ids -> subword strings (`""` for padding)."""
        self.check_vocabulary()
        return self.target_tokenizer.ids_to_tokens(target_ids)

    def call(self, x, y=None, sample_weight=None):
        x = tf.convert_to_tensor(x, tf.string)
        source_ids = self.source_ids(x)  # (B, Ts), encode_pair's source, padded
        if y is None:
            return {"source_ids": source_ids}
        _, target = self.encode_pair(x, tf.convert_to_tensor(y, tf.string))
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


def vocabulary_cache_key(
    data, source, target, vocab_size, lowercase, limit, max_words, seed
):
    """A short tag of what a vocabulary is learned from (8 hex digits).

    Vocabulary files carry it in their names, so a run folder reuses a vocabulary
    only for the same data, languages, size, casing, training sample, length filter
    and seed.

    Args:
        data: the data path (`None`: the generated demo corpus).
        source, target: language codes.
        vocab_size, lowercase: the vocabulary's settings.
        limit: the size of the training sample (`None`: all of it).
        max_words: the length filter of the read.
        seed: the seed of the data (sample, split, demo corpus).
    """
    data = os.path.abspath(data) if data else "demo"
    key = [data, source, target, vocab_size, lowercase, limit, max_words, seed]
    return hashlib.sha1(json.dumps(key).encode()).hexdigest()[:8]


def longest_subwords(corpus, vocabularies, lowercase=False, chunk=4096):
    """The most subwords of any source or target of `corpus` (at least 1).

    Args:
        corpus: pairs with `sources` and `targets` lists of str.
        vocabularies: `(source vocabulary file, target vocabulary file)`.
        lowercase: as for `Seq2SeqTranslatorPreprocessor`.
    """
    longest = 1
    for texts, path in zip((corpus.sources, corpus.targets), vocabularies, strict=True):
        tokenizer = SubwordTokenizer(path, lowercase=lowercase)
        for start in range(0, len(texts), chunk):
            ids = tokenizer.tokenize(tf.constant(texts[start : start + chunk]))
            longest = max(longest, int(tf.reduce_max(ids.row_lengths())))
    return longest
