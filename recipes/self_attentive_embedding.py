"""Structured self-attentive sentence embedding: classify, embed, export, reuse.

Task: sentence classification (SST-5, SST-2, any CSV/TSV of labelled texts) with a
sentence embedding that is a matrix, one row per attention hop, each row a weighting of
the words; delivered as a classifier, as an `embed` signature for TF Serving and as a
`.keras` encoder that other Keras programs load and fine-tune.
Paper: Lin et al., 2017, "A Structured Self-Attentive Sentence Embedding" (ICLR).
Model: `zoo.models.sentence_embedder.SelfAttentiveClassifier` (word embeddings ->
BiLSTM -> `StructuredSelfAttention` with penalty `||A A^T - I||_F^2` -> flatten -> ReLU
MLP -> softmax).
Metric: test accuracy (plus per-class precision/recall/F1, confusion matrix, and the
mean `||A A^T - I||_F` of the test sentences).

Commands:

    python -m recipes.self_attentive_embedding              # generated demo, < 1 min
    python -m recipes.self_attentive_embedding --data ../shared/data/sst --task sst5
    python -m recipes.self_attentive_embedding --data ../shared/data/sst --task sst2
        # SST trains on every labelled phrase of the training trees by default
        # (--no-phrases: root sentences only)
    python -m recipes.self_attentive_embedding --data ../shared/data/yelp_10k/yelp.csv \\
        --task csv --label-column stars
    ... --embeddings glove.840B.300d.txt   # optional pretrained word vectors

Real data uses the paper's sizes (BiLSTM 300 per direction, d_a 350, r 30, MLP 3000,
penalty 1.0) unless `--lstm-units --attention-units --num-hops --hidden-units
--embedding-dim --penalty` say otherwise; the demo uses a small model (r = 4) and,
unless given, 2 epochs at learning rate 5e-3 with batches of 16.

Outputs: `runs/self_attentive_embedding/` (`vocab.txt`, checkpoints, logs, and
`encoder.keras`, the trained encoder alone),
`reports/self_attentive_embedding/` (`metrics.json`, `metrics.txt`,
`attention_<i>.png`: per-hop attention over the words of sample test sentences, rows =
hops, columns = words) and `saved_models/sentence_embedder/VERSION/` with

- `serving_default(text: string [None])` -> `probabilities` float [None, C], `label`
  string [None];
- `embed(text)` -> `embedding` float [None, r, 2u], `attention` float [None, r, T],
  `tokens` string [None, T] (the words the attention columns refer to, "" where
  padded);
- `preprocess(text)` -> `token_ids` int32 [None, T], the Keras model's input;

plus `saved_models/sentence_embedder/VERSION.keras` (the classifier) and
`saved_models/sentence_embedder/VERSION.encoder.keras`: the trained
`SelfAttentiveEncoder` alone, token ids (B, T) -> {"embedding", "attention"}, which
`keras.saving.load_model` reads after `import zoo.models` (no custom_objects), with the
vocabulary file beside it (`VERSION.encoder.vocab.txt`, also in the export's `assets/`)
and `zoo.models.sentence_embedder.SentencePreprocessor` to turn text into ids.

Preprocessing runs in the graph (`SentencePreprocessor`): normalisation, word
tokenisation, the first `--max-length` (default 128) tokens kept (longer texts are
truncated, never rejected; inputs over 64 KiB are cut first), vocabulary lookup. `T`
is the longest (truncated) text of the request, at least 1; an empty or
whitespace-only text gets all-zero attention and embedding and the classifier's
output for the zero embedding, never NaN.
"""

import argparse
import dataclasses
import os
import sys
import time

import keras
import numpy as np

from zoo.classification import (
    ClassificationData,
    build_word_vocabulary,
    compile_classifier,
    evaluate_texts,
    initial_embeddings,
    labelled_datasets,
    report_indices,
    write_classification_report,
)
from zoo.data.sentences import (
    demo_corpus,
    load_sst,
    read_csv,
    read_tsv,
    split_data,
)
from zoo.models.sentence_embedder import (
    LENGTH_BUCKETS,
    MAX_LENGTH,
    SelfAttentiveClassifier,
    SelfAttentiveEncoder,
    SentencePreprocessor,
    export_sentence_embedder,
    penalty_norms,
    tokenize_sentences,
)
from zoo.training import (
    TrainingConfig,
    add_output_args,
    add_training_args,
    averaging,
    fit,
    get_strategy,
    set_seed,
)
from zoo.viz import attention_heatmap

NAME = "self_attentive_embedding"
EXPORT_NAME = "sentence_embedder"
TASKS = ("sst5", "sst2", "csv", "tsv")

# (paper sizes for real data, small sizes for the demo)
SIZES = {
    "embedding_dim": (300, 32),
    "lstm_units": (300, 32),
    "attention_units": (350, 32),
    "num_hops": (30, 4),
    "hidden_units": (3000, 64),
}


