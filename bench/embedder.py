"""Benchmark: structured self-attentive sentence embedding vs a BiLSTM max-pool baseline.

For each data set (SST-5, SST-2, Yelp-10k 5-class) three models are trained in the
same run, on the same data, vocabulary and sizes:

- `self-attentive, penalty 0`: `SelfAttentiveClassifier` without the penalty;
- `self-attentive, penalty 1`: the same with `||A A^T - I||_F^2` (coefficient 1);
- `BiLSTM max-pool`: embeddings -> the same BiLSTM -> masked max over time -> the same
  MLP head (the paper's baseline).

It prints test accuracy, the measured mean `||A A^T - I||_F` over the test sentences
(what the penalty does: lower = hops attend to different words), training time and
parameter count as a Markdown table, and writes them to `--out` (JSON).

Published SST numbers (Kim 2014 CNN 48.0 / 87.2; Tree-LSTM 51.0 / 88.0 on SST-5 /
SST-2) use pretrained word vectors; pass `--embeddings PATH` (word2vec/GloVe text
format) to use them here. Without them the targets are >= 45% (SST-5) and >= 85%
(SST-2, trained on the phrase-level set). Both SST tasks train on the phrase-level set
by default (every labelled node of the training trees, as Tai et al. 2015 and Kim 2014
do); `--phrases sst2` keeps SST-5 on sentences.

Commands:

    python -m bench.embedder --quick          # subsampled, small sizes
    python -m bench.embedder                  # the full protocol
    python -m bench.embedder --datasets sst2 --embeddings glove.840B.300d.txt
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
from keras import ops  # noqa: E402

DATA_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data")

PUBLISHED = {
    "sst5": "CNN 48.0, Tree-LSTM 51.0 (pretrained vectors); target >= 45",
    "sst2": "CNN 87.2, Tree-LSTM 88.0 (pretrained vectors); target >= 85",
    "yelp": "no published number on this 10k sample (Lin et al.: 64.2 on Yelp 2.7M)",
}

MODEL_KEYS = {
    ("self-attentive", 0.0): "p0",
    ("self-attentive", 1.0): "p1",
    ("maxpool", None): "maxpool",
}

# Sizes: quick mode subsamples and shrinks everything to a run of minutes.
QUICK = dict(
    embedding_dim=64,
    lstm_units=64,
    attention_units=64,
    num_hops=8,
    hidden_units=256,
    epochs=2,
    evals_per_epoch=1,
    batch_size=32,
    max_train={"sst5": 1500, "sst2": 1500, "yelp": 1000},
    max_length={"sst5": 60, "sst2": 60, "yelp": 60},
)
FULL = dict(
    embedding_dim=128,
    lstm_units=128,
    attention_units=128,
    num_hops=16,
    hidden_units=1000,
    epochs=2,
    # Validation 4 times per epoch: one pass over the 77k-159k SST phrases is long
    # enough to overfit within it, so the best weights are chosen within epochs.
    evals_per_epoch=4,
    batch_size=32,
    max_train={"sst5": None, "sst2": None, "yelp": None},
    max_length={"sst5": 60, "sst2": 60, "yelp": 200},
)


@keras.saving.register_keras_serializable(package="zoo_bench")
class MaskedMaxPooling(keras.layers.Layer):
    """Max over time of `(B, T, D)` ignoring masked steps; an empty row gives 0."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def call(self, inputs, mask=None):
        if mask is None:
            return ops.max(inputs, axis=1)
        m = ops.expand_dims(ops.cast(mask, "bool"), -1)
        neg = ops.full_like(inputs, -1e9)
        pooled = ops.max(ops.where(m, inputs, neg), axis=1)
        any_token = ops.any(m, axis=1)
        return ops.where(any_token, pooled, ops.zeros_like(pooled))

    def compute_mask(self, inputs, mask=None):
        return None


def maxpool_baseline(vocab_size, num_classes, sizes, dropout=0.5):
    token_ids = keras.Input((None,), dtype="int32", name="token_ids")
    x = keras.layers.Embedding(vocab_size, sizes["embedding_dim"], mask_zero=True)(
        token_ids
    )
    x = keras.layers.Bidirectional(
        keras.layers.LSTM(sizes["lstm_units"], return_sequences=True)
    )(x)
    x = MaskedMaxPooling()(x)
    x = keras.layers.Dense(sizes["hidden_units"], activation="relu")(
        keras.layers.Dropout(dropout)(x)
    )
    out = keras.layers.Dense(num_classes, activation="softmax")(
        keras.layers.Dropout(dropout)(x)
    )
    return keras.Model(token_ids, out, name="bilstm_maxpool")


