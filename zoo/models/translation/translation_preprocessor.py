"""TranslationPreprocessor: the source and target subword tokenizers, in the graph."""

import hashlib
import json
import os
import time

import tensorflow as tf

from zoo.layers.arguments import check_positive_ints
from zoo.text.subword import (
    END,
    PAD,
    START,
    SubwordTokenizer,
    learn_subword_vocabulary,
    save_vocabulary,
)


class TranslationPreprocessor(tf.Module):
    """Strings in, the ids `Seq2SeqTranslator` reads out, and back to strings.

    One `SubwordTokenizer` (WordPiece, tensorflow-text) per language. The same
    functions build the training batches (`encode_pair`) and run inside the exported
    signatures (`source_ids`, `detokenize`, `decoder_inputs`), so a served model sees
    exactly the preprocessing it was trained with. The vocabulary files are
    `tf.saved_model.Asset`s: an export carries them in `assets/`.

    Args:
        source_vocabulary, target_vocabulary: vocabulary files written by
            `zoo.text.subword.save_vocabulary` (ids 0-3: `[PAD]`, `[UNK]`,
            `[START]`, `[END]`).
        lowercase: case-fold the inputs (as the vocabularies were learned).
        max_length: the longest source and target, in subwords: longer sources are
            cut, and decoding stops after this many target subwords.
        name: optional module name.

    Example:

    >>> pre = TranslationPreprocessor("vocab.en.txt", "vocab.de.txt", max_length=64)
    >>> pre.source_ids(tf.constant(["A dog runs."]))  # int32 (1, Ts), 0 = padding
    >>> pre.detokenize(target_ids)  # string (B,)
    """

    def __init__(
        self,
        source_vocabulary,
        target_vocabulary,
        lowercase=False,
        max_length=64,
        name=None,
    ):
        super().__init__(name=name)
        check_positive_ints(max_length=max_length)
        self.source_tokenizer = SubwordTokenizer(source_vocabulary, lowercase=lowercase)
        self.target_tokenizer = SubwordTokenizer(target_vocabulary, lowercase=lowercase)
        self.source_vocabulary = os.fspath(source_vocabulary)
        self.target_vocabulary = os.fspath(target_vocabulary)
        self.lowercase = lowercase
        self.max_length = max_length

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
        return cls(*paths, lowercase=lowercase, max_length=max_length)

    @classmethod
    def from_export(cls, version_dir):
        """The preprocessor of a translation export (`export_translator`): its
        vocabularies from `assets/`, its settings from the manifest."""
        from zoo.export import load_manifest

        settings = load_manifest(version_dir)["metadata"]["preprocessing"]
        assets = os.path.join(os.fspath(version_dir), "assets")
        files = [os.path.join(assets, name) for name in settings["vocabularies"]]
        return cls(*files, settings["lowercase"], settings["max_length"])

    def config(self):
        """The settings an export records (`from_export` reads them back)."""
        files = (self.source_vocabulary, self.target_vocabulary)
        return {
            "vocabularies": [os.path.basename(path) for path in files],
            "lowercase": self.lowercase,
            "max_length": self.max_length,
        }

    @property
    def source_vocab_size(self):
        return self.source_tokenizer.vocab_size

    @property
    def target_vocab_size(self):
        return self.target_tokenizer.vocab_size

    def source_ids(self, text):
        """string `(B,)` -> int32 `(B, Ts)` source ids, 0 = padding.

        At most `max_length` subwords per source, and at least one (padding)
        column: an empty batch of texts still has a shape the encoder can run over.
        """
        ids = self.source_tokenizer.tokenize(text)[:, : self.max_length]
        ids = tf.cast(ids.to_tensor(default_value=PAD), tf.int32)  # (B, Ts)
        missing = tf.maximum(1 - tf.shape(ids)[1], 0)
        return tf.pad(ids, [[0, 0], [0, missing]])

    def encode_pair(self, source, target):
        """A batch of sentence pairs -> ragged `(source ids, target ids)`, int64.

        The source has at most `max_length` subwords; the target is
        `[START] subwords [END]`, at most `max_length + 1` ids (the decoder input
        and the labels are its first and last `max_length`).
        """
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
        return self.target_tokenizer.detokenize(target_ids)

    def source_tokens(self, source_ids):
        """Source ids -> subword strings (`""` for padding)."""
        return self.source_tokenizer.ids_to_tokens(source_ids)

    def target_tokens(self, target_ids):
        """Target ids -> subword strings (`""` for padding)."""
        return self.target_tokenizer.ids_to_tokens(target_ids)


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
        lowercase: as for `TranslationPreprocessor`.
    """
    longest = 1
    for texts, path in zip((corpus.sources, corpus.targets), vocabularies, strict=True):
        tokenizer = SubwordTokenizer(path, lowercase=lowercase)
        for start in range(0, len(texts), chunk):
            ids = tokenizer.tokenize(tf.constant(texts[start : start + chunk]))
            longest = max(longest, int(tf.reduce_max(ids.row_lengths())))
    return longest
