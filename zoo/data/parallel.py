"""Parallel text for translation: one reader for sentence pairs, fixed splits.

`read_pairs` reads a TSV file of pairs (either column order; Anki/Tatoeba's
`english<TAB>other<TAB>attribution` has English first) or two line-aligned files
(Multi30k's `train.en.gz` / `train.de.gz`); its `ReadReport` counts and locates (file
and line) every pair skipped. `load_parallel` reads train / validation / test from
explicit files per split, a folder of line-aligned split files or a TSV file; splits
the data lacks are seeded parts of the training data, drawn by unique source sentence
(`split_corpus`). `max_words` filters training pairs only: every test pair is scored.
"""

import dataclasses
import os

import numpy as np

from zoo.data.files import (
    SPLIT_NAMES,
    check_exists,
    find_split_files,
    iter_lines,
    listing,
    seeded_split,
)
from zoo.errors import ConfigError, DataError

SIDES = ("source", "target")
_STEMS = {**SPLIT_NAMES, "test": ("test", "test_2016_flickr")}  # Multi30k's test
_SPLIT_KEYS = {name: s for s, names in SPLIT_NAMES.items() for name in (s, *names)}
HELD_OUT = {"validation": 0.02, "test": 0.02}  # the parts of train for missing splits


@dataclasses.dataclass
class LengthStats:
    """Sentence lengths of one side of a corpus (in words, or what `count` measured);
    `count`, `mean`, `max` and the percentiles `p50`, `p90`, `p95`, `p99` summarize
    them."""

    lengths: np.ndarray = dataclasses.field(repr=False)

    @classmethod
    def from_texts(cls, texts, count=None):
        return cls.from_lengths([count(t) if count else len(t.split()) for t in texts])

    @classmethod
    def from_lengths(cls, lengths):
        return cls(np.asarray(lengths, dtype="int64"))

    def percentile(self, q):
        """The smallest length that `q` percent of the sentences do not exceed."""
        if self.lengths.size == 0:
            return 0
        return int(np.percentile(self.lengths, q, method="inverted_cdf"))

    count = property(lambda self: int(self.lengths.size))
    mean = property(lambda self: float(self.lengths.mean()) if self.count else 0.0)
    max = property(lambda self: int(self.lengths.max(initial=0)))
    p50, p90, p95, p99 = (
        property(lambda self, q=q: self.percentile(q)) for q in (50, 90, 95, 99)
    )

    def as_dict(self):
        """The summaries as a JSON-ready dict (for manifests and reports)."""
        keys = ("count", "mean", "max", "p50", "p90", "p95", "p99")
        return {k: round(getattr(self, k), 2) for k in keys}

    def __str__(self):
        return (
            f"mean {self.mean:.1f}, median {self.p50}, 95% <= {self.p95}, "
            f"99% <= {self.p99}, max {self.max}"
        )