@dataclasses.dataclass
class Config:
    """Recipe options (the command-line flags)."""

    data: str = None
    task: str = "sst5"
    phrases: bool = None
    text_column: str = "text"
    label_column: str = "label"
    embeddings: str = None
    export_dir: str = "saved_models"
    report_dir: str = f"reports/{NAME}"
    no_export: bool = False
    max_length: int = MAX_LENGTH
    vocab_size: int = 30000
    min_count: int = 1
    embedding_dim: int = 300
    lstm_units: int = 300
    attention_units: int = 350
    num_hops: int = 30
    penalty: float = 1.0
    hidden_units: int = 3000
    dropout: float = 0.5
    clipnorm: float = 0.5
    max_train_examples: int = None
    heatmaps: int = 3
    training: TrainingConfig = dataclasses.field(default_factory=TrainingConfig)

    @property
    def demo(self):
        return self.data is None


def parse_config(argv=None):
    parser = argparse.ArgumentParser(
        prog=f"python -m recipes.{NAME}", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--data",
        default=None,
        help="SST tree folder (train/dev/test.txt), or a CSV/TSV file; "
        "absent = generated demo corpus",
    )
    parser.add_argument("--task", choices=TASKS, default=None, help="default: sst5")
    parser.add_argument(
        "--phrases",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="train on every labelled phrase of the SST training trees (default: "
        "on, the usual protocol; --no-phrases trains on the sentences)",
    )
    parser.add_argument("--text-column", default="text", help="CSV text column")
    parser.add_argument(
        "--label-column", default="label", help="CSV label column (Yelp: stars)"
    )
    parser.add_argument(
        "--embeddings", default=None, help="word2vec/GloVe text file (optional)"
    )
    add_output_args(parser, NAME)
    parser.add_argument(
        "--max-length",
        type=int,
        default=MAX_LENGTH,
        help="tokens kept per text (later ones are dropped)",
    )
    parser.add_argument("--vocab-size", type=int, default=30000)
    parser.add_argument("--min-count", type=int, default=1)
    for name in SIZES:
        parser.add_argument(
            "--" + name.replace("_", "-"),
            type=int,
            default=None,
            help=f"default {SIZES[name][0]} (demo: {SIZES[name][1]})",
        )
    parser.add_argument("--penalty", type=float, default=1.0)
    parser.add_argument("--dropout", type=float, default=0.5)
    parser.add_argument("--clipnorm", type=float, default=0.5)
    parser.add_argument(
        "--max-train-examples",
        type=int,
        default=None,
        help="train on a seeded sample of at most this many examples",
    )
    parser.add_argument("--heatmaps", type=int, default=3)
    add_training_args(
        parser, epochs=10, batch_size=32, learning_rate=1e-3, run_dir=f"runs/{NAME}"
    )
    args = parser.parse_args(argv)
    demo = args.data is None
    training = TrainingConfig.from_args(args)
    given = {a.split("=")[0] for a in (sys.argv[1:] if argv is None else argv)}
    if demo:
        # the demo corpus is learned in two short epochs: well under a minute
        demo_training = {"epochs": 2, "learning_rate": 5e-3, "batch_size": 16}
        demo_training = {
            k: v
            for k, v in demo_training.items()
            if "--" + k.replace("_", "-") not in given
        }
        training = dataclasses.replace(training, patience=0, verbose=2, **demo_training)
    values = {
        k: v
        for k, v in vars(args).items()
        if k in {f.name for f in dataclasses.fields(Config)} - {"training"}
    }
    for name, (paper, small) in SIZES.items():
        if values[name] is None:
            values[name] = small if demo else paper
    if values["task"] is None:
        values["task"] = "sst5"
    return Config(training=training, **values)


# --- Data -----------------------------------------------------------------------------


def load_splits(config):
    """The `ClassificationData` of `config.data` (or of the demo corpus)."""
    if config.demo:
        splits = demo_corpus(num_train=800, seed=config.training.seed)
        return ClassificationData.from_sentences(splits, "generated demo corpus")
    if config.task in ("sst5", "sst2"):
        phrases = config.phrases if config.phrases is not None else True
        splits = load_sst(config.data, config.task, phrases=phrases)
        level = "phrase-level" if phrases else "sentence-level"
        description = f"{config.task.upper()} ({config.data}, {level} training)"
    else:
        if config.task == "csv":
            data = read_csv(
                config.data,
                text_column=config.text_column,
                label_column=config.label_column,
            )
        else:
            data = read_tsv(config.data)
        splits = split_data(data, validation=0.1, test=0.1, seed=0)
        description = f"{config.data} (fixed seeded 80/10/10 split)"
    splits = ClassificationData.from_sentences(splits, description)
    return splits.sample(config.max_train_examples, seed=config.training.seed)


def build_datasets(config, splits, vocab_file):
    """Vocabulary file, preprocessor and the train/validation/test datasets."""
    build_word_vocabulary(
        splits.train.texts,
        lambda t: tokenize_sentences(t, config.max_length),
        vocab_file,
        max_size=config.vocab_size,
        min_count=config.min_count,
    )
    preprocessor = SentencePreprocessor(vocab_file, max_length=config.max_length)
    data = labelled_datasets(
        splits,
        lambda t: preprocessor(t)["token_ids"],
        config.training.batch_size,
        seed=config.training.seed,
        buckets=LENGTH_BUCKETS,
    )
    return preprocessor, data


