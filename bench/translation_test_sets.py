"""A trained translation export scored on more test sets than the one it was chosen on.

Multi30k has, beside `test_2016_flickr` (the recipe's test split), `test_2017_flickr`
and `test_2017_mscoco` (out-of-domain captions): sets that no default and no kept
epoch was chosen on. This loads an export's `VERSION.keras` (the
`Seq2SeqTextTranslator` task), translates each set from its raw files
(`data/task1/raw/<set>.<lang>.gz`) with beam search (the recipe's headline search) and
greedy search, and scores each with `bench.translation_time.score`: lowercased BLEU on
Moses tokens (`bleu_moses_lowercase`, the published Multi30k scoring), lowercased 13a
and cased 13a BLEU.

    python -m bench.translation_test_sets saved_models/translation/3 \\
        --data ../shared/data/multi30k --source de --target en \\
        --out docs/results/translation_de_en_test_sets.json
"""

import argparse
import json
import os
import platform
import sys
import time

SETS = ("test_2016_flickr", "test_2017_flickr", "test_2017_mscoco")


def set_files(data, name, source, target):
    """The raw `(source, target)` files of Multi30k test set `name` under `data`."""
    for root in (data, os.path.join(data, "data", "task1", "raw")):
        pair = tuple(
            os.path.join(root, f"{name}.{lang}.gz") for lang in (source, target)
        )
        if all(os.path.isfile(p) for p in pair):
            return pair
    raise SystemExit(
        f"no {name}.{source}.gz and {name}.{target}.gz under {data} (or its "
        "data/task1/raw)"
    )


def score_set(task, pairs, target, beam_width):
    """`{search: score(...)}` for greedy and beam search over `pairs`."""
    from bench.translation_time import score

    out = {}
    for search, width in (("greedy", 1), (f"beam{beam_width}", beam_width)):
        start = time.perf_counter()
        hypotheses = task.translate(pairs.sources, beam_width=width)
        seconds = time.perf_counter() - start
        out[search] = {
            **score(hypotheses, pairs.targets, target),
            "sentences_per_second": len(pairs.sources) / seconds,
        }
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m bench.translation_test_sets",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "export", help="a version folder, e.g. saved_models/translation/3"
    )
    parser.add_argument("--data", required=True, help="the Multi30k folder")
    parser.add_argument("--source", required=True)
    parser.add_argument("--target", required=True)
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--beam-width", type=int, default=5)
    parser.add_argument(
        "--alpha",
        type=float,
        default=None,
        help="the beam's length penalty (default: the export's)",
    )
    parser.add_argument("--out", help="JSON file written (never overwritten)")
    args = parser.parse_args(argv)
    if args.out and os.path.exists(args.out):
        parser.error(f"--out exists, not overwritten: {args.out}")
    if args.alpha is not None and not args.alpha >= 0:
        parser.error(f"--alpha must be >= 0. Received: {args.alpha}")
    import keras

    import zoo  # noqa: F401  (registers the saved classes)
    from zoo.data.parallel import read_pairs

    task = keras.saving.load_model(args.export.rstrip("/") + ".keras", compile=False)
    if args.alpha is not None:
        task.alpha = args.alpha
    results = {}
    for name in args.sets.split(","):
        pairs = read_pairs(set_files(args.data, name, args.source, args.target))
        results[name] = {"pairs": len(pairs.sources)}
        results[name].update(score_set(task, pairs, args.target, args.beam_width))
        beam = results[name][f"beam{args.beam_width}"]["bleu_moses_lowercase"]
        print(
            f"{name}: {len(pairs.sources)} pairs, beam {args.beam_width} BLEU "
            f"(lowercased Moses tokens) {beam:.2f}",
            flush=True,
        )
    record = {
        "command": "python -m bench.translation_test_sets "
        + " ".join(argv if argv is not None else sys.argv[1:]),
        "export": args.export,
        "direction": f"{args.source}->{args.target}",
        "alpha": task.alpha,
        "machine": f"{platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores",
        "date": time.strftime("%Y-%m-%d"),
        "results": results,
    }
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "x", encoding="utf-8") as f:
            json.dump(record, f, indent=2, default=float)
    return record


if __name__ == "__main__":
    main()
