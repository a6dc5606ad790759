"""HAN document classification benchmark: attention vs mean pooling vs flat BiGRU.

For each data set (IMDB binary: its own test set; Yelp-10k 5 classes: the fixed seeded
80/10/10 split of `zoo.data.labelled.load_labelled`, seed 1337, as the recipe's), three models are trained in the same run on
the same data, vocabulary and preprocessing:

- `han`: `HANClassifier` (Yang et al. 2016): word BiGRU + attention per sentence,
  sentence BiGRU + attention;
- `han_mean`: the same encoder with masked mean pooling instead of both attentions;
- `flat`: a non-hierarchical BiGRU + attention pooling over all words of the document
  (the same tokens, sentences concatenated).

Each model is trained for `--epochs` epochs (the weights of the best of the
`--evals-per-epoch` validations per epoch are kept); its test accuracy and wall time
are printed as a Markdown table.

    python -m bench.han --quick          # small samples, 2 epochs, from scratch
    python -m bench.han                  # the full protocol: IMDB (2 epochs) and
        # Yelp-10k (3 epochs), 20 sentences x 40 words, validation twice per epoch,
        # embeddings from word2vec on train + validation (5 epochs)
    python -m bench.han --word2vec-epochs 0   # embeddings from scratch

Published reference: IMDB binary RNN/attention classifiers report 88-91%; HAN on
Yelp'13/14/15 (5 classes, far more data) reports 68.2/70.5/71.0.
"""

import argparse
import datetime
import json
import os
import platform
import subprocess
import time

import keras
import tensorflow as tf

from zoo.data.labelled import load_labelled
from zoo.layers.attention_pooling import AttentionPooling
from zoo.models.han import (
    HANClassifier,
    HANTextClassifier,
    HANTextClassifierPreprocessor,
)
from zoo.models.han.han_text_classifier import CLIPNORM, LENGTH_BUCKETS
from zoo.models.preprocessor import word_vocabulary
from zoo.training import validate_more_often
from zoo.training.text_classification import initial_embeddings, labelled_dataset

DATASETS = {
    "imdb": {"path": "aclImdb", "text_column": "text", "label_column": None},
    "yelp": {
        "path": "yelp_10k/yelp.csv",
        "text_column": "text",
        "label_column": "stars",
    },
}
MODELS = ("han", "han_mean", "flat")
# Full-run epochs per data set (IMDB has three times Yelp-10k's documents).
DEFAULT_EPOCHS = {"imdb": 2, "yelp": 3}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.han", description=__doc__)
    parser.add_argument("--datasets", default="imdb,yelp")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument(
        "--data-root",
        default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data"),
    )
    parser.add_argument(
        "--quick", action="store_true", help="small samples and sizes: a run of minutes"
    )
    parser.add_argument("--train-docs", type=int, default=None)
    parser.add_argument("--test-docs", type=int, default=None)
    parser.add_argument(
        "--epochs",
        type=int,
        default=None,
        help="default: 2 on IMDB, 3 on Yelp-10k (2 with --quick)",
    )
    parser.add_argument(
        "--evals-per-epoch",
        type=int,
        default=None,
        help="validate (and keep the best weights) N times per epoch (default 2, "
        "1 with --quick)",
    )
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=2e-3)
    parser.add_argument("--max-sentences", type=int, default=None)
    parser.add_argument("--max-words", type=int, default=None)
    parser.add_argument("--vocab-size", type=int, default=30000)
    parser.add_argument("--embedding-dim", type=int, default=200)
    parser.add_argument("--rnn-units", type=int, default=50)
    parser.add_argument("--context-units", type=int, default=100)
    parser.add_argument(
        "--word2vec-epochs",
        type=int,
        default=None,
        help="start every model from skip-gram vectors trained for this many epochs "
        "on the training + validation documents (the paper's initialisation; 0 = off; "
        "default 5, 0 with --quick)",
    )
    parser.add_argument(
        "--embeddings", default=None, help="start from these word2vec/GloVe vectors"
    )
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--json-out", default=None)
    parser.add_argument(
        "--work-dir",
        default=None,
        help="keep vocabularies and word2vec vectors here (default: a temp folder)",
    )
    args = parser.parse_args(argv)
    if args.evals_per_epoch is not None and args.evals_per_epoch < 1:
        parser.error(f"--evals-per-epoch must be >= 1, got {args.evals_per_epoch}")
    if args.word2vec_epochs is not None and args.word2vec_epochs < 0:
        parser.error(f"--word2vec-epochs must be >= 0, got {args.word2vec_epochs}")
    if args.embeddings and args.word2vec_epochs:
        parser.error("use either --embeddings or --word2vec-epochs, not both")
    quick = {
        "train_docs": 600,
        "test_docs": 400,
        "epochs": 2,
        "max_sentences": 12,
        "max_words": 25,
    }
    full = {
        "train_docs": None,
        "test_docs": None,
        "max_sentences": 20,
        "max_words": 40,
        "evals_per_epoch": 2,
        "word2vec_epochs": 0 if args.embeddings else 5,
    }
    quick["evals_per_epoch"] = 1
    quick["word2vec_epochs"] = 0
    for key, value in (quick if args.quick else full).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    return args


