"""Parallel text for translation: one reader for pairs, fixed splits, a demo pair.

`read_pairs` reads a TSV file of pairs (`source<TAB>target` or `target<TAB>source`,
`source_column=` says which; Anki/Tatoeba's `english<TAB>other<TAB>attribution`, e.g.
ManyThings' `spa.txt`, has English first) or two line-aligned files (Multi30k's
`train.en.gz` / `train.de.gz`, IWSLT's `train.en` / `train.vi`) into a
`ParallelCorpus` whose `ReadReport` counts and locates (file and line) every pair it
skipped: blank lines and sides, lines without a tab, over-long pairs. Line-aligned
files whose line counts differ are an error: their alignment cannot be trusted.

`load_parallel` recognises, in this order: `files=` (explicit files per split, each a
TSV file or a (source, target) pair); a folder of line-aligned split files
`{train,valid|val|dev,test}.{src,tgt}[.gz]`, `src`/`tgt` being the language codes
given or literally `src`/`tgt` (Multi30k's `test_2016_flickr` counts as `test`, and
its root with `data/task1/raw` is found too); a TSV file. Splits the data lacks are
fixed, seeded parts of its training data, drawn by unique source sentence
(`split_corpus`). Length limits (`max_words`) apply to the training data only, so
scores are over the whole test set; the training data's length statistics
(`ReadReport.lengths`, `LengthStats`) let a caller derive its limits from the data.
Files are read as `zoo.data.files.iter_lines` reads them.

`demo_corpus` generates a small synthetic language pair with word reordering that a
model learns in seconds.
"""

import dataclasses
import os
import random

import numpy as np

from zoo.data.files import (
    SPLIT_NAMES,
    check_exists,
    check_inside,
    iter_lines,
    listing,
    seeded_split,
)
from zoo.errors import ConfigError, DataError

__all__ = [
    "LengthStats",
    "ParallelCorpus",
    "ReadReport",
    "demo_corpus",
    "filter_length",
    "load_parallel",
    "read_pairs",
    "read_tsv",
    "split_corpus",
]

LAYOUTS = (
    "explicit files per split (a TSV file or a source/target file pair each)",
    "a folder of line-aligned files {train,valid|val|dev,test}.{SRC,TGT}[.gz] "
    "(SRC/TGT: the language codes, or literally src/tgt)",
    "Multi30k's data/task1/raw",
    "a TSV file of pairs (.tsv/.txt/.tab, optionally .gz)",
)
"""The layouts `load_parallel` recognises, for error messages and help texts."""

_TEST_STEMS = ("test", "test_2016_flickr")
SIDES = ("source", "target")
_SPLIT_KEYS = {name: s for s, names in SPLIT_NAMES.items() for name in (s, *names)}


@dataclasses.dataclass
class LengthStats:
    """Sentence lengths (in words, or what `count` measured) of one side of a corpus.

    Attributes:
        lengths: int array, one length per sentence (not shown in the repr).
        count, mean, max, p50, p90, p95, p99: summaries of `lengths`.
    """

    lengths: np.ndarray = dataclasses.field(repr=False)
    count: int = 0
    mean: float = 0.0
    max: int = 0
    p50: int = 0
    p90: int = 0
    p95: int = 0
    p99: int = 0

    @classmethod
    def from_texts(cls, texts, count=None):
        """Stats of `texts`; `count(text) -> int` defaults to the number of words."""
        count = count or (lambda text: len(text.split()))
        return cls.from_lengths([count(t) for t in texts])

    @classmethod
    def from_lengths(cls, lengths):
        lengths = np.asarray(lengths, dtype="int64")
        if lengths.size == 0:
            return cls(lengths)
        q = np.percentile(lengths, [50, 90, 95, 99], method="inverted_cdf").astype(int)
        return cls(
            lengths,
            count=int(lengths.size),
            mean=float(lengths.mean()),
            max=int(lengths.max()),
            p50=int(q[0]),
            p90=int(q[1]),
            p95=int(q[2]),
            p99=int(q[3]),
        )

    def percentile(self, q):
        """The smallest length that `q` percent of the sentences do not exceed."""
        if self.lengths.size == 0:
            return 0
        return int(np.percentile(self.lengths, q, method="inverted_cdf"))

    def as_dict(self):
        """The summaries as a JSON-ready dict (for manifests and reports)."""
        return {
            "count": self.count,
            "mean": round(self.mean, 2),
            "max": self.max,
            "p50": self.p50,
            "p90": self.p90,
            "p95": self.p95,
            "p99": self.p99,
        }

    def __str__(self):
        return (
            f"mean {self.mean:.1f}, median {self.p50}, 95% <= {self.p95}, "
            f"99% <= {self.p99}, max {self.max}"
        )


