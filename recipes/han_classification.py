"""Document classification with a Hierarchical Attention Network, servable on TF Serving.

Task: classify whole documents (reviews) and show which sentences and words decided.
Paper: Yang et al., 2016, "Hierarchical Attention Networks for Document
Classification" (NAACL). Model: `zoo.models.han.HANClassifier` (word BiGRU +
word attention per sentence, sentence BiGRU + sentence attention, softmax).
Metric: test accuracy (plus per-class precision/recall/F1 and the confusion matrix).

Commands:

    python -m recipes.han_classification                 # generated demo corpus, < 1 min
    python -m recipes.han_classification --data ../shared/data/aclImdb   # IMDB (folder
        # or its .tar.gz), binary
    python -m recipes.han_classification --data ../shared/data/yelp_10k/yelp.csv \\
        --text-column text --label-column stars            # Yelp, 5 classes
    python -m recipes.han_classification --data ... --word2vec-epochs 0
        # embeddings from scratch; by default real data first trains skip-gram
        # vectors for 5 epochs on the training + validation documents (the paper's
        # initialisation; also written to RUN_DIR/word2vec.txt)
    python -m recipes.han_classification --data ... --embeddings vectors.txt
        # start from your own word2vec/GloVe text vectors

Outputs: `runs/han_classification/` (checkpoints, logs), `reports/han_classification/`
(`metrics.json`, `metrics.txt`, `attention.html`: the highest-weighted sentences and
words of sample test documents, as in the paper's Figure 5), and
`saved_models/han/VERSION/` with the signatures

- `serving_default(text: string [None])` -> `probabilities` float [None, C], `label`
  string [None], `sentence_attention` float [None, S], `word_attention` float
  [None, S, W];
- `explain(text)` -> the same plus `sentences` string [None, S] and `words` string
  [None, S, W], the units the weights refer to ("" where padded);
- `preprocess(text)` -> `token_ids` int32 [None, S, W], the Keras model's input.

Preprocessing runs in the graph (`HANPreprocessor`); documents are truncated to
`--max-sentences` sentences of `--max-words` words (never rejected), inputs over 64 KiB
are cut first. `S` and `W` are the longest (truncated) document and sentence of the
request, at least 1 (defaults: 30 sentences of 50 words; the demo uses 8 of 16, 3
epochs, no early stopping). An empty or whitespace-only text has no words: all its attention
weights are 0 and its probabilities are the classifier's output for an all-zero
document vector (finite, never NaN).
"""

import argparse
import dataclasses
import os
import time

import keras

from zoo.classification import (
    ClassificationData,
    build_word_vocabulary,
    compile_classifier,
    evaluate_texts,
    labelled_datasets,
    report_indices,
    write_classification_report,
)
from zoo.classification import (
    initial_embeddings as choose_embeddings,
)
from zoo.data.documents import demo_splits, load_documents
from zoo.metrics import format_report
from zoo.models.han import (
    CLIPNORM,
    LENGTH_BUCKETS,
    MAX_SENTENCES,
    MAX_WORDS,
    HANClassifier,
    HANPreprocessor,
    export_han_classifier,
    tokenize_documents,
)
from zoo.report import attention_report_html
from zoo.training import (
    TrainingConfig,
    add_output_args,
    add_training_args,
    averaging,
    fit,
    get_strategy,
    set_seed,
)

NAME = "han_classification"
EXPORT_NAME = "han"