def load(dataset, args, phrases):
    """The `LabelledSplits` of a data set (the recipe's split seed, 0)."""
    from zoo.data.labelled import load_labelled

    if dataset in ("sst5", "sst2"):
        sst = os.path.join(args.data_dir, "sst")
        return load_labelled(sst, task=dataset, phrases=phrases)
    yelp = os.path.join(args.data_dir, "yelp_10k", "yelp.csv")
    return load_labelled(yelp, label_column="stars", seed=0)


def build_self_attentive(vocab_size, num_classes, sizes, penalty, matrix=None):
    """The `SelfAttentiveClassifier` at the bench sizes."""
    from zoo.models.sentence_embedder import (
        SelfAttentiveClassifier,
        SelfAttentiveEncoder,
    )

    encoder = SelfAttentiveEncoder(
        vocabulary_size=vocab_size,
        embedding_dim=sizes["embedding_dim"],
        lstm_units=sizes["lstm_units"],
        attention_units=sizes["attention_units"],
        num_hops=sizes["num_hops"],
        penalty=penalty,
    )
    if matrix is not None:
        encoder.set_embedding_matrix(matrix)
    return SelfAttentiveClassifier(
        encoder, num_classes, hidden_units=sizes["hidden_units"], dropout=0.5
    )


def run_dataset(dataset, args, sizes, out_dir):
    from zoo.models.preprocessor import word_vocabulary
    from zoo.models.sentence_embedder import (
        SelfAttentiveTextClassifier,
        SelfAttentiveTextClassifierPreprocessor,
    )
    from zoo.models.sentence_embedder.self_attentive_text_classifier import (
        CLIPNORM,
        LENGTH_BUCKETS,
        penalty_norms,
    )
    from zoo.models.text_classifier import compile_classifier
    from zoo.training import validate_more_often
    from zoo.training.text_classification import (
        evaluate_texts,
        initial_embeddings,
        labelled_dataset,
    )

    phrases = (
        not args.quick
        and dataset in ("sst5", "sst2")
        and args.phrases in ("all", dataset)
    )
    splits = load(dataset, args, phrases).sample(sizes["max_train"][dataset], seed=0)
    max_length = sizes["max_length"][dataset]
    vocab_file = os.path.join(out_dir, f"{dataset}_vocab.txt")
    pre = SelfAttentiveTextClassifierPreprocessor(max_length)
    vocab = word_vocabulary(splits.train.texts, pre.tokenize, 30000)
    vocab.save(vocab_file)
    pre.set_assets({"vocabulary.txt": vocab_file})

    def preprocess(t):
        return pre(t)["token_ids"]

    data = {
        "train": labelled_dataset(
            splits.train,
            preprocess,
            sizes["batch_size"],
            shuffle=True,
            buckets=LENGTH_BUCKETS,
        ),
        "validation": labelled_dataset(
            splits.validation, preprocess, sizes["batch_size"]
        ),
    }
    chosen = initial_embeddings(
        vocab_file, sizes["embedding_dim"], vectors=args.embeddings
    )
    matrix, coverage = chosen.matrix, chosen.coverage
    sizes = dict(sizes, embedding_dim=chosen.dim)
    if args.embeddings:
        print(f"[{dataset}] {chosen.description}", flush=True)
    num_classes = splits.num_classes
    # Validation (and the best-weights choice) every 1/N epoch.
    data["train"], fit_args = validate_more_often(
        data["train"], sizes["epochs"], args.evals_per_epoch
    )
    rows = []
    variants = [
        v
        for v in [("self-attentive", 0.0), ("self-attentive", 1.0), ("maxpool", None)]
        if MODEL_KEYS[v] in args.models.split(",")
    ]
    for kind, penalty in variants:
        keras.utils.set_random_seed(args.seed)
        if kind == "maxpool":
            model = maxpool_baseline(len(vocab), num_classes, sizes)
            if matrix is not None:
                model.layers[1].embeddings.assign(matrix)
            trainer = model
            trainer.compile(
                keras.optimizers.Adam(args.learning_rate, clipnorm=CLIPNORM),
                "sparse_categorical_crossentropy",
                metrics=["accuracy"],
            )
        else:  # the recipe's model at the bench's sizes
            model = build_self_attentive(
                len(vocab), num_classes, sizes, penalty, matrix
            )
            trainer = compile_classifier(
                SelfAttentiveTextClassifier(
                    model,
                    pre,
                    compile=False,
                ),
                keras.optimizers.Adam(args.learning_rate, clipnorm=CLIPNORM),
            )
        start = time.time()
        history = trainer.fit(
            data["train"],
            validation_data=data["validation"],
            verbose=2 if args.verbose else 0,
            callbacks=[
                keras.callbacks.EarlyStopping(
                    "val_accuracy",
                    patience=2 * args.evals_per_epoch,
                    restore_best_weights=True,
                    mode="max",
                )
            ],
            **fit_args,
        ).history
        train_s = time.time() - start
        test = splits.test
        if kind == "maxpool":
            ids_ds = labelled_dataset(test, preprocess, 128)
            probs = model.predict(ids_ds.map(lambda x, y: x), verbose=0)
            acc = float((probs.argmax(-1) == test.labels).mean())
            norm = None
        else:
            report, results = evaluate_texts(trainer, test, 128, penalty_norms)
            acc = report["accuracy"]
            norm = float(np.mean([r["penalty_norm"] for r in results]))
        name = (
            "BiLSTM max-pool"
            if kind == "maxpool"
            else f"self-attentive, penalty {penalty:g}"
        )
        row = {
            "data": dataset,
            "model": name,
            "test_accuracy": acc,
            "mean_aat_minus_i_fro": norm,
            "train_seconds": train_s,
            "best_validation_accuracy": float(max(history["val_accuracy"])),
            "validation_accuracy": [float(v) for v in history["val_accuracy"]],
            "learning_rate": args.learning_rate,
            "evals_per_epoch": args.evals_per_epoch,
            "params": int(model.count_params()),
            "train_examples": len(splits.train),
            "test_examples": len(test),
            "phrases": phrases,
            "embedding_coverage": coverage,
        }
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def machine():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        name = [line for line in out.splitlines() if line.startswith("Model name")]
        cpu = name[0].split(":", 1)[1].strip() if name else platform.processor()
    except OSError:
        cpu = platform.processor()
    return f"{cpu}, {os.cpu_count()} cores"


