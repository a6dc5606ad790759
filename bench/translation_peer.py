"""Training speed against the peer, measured side by side on the same machine.

The peer is the TensorFlow NMT tutorial's model built from Keras built-ins: the
tutorial's text standardization (NFKD, lowercase, `.?!,` split off) and word
vocabularies of 10,000 (`TextVectorization`), every sequence padded to 40 tokens,
an embedding and bidirectional GRU encoder of 256 (directions summed), a GRU decoder
of 256, one-head cross-attention after the decoder RNN (`MultiHeadAttention`, residual
and layer norm), a softmax layer, batches of 64, Adam. The zoo's side is
`recipes.translation`'s Bahdanau model at the same width (length-bucketed batches,
subword vocabularies), trained by the recipe in its own process.

Both train for `--epochs` on the same training pairs, one after the other (the zoo's
in a child process), and both are timed by the same meter (`zoo.training.Throughput`:
from the end of an epoch's first batch to the end of its last, validation excluded). The tokenizers differ, so
"target tokens" are not the same unit (the peer's are words and punctuation, the
zoo's subwords); the comparison that does not depend on the tokenizer is sentence
pairs per second, printed beside tokens per second.

`--order` names the models and their order: `peer`, `zoo` (float32) and `zoo-bf16`
(the same model trained with `--training-logits-dtype bfloat16`: the logits product
of training steps in bfloat16, everything else float32; the peer has no such option
here and trains in float32).

    python -m bench.translation_peer --data ../shared/data/multi30k --epochs 1
    python -m bench.translation_peer --data ../shared/data/multi30k --epochs 1 \
        --order peer,zoo,zoo-bf16
"""

import argparse
import json
import platform
import time

PEER_LENGTH = 40
PEER_VOCABULARY = 10_000
MODELS = ("peer", "zoo", "zoo-bf16")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.translation_peer")
    parser.add_argument("--data", required=True, help="Multi30k folder or Anki TSV")
    parser.add_argument("--source", default="de")
    parser.add_argument("--target", default="en")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--units", type=int, default=256)
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

    `letters="unicode"` keeps every letter and digit (NFKC, lowercased) instead of
    the tutorial's ASCII `a-z` after NFKD, which drops accents and umlauts: the
    peer a user would write for a language other than English or Spanish."""
    import tensorflow as tf
    import tensorflow_text as tf_text

    if letters == "unicode":
        text = tf.strings.lower(tf_text.normalize_utf8(text, "NFKC"), encoding="utf-8")
        text = tf.strings.regex_replace(text, r"[^ \pL\pN.?!,¿]", "")
    else:
        text = tf_text.normalize_utf8(text, "NFKD")
        text = tf.strings.lower(text)
        text = tf.strings.regex_replace(text, "[^ a-z.?!,¿]", "")
    text = tf.strings.regex_replace(text, "[.?!,¿]", r" \0 ")
    text = tf.strings.strip(text)
    return tf.strings.join(["[START]", text, "[END]"], separator=" ")


def build_peer(source_vocab, target_vocab, units):
    """The tutorial's encoder / GRU decoder / cross-attention.

    Returns:
        `(model, layers)`: the Functional training model (teacher forcing) and its
        layers by name, which `peer_greedy` runs one step at a time.
    """
    import keras

    layers = {
        "source_embedding": keras.layers.Embedding(source_vocab, units, mask_zero=True),
        "encoder": keras.layers.Bidirectional(
            keras.layers.GRU(units, return_sequences=True), merge_mode="sum"
        ),
        "target_embedding": keras.layers.Embedding(target_vocab, units, mask_zero=True),
        "rnn": keras.layers.GRU(units, return_sequences=True, return_state=True),
        "attention": keras.layers.MultiHeadAttention(num_heads=1, key_dim=units),
        "add": keras.layers.Add(),
        "norm": keras.layers.LayerNormalization(),
        "output": keras.layers.Dense(target_vocab),
    }
    context = keras.Input((PEER_LENGTH,), dtype="int32", name="context")
    target_in = keras.Input((PEER_LENGTH - 1,), dtype="int32", name="target_in")
    x = layers["encoder"](layers["source_embedding"](context))
    y, _ = layers["rnn"](layers["target_embedding"](target_in))
    attended = layers["attention"](query=y, value=x)
    y = layers["norm"](layers["add"]([y, attended]))
    logits = layers["output"](y)
    return keras.Model([context, target_in], logits, name="peer"), layers


def peer_greedy(layers, context_ids, start_id, end_id, max_length=50):
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
    """The tutorial's masked loss: mean cross-entropy over non-padding targets."""
    from keras import ops

    loss = ops.sparse_categorical_crossentropy(y_true, y_pred, from_logits=True)
    mask = ops.cast(ops.not_equal(y_true, 0), loss.dtype)
    return ops.sum(loss * mask) / ops.maximum(ops.sum(mask), 1.0)


