"""Training speed against the peer, measured side by side on the same machine.

The peer is the TensorFlow tutorial "Neural machine translation with attention"
(tensorflow/text, `docs/tutorials/nmt_with_attention.ipynb`) as written, in Keras 3:

- text: its `tf_lower_and_split_punct` standardization (NFKD, lowercase, ASCII
  `a-z` and `.?!,¿` kept, punctuation split off, `[START]`/`[END]` added to both
  sides), one `TextVectorization` per language with `max_tokens=5000`
  (`max_vocab_size`) adapted to the training text, `ragged=True`;
- batches: the pairs shuffled (a buffer of the whole training set, reshuffled each
  pass) and batched by 64 as strings, then vectorized per batch, so every batch is
  padded to its own longest sentence (`.to_tensor()`, no length cut): the context
  to its longest source with `[START]`/`[END]`, `target_in`/`target_out` to the
  longest target with one of them;
- model (`UNITS = 256`, embeddings of the same width): an embedding and a
  bidirectional GRU encoder (directions summed), a GRU decoder, one-head
  cross-attention after the decoder RNN (`MultiHeadAttention(key_dim=units)`,
  residual and layer norm), a `Dense` output over the vocabulary; both GRUs with
  `recurrent_initializer="glorot_uniform"`, every other initializer Keras'
  default, as in the tutorial; padding masked (`mask_zero=True`);
- training: Adam with Keras' defaults, the tutorial's `masked_loss` (mean
  cross-entropy over non-padding targets) and `masked_acc`/`masked_loss` metrics;
  `fit_tutorial` runs its schedule: epochs of 100 steps over the repeated data, at
  most 100 of them, 20 validation batches after each and
  `EarlyStopping(patience=3)` on the validation loss (last weights kept);
- translation: its greedy `translate` (an eager Python loop, at most 50 tokens,
  stopping when every row has produced `[END]`), the words joined by spaces.

Where the peer departs from the tutorial (only where the benchmark needs it):
- the data are the benchmark's splits (`zoo.data.parallel.load_parallel`: the
  corpus's own train/validation/test files, training pairs of more than 80 words
  left out), the same pairs the zoo trains on, instead of the tutorial's random
  80/20 split of the Anki file;
- `letters="unicode"` (used by `bench.translation_time`, which scores the output)
  standardizes with NFKC and keeps every letter (`\\pL`, lowercased with UTF-8
  case folding) instead of NFKD and ASCII `a-z`, which drops umlauts, `ß` and
  Vietnamese letters: the peer a user would write for a language other than
  English or Spanish, and output whose letters match the references; the speed
  comparison below keeps the tutorial's ASCII standardization;
- this speed comparison trains `--epochs` full passes over the training pairs,
  without validation or early stopping, so that both systems train on the same
  pairs (`bench.translation_time` runs the tutorial's schedule);
- the model is a Functional model of the same layers (the tutorial subclasses
  `keras.Model`), so `peer_greedy` runs the same layers one step at a time.

The zoo's side is `zoo.recipes.translation`'s Bahdanau model at the same width
(length-bucketed batches, subword vocabularies), trained by the recipe in its own
process. Both train for `--epochs` on the same training pairs, one after the other
(the zoo's in a child process), and both are timed by the same meter
(`zoo.training.Throughput`: from the end of an epoch's first batch to the end of
its last, validation excluded). The tokenizers differ, so "target tokens" are not
the same unit (the peer's are words and punctuation, the zoo's subwords); the
comparison that does not depend on the tokenizer is sentence pairs per second,
printed beside tokens per second.

`--order` names the models and their order: `peer`, `zoo` (float32) and `zoo-bf16`
(the same model trained with `--training-logits-dtype bfloat16`: the logits product
of training steps in bfloat16, everything else float32; the peer trains in
float32).

    python -m bench.translation_peer --data ../shared/data/multi30k --epochs 1
    python -m bench.translation_peer --data ../shared/data/multi30k --epochs 1 \\
        --order peer,zoo,zoo-bf16
"""

import argparse
import json
import platform
import time