@dataclasses.dataclass
class ReadReport:
    """What a reader kept (`read`) and skipped, by kind: `empty` (a blank line or
    side), `too_long` (a side over `max_words`), `malformed` (a TSV line without a
    tab), with up to `max_examples` `"file:line: kind"` locations per kind.

    `held_out_duplicates` counts pairs left out of seeded held-out splits because
    their source sentence is already in one (`split_corpus`); `lengths` holds the
    training data's `{"source", "target"}` `LengthStats` before the length filter.
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

    def __str__(self):
        skipped = self.empty + self.too_long + self.malformed
        text = (
            f"read {self.read} pairs; skipped {skipped} (empty={self.empty}, "
            f"too_long={self.too_long}, malformed={self.malformed})"
        )
        if self.held_out_duplicates:
            text += (
                f"; {self.held_out_duplicates} pairs repeating a held-out source "
                "sentence dropped from the held-out splits"
            )
        for side, stats in (self.lengths or {}).items():
            text += f"\n  {side} words: {stats}"
        return "\n  ".join([text, *self.examples])


@dataclasses.dataclass
class ParallelCorpus:
    """Aligned `sources` and `targets` with the `report` of their read, each pair's
    `(file, line)` in `locations` (None for generated data) and a `description` of
    where they came from. `duplicates_dropped`: for a held-out split of
    `split_corpus`, the pairs of its source sentences it did not keep."""

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
            self.locations and [self.locations[i] for i in indices],
            self.description if description is None else description,
        )

    def take(self, n):
        """The first `n` pairs."""
        return self.subset(range(min(n, len(self))))

    def length_stats(self, count=None):
        """`{"source": LengthStats, "target": LengthStats}` (words by default)."""
        sides = zip(SIDES, (self.sources, self.targets), strict=True)
        return {side: LengthStats.from_texts(texts, count) for side, texts in sides}


def _check_arguments(max_words, source_column):
    if max_words is not None and (
        not isinstance(max_words, int) or isinstance(max_words, bool) or max_words < 1
    ):
        raise ConfigError(
            f"`max_words` must be a positive integer or None. Received: "
            f"max_words={max_words!r}"
        )
    if source_column not in (None, 0, 1) or isinstance(source_column, bool):
        raise ConfigError(
            "`source_column` must be 0 (source<TAB>target) or 1 (target<TAB>source). "
            f"Received: source_column={source_column!r}"
        )


def filter_length(corpus, max_words):
    """The pairs of `corpus` with at most `max_words` words a side (None: all), each
    pair left out counted in its report as `too_long` with its file and line."""
    if max_words is None:
        return corpus
    keep = []
    for i, pair in enumerate(zip(corpus.sources, corpus.targets, strict=True)):
        n_src, n_tgt = (len(text.split()) for text in pair)
        if max(n_src, n_tgt) <= max_words:
            keep.append(i)
            continue
        path, line = corpus.locations[i] if corpus.locations else ("pair", i + 1)
        corpus.report.note(
            "too_long", path, line, f"{n_src}/{n_tgt} words > {max_words}"
        )
        corpus.report.read -= 1
    return corpus.subset(keep)


def read_pairs(spec, max_words=None, limit=None, *, source_column=0):
    """Reads sentence pairs: the one reader of every parallel layout.

    Args:
        spec: a TSV file, `a<TAB>b[<TAB>anything else]`, or a `(source_file,
            target_file)` pair of line-aligned files; `.gz` is read.
        max_words: pairs with a side over this many words are skipped (None: none).
        limit: read at most this many lines.
        source_column: the TSV column of the source, 0 or 1.

    Returns:
        A `ParallelCorpus`; blank lines, empty sides, lines without a tab and
        over-long pairs are counted in its `report` with file and line.

    Raises:
        MissingPathError, DataError (line-aligned files of different lengths, with
        both counts and the first line without a partner; invalid UTF-8).
    """
    _check_arguments(max_words, source_column)
    if isinstance(spec, tuple):
        paths = tuple(check_exists(p, "file") for p in spec)
        sides = [[line for _, line in iter_lines(p)] for p in paths]
        if len(sides[0]) != len(sides[1]):
            first = min(map(len, sides)) + 1
            longer = paths[0] if len(sides[0]) > len(sides[1]) else paths[1]
            counts = f"{paths[0]} has {len(sides[0])}, {paths[1]} has {len(sides[1])}"
            raise DataError(
                f"line-aligned files have different numbers of lines: {counts}; "
                f"{longer}:{first} has no partner.",
                path=longer,
                line=first,
            )
        rows = enumerate(zip(*sides, strict=True), start=1)
    else:
        paths = (check_exists(spec, "file"),) * 2
        rows = ((n, line.split("\t")) for n, line in iter_lines(paths[0]))
    report, sources, targets, locations = ReadReport(), [], [], []
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
        report.read += 1
        sources.append(pair[0])
        targets.append(pair[1])
        locations.append((paths[0], number))
    return filter_length(ParallelCorpus(sources, targets, report, locations), max_words)


def split_corpus(corpus, fractions=(0.02, 0.02), seed=1234):
    """`[train, *held_out]`: fixed, seeded held-out parts of `corpus` (`fractions` of
    its distinct source sentences, whitespace collapsed) and the rest.

    A source sentence is held out or trained on, never both: each held-out split
    keeps its first pair, and the other pairs of a held-out source are dropped
    (counted in `ReadReport.held_out_duplicates` and each part's
    `duplicates_dropped`). Without repeated sources this is the split of a seeded
    permutation of the pairs.
    """
    groups = [" ".join(source.split()) for source in corpus.sources]
    parts, dropped = seeded_split(len(corpus), fractions, seed, groups=groups)
    corpus.report.held_out_duplicates += sum(dropped)
    pieces = [corpus.subset(idx) for idx in parts]
    for piece, count in zip(pieces, [0, *dropped], strict=True):
        piece.duplicates_dropped = count
    return pieces


def _pair_files(folder, source, target):
    """`{split: (source_file, target_file)}` of a folder, or {} without a train pair."""
    for langs in ((source, target), ("src", "tgt")):
        sides = [find_split_files(folder, (f".{x}.gz", f".{x}"), _STEMS) for x in langs]
        for split in sides[0].keys() | sides[1].keys():
            names = [os.path.basename(side.get(split, "")) for side in sides]
            if names[0].split(".")[0] != names[1].split(".")[0]:
                lone = 0 if names[0] else 1
                raise DataError(
                    f"{names[lone]} has no line-aligned partner "
                    f"{names[lone].split('.')[0]}.{langs[1 - lone]}[.gz]",
                    path=folder,
                )
        if sides[0]:
            return {split: (sides[0][split], sides[1][split]) for split in sides[0]}
    return {}


def file_specs(train, validation=None, test=None):
    """`(path, files)` for `load_parallel` from command-line specs, each a TSV file,
    a folder (train only) or `SOURCE_FILE,TARGET_FILE`.

    >>> file_specs("train.en,train.vi", test="test.en,test.vi")
    (None, {'train': ('train.en', 'train.vi'), 'test': ('test.en', 'test.vi')})
    """
    if validation is None and test is None and "," not in str(train):
        return train, None
    specs = {"train": train, "validation": validation, "test": test}
    specs = {k: str(v).split(",") for k, v in specs.items() if v is not None}
    return None, {k: v[0] if len(v) == 1 else tuple(v) for k, v in specs.items()}


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
        if isinstance(value, (str, os.PathLike)):
            out[_SPLIT_KEYS[key]] = os.fspath(value)
        elif isinstance(value, (tuple, list)) and len(value) == 2:
            out[_SPLIT_KEYS[key]] = tuple(os.fspath(v) for v in value)
        elif value is not None:
            raise ConfigError(
                f"`files[{key!r}]` must be a TSV file or a (source, target) pair. "
                f"Received: {value!r}"
            )
    if "train" not in out:
        raise ConfigError(f"`files` needs a 'train' entry. Received: files={files!r}")
    return out


def _name(spec):
    paths = spec if isinstance(spec, tuple) else [spec]
    return " / ".join(map(os.path.basename, paths))


def _find_specs(path, source, target):
    """`(origin, {split: spec})` of a folder (or Multi30k's root) or a TSV file."""
    path = check_exists(path)
    if not os.path.isdir(path):
        return path, {"train": path}
    for folder in (path, os.path.join(path, "data", "task1", "raw")):
        found = _pair_files(folder, source, target)
        if found:
            return folder, found
    raise DataError(
        f"no line-aligned training files train.{source}[.gz] and train.{target}[.gz] "
        "(or train.src/train.tgt) in the folder; expected a folder of line-aligned "
        "files {train,valid|val|dev,test}.{SRC,TGT}[.gz] (SRC/TGT: the language "
        "codes, or literally src/tgt); or Multi30k's data/task1/raw; or a TSV file of "
        f"pairs (.tsv/.txt/.tab, optionally .gz). Found: {listing(path)!r}",
        path=path,
    )


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
):
    """Train / validation / test pairs from explicit files, a folder of
    line-aligned split files (Multi30k's root too) or a TSV file.

    Args:
        path: a folder of line-aligned split files (or Multi30k's root) or a TSV
            file; None when `files` is given.
        source, target: language codes: they name the line-aligned files
            (`train.en`) and say which TSV column is English.
        max_words: skip (and report) TRAINING pairs with a side over this many
            words; validation and test pairs are all kept.
        limit: read at most this many training lines.
        seed: seed of the held-out splits made from the training data.
        files: `{"train": spec, "validation": spec, "test": spec}` (validation may
            be spelled valid, val or dev; it and test are optional), each spec a
            TSV file or a `(source_file, target_file)` pair.
        source_column: the TSV column of the source (0 or 1); default: the column
            of `source` in an English-first Anki TSV.

    The splits the data lacks are `HELD_OUT` fractions of the training data.

    Returns:
        `{"train", "val", "test"}` -> `ParallelCorpus`, each `description` saying
        where it came from; the training corpus' `report.lengths` holds its length
        statistics in words before the length filter.

    Raises:
        MissingPathError, DataError (a folder without line-aligned training files,
        naming the layouts expected; malformed files, with file and line),
        ConfigError (bad arguments, e.g. a TSV whose source column is not told).
    """
    _check_arguments(max_words, source_column)
    if files is not None and path is not None:
        raise ConfigError(
            "Give either `path` or `files`, not both. Received: "
            f"path={os.fspath(path)!r}, files={files!r}"
        )
    if files is not None:
        origin, specs = "files", _normalize_files(files)
    else:
        origin, specs = _find_specs(path, source, target)
    parts = {}
    for split in (s for s in ("train", "validation", "test") if s in specs):
        spec = specs[split]
        column = 0 if isinstance(spec, tuple) else source_column  # line-aligned: 0
        if column is None:
            if "en" not in (source, target) or source == target:
                raise ConfigError(
                    f"{spec}: cannot tell which TSV column holds the source "
                    "language; an Anki TSV pairs English (first column) with another "
                    "language, so one side must be 'en', or pass source_column=0 "
                    "(source<TAB>target) or 1 (target<TAB>source). Received: "
                    f"source={source!r}, target={target!r}"
                )
            column = 0 if source == "en" else 1
        lines = limit if split == "train" else None
        parts[split] = read_pairs(spec, limit=lines, source_column=column)
        parts[split].description = f"{split}: {_name(spec)}"
    train, name = parts["train"], _name(specs["train"])
    missing = [s for s in ("validation", "test") if s not in parts]
    if missing:
        fractions = [HELD_OUT[s] for s in missing]
        train, *pieces = split_corpus(train, fractions, seed=seed)
        train.description = f"train: {name} minus held-out pairs"
        for split, piece, fraction in zip(missing, pieces, fractions, strict=True):
            n = piece.duplicates_dropped
            dropped = f"; {n} pairs repeating its source sentences dropped" if n else ""
            piece.description = (
                f"{split}: {fraction:.0%} of {name} (seeded split by unique source "
                f"sentence, seed {seed}{dropped})"
            )
            parts[split] = piece
    train.report.lengths = train.length_stats()
    parts["train"] = train = filter_length(train, max_words)  # keeps the description
    if max_words:
        train.description += f"; pairs over {max_words} words skipped"
    for corpus in parts.values():
        corpus.description += f" ({origin})"
    return {"train": train, "val": parts["validation"], "test": parts["test"]}