def prepare_peer(train, units, letters="ascii", seed=0):
    """The peer for the training pairs `train`: its vectorizers adapted to them, its
    shuffled training batches and its model.

    Returns:
        A namespace: `vectorizers` (source, target `TextVectorization`), `dataset`,
        `tokens` (real target tokens per epoch), `model`, `layers` (`build_peer`).
    """
    import functools
    import types

    import keras
    import tensorflow as tf

    vectorizers = []
    for texts in (train.sources, train.targets):
        layer = keras.layers.TextVectorization(
            max_tokens=PEER_VOCABULARY,
            standardize=functools.partial(standardize, letters=letters),
            output_sequence_length=PEER_LENGTH,
        )
        layer.adapt(tf.data.Dataset.from_tensor_slices(texts).batch(512))
        vectorizers.append(layer)
    source_ids = vectorizers[0](tf.constant(train.sources))
    target_ids = vectorizers[1](tf.constant(train.targets))
    ds = (
        tf.data.Dataset.from_tensor_slices(
            ((source_ids, target_ids[:, :-1]), target_ids[:, 1:])
        )
        .shuffle(len(train.sources), seed=seed)
        .batch(64)
        .prefetch(tf.data.AUTOTUNE)
    )
    tokens = int(tf.reduce_sum(tf.cast(target_ids[:, 1:] > 0, tf.int64)))
    model, layers = build_peer(
        vectorizers[0].vocabulary_size(), vectorizers[1].vocabulary_size(), units
    )
    model.compile(optimizer="adam", loss=peer_loss)
    return types.SimpleNamespace(
        vectorizers=vectorizers, dataset=ds, tokens=tokens, model=model, layers=layers
    )


def peer_translate(peer, texts, batch_size=64):
    """The peer's greedy translations of `texts` as words joined by spaces."""
    import numpy as np
    import tensorflow as tf

    vocabulary = peer.vectorizers[1].get_vocabulary()
    start_id, end_id = vocabulary.index("[START]"), vocabulary.index("[END]")
    ids = peer.vectorizers[0](tf.constant(texts))
    out = []
    for i in range(0, len(texts), batch_size):
        tokens = np.asarray(
            peer_greedy(peer.layers, ids[i : i + batch_size], start_id, end_id)
        )
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
    import tensorflow as tf

    from zoo.training import Throughput

    train = splits["train"]
    peer = prepare_peer(train, args.units)
    vectorizers, ds, tokens = peer.vectorizers, peer.dataset, peer.tokens
    model, layers = peer.model, peer.layers
    meter = Throughput(tokens)
    model.fit(ds, epochs=args.epochs, callbacks=[meter], verbose=2)
    row = speed("peer", meter.rates, tokens, len(train.sources), PEER_LENGTH)
    if args.decode:
        vocabulary = vectorizers[1].get_vocabulary()
        start_id, end_id = vocabulary.index("[START]"), vocabulary.index("[END]")
        test = splits["test"].sources
        test_ids = vectorizers[0](tf.constant(test))
        peer_greedy(layers, test_ids[:64], start_id, end_id)  # warm-up
        begin, lengths = time.time(), []
        for i in range(0, len(test), 64):  # test order, as the tutorial translates
            out = peer_greedy(layers, test_ids[i : i + 64], start_id, end_id)
            lengths.extend((np.asarray(out) > 0).sum(axis=1).tolist())
        seconds = time.time() - begin
        row["greedy_sentences_per_second"] = round(len(test) / seconds, 1)
        row["greedy_mean_output_tokens"] = round(float(np.mean(lengths)), 2)
    return row


def run_zoo(args, name="zoo"):
    """Trains `recipes.translation`'s model in its own process; its per-epoch rates
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
    subprocess.run([sys.executable, "-m", "recipes.translation", *flags], check=True)
    with open(os.path.join(run_dir, "reports", "metrics.json")) as f:
        metrics = json.load(f)
    return speed(
        name,
        metrics["train_tokens_per_second_by_epoch"],
        metrics["train_target_tokens"],
        metrics["train_pairs"],
        None,
    )


def speed(name, rates, tokens, pairs, padded_to):
    """Per-epoch rates; pairs/s is tokens/s scaled by pairs per token (same meter).
    With no complete epoch (`rates` empty) the medians are None."""
    import numpy as np

    median = float(np.median(rates)) if len(rates) else None
    return {
        "model": name,
        "target_tokens_per_epoch": tokens,
        "target_tokens_per_pair": round(tokens / pairs, 2),
        "padded_to": padded_to,
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
            f"{ratio['tokens']:.2f}x tokens/s"
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
