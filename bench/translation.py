"""Translation benchmark: BLEU (cased and lowercased), by source length, and speed.

For each direction and attention variant: train with `zoo.recipes.translation` (run as
its own process, `python -m zoo.recipes.translation`, with the flags below), reload its
export (`VERSION.keras` and the preprocessor of `zoo.models.translation`), decode
the test set greedily and with beam search and report

- BLEU with sacrebleu on detokenized, cased output (13a), on lowercased output, and
  on lowercased Moses-tokenized output (`zoo.metrics.moses_bleu`, the scoring of the
  published Multi30k numbers),
- BLEU by source length bucket (words: 1-10, 11-15, 16-20, 21+), as in Bahdanau et
  al.'s Figure 2,
- training target tokens per second (real tokens, padding excluded) and decoding
  sentences per second (in-graph greedy and beam search, batches of 64 sources of
  similar length, as `zoo.models.translation.translator.translate_corpus` forms them).

Commands:

    python -m bench.translation --quick          # < 5 min: a pipeline check
    python -m bench.translation --data ../shared/data/multi30k \\
        --directions de-en,en-de --attentions bahdanau,luong-general-local-p,none
    python -m bench.translation --data ../shared/data/anki_spa_eng/spa-eng/spa.txt \\
        --directions es-en
    python -m bench.translation --data ../shared/data/multi30k --directions en-de \\
        --attentions bahdanau --decode-only --tune-decoding

`--tune-decoding` chooses the beam width and the GNMT penalties (alpha, beta) on the
validation split (cased BLEU over the grid of `--tune-beams/--tune-alphas/--tune-betas`)
and adds one test row decoded with the chosen setting; the test set plays no part in
the choice.

`--quick` trains a small model for one epoch on 2,000 Multi30k de->en pairs (or the
generated demo pair when ../shared/data is absent) and scores 200 test sentences: its
BLEU says nothing about the model family, only that the pipeline runs. Results are
printed as a Markdown table and written to `reports/bench_translation.json`.
"""

import argparse
import json
import os
import pathlib
import platform
import shlex
import shutil
import subprocess
import sys
import time

# The attention variants of the recipe: name -> its flags (`bench.attention_variants`).
# Luong's variants are the paper's model, with input feeding, unless named no-feed.
FEED = ["--input-feeding"]
ATTENTIONS = {
    "none": ["--attention", "none"],
    "bahdanau": ["--attention", "bahdanau"],
    "bahdanau-normalized": ["--attention", "bahdanau", "--attention-normalize"],
    "bahdanau-hard-gumbel": [
        "--attention",
        "bahdanau",
        "--attention-probability",
        "gumbel",
    ],
    "luong-dot": ["--attention", "luong", "--score", "dot", *FEED],
    "luong-general": ["--attention", "luong", "--score", "general", *FEED],
    "luong-general-no-feed": [
        "--attention",
        "luong",
        "--score",
        "general",
        "--no-input-feeding",
    ],
    "luong-concat": ["--attention", "luong", "--score", "concat", *FEED],
    "luong-location": ["--attention", "luong", "--score", "location", *FEED],
    "luong-cosine": ["--attention", "luong", "--score", "cosine", *FEED],
    "luong-general-hardmax": [
        *("--attention", "luong", "--score", "general", *FEED),
        *("--attention-probability", "hardmax"),
    ],
    "luong-general-local-m": [
        *("--attention", "luong", "--score", "general", *FEED),
        *("--window", "local-m"),
    ],
    "luong-general-local-p": [
        *("--attention", "luong", "--score", "general", *FEED),
        *("--window", "local-p"),
    ],
}