@dataclasses.dataclass
class ReadReport:
    """What a reader skipped: counts and the first locations of each kind of problem.

    Attributes:
        read: pairs kept.
        empty: pairs skipped because one side is empty (after stripping whitespace).
        too_long: pairs skipped because a side has more than `max_words` words.
        malformed: TSV lines without a tab (a missing target).
        examples: up to `max_examples` `"file:line: reason"` strings per kind.
        held_out_duplicates: pairs left out of the seeded held-out splits because
            their source sentence is already in one (see `split_corpus`).
        lengths: for training data read by `load_parallel`, `{"source": LengthStats,
            "target": LengthStats}` in words, measured before the length filter.
    """

    read: int = 0
    empty: int = 0
    too_long: int = 0
    malformed: int = 0
    examples: list = dataclasses.field(default_factory=list)
    max_examples: int = 5
    lengths: dict = None
    held_out_duplicates: int = 0

    def note(self, kind, path, line, detail=""):
        setattr(self, kind, getattr(self, kind) + 1)
        shown = sum(1 for e in self.examples if f": {kind}" in e)
        if shown < self.max_examples:
            suffix = f" ({detail})" if detail else ""
            self.examples.append(f"{path}:{line}: {kind}{suffix}")

    @property
    def skipped(self):
        return self.empty + self.too_long + self.malformed

    def __str__(self):
        text = (
            f"read {self.read} pairs; skipped {self.skipped} "
            f"(empty={self.empty}, too_long={self.too_long}, "
            f"malformed={self.malformed})"
        )
        if self.held_out_duplicates:
            text += (
                f"; {self.held_out_duplicates} pairs repeating a held-out source "
                "sentence dropped from the held-out splits"
            )
        if self.lengths:
            text += "".join(
                f"\n  {side} words: {stats}" for side, stats in self.lengths.items()
            )
        if self.examples:
            text += "\n  " + "\n  ".join(self.examples)
        return text


@dataclasses.dataclass
class ParallelCorpus:
    """Aligned source and target sentences, with the report of the read.

    Attributes:
        sources, targets: lists of str.
        report: the `ReadReport` of the read.
        locations: `(file, line)` of each pair (None for generated data).
        description: where the pairs came from (e.g. "2% of train, seeded").
        duplicates_dropped: for a held-out split made by `split_corpus`, the pairs
            of its source sentences that it did not keep.
    """

    sources: list
    targets: list
    report: ReadReport = dataclasses.field(default_factory=ReadReport)
    locations: list = None
    description: str = ""
    duplicates_dropped: int = 0

    def __len__(self):
        return len(self.sources)

    def subset(self, indices, description=None):
        """The pairs at `indices`, in that order."""
        return ParallelCorpus(
            [self.sources[i] for i in indices],
            [self.targets[i] for i in indices],
            self.report,
            None if self.locations is None else [self.locations[i] for i in indices],
            self.description if description is None else description,
        )

    def take(self, n):
        """The first `n` pairs (for quick runs)."""
        return self.subset(range(min(n, len(self))))

    def length_stats(self, count=None):
        """`{"source": LengthStats, "target": LengthStats}` (words by default)."""
        return {
            "source": LengthStats.from_texts(self.sources, count),
            "target": LengthStats.from_texts(self.targets, count),
        }


def _check_max_words(max_words):
    if max_words is not None and (
        not isinstance(max_words, int) or isinstance(max_words, bool) or max_words < 1
    ):
        raise ConfigError(
            f"`max_words` must be a positive integer or None. Received: "
            f"max_words={max_words!r}"
        )