PEER_VOCABULARY = 5000  # the tutorial's max_vocab_size
PEER_BATCH = 64  # BATCH_SIZE
PEER_UNITS = 256  # UNITS
PEER_MAX_OUTPUT = 50  # translate(max_length=50)
MODELS = ("peer", "zoo", "zoo-bf16")
PADDING = "each batch to its longest sentence"
PRECISION = "raw weights (no averaging), float32 throughout"
"""What the peer's numbers are, printed beside every comparison."""


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.translation_peer")
    parser.add_argument("--data", required=True, help="Multi30k folder or Anki TSV")
    parser.add_argument("--source", default="de")
    parser.add_argument("--target", default="en")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--units", type=int, default=PEER_UNITS)
    parser.add_argument("--limit", type=int, default=None, help="training pairs")
    parser.add_argument(
        "--order",
        default="peer,zoo",
        help=f"models to train, in this order (from {', '.join(MODELS)}; the peer "
        "and at least one zoo model)",
    )
    parser.add_argument(
        "--decode",
        action="store_true",
        help="also time the peer's greedy decoding of the test set (the tutorial's "
        "eager loop, batches of 64 in test order)",
    )
    parser.add_argument("--run-dir", default="runs/bench_translation_peer")
    parser.add_argument("--out", default="reports/bench_translation_peer.json")
    args = parser.parse_args(argv)
    if args.epochs < 1:
        parser.error(f"--epochs must be >= 1. Received: {args.epochs}")
    order = args.order.split(",")
    if (
        len(set(order)) != len(order)
        or not set(order) <= set(MODELS)
        or "peer" not in order
        or len(order) < 2
    ):
        parser.error(
            f"--order must name the peer and one or more of zoo, zoo-bf16, each "
            f"once. Received: {order}"
        )
    return args


def standardize(text, letters="ascii"):
    """The tutorial's `tf_lower_and_split_punct`.

    `letters="unicode"` keeps every letter (NFKC, lowercased with UTF-8 case
    folding) instead of the tutorial's ASCII `a-z` after NFKD, which drops accents
    and umlauts: the peer a user would write for a language other than English or
    Spanish."""
    import tensorflow as tf
    import tensorflow_text as tf_text

    if letters == "unicode":
        text = tf.strings.lower(tf_text.normalize_utf8(text, "NFKC"), encoding="utf-8")
        text = tf.strings.regex_replace(text, r"[^ \pL.?!,¿]", "")
    elif letters == "ascii":
        text = tf_text.normalize_utf8(text, "NFKD")
        text = tf.strings.lower(text)
        text = tf.strings.regex_replace(text, "[^ a-z.?!,¿]", "")
    else:
        raise ValueError(
            f"`letters` must be 'ascii' or 'unicode'. Received: letters={letters!r}"
        )
    text = tf.strings.regex_replace(text, "[.?!,¿]", r" \0 ")
    text = tf.strings.strip(text)
    return tf.strings.join(["[START]", text, "[END]"], separator=" ")


def build_peer(source_vocab, target_vocab, units):
    """The tutorial's encoder / GRU decoder / cross-attention, on inputs of any
    length (each batch is padded to its own longest sentence).

    Returns:
        `(model, layers)`: the Functional training model (teacher forcing) and its
        layers by name, which `peer_greedy` runs one step at a time.
    """
    import keras

    layers = {
        "source_embedding": keras.layers.Embedding(source_vocab, units, mask_zero=True),
        "encoder": keras.layers.Bidirectional(
            keras.layers.GRU(
                units,
                return_sequences=True,
                recurrent_initializer="glorot_uniform",
            ),
            merge_mode="sum",
        ),
        "target_embedding": keras.layers.Embedding(target_vocab, units, mask_zero=True),
        "rnn": keras.layers.GRU(
            units,
            return_sequences=True,
            return_state=True,
            recurrent_initializer="glorot_uniform",
        ),
        "attention": keras.layers.MultiHeadAttention(num_heads=1, key_dim=units),
        "add": keras.layers.Add(),
        "norm": keras.layers.LayerNormalization(),
        "output": keras.layers.Dense(target_vocab),
    }
    context = keras.Input((None,), dtype="int32", name="context")
    target_in = keras.Input((None,), dtype="int32", name="target_in")
    x = layers["encoder"](layers["source_embedding"](context))
    y, _ = layers["rnn"](layers["target_embedding"](target_in))
    attended = layers["attention"](query=y, value=x)
    y = layers["norm"](layers["add"]([y, attended]))
    logits = layers["output"](y)
    return keras.Model([context, target_in], logits, name="peer"), layers


