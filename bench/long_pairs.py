"""A corpus of longer sentence pairs made from a TSV of short ones.

Anki/Tatoeba pairs are short (English: 6 words on average, against Multi30k's 12 and a
talk corpus' 20). Joining `--join` randomly chosen pairs into one pair (sources joined
with a space, targets likewise) gives real language at the lengths where attention
has to find its way over long inputs and padding costs most. Splits are drawn before
joining and by source sentence: every pair sharing a source sentence with a test or
validation pair goes to that split, so no test sentence is seen in training.

The output is a folder of line-aligned files `{train,valid,test}.{SRC,TGT}`, which the
translation recipe and `bench.translation_time` read with `--data FOLDER` (the
project's `data/` folder is git-ignored: a derived corpus keeps its source's terms and is
not committed):

    python -m bench.long_pairs --tsv ../shared/data/anki_spa_eng/spa-eng/spa.txt \\
        --source en --target es --join 3 --out data/anki_long_en_es
"""

import argparse
import os
import random

from zoo.data.parallel import LengthStats, read_pairs
from zoo.errors import ConfigError


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m bench.long_pairs", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--tsv", required=True, help="pairs, `a<TAB>b[<TAB>...]`")
    parser.add_argument("--source", default="en", help="code of the source column")
    parser.add_argument("--target", default="es", help="code of the target column")
    parser.add_argument(
        "--source-column", type=int, default=0, choices=(0, 1), help="default 0"
    )
    parser.add_argument("--join", type=int, default=3, help="pairs per joined pair")
    parser.add_argument("--val", type=int, default=1000, help="joined validation pairs")
    parser.add_argument("--test", type=int, default=1000, help="joined test pairs")
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--out", required=True, help="a new (or empty) folder")
    args = parser.parse_args(argv)
    for name in ("join", "val", "test"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be >= 1. Received: {getattr(args, name)}")
    return args


def join_pairs(sources, targets, join=3, val=1000, test=1000, seed=1234):
    """Splits pairs by source sentence, then joins `join` random pairs per split.

    Args:
        sources, targets: aligned lists of sentences.
        join: how many pairs make one joined pair.
        val, test: how many joined pairs the validation and test splits get.
        seed: seed of the split and of the joining order.

    Returns:
        `{"train": (sources, targets), "valid": ..., "test": ...}` of joined pairs
        (a split's leftover pairs, fewer than `join`, are dropped).

    Raises:
        ConfigError: too few pairs for the held-out splits and some training data.
    """
    if len(sources) != len(targets):
        raise ConfigError(
            f"sources and targets differ in length: {len(sources)} != {len(targets)}"
        )
    groups = {}
    for i, source in enumerate(sources):
        groups.setdefault(source, []).append(i)
    order = list(groups)
    random.Random(seed).shuffle(order)
    wanted = {"test": test * join, "valid": val * join}
    picked = {"test": [], "valid": [], "train": []}
    for source in order:
        split = next(
            (s for s in ("test", "valid") if len(picked[s]) < wanted[s]), "train"
        )
        picked[split].extend(groups[source])
    if len(picked["train"]) < join or any(
        len(picked[s]) < wanted[s] for s in ("test", "valid")
    ):
        raise ConfigError(
            f"{len(sources)} pairs are too few for {val} validation and {test} test "
            f"pairs of {join} joined pairs each and a training split"
        )
    rng = random.Random(seed + 1)
    out = {}
    for split in ("train", "valid", "test"):
        indices = picked[split]
        rng.shuffle(indices)
        count = len(indices) // join
        if split != "train":
            count = min(count, wanted[split] // join)
        chunks = [indices[i * join : (i + 1) * join] for i in range(count)]
        out[split] = (
            [" ".join(sources[i] for i in chunk) for chunk in chunks],
            [" ".join(targets[i] for i in chunk) for chunk in chunks],
        )
    return out


def write_folder(splits, folder, source, target):
    """Writes `{split}.{source}` / `{split}.{target}`; refuses to overwrite files."""
    os.makedirs(folder, exist_ok=True)
    paths = {
        (split, code): os.path.join(folder, f"{split}.{code}")
        for split in splits
        for code in (source, target)
    }
    existing = [p for p in paths.values() if os.path.exists(p)]
    if existing:
        raise ConfigError(f"{existing[0]} exists; give --out a new or empty folder")
    for (split, code), path in paths.items():
        lines = splits[split][0 if code == source else 1]
        with open(path + ".part", "w", encoding="utf-8") as f:
            f.writelines(line + "\n" for line in lines)
        os.replace(path + ".part", path)
    return paths


def main(argv=None):
    args = parse_args(argv)
    if args.source == args.target:
        raise SystemExit(f"--source and --target are both {args.source!r}")
    corpus = read_pairs(args.tsv, source_column=args.source_column)
    splits = join_pairs(
        corpus.sources, corpus.targets, args.join, args.val, args.test, args.seed
    )
    write_folder(splits, args.out, args.source, args.target)
    print(f"{args.tsv}: {len(corpus.sources)} pairs read; {corpus.report}")
    for split, (src, tgt) in splits.items():
        print(
            f"{split}: {len(src)} pairs; {args.source} words: "
            f"{LengthStats.from_texts(src)}; {args.target} words: "
            f"{LengthStats.from_texts(tgt)}"
        )
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