def epochs_for(name, args):
    """`--epochs` (2 with --quick), or the data set's default."""
    return args.epochs or DEFAULT_EPOCHS[name]


class FlatPreprocessor(tf.Module):
    """The same tokens as `HANTextClassifierPreprocessor`, sentences concatenated:
    ids (B, T)."""

    def __init__(self, han_preprocessor):
        super().__init__()
        self.han = han_preprocessor

    def __call__(self, text):
        words = self.han.tokenize(text)
        ids = tf.cast(self.han.lookup(words.merge_dims(1, 2)), tf.int32)
        dense = ids.to_tensor(0)
        return tf.pad(dense, [[0, 0], [0, tf.maximum(1 - tf.shape(dense)[1], 0)]])


def build_flat(vocab_size, num_classes, args):
    ids = keras.Input((None,), dtype="int32", name="token_ids")
    x = keras.layers.Embedding(
        vocab_size, args.embedding_dim, mask_zero=True, name="embedding"
    )(ids)
    x = keras.layers.Bidirectional(
        keras.layers.GRU(args.rnn_units, return_sequences=True)
    )(x)
    x = AttentionPooling(args.context_units)(x)
    probs = keras.layers.Dense(num_classes, activation="softmax")(x)
    return keras.Model(ids, probs, name="flat_bigru_attention")


