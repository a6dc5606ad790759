"""Training-step time of the translation model, on fixed real batches.

Builds the model `zoo.recipes.translation` trains with `--data` (the same defaults:
256 units, Luong general attention without input feeding, dropouts 0.4 and 0.2
(embeddings), label smoothing 0.1, the fused Adam at 2e-3 clipped at norm 5
with the weight average of momentum 0.999, batches of 64 over the length buckets of
`zoo.models.translation`), takes the first `--batches` training batches, runs one
untimed pass over them (tracing, one function per batch shape), then times `--rounds`
passes of the compiled training step over the same batches (weights keep training:
each pass is real work). No validation, no callbacks, no input pipeline: this
isolates the training step, the part the code of `zoo.layers` and `zoo.fastpath`
decides. A/B comparisons of two versions of the code alternate runs of this script,
since the machine's speed drifts between minutes.

    python -m bench.translation_step --data ../shared/data/multi30k
    python -m bench.translation_step --data ../shared/data/multi30k \\
        --training-logits-dtype bfloat16

Without `--data` it runs on the generated demo corpus (a smoke test). `--extra` takes
more of these flags as one string (`--extra="--training-logits-dtype bfloat16"`).
"""

import argparse
import json
import os
import shlex
import sys
import time


def parse_args(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = argparse.ArgumentParser(prog="python -m bench.translation_step")
    parser.add_argument("--data", default=None, help="parallel corpus (as the recipe)")
    parser.add_argument("--source", default="de", help="source language code")
    parser.add_argument("--target", default="en", help="target language code")
    parser.add_argument("--units", type=int, default=256, help="every layer's size")
    parser.add_argument("--batches", type=int, default=40, help="batches timed")
    parser.add_argument("--rounds", type=int, default=3, help="timed passes")
    parser.add_argument("--batch-size", type=int, default=64, help="pairs per batch")
    parser.add_argument("--vocab-size", type=int, default=8000, help="subwords")
    parser.add_argument(
        "--max-length", type=int, default=None, help="subwords kept (default: longest)"
    )
    parser.add_argument("--max-words", type=int, default=80, help="words per pair")
    parser.add_argument(
        "--attention", default="luong", choices=("bahdanau", "luong", "none")
    )
    parser.add_argument(
        "--input-feeding",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="Luong input feeding",
    )
    parser.add_argument("--rnn", default="gru", choices=("gru", "lstm"), help="cell")
    parser.add_argument("--dropout", type=float, default=0.4, help="model dropout")
    parser.add_argument("--embedding-dropout", type=float, default=0.2)
    parser.add_argument("--context-dropout", type=float, default=0.4)
    parser.add_argument(
        "--training-logits-dtype",
        default="auto",
        choices=("auto", "float32", "bfloat16"),
        help="auto: bfloat16 where the machine computes it fast (as the recipe)",
    )
    parser.add_argument(
        "--tie-embeddings", action=argparse.BooleanOptionalAction, default=True
    )
    parser.add_argument(
        "--readout",
        default="layer_norm",
        choices=("layer_norm", "tanh"),
        help="the decoder's readout",
    )
    parser.add_argument("--label-smoothing", type=float, default=0.1)
    parser.add_argument("--learning-rate", type=float, default=2e-3)
    parser.add_argument("--ema", type=float, default=0.999, help="0: no average")
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument(
        "--run-dir",
        default="runs/bench_translation_step",
        help="where the vocabularies are learned once and kept",
    )
    parser.add_argument("--extra", default="", help="more of these flags, one string")
    args = parser.parse_args(argv)
    if args.extra:
        args = parser.parse_args([*argv, *shlex.split(args.extra)])
    for name in ("units", "batches", "rounds", "batch_size", "vocab_size"):
        if getattr(args, name) < 1:
            flag = "--" + name.replace("_", "-")
            parser.error(f"{flag} must be >= 1. Received: {getattr(args, name)}")
    return args


def build(args):
    """`(task, training dataset)` as the recipe builds them for these flags: the
    compiled `Seq2SeqTextTranslator` (no preprocessor: the batches are encoded)."""
    from zoo.data.parallel import load_parallel, split_corpus
    from zoo.demo.parallel import demo_corpus
    from zoo.fastpath.precision import resolve_dtype
    from zoo.models.translation import (
        Seq2SeqTextTranslator,
        Seq2SeqTranslator,
        Seq2SeqTranslatorPreprocessor,
    )
    from zoo.models.translation.seq2seq_translator_preprocessor import (
        vocabulary_cache_key,
    )
    from zoo.models.translation.translation_dataset import translation_dataset
    from zoo.training import TrainingConfig, averaging, set_seed

    set_seed(args.seed)
    if args.data is None:
        languages = ("src", "tgt")
        train = split_corpus(demo_corpus(2400, args.seed), (0.05, 0.05), args.seed)[0]
    else:
        languages = (args.source, args.target)
        splits = load_parallel(args.data, *languages, args.max_words, seed=args.seed)
        train = splits["train"]
    tag = vocabulary_cache_key(
        args.data, *languages, args.vocab_size, False, None, args.max_words, args.seed
    )
    preprocessor = Seq2SeqTranslatorPreprocessor.from_corpus(
        train, args.run_dir, languages, args.vocab_size, False, args.max_length, tag
    )
    dataset = translation_dataset(
        train, preprocessor, args.batch_size, shuffle=True, seed=args.seed
    )
    model = Seq2SeqTranslator(
        preprocessor.source_vocab_size,
        preprocessor.target_vocab_size,
        embedding_dim=args.units,
        encoder_units=args.units,
        decoder_units=args.units,
        rnn=args.rnn,
        attention=args.attention,
        input_feeding=args.input_feeding,
        dropout=args.dropout,
        embedding_dropout=args.embedding_dropout,
        context_dropout=args.context_dropout,
        training_logits_dtype=resolve_dtype(args.training_logits_dtype)[0],
        tie_embeddings=args.tie_embeddings,
        readout=args.readout,
        name="seq2seq_translator",
    )
    training = TrainingConfig(learning_rate=args.learning_rate, ema=args.ema)
    task = Seq2SeqTextTranslator(model, compile=False)
    task.default_compile(
        args.learning_rate,
        label_smoothing=args.label_smoothing,
        jit_compile="auto",
        **averaging(training),
    )
    return task, dataset


def main(argv=None):
    args = parse_args(argv)
    import numpy as np
    import tensorflow as tf

    os.makedirs(args.run_dir, exist_ok=True)
    task, dataset = build(args)
    batches = list(dataset.take(args.batches))
    tokens = sum(
        int(tf.reduce_sum(tf.cast(labels > 0, tf.int32))) for _, labels in batches
    )
    task.make_train_function()
    step = task.train_function

    def one_pass():
        start = time.perf_counter()
        for batch in batches:
            logs = step(iter([batch]))
        loss = float(logs["loss"])  # waits for the last step
        return time.perf_counter() - start, loss

    one_pass()  # tracing
    seconds, losses = zip(*(one_pass() for _ in range(args.rounds)), strict=True)
    if not all(np.isfinite(losses)):
        raise FloatingPointError(f"non-finite training loss: {losses}")
    result = {
        "batches": len(batches),
        "target_tokens": tokens,
        "seconds": [round(s, 3) for s in seconds],
        "median_ms_per_step": round(1000 * float(np.median(seconds)) / len(batches), 1),
        "median_tokens_per_second": round(tokens / float(np.median(seconds))),
        "loss_after": round(losses[-1], 4),
        "extra": args.extra,
        "started": time.strftime("%H:%M:%S", time.gmtime(time.time() - sum(seconds))),
    }
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