def peer_greedy(layers, context_ids, start_id, end_id, max_length=PEER_MAX_OUTPUT):
    """The tutorial's greedy `translate`: an eager Python loop, one token per step,
    stopping when every row has produced `[END]`. Returns `(B, T)` token ids."""
    from keras import ops

    context_ids = ops.convert_to_tensor(context_ids, "int32")
    source_mask = ops.not_equal(context_ids, 0)
    memory = layers["encoder"](
        layers["source_embedding"](context_ids), mask=source_mask
    )
    batch = ops.shape(context_ids)[0]
    token = ops.full((batch, 1), start_id, "int32")
    done = ops.zeros((batch,), "bool")
    state, tokens = None, []
    for _ in range(max_length):
        y, state = layers["rnn"](layers["target_embedding"](token), initial_state=state)
        attended = layers["attention"](query=y, value=memory, value_mask=source_mask)
        logits = layers["output"](layers["norm"](layers["add"]([y, attended])))
        token = ops.cast(ops.argmax(logits, axis=-1), "int32")  # (B, 1)
        tokens.append(ops.where(done[:, None], 0, token))
        done = ops.logical_or(done, ops.equal(token[:, 0], end_id))
        if bool(ops.all(done)):
            break
    return ops.concatenate(tokens, axis=1)


def peer_loss(y_true, y_pred):
    """The tutorial's `masked_loss`: mean cross-entropy over non-padding targets."""
    from keras import ops

    loss = ops.sparse_categorical_crossentropy(y_true, y_pred, from_logits=True)
    mask = ops.cast(ops.not_equal(y_true, 0), loss.dtype)
    return ops.sum(loss * mask) / ops.sum(mask)


def peer_accuracy(y_true, y_pred):
    """The tutorial's `masked_acc` as written: argmax matches divided by the
    non-padding targets (matches on padding, an argmax of 0, count too). A metric
    only: it does not change training."""
    from keras import ops

    predicted = ops.cast(ops.argmax(y_pred, axis=-1), y_true.dtype)
    match = ops.cast(ops.equal(y_true, predicted), "float32")
    mask = ops.cast(ops.not_equal(y_true, 0), "float32")
    return ops.sum(match) / ops.sum(mask)


def peer_batches(vectorizers, sources, targets, batch_size=PEER_BATCH, seed=None):
    """The tutorial's `train_raw.map(process_text)`: string pairs shuffled (a buffer
    of all of them, reshuffled each pass) and batched, then vectorized batch by
    batch, so each batch is padded to its own longest sentence.

    Returns:
        A `tf.data.Dataset` of `((context, target_in), target_out)` int64 batches.
    """
    import tensorflow as tf

    def process_text(context, target):  # the tutorial's, unchanged
        context = vectorizers[0](context).to_tensor()
        target = vectorizers[1](target)
        target_in = target[:, :-1].to_tensor()
        target_out = target[:, 1:].to_tensor()
        return (context, target_in), target_out

    return (
        tf.data.Dataset.from_tensor_slices((list(sources), list(targets)))
        .shuffle(len(sources), seed=seed)
        .batch(batch_size)
        .map(process_text, tf.data.AUTOTUNE)
    )