def run_dataset(name, args, workdir):
    spec = DATASETS[name]
    path = os.path.join(args.data_root, spec["path"])
    start = time.time()
    splits = load_labelled(
        path, spec["text_column"], spec["label_column"], seed=1337
    ).sample(args.train_docs, args.test_docs, args.seed)
    train, val, test = splits.train, splits.validation, splits.test
    labels = splits.label_names
    print(
        f"{name}: {len(train)} train / {len(val)} val / {len(test)} test docs, "
        f"{len(labels)} classes (read in {time.time() - start:.1f} s)",
        flush=True,
    )
    # Vocabulary from the in-graph tokenization of the training documents.
    vocab_file = os.path.join(workdir, f"{name}_vocab.txt")
    han_pre = HANTextClassifierPreprocessor(args.max_sentences, args.max_words)
    vocab = word_vocabulary(
        train.texts,
        han_pre.tokenize,
        max_size=args.vocab_size,
        min_count=2,
    )
    vocab.save(vocab_file)
    vocab_size = len(vocab)
    han_pre.set_assets({"vocabulary.txt": vocab_file})
    flat_pre = FlatPreprocessor(han_pre)
    t0 = time.time()
    os.makedirs(os.path.join(workdir, name), exist_ok=True)
    chosen = initial_embeddings(
        vocab_file,
        args.embedding_dim,
        vectors=args.embeddings,
        word2vec_epochs=args.word2vec_epochs,
        corpus=han_pre.document_ids(train.texts + val.texts),
        seed=args.seed,
        save_to=os.path.join(workdir, name, "word2vec.txt"),
    )
    matrix, how = chosen.matrix, chosen.description
    embedding_s = time.time() - t0
    args.embedding_dim = chosen.dim
    print(f"{name}: {how} ({embedding_s:.0f} s)", flush=True)

    rows = []
    for model_name in args.models.split(","):
        keras.utils.set_random_seed(args.seed)
        if model_name == "flat":
            model, fn = build_flat(vocab_size, len(labels), args), flat_pre
            if matrix is not None:
                model.get_layer("embedding").embeddings.assign(matrix)
        else:
            han = HANClassifier(
                vocab_size,
                len(labels),
                embedding_dim=args.embedding_dim,
                rnn_units=args.rnn_units,
                context_units=args.context_units,
                pooling="mean" if model_name == "han_mean" else "attention",
            )
            if matrix is not None:
                han.set_embedding_matrix(matrix)
            model, fn = (
                HANTextClassifier(han, compile=False),  # fit on the ids
                lambda t: han_pre(t)["token_ids"],
            )
        model.compile(
            keras.optimizers.Adam(args.learning_rate, clipnorm=CLIPNORM),
            "sparse_categorical_crossentropy",
            metrics=["accuracy"],
            jit_compile=False,
        )
        bs = args.batch_size
        train_ds = labelled_dataset(
            train, fn, bs, shuffle=True, seed=args.seed, buckets=LENGTH_BUCKETS
        )
        val_ds = labelled_dataset(val, fn, bs)
        test_ds = labelled_dataset(test, fn, bs)
        train_ds, fit_args = validate_more_often(
            train_ds, epochs_for(name, args), args.evals_per_epoch
        )
        t0 = time.time()
        history = model.fit(
            train_ds,
            validation_data=val_ds,
            verbose=2,
            callbacks=[
                keras.callbacks.EarlyStopping(
                    monitor="val_accuracy",
                    mode="max",
                    patience=fit_args["epochs"],
                    restore_best_weights=True,
                )
            ],
            **fit_args,
        )
        train_s = time.time() - t0
        _, accuracy = model.evaluate(test_ds, verbose=0)
        row = {
            "dataset": name,
            "model": model_name,
            "test_accuracy": round(float(accuracy), 4),
            "best_val_accuracy": round(max(history.history["val_accuracy"]), 4),
            "train_docs": len(train),
            "test_docs": len(test),
            "epochs": epochs_for(name, args),
            "evals_per_epoch": args.evals_per_epoch,
            "val_accuracy": [round(v, 4) for v in history.history["val_accuracy"]],
            "params": int(model.count_params()),
            "wall_s": round(time.time() - t0, 1),
            "train_s": round(train_s, 1),
            "embeddings": how,
            "embedding_s": round(embedding_s, 1),
        }
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def _machine():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name"):
                return line.split(":", 1)[1].strip() + f", {os.cpu_count()} CPUs"
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main(argv=None):
    args = parse_args(argv)
    start = time.time()
    import tempfile

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.work_dir or tmp
        os.makedirs(workdir, exist_ok=True)
        for name in args.datasets.split(","):
            if name not in DATASETS:
                raise ValueError(
                    f"Unknown data set. Expected one of {sorted(DATASETS)}. "
                    f"Received: {name!r}"
                )
            rows += run_dataset(name, args, workdir)
    settings = (
        f"max {args.max_sentences} sentences x {args.max_words} words, "
        f"embedding {args.embedding_dim}, GRU {args.rnn_units}/direction, context "
        f"{args.context_units}, batch {args.batch_size}, Adam {args.learning_rate}, "
        f"epochs {args.epochs or 'per data set'}, {args.evals_per_epoch} "
        f"validations per epoch (best kept), seed {args.seed}, "
        + (
            f"word2vec initialisation ({args.word2vec_epochs} epochs)"
            if args.word2vec_epochs
            else f"vectors from {args.embeddings}"
            if args.embeddings
            else "embeddings from scratch"
        )
    )
    print()
    print(f"date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC")
    print(
        f"machine: {_machine()}; TensorFlow {tf.__version__}, Keras {keras.__version__}"
    )
    print(f"settings: {settings}")
    print()
    print(
        "| data | model | test accuracy | best val accuracy | train / test docs | wall s |"
    )
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['dataset']} | {r['model']} | {r['test_accuracy']:.4f} | "
            f"{r['best_val_accuracy']:.4f} | {r['train_docs']} / {r['test_docs']} | "
            f"{r['wall_s']} |"
        )
    print(f"\ntotal {time.time() - start:.0f} s")
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump({"settings": settings, "rows": rows}, f, indent=2)
    return rows


if __name__ == "__main__":
    main()