@dataclasses.dataclass
class Config:
    """Recipe options (the command-line flags)."""

    data: str = None
    text_column: str = "text"
    label_column: str = None
    export_dir: str = "saved_models"
    report_dir: str = f"reports/{NAME}"
    no_export: bool = False
    max_sentences: int = MAX_SENTENCES
    max_words: int = MAX_WORDS
    vocab_size: int = 30000
    min_count: int = 2
    embedding_dim: int = 200
    rnn_units: int = 50
    context_units: int = 100
    dropout: float = 0.0
    pooling: str = "attention"
    embeddings: str = None
    word2vec_epochs: int = 0
    max_train_documents: int = None
    max_eval_documents: int = None
    demo_documents: int = 400
    report_documents: int = 8
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
        help="IMDB folder or .tar.gz, or a CSV/TSV file; absent = generated demo corpus",
    )
    parser.add_argument("--text-column", default="text", help="CSV/TSV text column")
    parser.add_argument(
        "--label-column", default=None, help="CSV/TSV label column (default 'label')"
    )
    add_output_args(parser, NAME)
    parser.add_argument(
        "--max-sentences",
        type=int,
        default=MAX_SENTENCES,
        help="sentences kept per document (later ones are dropped)",
    )
    parser.add_argument(
        "--max-words",
        type=int,
        default=MAX_WORDS,
        help="words kept per sentence (later ones are dropped)",
    )
    parser.add_argument("--vocab-size", type=int, default=30000)
    parser.add_argument("--min-count", type=int, default=None)
    parser.add_argument("--embedding-dim", type=int, default=200)
    parser.add_argument("--rnn-units", type=int, default=50)
    parser.add_argument("--context-units", type=int, default=100)
    parser.add_argument("--dropout", type=float, default=0.0)
    parser.add_argument("--pooling", choices=("attention", "mean"), default="attention")
    parser.add_argument(
        "--embeddings",
        default=None,
        help="initial word vectors, word2vec/GloVe text file (sets --embedding-dim)",
    )
    parser.add_argument(
        "--word2vec-epochs",
        type=int,
        default=None,
        help="first train skip-gram vectors on the training and validation documents "
        "for this many epochs and start from them, as the paper does (0 = off; "
        "default 5 with --data, 0 on the demo corpus or with --embeddings)",
    )
    parser.add_argument(
        "--max-train-documents",
        type=int,
        default=None,
        help="train on a seeded sample of at most this many documents",
    )
    parser.add_argument(
        "--max-eval-documents",
        type=int,
        default=None,
        help="validate and test on seeded samples of at most this many documents each",
    )
    parser.add_argument("--demo-documents", type=int, default=400)
    parser.add_argument("--report-documents", type=int, default=8)
    pre = argparse.ArgumentParser(add_help=False)  # demo or real data: defaults
    pre.add_argument("--data", default=None)
    demo = pre.parse_known_args(argv)[0].data is None
    add_training_args(
        parser,
        epochs=3 if demo else 10,
        batch_size=32,
        learning_rate=2e-3,
        run_dir=f"runs/{NAME}",
    )
    if demo:  # short generated documents: small fixed limits, no early stopping
        parser.set_defaults(patience=0, max_sentences=8, max_words=16)
    args = parser.parse_args(argv)
    for flag in ("max_train_documents", "max_eval_documents"):
        value = getattr(args, flag)
        if value is not None and value < 1:
            parser.error(f"--{flag.replace('_', '-')} must be >= 1, got {value}")
    if args.word2vec_epochs is not None and args.word2vec_epochs < 0:
        parser.error(f"--word2vec-epochs must be >= 0, got {args.word2vec_epochs}")
    if args.embeddings and args.word2vec_epochs:
        parser.error("use either --embeddings or --word2vec-epochs, not both")
    if args.word2vec_epochs is None:
        args.word2vec_epochs = 0 if demo or args.embeddings else 5
    if args.embeddings and not os.path.isfile(args.embeddings):
        parser.error(f"--embeddings: no such file: {args.embeddings}")
    training = TrainingConfig.from_args(args, tensorboard=not demo)
    fields = {f.name for f in dataclasses.fields(Config)} - {"training"}
    values = {k: v for k, v in vars(args).items() if k in fields}
    if values["min_count"] is None:
        values["min_count"] = 1 if demo else 2
    return Config(training=training, **values)


# --- Data -----------------------------------------------------------------------------


def load_splits(config):
    """The `ClassificationData` of `config.data` (or of the demo corpus)."""
    if config.demo:
        docs = demo_splits(config.demo_documents, seed=config.training.seed)
    else:
        docs = load_documents(
            config.data,
            text_column=config.text_column,
            label_column=config.label_column,
        )
    return ClassificationData.from_documents(docs).sample(
        config.max_train_documents, config.max_eval_documents, config.training.seed
    )


def build_datasets(config, splits, vocab_file):
    """Vocabulary file, preprocessor and the train/validation/test datasets."""
    build_word_vocabulary(
        splits.train.texts,
        lambda t: tokenize_documents(t, config.max_sentences, config.max_words)[1],
        vocab_file,
        max_size=config.vocab_size,
        min_count=config.min_count,
    )
    preprocessor = HANPreprocessor(vocab_file, config.max_sentences, config.max_words)
    data = labelled_datasets(
        splits,
        lambda t: preprocessor(t, pad_to_limits=config.demo)["token_ids"],
        config.training.batch_size,
        seed=config.training.seed,
        buckets=LENGTH_BUCKETS,
    )
    return preprocessor, data


