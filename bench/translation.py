"""Translation benchmark: BLEU (cased and lowercased), by source length, and speed.

For each direction and attention variant: train `recipes.translation`'s model with
length-bucketed batches, then decode the test set greedily and with beam search and
report

- BLEU with sacrebleu on detokenized, cased output (13a), on lowercased output, and
  on lowercased Moses-tokenized output (`zoo.metrics.moses_bleu`, the scoring of the
  published Multi30k numbers),
- BLEU by source length bucket (words: 1-10, 11-15, 16-20, 21+), as in Bahdanau et
  al.'s Figure 2,
- training target tokens per second (real tokens, padding excluded) and decoding
  sentences per second (in-graph greedy and beam search, batches of 64 sources of
  similar length, as `recipes.translation.translate_corpus` forms them).

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
import dataclasses
import json
import os
import pathlib
import platform
import shutil
import time

ATTENTIONS = {
    "bahdanau": ["--attention", "bahdanau"],
    "luong-general-local-p": [
        "--attention",
        "luong",
        "--score",
        "general",
        "--window",
        "local-p",
    ],
    "luong-general": ["--attention", "luong", "--score", "general"],
    "none": ["--attention", "none"],
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
        "in --run-dir (train tok/s then reads as n/a)",
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


def run_one(args, source, target, attention):
    """Trains and scores one (direction, attention) setting; returns result rows."""
    import recipes.translation as recipe
    from zoo.training import set_seed, swap_weight_average

    run_dir = os.path.join(args.run_dir, f"{source}-{target}-{attention}")
    units = str(args.units)
    argv = [
        "--run-dir", run_dir,
        "--epochs", str(args.epochs),
        "--batch-size", str(args.batch_size),
        "--embedding-dim", units,
        "--encoder-units", units,
        "--decoder-units", units,
        "--vocab-size", str(args.vocab_size),
        "--beam-width", str(args.beam_width),
        "--patience", "0",
        "--no-export",
        *ATTENTIONS[attention],
        *args.extra.split(),
    ]  # fmt: skip
    if args.data:
        argv += ["--data", args.data, "--source", source, "--target", target]
    if args.limit:
        argv += ["--limit", str(args.limit)]
    config = recipe.parse_config(argv)
    set_seed(config.training.seed)
    splits = recipe.load_splits(config)
    # one vocabulary per direction, shared by the attention variants
    shared_vocab = os.path.join(args.run_dir, f"vocab-{source}-{target}")
    os.makedirs(run_dir, exist_ok=True)
    if os.path.isdir(shared_vocab):
        for name in os.listdir(shared_vocab):
            shutil.copy(os.path.join(shared_vocab, name), run_dir)
    data = recipe.build_datasets(config, splits)
    if not os.path.isdir(shared_vocab):
        os.makedirs(shared_vocab)
        for name in os.listdir(run_dir):
            if name.startswith("vocab."):
                shutil.copy(os.path.join(run_dir, name), shared_vocab)
    if args.decode_only:
        import keras

        checkpoint = os.path.join(run_dir, "best.keras")
        if not os.path.isfile(checkpoint):
            raise SystemExit(f"--decode-only: no trained model at {checkpoint}")
        checkpointed = keras.saving.load_model(checkpoint)
        if args.raw_weights:
            swap_weight_average(checkpointed)
        # the checkpoint is the training view (logits only): its weights go into
        # the translator the flags describe
        model = recipe.build_model(
            config,
            data["preprocessor"].source_vocab_size,
            data["preprocessor"].target_vocab_size,
        )
        model.set_weights(checkpointed.get_weights())
        tokens_per_second = train_seconds = None
    else:
        model = recipe.build_model(
            config,
            data["preprocessor"].source_vocab_size,
            data["preprocessor"].target_vocab_size,
        )
        start = time.time()
        _, tokens_per_second = recipe.train(config, model, data)
        train_seconds = round(time.time() - start, 1)
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
        "train_pairs": len(splits["train"]),
        "epochs": args.epochs,
        "units": args.units,
        "vocab": [
            data["preprocessor"].source_vocab_size,
            data["preprocessor"].target_vocab_size,
        ],
    }
    module = recipe.make_serving_module(model, data["preprocessor"], config)
    searches = [
        ("greedy", module.translate_greedy),
        (f"beam{args.beam_width}", module.serve),
    ]
    if args.tune_decoding:
        width, alpha, beta = tune_decoding(
            args, recipe, model, data, config, splits["val"]
        )
        tuned = recipe.make_serving_module(
            model,
            data["preprocessor"],
            dataclasses.replace(config, beam_width=width, alpha=alpha, beta=beta),
        )
        searches.append(
            (
                f"beam{width}-alpha{alpha}-beta{beta}-tuned",
                tuned.serve if width > 1 else tuned.translate_greedy,
            )
        )
    rows = []
    for search, fn in searches:
        recipe.translate_corpus(fn, test.sources[:2])  # trace outside the timing
        start = time.time()
        outputs = recipe.translate_corpus(fn, test.sources)
        seconds = time.time() - start
        hyps = [recipe.as_text(o["translation"]) for o in outputs]
        scores = recipe.bleu_scores(hyps, test.targets, target if args.data else None)
        hyp_file = os.path.join(run_dir, f"hypotheses.{search}.{target}.txt")
        with open(hyp_file, "w", encoding="utf-8") as f:
            f.writelines(h.replace("\n", " ") + "\n" for h in hyps)
        rows.append(
            {
                **common,
                "search": search,
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
                "decode_sentences_per_second": round(len(test) / seconds, 1),
                "example": {"source": test.sources[0], "hypothesis": hyps[0]},
            }
        )
        print(json.dumps(rows[-1], ensure_ascii=False))
    return rows


def tune_decoding(args, recipe, model, data, config, val):
    """The `(beam width, alpha, beta)` of `args.tune_grid` with the best cased BLEU
    on the validation split (ties: the earlier setting of the grid)."""
    best = None
    for width, alpha, beta in args.tune_grid:
        setting = dataclasses.replace(config, beam_width=width, alpha=alpha, beta=beta)
        module = recipe.make_serving_module(model, data["preprocessor"], setting)
        fn = module.serve if width > 1 else module.translate_greedy
        outputs = recipe.translate_corpus(fn, val.sources)
        hyps = [recipe.as_text(o["translation"]) for o in outputs]
        bleu = recipe.bleu_scores(hyps, val.targets)["bleu"]
        print(
            f"[tune] validation BLEU {bleu:.2f}: beam {width}, alpha {alpha}, "
            f"beta {beta}"
        )
        if best is None or bleu > best[0]:
            best = (bleu, (width, alpha, beta))
    print(f"[tune] chosen: beam {best[1][0]}, alpha {best[1][1]}, beta {best[1][2]}")
    return best[1]


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
