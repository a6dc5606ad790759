"""Training-step time of the translation recipe's model, on fixed real batches.

Builds `recipes.translation`'s model and its length-bucketed training batches, takes
the first `--batches` of them, runs one untimed pass over them (tracing, one function
per batch shape), then times `--rounds` passes of the compiled training step over the
same batches (weights keep training: each pass is real work). No validation, no
callbacks, no input pipeline: this isolates the training step, the part the code of
`zoo.layers` and `zoo.optimizers` decides. A/B comparisons of two versions of the code
alternate runs of this script, since the machine's speed drifts between minutes.

    python -m bench.translation_step --data ../shared/data/multi30k
    python -m bench.translation_step --data ../shared/data/multi30k \\
        --extra="--training-logits-dtype bfloat16"

Without `--data` it runs on the recipe's generated demo corpus (a smoke test).
"""

import argparse
import json
import shlex
import time


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.translation_step")
    parser.add_argument("--data", default=None, help="Multi30k folder or Anki TSV")
    parser.add_argument("--source", default="de")
    parser.add_argument("--target", default="en")
    parser.add_argument("--units", type=int, default=256)
    parser.add_argument("--batches", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--extra", default="", help="more flags for recipes.translation, one string"
    )
    args = parser.parse_args(argv)
    for name in ("units", "batches", "rounds"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be >= 1. Received: {getattr(args, name)}")
    return args


def main(argv=None):
    args = parse_args(argv)
    import numpy as np
    import tensorflow as tf

    from recipes import translation

    units = str(args.units)
    flags = ["--embedding-dim", units, "--encoder-units", units]
    flags += ["--decoder-units", units, "--epochs", "1"]
    if args.data is not None:
        flags += ["--data", args.data, "--source", args.source, "--target", args.target]
    config = translation.parse_config(flags + shlex.split(args.extra))
    translation.set_seed(config.training.seed)
    data = translation.build_datasets(config)
    model = translation.build_model(
        config,
        data["preprocessor"].source_vocab_size,
        data["preprocessor"].target_vocab_size,
    )
    batches = list(data["train"].take(args.batches))
    tokens = sum(
        int(tf.reduce_sum(tf.cast(labels > 0, tf.int32))) for _, labels in batches
    )
    trainer = model.training_model()
    trainer.make_train_function()
    step = trainer.train_function

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