def initial_embeddings(config, splits, preprocessor, vocab_file):
    """The starting embedding matrix (or None) and a line describing it."""
    texts = splits.train.texts + splits.validation.texts
    chosen = choose_embeddings(
        vocab_file,
        config.embedding_dim,
        vectors=config.embeddings,
        word2vec_epochs=config.word2vec_epochs,
        corpus=preprocessor.document_ids(texts),
        seed=config.training.seed,
        save_to=os.path.join(config.training.run_dir, "word2vec.txt"),
    )
    config.embedding_dim = chosen.dim
    return chosen.matrix, chosen.description


# --- Model ----------------------------------------------------------------------------


def build_model(config, vocabulary_size, num_classes, embedding_matrix=None):
    """The `HANClassifier` and the compiled probabilities view that is trained."""
    model = HANClassifier(
        vocabulary_size=vocabulary_size,
        num_classes=num_classes,
        embedding_dim=config.embedding_dim,
        rnn_units=config.rnn_units,
        context_units=config.context_units,
        dropout=config.dropout,
        pooling=config.pooling,
        name="han_classifier",
    )
    if embedding_matrix is not None:
        model.set_embedding_matrix(embedding_matrix)
    optimizer = keras.optimizers.Adam(
        config.training.learning_rate, clipnorm=CLIPNORM, **averaging(config.training)
    )
    # Batches vary in shape (S, W): XLA would recompile for every new shape.
    trainer = compile_classifier(model, optimizer, jit_compile=False)
    return model, trainer


def train(config, trainer, data):
    return fit(trainer, data["train"], data["validation"], config.training)


# --- Evaluation -------------------------------------------------------------------------


def evaluate(config, model, preprocessor, splits):
    """Test metrics (`zoo.metrics.classification_report`) and the HTML report."""
    report, results = evaluate_texts(
        model, preprocessor, splits.test, splits.label_names
    )
    text = write_classification_report(config.report_dir, splits.description, report)
    # Sample documents: right and wrong predictions of every class, seeded.
    examples = [
        {
            **results[i],
            "predicted": splits.label_names[results[i]["predicted"]],
            "probability": float(results[i]["probabilities"][results[i]["predicted"]]),
            "true": splits.label_names[results[i]["label"]],
        }
        for i in report_indices(
            len(results), config.report_documents, config.training.seed
        )
    ]
    html_path = attention_report_html(
        os.path.join(config.report_dir, "attention.html"),
        examples,
        title=f"HAN attention: {splits.description}",
        summary=text,
    )
    return report, html_path


# --- Export -----------------------------------------------------------------------------


def export(config, model, preprocessor, splits, metrics):
    """Exports `saved_models/han/VERSION/` (+ the `.keras` file); returns its path."""
    return export_han_classifier(
        model,
        preprocessor,
        splits.label_names,
        base_dir=config.export_dir,
        name=EXPORT_NAME,
        warmup_texts=splits.test.texts[:4],
        metadata={"recipe": NAME, "data": splits.description, "metrics": metrics},
    )


def main(argv=None):
    config = parse_config(argv)
    start = time.time()
    clock = lambda what: print(f"[{time.time() - start:6.1f} s] {what}")  # noqa: E731
    set_seed(config.training.seed)
    splits = load_splits(config)
    print(splits.description)
    os.makedirs(config.training.run_dir, exist_ok=True)
    vocab_file = os.path.join(config.training.run_dir, "vocab.txt")
    preprocessor, data = build_datasets(config, splits, vocab_file)
    vocab_size = preprocessor.lookup.size
    clock(f"vocabulary: {vocab_size} words; classes: {splits.label_names}")
    embedding_matrix, how = initial_embeddings(config, splits, preprocessor, vocab_file)
    clock(how)

    strategy = get_strategy(config.training.distribute)
    with strategy.scope():
        model, trainer = build_model(
            config, vocab_size, len(splits.label_names), embedding_matrix
        )
    train(config, trainer, data)
    clock("trained")

    report, html_path = evaluate(config, model, preprocessor, splits)
    print(format_report(report))
    clock(f"attention report: {html_path}")
    metrics = {"accuracy": report["accuracy"], "macro_f1": report["macro_f1"]}
    version_dir = None
    if not config.no_export:
        version_dir = str(export(config, model, preprocessor, splits, metrics))
        clock(f"exported: {version_dir}")
    return {
        "model": EXPORT_NAME,
        "metric": "accuracy",
        "value": float(report["accuracy"]),
        "export": version_dir,
    }


if __name__ == "__main__":
    main()