def prepare_peer(
    train, units=PEER_UNITS, letters="ascii", seed=0, val=None, batch_size=PEER_BATCH
):
    """The peer for the training pairs `train`: its vectorizers adapted to them, its
    training (and with `val`, validation) batches and its compiled model.

    Returns:
        A namespace: `vectorizers` (source, target `TextVectorization`), `dataset`
        (one shuffled pass), `validation` (or None), `tokens` (real target tokens
        per pass), `batches` (per pass), `model`, `layers` (`build_peer`).
    """
    import functools
    import math
    import types

    import keras
    import tensorflow as tf

    vectorizers = []
    for texts in (train.sources, train.targets):
        layer = keras.layers.TextVectorization(
            max_tokens=PEER_VOCABULARY,
            standardize=functools.partial(standardize, letters=letters),
            ragged=True,
        )
        layer.adapt(tf.data.Dataset.from_tensor_slices(list(texts)).batch(512))
        vectorizers.append(layer)
    dataset = peer_batches(
        vectorizers, train.sources, train.targets, batch_size, seed=seed
    )
    validation = None
    if val is not None:
        validation = peer_batches(
            vectorizers, val.sources, val.targets, batch_size, seed=seed
        )
    lengths = vectorizers[1](tf.constant(list(train.targets))).row_lengths()
    tokens = int(tf.reduce_sum(lengths - 1))  # target_out: [END], no [START]
    model, layers = build_peer(
        vectorizers[0].vocabulary_size(), vectorizers[1].vocabulary_size(), units
    )
    model.compile(optimizer="adam", loss=peer_loss, metrics=[peer_accuracy, peer_loss])
    return types.SimpleNamespace(
        vectorizers=vectorizers,
        dataset=dataset,
        validation=validation,
        tokens=tokens,
        batches=math.ceil(len(train.sources) / batch_size),
        model=model,
        layers=layers,
    )


TUTORIAL_FIT = dict(epochs=100, steps_per_epoch=100, validation_steps=20)
"""The tutorial's `model.fit` schedule (with `EarlyStopping(patience=3)`)."""


def fit_tutorial(peer, callbacks=(), verbose=2, **schedule):
    """The tutorial's `model.fit`: `train_ds.repeat()`, 100 epochs of 100 steps,
    20 validation batches after each, `EarlyStopping(patience=3)` on the
    validation loss. `schedule` overrides `TUTORIAL_FIT` (for tests).

    Returns:
        The `History`.
    """
    import keras

    if peer.validation is None:
        raise ValueError(
            "The tutorial's schedule validates: build the peer with `val`."
        )
    settings = {**TUTORIAL_FIT, **schedule}
    return peer.model.fit(
        peer.dataset.repeat(),
        validation_data=peer.validation,
        callbacks=[keras.callbacks.EarlyStopping(patience=3), *callbacks],
        verbose=verbose,
        **settings,
    )


def peer_translate(peer, texts, batch_size=PEER_BATCH):
    """The peer's greedy translations of `texts` (in their order, by batches as
    the tutorial's `translate` takes them) as words joined by spaces."""
    import numpy as np
    import tensorflow as tf

    vocabulary = peer.vectorizers[1].get_vocabulary()
    start_id, end_id = vocabulary.index("[START]"), vocabulary.index("[END]")
    out = []
    for i in range(0, len(texts), batch_size):
        ids = peer.vectorizers[0](tf.constant(list(texts[i : i + batch_size])))
        tokens = np.asarray(peer_greedy(peer.layers, ids.to_tensor(), start_id, end_id))
        for row in tokens:
            words = []
            for t in row:
                if t == end_id:
                    break
                if t > 0:
                    words.append(vocabulary[t])
            out.append(" ".join(words))
    return out


def run_peer(args, splits):
    import numpy as np

    from zoo.training import Throughput

    train = splits["train"]
    peer = prepare_peer(train, args.units)
    meter = Throughput(peer.tokens, peer.batches)
    peer.model.fit(peer.dataset, epochs=args.epochs, callbacks=[meter], verbose=2)
    row = speed("peer", meter.rates, peer.tokens, len(train.sources), PADDING)
    row["precision"] = PRECISION
    if args.decode:
        test = splits["test"].sources
        peer_translate(peer, test[:64])  # warm-up
        begin = time.time()
        lengths = [len(t.split()) for t in peer_translate(peer, test)]
        seconds = time.time() - begin
        row["greedy_sentences_per_second"] = round(len(test) / seconds, 1)
        row["greedy_mean_output_tokens"] = round(float(np.mean(lengths)), 2)
    return row