def _too_long(src, tgt, max_words):
    n_src, n_tgt = len(src.split()), len(tgt.split())
    if n_src > max_words or n_tgt > max_words:
        return f"{n_src}/{n_tgt} words > {max_words}"
    return None


def filter_length(corpus, max_words):
    """The pairs of `corpus` whose sides have at most `max_words` words.

    Every pair left out is counted in the corpus' report as `too_long`, with its file
    and line. `max_words=None` returns `corpus` itself.
    """
    _check_max_words(max_words)
    if max_words is None:
        return corpus
    keep = []
    for i, (src, tgt) in enumerate(zip(corpus.sources, corpus.targets, strict=True)):
        detail = _too_long(src, tgt, max_words)
        if detail is None:
            keep.append(i)
            continue
        path, line = corpus.locations[i] if corpus.locations else ("pair", i + 1)
        corpus.report.note("too_long", path, line, detail)
        corpus.report.read -= 1
    return corpus.subset(keep)


def _check_column(source_column):
    if source_column not in (None, 0, 1) or isinstance(source_column, bool):
        raise ConfigError(
            "`source_column` must be 0 (source<TAB>target) or 1 (target<TAB>source). "
            f"Received: source_column={source_column!r}"
        )


def read_pairs(spec, max_words=None, limit=None, *, source_column=0):
    """Reads sentence pairs: the one reader of every parallel layout.

    Args:
        spec: a TSV file of pairs, `a<TAB>b[<TAB>anything else]` (e.g. Anki's
            `spa.txt`), or a `(source_file, target_file)` pair of line-aligned
            files (line i of one translates line i of the other); `.gz` is read.
        max_words: pairs with a side longer than this many words are skipped and
            reported; `None` keeps every length.
        limit: read at most this many lines (for quick runs).
        source_column: the TSV column holding the source, 0 or 1.

    Returns:
        A `ParallelCorpus`; blank lines, empty sides, lines without a tab and
        over-long pairs are counted in its `report` with file and line.

    Raises:
        MissingPathError: a file does not exist.
        DataError: line-aligned files with different numbers of lines (both counts
            and the first line without a partner), invalid UTF-8 (file and line),
            a truncated `.gz` file.
    """
    _check_max_words(max_words)
    _check_column(source_column)
    if isinstance(spec, tuple):
        paths = tuple(check_exists(p, "file") for p in spec)
        sides = [[line for _, line in iter_lines(p)] for p in paths]
        if len(sides[0]) != len(sides[1]):
            first = min(map(len, sides)) + 1
            longer = paths[0] if len(sides[0]) > len(sides[1]) else paths[1]
            raise DataError(
                "line-aligned files have different numbers of lines: "
                f"{paths[0]} has {len(sides[0])}, {paths[1]} has "
                f"{len(sides[1])}; {longer}:{first} has no partner.",
                path=longer,
                line=first,
            )
        rows = enumerate(zip(*sides, strict=True), start=1)
    else:
        paths = (check_exists(spec, "file"),) * 2
        rows = ((n, line.split("\t")) for n, line in iter_lines(paths[0]))
    report = ReadReport()
    sources, targets, locations = [], [], []
    for number, fields in rows:
        if limit is not None and number > limit:
            break
        if len(fields) < 2:
            blank = not fields[0].strip()
            kind = "empty" if blank else "malformed"
            report.note(kind, paths[0], number, "empty line" if blank else "no tab")
            continue
        pair = fields[source_column].strip(), fields[1 - source_column].strip()
        if not all(pair):
            side = 0 if not pair[0] else 1
            report.note("empty", paths[side], number, f"empty {SIDES[side]}")
            continue
        detail = max_words is not None and _too_long(*pair, max_words)
        if detail:
            report.note("too_long", paths[0], number, detail)
            continue
        report.read += 1
        sources.append(pair[0])
        targets.append(pair[1])
        locations.append((paths[0], number))
    return ParallelCorpus(sources, targets, report, locations)


def read_tsv(path, swap=False, max_words=None, limit=None, *, source_column=None):
    """`read_pairs` of a TSV file; the source is the first column, or the second
    with `swap=True` or `source_column=1`."""
    _check_column(source_column)
    column = int(swap) if source_column is None else source_column
    return read_pairs(path, max_words, limit, source_column=column)