LENGTH_BUCKETS = [(1, 10), (11, 15), (16, 20), (21, 10_000)]
SHARED = pathlib.Path(__file__).resolve().parents[1].parent / "shared" / "data"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.translation")
    parser.add_argument("--quick", action="store_true", help="< 5 min pipeline check")
    parser.add_argument("--data", default=None, help="Multi30k folder or Anki TSV")
    parser.add_argument("--directions", default="de-en,en-de")
    parser.add_argument("--attentions", default="bahdanau,luong-general-local-p,none")
    parser.add_argument("--beam-width", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--units", type=int, default=256)
    parser.add_argument("--vocab-size", type=int, default=8000)
    parser.add_argument("--limit", type=int, default=None, help="training pairs")
    parser.add_argument("--eval-limit", type=int, default=None, help="test pairs")
    parser.add_argument("--run-dir", default="runs/bench_translation")
    parser.add_argument("--out", default="reports/bench_translation.json")
    parser.add_argument(
        "--extra",
        default="",
        help='more recipe flags, one string; write --extra="--flag ..." when it '
        "starts with a dash",
    )
    parser.add_argument(
        "--decode-only",
        action="store_true",
        help="no training: score the best checkpoint (best.keras) of an earlier run "
        "of this benchmark in --run-dir, with the architecture and preprocessing of "
        "its export (train tok/s then reads as n/a)",
    )
    parser.add_argument(
        "--raw-weights",
        action="store_true",
        help="with --decode-only, for a run trained with --ema: score the raw weights "
        "of the best epoch (kept in best.keras's optimizer state) instead of their "
        "average",
    )
    parser.add_argument(
        "--tune-decoding",
        action="store_true",
        help="choose beam width, alpha and beta on the validation split and add a "
        "test row decoded with them",
    )
    parser.add_argument("--tune-beams", default="5,10", help="beam widths tried")
    parser.add_argument("--tune-alphas", default="0.6,1.0", help="length penalties")
    parser.add_argument("--tune-betas", default="0.0,0.2", help="coverage penalties")
    args = parser.parse_args(argv)
    if args.raw_weights and not args.decode_only:
        parser.error("--raw-weights scores a saved checkpoint: it needs --decode-only")
    try:
        args.tune_grid = [
            (int(w), float(a), float(b))
            for w in args.tune_beams.split(",")
            for a in args.tune_alphas.split(",")
            for b in args.tune_betas.split(",")
        ]
    except ValueError as error:
        parser.error(f"--tune-beams/--tune-alphas/--tune-betas: {error}")
    if any(w < 1 or a < 0 or b < 0 for w, a, b in args.tune_grid):
        parser.error(
            "--tune-beams must be >= 1 and --tune-alphas/--tune-betas >= 0. "
            f"Received: {args.tune_beams!r}, {args.tune_alphas!r}, {args.tune_betas!r}"
        )
    if args.quick:
        multi30k = SHARED / "multi30k"
        args.data = args.data or (str(multi30k) if multi30k.is_dir() else None)
        args.directions = "de-en" if args.data else "src-tgt"
        args.attentions = "bahdanau,none"
        args.epochs, args.units, args.vocab_size = 1, 64, 2000
        args.limit, args.eval_limit = args.limit or 2000, args.eval_limit or 200
    return args


def bucket_bleu(sources, hypotheses, references):
    """BLEU per source-length bucket (in words)."""
    from zoo.metrics import corpus_bleu

    out = {}
    for low, high in LENGTH_BUCKETS:
        idx = [i for i, s in enumerate(sources) if low <= len(s.split()) <= high]
        name = f"{low}-{high}" if high < 10_000 else f"{low}+"
        if not idx:
            out[name] = None
            continue
        score, _ = corpus_bleu(
            [hypotheses[i] for i in idx], [references[i] for i in idx]
        )
        out[name] = {"bleu": round(score, 2), "n": len(idx)}
    return out


def recipe_flags(args, source, target, attention, run_dir):
    """The `zoo.recipes.translation` command line of one (direction, attention) run."""
    units = str(args.units)
    flags = [
        "--run-dir", run_dir,
        "--report-dir", os.path.join(run_dir, "reports"),
        "--export-dir", os.path.join(run_dir, "export"),
        "--epochs", str(args.epochs),
        "--batch-size", str(args.batch_size),
        "--embedding-dim", units,
        "--encoder-units", units,
        "--decoder-units", units,
        "--vocab-size", str(args.vocab_size),
        "--beam-width", str(args.beam_width),
        "--patience", "0",
        *ATTENTIONS[attention],
    ]  # fmt: skip
    if args.data:
        flags += ["--data", args.data, "--source", source, "--target", target]
    if args.limit:
        flags += ["--max-train-samples", str(args.limit)]
    return flags + shlex.split(args.extra)


def load_splits(args, source, target):
    """The validation and test pairs the recipe evaluates on (its defaults)."""
    from zoo.data.parallel import load_parallel, split_corpus
    from zoo.demo.parallel import demo_corpus

    if not args.data:
        parts = split_corpus(demo_corpus(2400, seed=1234), (0.05, 0.05), seed=1234)
        return dict(zip(("train", "val", "test"), parts, strict=True))
    return load_parallel(args.data, source, target, max_words=80, seed=1234)


def latest_export(run_dir):
    from zoo.export.paths import latest_version_dir

    model_dir = os.path.join(run_dir, "export", "translation")
    version_dir = latest_version_dir(model_dir) if os.path.isdir(model_dir) else None
    if version_dir is None:
        raise SystemExit(f"no export of a trained model in {model_dir}")
    return version_dir


def exported_translator(version_dir):
    """The `Seq2SeqTranslator` of an export's `VERSION.keras` (its backbone when the
    file holds the translation task on raw text)."""
    import keras

    import zoo.models.translation  # noqa: F401  (registers the saved classes)

    model = keras.saving.load_model(version_dir + ".keras", compile=False)
    return getattr(model, "backbone", model)


def load_trained(args, run_dir):
    """`(model, preprocessor, decoding)` of the run's export; with `--decode-only`
    the weights of its best epoch (`best.keras`)."""
    import keras

    import zoo.fastpath.fused_adam  # noqa: F401  (the checkpoint's optimizer)
    from zoo.export import load_manifest
    from zoo.models.translation import Seq2SeqTranslatorPreprocessor
    from zoo.training import swap_weight_average

    version_dir = latest_export(run_dir)
    model = exported_translator(version_dir)
    if args.decode_only:
        checkpoint = os.path.join(run_dir, "best.keras")
        if not os.path.isfile(checkpoint):
            raise SystemExit(f"--decode-only: no trained model at {checkpoint}")
        checkpointed = keras.saving.load_model(checkpoint)  # the task that was fit
        if args.raw_weights:
            swap_weight_average(checkpointed)
        model.set_weights(checkpointed.get_weights())
    decoding = load_manifest(version_dir)["metadata"]["decoding"]["serving_default"]
    return model, Seq2SeqTranslatorPreprocessor.from_export(version_dir), decoding


def run_one(args, source, target, attention):
    """Trains and scores one (direction, attention) setting; returns result rows."""
    from zoo.models.translation.translator import Translator, evaluate_translations

    run_dir = os.path.join(args.run_dir, f"{source}-{target}-{attention}")
    # one vocabulary per direction, shared by the attention variants
    shared_vocab = os.path.join(args.run_dir, f"vocab-{source}-{target}")
    os.makedirs(run_dir, exist_ok=True)
    if os.path.isdir(shared_vocab):
        for name in os.listdir(shared_vocab):
            shutil.copy(os.path.join(shared_vocab, name), run_dir)
    tokens_per_second = train_seconds = train_pairs = None
    if not args.decode_only:
        flags = recipe_flags(args, source, target, attention, run_dir)
        subprocess.run(
            [sys.executable, "-m", "zoo.recipes.translation", *flags], check=True
        )
        with open(os.path.join(run_dir, "reports", "metrics.json")) as f:
            trained = json.load(f)
        tokens_per_second = trained["train_tokens_per_second"]
        train_seconds = round(trained["train_seconds"], 1)
        train_pairs = trained["train_pairs"]
    if not os.path.isdir(shared_vocab):
        os.makedirs(shared_vocab)
        for name in os.listdir(run_dir):
            if name.startswith("vocab."):
                shutil.copy(os.path.join(run_dir, name), shared_vocab)
    model, preprocessor, decoding = load_trained(args, run_dir)
    search = {
        "alpha": decoding["length_penalty_alpha"],
        "beta": decoding["coverage_penalty_beta"],
        "length_a": decoding["length_a"],
        "length_b": decoding["length_b"],
    }
    splits = load_splits(args, source, target)
    test = splits["test"]
    if args.eval_limit:
        test = test.take(args.eval_limit)
    common = {
        "direction": f"{source}->{target}",
        "attention": attention,
        "weights": (
            ("best validation epoch" if args.decode_only else "last epoch")
            + (", raw (not averaged)" if args.raw_weights else "")
        ),
        "train_tokens_per_second": (
            round(tokens_per_second) if tokens_per_second else None
        ),
        "train_seconds": train_seconds,
        "test_pairs": len(test),
        "train_pairs": train_pairs,
        "epochs": args.epochs,
        "units": args.units,
        "vocab": [preprocessor.source_vocab_size, preprocessor.target_vocab_size],
    }

    def translator(width, **settings):
        return Translator(model, preprocessor, width, **{**search, **settings})

    searches = [
        ("greedy", translator(1)),
        (f"beam{args.beam_width}", translator(args.beam_width)),
    ]
    if args.tune_decoding:
        width, alpha, beta = tune_decoding(args, translator, splits["val"])
        searches.append(
            (
                f"beam{width}-alpha{alpha}-beta{beta}-tuned",
                translator(width, alpha=alpha, beta=beta),
            )
        )
    rows = []
    for name, translate in searches:
        scores, _ = evaluate_translations(
            translate, test.sources, test.targets, target if args.data else None
        )
        hyps = scores["hypotheses"]
        hyp_file = os.path.join(run_dir, f"hypotheses.{name}.{target}.txt")
        with open(hyp_file, "w", encoding="utf-8") as f:
            f.writelines(h.replace("\n", " ") + "\n" for h in hyps)
        rows.append(
            {
                **common,
                "search": name,
                "bleu": round(scores["bleu"], 2),
                "bleu_signature": scores["bleu_signature"],
                "bleu_lowercase": round(scores["bleu_lowercase"], 2),
                "bleu_lowercase_signature": scores["bleu_lowercase_signature"],
                "bleu_moses_lowercase": (
                    round(scores["bleu_moses_lowercase"], 2)
                    if "bleu_moses_lowercase" in scores
                    else None
                ),
                "bleu_moses_lowercase_signature": scores.get(
                    "bleu_moses_lowercase_signature"
                ),
                "hypotheses_file": hyp_file,
                "by_length": bucket_bleu(test.sources, hyps, test.targets),
                "decode_sentences_per_second": round(scores["sentences_per_second"], 1),
                "example": {"source": test.sources[0], "hypothesis": hyps[0]},
            }
        )
        print(json.dumps(rows[-1], ensure_ascii=False))
    return rows


def tune_decoding(args, translator, val):
    """The `(beam width, alpha, beta)` of `args.tune_grid` with the best cased BLEU
    on the validation split (ties: the earlier setting of the grid).

    `translator(width, alpha=, beta=)` makes the string-batch function of a setting.
    """
    from zoo.models.translation.validation_bleu import choose_on_validation

    searches = {
        (width, alpha, beta): translator(width, alpha=alpha, beta=beta)
        for width, alpha, beta in args.tune_grid
    }
    best, _ = choose_on_validation(
        searches,
        val.sources,
        val.targets,
        log=lambda line: print(f"[tune] {line}"),
        name=lambda s: f"beam {s[0]}, alpha {s[1]}, beta {s[2]}",
    )
    print(f"[tune] chosen: beam {best[0]}, alpha {best[1]}, beta {best[2]}")
    return best


def _or(value, missing):
    return missing if value is None else value


def markdown(rows):
    head = (
        "| direction | attention | search | BLEU (cased, detok) | BLEU (lowercased) "
        "| BLEU (lowercased, Moses tok.) | BLEU by source length | train tok/s "
        "| decode sent/s |\n"
        "|---|---|---|---|---|---|---|---|---|"
    )
    lines = [head]
    for r in rows:
        buckets = ", ".join(
            f"{k}: {v['bleu']}" for k, v in r["by_length"].items() if v is not None
        )
        lines.append(
            f"| {r['direction']} | {r['attention']} | {r['search']} | {r['bleu']} "
            f"| {r['bleu_lowercase']} | {_or(r['bleu_moses_lowercase'], '-')} "
            f"| {buckets} | {_or(r['train_tokens_per_second'], 'n/a')} "
            f"| {r['decode_sentences_per_second']} |"
        )
    return "\n".join(lines)


def main(argv=None):
    args = parse_args(argv)
    start = time.time()
    rows = []
    for direction in args.directions.split(","):
        source, target = direction.split("-")
        for attention in args.attentions.split(","):
            if attention not in ATTENTIONS:
                raise ValueError(
                    f"Unknown attention variant. Received: attention={attention!r}; "
                    f"choose from {sorted(ATTENTIONS)}"
                )
            rows.extend(run_one(args, source, target, attention))
    wall = time.time() - start
    table = markdown(rows)
    print(table)
    print(f"wall time {wall:.0f} s on {platform.processor() or platform.machine()}")
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(
            {"args": vars(args), "rows": rows, "wall_seconds": wall},
            f,
            indent=2,
            ensure_ascii=False,
        )
    return rows


if __name__ == "__main__":
    main()