def table(rows):
    lines = [
        "| data | model | test acc. (%) | mean ‖AAᵀ−I‖_F | train s | params | published |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        norm = (
            "-"
            if r["mean_aat_minus_i_fro"] is None
            else f"{r['mean_aat_minus_i_fro']:.3f}"
        )
        lines.append(
            f"| {r['data']} ({r['train_examples']} train) | {r['model']} | "
            f"{100 * r['test_accuracy']:.1f} | {norm} | {r['train_seconds']:.0f} | "
            f"{r['params']:,} | {PUBLISHED[r['data']]} |"
        )
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.embedder")
    parser.add_argument(
        "--quick", action="store_true", help="subsampled, small sizes: a run of minutes"
    )
    parser.add_argument(
        "--datasets", default="sst5,sst2,yelp", help="comma list of sst5,sst2,yelp"
    )
    parser.add_argument("--data-dir", default=os.path.normpath(DATA_DIR))
    parser.add_argument("--embeddings", default=None, help="word2vec/GloVe text file")
    parser.add_argument("--epochs", type=int, default=None)
    parser.add_argument("--max-train", type=int, default=None, help="cap train size")
    parser.add_argument(
        "--phrases",
        choices=["all", "sst2", "sst5", "none"],
        default="all",
        help="which SST tasks train on every labelled phrase of the training trees "
        "(the usual protocol, default: both); the others train on sentences",
    )
    parser.add_argument(
        "--models",
        default="p0,p1,maxpool",
        help="comma list of p0 (penalty 0), p1 (penalty 1), maxpool (baseline)",
    )
    parser.add_argument(
        "--evals-per-epoch",
        type=int,
        default=None,
        help="validate (and keep the best weights) N times per epoch "
        "(default: 4, or 1 with --quick)",
    )
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--out", default="reports/bench_embedder.json")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    unknown = set(args.models.split(",")) - set(MODEL_KEYS.values())
    if unknown:
        parser.error(f"--models: unknown {sorted(unknown)}; use p0, p1, maxpool")
    if args.evals_per_epoch is not None and args.evals_per_epoch < 1:
        parser.error(f"--evals-per-epoch must be >= 1, got {args.evals_per_epoch}")
    sizes = dict(QUICK if args.quick else FULL)
    if args.epochs:
        sizes["epochs"] = args.epochs
    if args.evals_per_epoch is None:
        args.evals_per_epoch = sizes["evals_per_epoch"]
    if args.max_train:
        sizes["max_train"] = {k: args.max_train for k in sizes["max_train"]}
    if not os.path.isdir(args.data_dir):
        raise SystemExit(f"data folder not found: {args.data_dir} (use --data-dir)")
    out_dir = os.path.dirname(os.path.abspath(args.out))
    os.makedirs(out_dir, exist_ok=True)
    start = time.time()
    rows = []
    for dataset in args.datasets.split(","):
        rows.extend(run_dataset(dataset.strip(), args, sizes, out_dir))
    total = time.time() - start
    result = {
        "command": "python -m bench.embedder "
        + " ".join(sys.argv[1:] if argv is None else argv),
        "machine": machine(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "sizes": sizes,
        "wall_seconds": total,
        "rows": rows,
    }
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
    print()
    print(table(rows))
    print(f"\nmachine: {result['machine']}; wall time {total:.0f} s; {result['date']}")
    return result


if __name__ == "__main__":
    main()