def split_corpus(corpus, fractions=(0.02, 0.02), seed=1234):
    """A fixed, seeded held-out split by unique source sentence.

    The split is drawn over the corpus' distinct source sentences (compared with
    whitespace collapsed), so a sentence is either held out or trained on, never
    both: every pair with a held-out source leaves the training data, and each
    held-out split keeps one pair per source (the first). The other pairs of a
    held-out source (duplicates of the pair or other translations of the sentence)
    are dropped; their count is `ReadReport.held_out_duplicates` and is named in the
    held-out corpus' `description`. On a corpus without repeated sources this is the
    same split as a permutation of the pairs with `seed`.

    Args:
        corpus: a `ParallelCorpus`.
        fractions: the held-out fractions of the distinct sources, e.g. `(validation,
            test)`; the rest is training.
        seed: the permutation seed (the same seed gives the same split on any machine).

    Returns:
        A list of `ParallelCorpus`: `[train, *held_out]` in the order of `fractions`.
    """
    groups = [" ".join(source.split()) for source in corpus.sources]
    parts, dropped = seeded_split(len(corpus), fractions, seed, groups=groups)
    corpus.report.held_out_duplicates += sum(dropped)
    pieces = [corpus.subset(idx) for idx in parts]
    for piece, count in zip(pieces[1:], dropped, strict=True):
        piece.duplicates_dropped = count
    pieces[0].duplicates_dropped = 0
    return pieces


# --- load_parallel ------------------------------------------------------------------


def _pair_files(folder, source, target):
    """`{split: (source_file, target_file)}` of a folder, or {} without a train pair."""
    names = set(os.listdir(folder)) if os.path.isdir(folder) else set()
    stems = {**SPLIT_NAMES, "test": _TEST_STEMS}
    for src_lang, tgt_lang in ((source, target), ("src", "tgt")):
        found = {}
        for split, candidates in stems.items():
            for stem in candidates:
                pair = []
                for lang in (src_lang, tgt_lang):
                    name = next(
                        (
                            f"{stem}.{lang}{gz}"
                            for gz in (".gz", "")
                            if f"{stem}.{lang}{gz}" in names
                        ),
                        None,
                    )
                    pair.append(name)
                if pair[0] is None and pair[1] is None:
                    continue
                if None in pair:
                    have = pair[0] or pair[1]
                    lang = tgt_lang if pair[1] is None else src_lang
                    raise DataError(
                        f"{have} has no line-aligned partner {stem}.{lang}[.gz]",
                        path=folder,
                    )
                found[split] = tuple(
                    check_inside(os.path.join(folder, n), folder) for n in pair
                )
                break
        if "train" in found:
            return found
    return {}


def _find_line_pair_dir(path, source, target):
    for candidate in (path, os.path.join(path, "data", "task1", "raw")):
        found = _pair_files(candidate, source, target)
        if found:
            return candidate, found
    return None, {}


def _tsv_column(source, target, source_column, path):
    _check_column(source_column)
    if source_column is not None:
        return source_column
    if "en" in (source, target) and source != target:
        return 0 if source == "en" else 1
    raise ConfigError(
        f"{path}: cannot tell which TSV column holds the source language; an Anki "
        "TSV pairs English (first column) with another language, so one side must "
        "be 'en', or pass source_column=0 (source<TAB>target) or 1 "
        f"(target<TAB>source). Received: source={source!r}, target={target!r}"
    )


def file_specs(train, validation=None, test=None):
    """`(path, files)` for `load_parallel` from command-line style specs.

    Each spec is a TSV file, a folder (train only) or `SOURCE_FILE,TARGET_FILE` (two
    line-aligned files). With only a train spec that names one path, that path is
    `load_parallel`'s `path`; otherwise the specs become its `files`.

    >>> file_specs("train.en,train.vi", test="test.en,test.vi")
    (None, {'train': ('train.en', 'train.vi'), 'test': ('test.en', 'test.vi')})
    """

    def spec(text):
        parts = str(text).split(",")
        return parts[0] if len(parts) == 1 else tuple(parts)

    if validation is None and test is None and "," not in str(train):
        return train, None
    specs = {"train": train, "validation": validation, "test": test}
    return None, {k: spec(v) for k, v in specs.items() if v is not None}