def run_zoo(args, name="zoo"):
    """Trains `zoo.recipes.translation`'s model in its own process; its per-epoch rates
    come back in the recipe's `metrics.json`."""
    import os
    import subprocess
    import sys

    run_dir = os.path.join(args.run_dir, name)
    units = str(args.units)
    flags = [
        "--data", args.data,
        "--source", args.source,
        "--target", args.target,
        "--run-dir", run_dir,
        "--report-dir", os.path.join(run_dir, "reports"),
        "--epochs", str(args.epochs),
        "--embedding-dim", units,
        "--encoder-units", units,
        "--decoder-units", units,
        "--patience", "0",
        "--no-export",
        "--training-logits-dtype", "bfloat16" if name == "zoo-bf16" else "float32",
    ]  # fmt: skip
    if args.limit:
        flags += ["--max-train-samples", str(args.limit)]
    subprocess.run(
        [sys.executable, "-m", "zoo.recipes.translation", *flags], check=True
    )
    with open(os.path.join(run_dir, "reports", "metrics.json")) as f:
        metrics = json.load(f)
    row = speed(
        name,
        metrics["train_tokens_per_second_by_epoch"],
        metrics["train_target_tokens"],
        metrics["train_pairs"],
        "length buckets",
    )
    row["precision"] = zoo_precision(run_dir, metrics)
    return row


def zoo_precision(run_dir, metrics):
    """What the zoo's weights and steps are, from its run: weight-averaged or raw
    (`--ema`, in the run's `run.json`), and the dtype of the logits product of its
    training steps (`training_logits_dtype` of its `metrics.json`)."""
    import os

    ema = None
    try:
        with open(os.path.join(run_dir, "run.json"), encoding="utf-8") as f:
            ema = json.load(f)["identity"]["training"]["ema"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    if ema is None:
        weights = "weights averaged or not (the run's record is unreadable)"
    elif ema:
        weights = f"weight-averaged snapshots (ema {ema})"
    else:
        weights = "raw weights (no averaging)"
    dtype = metrics.get("training_logits_dtype") or "float32"
    return f"{weights}, training logits product in {dtype}"


def speed(name, rates, tokens, pairs, padding):
    """Per-epoch rates; pairs/s is tokens/s scaled by pairs per token (same meter).
    With no complete epoch (`rates` empty) the medians are None. `padding` says
    how the batches are padded."""
    import numpy as np

    median = float(np.median(rates)) if len(rates) else None
    return {
        "model": name,
        "target_tokens_per_epoch": tokens,
        "target_tokens_per_pair": round(tokens / pairs, 2),
        "padding": padding,
        "tokens_per_second": [round(r) for r in rates],
        "median_tokens_per_second": None if median is None else round(median),
        "median_pairs_per_second": (
            None if median is None else round(median * pairs / tokens, 1)
        ),
    }


def main(argv=None):
    args = parse_args(argv)
    import os

    import numpy as np

    from zoo.data.parallel import load_parallel

    splits = load_parallel(args.data, args.source, args.target, max_words=80)
    if args.limit and len(splits["train"]) > args.limit:
        # the recipe's --max-train-samples: a sample seeded with its --seed
        order = np.random.default_rng(1234).permutation(len(splits["train"]))
        splits["train"] = splits["train"].subset(sorted(order[: args.limit].tolist()))
    rows = {}
    for name in args.order.split(","):
        start = time.strftime("%H:%M:%S")
        if name == "peer":
            rows[name] = run_peer(args, splits)
        else:
            rows[name] = run_zoo(args, name)
        rows[name]["started"] = start
        print(json.dumps(rows[name]), flush=True)
    ratios = {
        name: {
            key: round(
                row[f"median_{key}_per_second"]
                / max(rows["peer"][f"median_{key}_per_second"], 1e-9),
                3,
            )
            for key in ("pairs", "tokens")
        }
        for name, row in rows.items()
        if name != "peer"
    }
    print(
        "| model | target tokens/pair | tokens/s | pairs/s |\n|---|---|---|---|\n"
        + "\n".join(
            f"| {r['model']} | {r['target_tokens_per_pair']} | "
            f"{r['median_tokens_per_second']:,} | {r['median_pairs_per_second']} |"
            for r in rows.values()
        )
    )
    for name, ratio in ratios.items():
        print(
            f"{name} / peer: {ratio['pairs']:.2f}x pairs/s, "
            f"{ratio['tokens']:.2f}x tokens/s ({name}: {rows[name]['precision']}; "
            f"peer: {PRECISION})"
        )
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(
            {
                "rows": list(rows.values()),
                "ratios_to_peer": ratios,
                "machine": platform.processor() or platform.machine(),
                "cpus": os.cpu_count(),
                "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                "args": vars(args),
            },
            f,
            indent=1,
        )


if __name__ == "__main__":
    main()
