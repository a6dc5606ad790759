"""Parallel text for translation: Anki/Tatoeba TSV, line-aligned file pairs, a demo pair.

Readers return a `ParallelCorpus` (aligned lists of source and target sentences) and a
`ReadReport` that counts and locates every line that was not used: empty lines and
over-long pairs are skipped and reported with file and line (never dropped silently);
file pairs whose line counts differ are an error, because alignment cannot be trusted.

Formats:
- Anki/Tatoeba TSV (`english<TAB>other[<TAB>attribution]`, e.g. ManyThings' `spa.txt`).
- Line-aligned pairs (`train.en.gz` / `train.de.gz` in Multi30k): sentence i of one file
  translates sentence i of the other; gzip is detected from the `.gz` suffix.

`split_corpus` makes a fixed, seeded held-out split; `demo_corpus` generates a small
synthetic language pair with word reordering that a model learns in seconds.
"""

import dataclasses
import gzip
import os
import random

__all__ = [
    "ParallelCorpus",
    "ReadReport",
    "demo_corpus",
    "load_parallel",
    "read_line_pairs",
    "read_tsv",
    "split_corpus",
]


@dataclasses.dataclass
class ReadReport:
    """What a reader skipped: counts and the first locations of each kind of problem.

    Attributes:
        read: pairs kept.
        empty: pairs skipped because one side is empty (after stripping whitespace).
        too_long: pairs skipped because a side has more than `max_words` words.
        malformed: TSV lines without a tab (a missing target).
        examples: up to `max_examples` `"file:line: reason"` strings per kind.
    """

    read: int = 0
    empty: int = 0
    too_long: int = 0
    malformed: int = 0
    examples: list = dataclasses.field(default_factory=list)
    max_examples: int = 5

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
        if self.examples:
            text += "\n  " + "\n  ".join(self.examples)
        return text


@dataclasses.dataclass
class ParallelCorpus:
    """Aligned source and target sentences, with the report of the read."""

    sources: list
    targets: list
    report: ReadReport = dataclasses.field(default_factory=ReadReport)

    def __len__(self):
        return len(self.sources)

    def take(self, n):
        """The first `n` pairs (for quick runs)."""
        return ParallelCorpus(self.sources[:n], self.targets[:n], self.report)


def _open_text(path):
    path = os.fspath(path)
    if path.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8", errors="replace", newline="\n")
    return open(path, encoding="utf-8", errors="replace", newline="\n")


def _check_max_words(max_words):
    if max_words is not None and (not isinstance(max_words, int) or max_words < 1):
        raise ValueError(
            f"`max_words` must be a positive integer or None. Received: "
            f"max_words={max_words!r}"
        )


def _keep(report, src, tgt, path, line, max_words):
    src, tgt = src.strip(), tgt.strip()
    if not src or not tgt:
        side = "source" if not src else "target"
        report.note("empty", path, line, f"empty {side}")
        return None
    if max_words is not None:
        n_src, n_tgt = len(src.split()), len(tgt.split())
        if n_src > max_words or n_tgt > max_words:
            report.note("too_long", path, line, f"{n_src}/{n_tgt} words > {max_words}")
            return None
    report.read += 1
    return src, tgt


def read_tsv(path, swap=False, max_words=None, limit=None):
    """Reads Anki/Tatoeba pairs `english<TAB>other[<TAB>attribution]`.

    Args:
        path: the `.txt` (or `.txt.gz`) file.
        swap: if False the first column is the source; if True the second column is.
        max_words: pairs with a side longer than this many words are skipped and
            reported; `None` keeps every length.
        limit: read at most this many lines (for quick runs).

    Returns:
        A `ParallelCorpus`; lines without a tab, empty sides and over-long pairs are
        counted in its `report` with file and line.
    """
    _check_max_words(max_words)
    report = ReadReport()
    sources, targets = [], []
    with _open_text(path) as f:
        for number, raw in enumerate(f, start=1):
            if limit is not None and number > limit:
                break
            line = raw.rstrip("\r\n")
            if not line.strip():
                report.note("empty", path, number, "empty line")
                continue
            fields = line.split("\t")
            if len(fields) < 2:
                report.note("malformed", path, number, "no tab")
                continue
            src, tgt = fields[0], fields[1]
            if swap:
                src, tgt = tgt, src
            kept = _keep(report, src, tgt, path, number, max_words)
            if kept:
                sources.append(kept[0])
                targets.append(kept[1])
    return ParallelCorpus(sources, targets, report)