def _normalize_files(files):
    if not isinstance(files, dict) or not files:
        raise ConfigError(
            "`files` must map splits ('train', 'validation', 'test') to a TSV file or a "
            f"(source, target) pair of files. Received: files={files!r}"
        )
    out = {}
    for key, value in files.items():
        if key not in _SPLIT_KEYS:
            raise ConfigError(
                f"Unknown split {key!r} in `files`; expected train, validation (valid, "
                f"validation, dev) or test. Received: files={files!r}"
            )
        if value is None:
            continue
        if isinstance(value, (str, os.PathLike)):
            value = os.fspath(value)
        elif isinstance(value, (tuple, list)) and len(value) == 2:
            value = tuple(os.fspath(v) for v in value)
        else:
            raise ConfigError(
                f"`files[{key!r}]` must be a TSV file or a (source, target) pair. "
                f"Received: {value!r}"
            )
        out[_SPLIT_KEYS[key]] = value
    if "train" not in out:
        raise ConfigError(f"`files` needs a 'train' entry. Received: files={files!r}")
    return out


def _read_split(spec, source, target, source_column, limit):
    if isinstance(spec, tuple):
        return read_pairs(spec, limit=limit)
    column = _tsv_column(source, target, source_column, spec)
    return read_pairs(spec, limit=limit, source_column=column)


def _name(spec):
    if isinstance(spec, tuple):
        return " / ".join(os.path.basename(p) for p in spec)
    return os.path.basename(spec)


def load_parallel(
    path,
    source,
    target,
    max_words=None,
    limit=None,
    seed=1234,
    *,
    files=None,
    source_column=None,
    held_out=(0.02, 0.02),
):
    """Loads train / validation / test pairs from any layout of the module docstring.

    Args:
        path: a folder of line-aligned split files (or Multi30k's root), or a TSV
            file of pairs; may be None when `files` is given.
        source, target: language codes (`"en"`, `"de"`, `"vi"`...): they name the
            line-aligned files (`train.en`) and say which TSV column is English.
        max_words: skip (and report) TRAINING pairs with a side longer than this
            many words; validation and test pairs are all kept.
        limit: read at most this many training lines.
        seed: seed of the held-out splits made from the training data.
        files: explicit files, `{"train": spec, "validation": spec, "test": spec}`
            (`validation` may be spelled `valid`, `val` or `dev`; it and `test` are
            optional),
            each spec a TSV file or a `(source_file, target_file)` pair.
        source_column: which TSV column holds the source (0 or 1); default: the
            column of `source` in an English-first Anki TSV.
        held_out: `(validation, test)` fractions of the training data used for the splits
            the data lacks.

    Returns:
        `{"train": ParallelCorpus, "val": ..., "test": ...}` (the validation set is
        returned as "val", the key its callers read). Each corpus'
        `description` says where it came from; the training corpus'
        `report.lengths` holds its length statistics in words (before the length
        filter).

    Raises:
        MissingPathError: a path that does not exist.
        DataError: a folder without line-aligned training files (saying which
            layouts were expected), files of different lengths, malformed files
            (file and line).
        ConfigError: bad argument values (e.g. a TSV whose source column cannot be
            told).
    """
    _check_max_words(max_words)
    _check_column(source_column)
    if len(held_out) != 2:
        raise ConfigError(
            f"`held_out` must be (validation, test) fractions. Received: "
            f"held_out={held_out!r}"
        )
    if files is not None:
        if path is not None:
            raise ConfigError(
                "Give either `path` or `files`, not both. Received: "
                f"path={os.fspath(path)!r}, files={files!r}"
            )
        specs = _normalize_files(files)
        origin = "files"
    else:
        path = check_exists(path)
        if os.path.isdir(path):
            folder, specs = _find_line_pair_dir(path, source, target)
            if not specs:
                raise DataError(
                    f"no line-aligned training files train.{source}[.gz] and "
                    f"train.{target}[.gz] (or train.src/train.tgt) in the folder; "
                    "expected " + "; or ".join(LAYOUTS[1:]) + ". Found: "
                    f"{listing(path)!r}",
                    path=path,
                )
            origin = folder
        else:
            specs = {"train": path}
            origin = path
    parts = {}
    for split in ("train", "validation", "test"):
        if split in specs:
            corpus = _read_split(
                specs[split],
                source,
                target,
                source_column,
                limit if split == "train" else None,
            )
            corpus.description = f"{split}: {_name(specs[split])}"
            parts[split] = corpus
    train = parts["train"]
    missing = [s for s in ("validation", "test") if s not in parts]
    if missing:
        fractions = [held_out[0 if s == "validation" else 1] for s in missing]
        pieces = split_corpus(train, fractions, seed=seed)
        train = pieces[0]
        train.description = f"train: {_name(specs['train'])} minus held-out pairs"
        for split, piece, fraction in zip(missing, pieces[1:], fractions, strict=True):
            dropped = (
                f"; {piece.duplicates_dropped} pairs repeating its source sentences "
                "dropped"
                if piece.duplicates_dropped
                else ""
            )
            piece.description = (
                f"{split}: {fraction:.0%} of {_name(specs['train'])} (seeded split "
                f"by unique source sentence, seed {seed}{dropped})"
            )
            parts[split] = piece
    train.report.lengths = train.length_stats()
    description = train.description
    train = filter_length(train, max_words)
    train.description = description + (
        f"; pairs over {max_words} words skipped" if max_words else ""
    )
    parts["train"] = train
    for corpus in parts.values():
        corpus.description = f"{corpus.description} ({origin})"
    # "val": the key the translation recipe and benchmarks read and log.
    return {"train": parts["train"], "val": parts["validation"], "test": parts["test"]}