# --- Model ----------------------------------------------------------------------------


def build_model(config, vocabulary_size, num_classes, embedding_matrix=None):
    """The compiled `SelfAttentiveClassifier` (its `.encoder` is the embedder)."""
    encoder = SelfAttentiveEncoder(
        vocabulary_size=vocabulary_size,
        embedding_dim=config.embedding_dim,
        lstm_units=config.lstm_units,
        attention_units=config.attention_units,
        num_hops=config.num_hops,
        penalty=config.penalty,
        name="sentence_encoder",
    )
    if embedding_matrix is not None:
        encoder.set_embedding_matrix(embedding_matrix)
    model = SelfAttentiveClassifier(
        encoder,
        num_classes=num_classes,
        hidden_units=config.hidden_units,
        dropout=config.dropout,
        name="sentence_classifier",
    )
    optimizer = keras.optimizers.Adam(
        config.training.learning_rate,
        clipnorm=config.clipnorm,
        **averaging(config.training),
    )
    compile_classifier(model, optimizer)
    return model


def train(config, model, data):
    trainer = model.training_model()
    return fit(trainer, data["train"], data["validation"], config.training)


# --- Evaluation -------------------------------------------------------------------------


def evaluate(config, model, preprocessor, splits, description):
    """Test metrics (`zoo.metrics`), attention heat maps; returns the report dict."""
    report, results = evaluate_texts(
        model, preprocessor, splits.test, splits.label_names, 128, penalty_norms
    )
    norm = float(np.mean([r["penalty_norm"] for r in results])) if results else 0.0
    report["mean_attention_penalty_norm"] = norm
    text = write_classification_report(
        config.report_dir,
        description,
        report,
        notes=["", f"mean ||A A^T - I||_F over the test texts: {norm:.4f}"],
    )
    paths = []
    for i in report_indices(len(results), config.heatmaps, config.training.seed):
        words = [w for w in results[i]["tokens"] if w]
        if not words:
            continue
        label = splits.label_names[results[i]["predicted"]]
        truth = splits.label_names[results[i]["label"]]
        attention = results[i]["attention"][:, : len(words)]
        paths.append(
            attention_heatmap(
                attention,
                [f"hop {h + 1}" for h in range(attention.shape[0])],
                words,
                os.path.join(config.report_dir, f"attention_{i}.png"),
                title=f"predicted {label}, true {truth}",
            )
        )
    report["heatmaps"] = paths
    return report, text


# --- Export -----------------------------------------------------------------------------


def export(config, model, preprocessor, splits, description, metrics, vocab_file):
    """Exports `saved_models/sentence_embedder/VERSION/`, its `.keras` classifier and
    the standalone `VERSION.encoder.keras`; returns the version folder."""
    return export_sentence_embedder(
        model,
        preprocessor,
        splits.label_names,
        base_dir=config.export_dir,
        name=EXPORT_NAME,
        warmup_texts=splits.test.texts[:4],
        metadata={"recipe": NAME, "data": description, "metrics": metrics},
    )


def main(argv=None):
    config = parse_config(argv)
    start = time.time()
    set_seed(config.training.seed)
    splits = load_splits(config)
    description = splits.description
    print(description, splits.sizes())
    os.makedirs(config.training.run_dir, exist_ok=True)
    vocab_file = os.path.join(config.training.run_dir, "vocab.txt")
    preprocessor, data = build_datasets(config, splits, vocab_file)
    vocab_size = preprocessor.lookup.size
    chosen = initial_embeddings(
        vocab_file, config.embedding_dim, vectors=config.embeddings
    )
    embedding_matrix, config.embedding_dim = chosen.matrix, chosen.dim
    if config.embeddings:
        description += f"; {chosen.description}"
        print(chosen.description)
    num_classes = splits.num_classes
    print(f"vocabulary: {vocab_size} words; classes: {splits.label_names}")

    strategy = get_strategy(config.training.distribute)
    with strategy.scope():
        model = build_model(config, vocab_size, num_classes, embedding_matrix)
    train(config, model, data)

    report, text = evaluate(config, model, preprocessor, splits, description)
    print(text)
    metrics = {
        "accuracy": report["accuracy"],
        "macro_f1": report["macro_f1"],
        "mean_attention_penalty_norm": report["mean_attention_penalty_norm"],
    }
    # The encoder alone, for reuse in other Keras programs (also beside the export).
    model.encoder.save(os.path.join(config.training.run_dir, "encoder.keras"))
    version_dir = None
    if not config.no_export:
        version_dir = str(
            export(
                config, model, preprocessor, splits, description, metrics, vocab_file
            )
        )
        print(f"exported: {version_dir} (encoder: {version_dir}.encoder.keras)")
    print(f"done in {time.time() - start:.1f} s")
    return {
        "model": EXPORT_NAME,
        "metric": "accuracy",
        "value": float(report["accuracy"]),
        "export": version_dir,
    }


if __name__ == "__main__":
    main()