def read_line_pairs(source_path, target_path, max_words=None, limit=None):
    """Reads two line-aligned files (gzip when the name ends in `.gz`).

    Args:
        source_path, target_path: the two files; line i of one translates line i of
            the other.
        max_words: pairs with a side longer than this many words are skipped and
            reported; `None` keeps every length.
        limit: read at most this many lines (for quick runs).

    Returns:
        A `ParallelCorpus` (empty and over-long pairs are reported with file and line).

    Raises:
        ValueError: if the files have different numbers of lines; the message gives
            both counts and the first line that has no partner.
    """
    _check_max_words(max_words)
    with _open_text(source_path) as f:
        src_lines = f.read().split("\n")
    with _open_text(target_path) as f:
        tgt_lines = f.read().split("\n")
    for lines in (src_lines, tgt_lines):
        if lines and lines[-1] == "":
            lines.pop()  # the final newline
    if len(src_lines) != len(tgt_lines):
        first = min(len(src_lines), len(tgt_lines)) + 1
        longer = source_path if len(src_lines) > len(tgt_lines) else target_path
        raise ValueError(
            "Line-aligned files have different numbers of lines: "
            f"{source_path} has {len(src_lines)}, {target_path} has "
            f"{len(tgt_lines)}; {longer}:{first} has no partner."
        )
    report = ReadReport()
    sources, targets = [], []
    for number, (src, tgt) in enumerate(
        zip(src_lines, tgt_lines, strict=True), start=1
    ):
        if limit is not None and number > limit:
            break
        where = source_path if not src.strip() else target_path
        if not src.strip() or not tgt.strip():
            report.note("empty", where, number, "empty line")
            continue
        kept = _keep(report, src, tgt, source_path, number, max_words)
        if kept:
            sources.append(kept[0])
            targets.append(kept[1])
    return ParallelCorpus(sources, targets, report)


def split_corpus(corpus, fractions=(0.02, 0.02), seed=1234):
    """A fixed, seeded held-out split.

    Args:
        corpus: a `ParallelCorpus`.
        fractions: the held-out fractions, e.g. `(val, test)`; the rest is training.
        seed: the permutation seed (the same seed gives the same split on any machine).

    Returns:
        A list of `ParallelCorpus`: `[train, *held_out]` in the order of `fractions`.
    """
    if sum(fractions) >= 1 or any(f <= 0 for f in fractions):
        raise ValueError(
            "Held-out fractions must be positive and sum to less than 1. "
            f"Received: fractions={fractions!r}"
        )
    order = list(range(len(corpus)))
    random.Random(seed).shuffle(order)
    parts, start = [], 0
    for fraction in fractions:
        n = max(1, int(round(fraction * len(order))))
        parts.append(sorted(order[start : start + n]))
        start += n
    parts.insert(0, sorted(order[start:]))
    return [
        ParallelCorpus(
            [corpus.sources[i] for i in idx],
            [corpus.targets[i] for i in idx],
            corpus.report,
        )
        for idx in parts
    ]


_MULTI30K_SPLITS = {"train": "train", "val": "val", "test": "test_2016_flickr"}
_ANKI_FIRST_COLUMN = "en"


def _find_line_pair_dir(path, source):
    for candidate in (path, os.path.join(path, "data", "task1", "raw")):
        name = os.path.join(candidate, f"train.{source}")
        if os.path.exists(name + ".gz") or os.path.exists(name):
            return candidate
    return None


def load_parallel(path, source, target, max_words=None, limit=None, seed=1234):
    """Loads train/val/test splits from a Multi30k-style folder or an Anki TSV file.

    Args:
        path: a folder with `{train,val,test_2016_flickr}.{lang}[.gz]` (Multi30k's
            `data/task1/raw`, or the Multi30k root), or an Anki TSV file whose first
            column is English.
        source, target: language codes (`"en"`, `"de"`, `"es"`...). For a TSV one of
            them must be `"en"`; the other names the second column.
        max_words: skip (and report) pairs longer than this many words.
        limit: read at most this many training lines.
        seed: seed of the fixed 2% / 2% held-out split of a TSV file.

    Returns:
        `{"train": ParallelCorpus, "val": ..., "test": ...}`.
    """
    path = os.fspath(path)
    if os.path.isdir(path):
        folder = _find_line_pair_dir(path, source)
        if folder is None:
            raise ValueError(
                f"No `train.{source}[.gz]` under the folder. Received: path={path!r}"
            )
        splits = {}
        for split, stem in _MULTI30K_SPLITS.items():
            files = []
            for lang in (source, target):
                name = os.path.join(folder, f"{stem}.{lang}")
                files.append(name + ".gz" if os.path.exists(name + ".gz") else name)
            splits[split] = read_line_pairs(
                *files, max_words=max_words, limit=limit if split == "train" else None
            )
        return splits
    if os.path.isfile(path):
        if _ANKI_FIRST_COLUMN not in (source, target) or source == target:
            raise ValueError(
                "An Anki TSV pairs English (first column) with another language; "
                f"one side must be 'en'. Received: source={source!r}, "
                f"target={target!r}"
            )
        corpus = read_tsv(path, swap=source != "en", max_words=max_words, limit=limit)
        train, val, test = split_corpus(corpus, (0.02, 0.02), seed=seed)
        return {"train": train, "val": val, "test": test}
    raise ValueError(f"No such file or folder. Received: path={path!r}")


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