# A toy language pair: source is English-like SVO with adjectives before nouns; the
# target is verb-final (SOV) with adjectives after nouns and its own lexicon, so the
# alignment is non-monotonic and visible in attention heat maps.
_NOUNS = {
    "dog": "hund",
    "cat": "katze",
    "bird": "vogel",
    "man": "mann",
    "woman": "frau",
    "child": "kind",
    "horse": "pferd",
    "fish": "fisch",
}
_ADJECTIVES = {
    "big": "gross",
    "small": "klein",
    "red": "rot",
    "old": "alt",
    "young": "jung",
    "happy": "froh",
}
_VERBS = {
    "sees": "sieht",
    "likes": "mag",
    "follows": "folgt",
    "finds": "findet",
    "calls": "ruft",
}
_DETERMINERS = {"the": "der", "a": "ein"}


def _noun_phrase(rng):
    det = rng.choice(sorted(_DETERMINERS))
    adjectives = rng.sample(sorted(_ADJECTIVES), rng.randint(0, 2))
    noun = rng.choice(sorted(_NOUNS))
    src = [det, *adjectives, noun]
    tgt = [_DETERMINERS[det], _NOUNS[noun], *[_ADJECTIVES[a] for a in adjectives]]
    return src, tgt


def demo_corpus(n=2000, seed=0):
    """A synthetic language pair with reordering, learnable in seconds.

    Source sentences are `det adj* noun verb det adj* noun .`; the target puts the verb
    last and adjectives after their noun, with a one-to-one lexicon. Sentences have
    5-11 words, so a small attentive model reaches a high BLEU in a few epochs.

    Args:
        n: number of pairs.
        seed: generator seed.

    Returns:
        A `ParallelCorpus` with `n` pairs (duplicates possible).
    """
    rng = random.Random(seed)
    sources, targets = [], []
    for _ in range(n):
        subj_src, subj_tgt = _noun_phrase(rng)
        obj_src, obj_tgt = _noun_phrase(rng)
        verb = rng.choice(sorted(_VERBS))
        sources.append(" ".join([*subj_src, verb, *obj_src]) + " .")
        targets.append(" ".join([*subj_tgt, *obj_tgt, _VERBS[verb]]) + " .")
    report = ReadReport(read=n)
    return ParallelCorpus(sources, targets, report)
