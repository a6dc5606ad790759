"""Document classification with a Hierarchical Attention Network, servable on TF Serving.

Task: classify documents (reviews) and show which sentences and words decided.
Paper: Yang et al., 2016, "Hierarchical Attention Networks for Document
Classification" (NAACL); the task trained, evaluated and exported is
`zoo.models.han.HANTextClassifier` (its network: `HANClassifier`).
Metric: test accuracy (plus per-class precision/recall/F1 and the confusion matrix).

    python -m zoo.recipes.han_classification                  # demo corpus, < 1 min
    python -m zoo.recipes.han_classification --data ../shared/data/aclImdb  # or .tar.gz
    python -m zoo.recipes.han_classification --data yelp.csv --label-column stars
    python -m zoo.recipes.han_classification --data ... --embeddings vectors.txt

The model's options take their defaults from the constructors of `HANClassifier`,
`HANTextClassifierPreprocessor` (and its `adapt`) and `HANTextClassifier`'s
`default_compile`: the task built with its defaults is the one trained with `--data`.
Data layouts, word vectors, training and outputs: docs/recipes.md#han_classification;
the export's signatures: `zoo.models.TextClassifier.export`.
"""

import dataclasses
import functools

from zoo.models.han import (
    HANClassifier,
    HANTextClassifier,
    HANTextClassifierPreprocessor,
)
from zoo.models.han.han_text_classifier import LENGTH_BUCKETS
from zoo.training import steps
from zoo.training.flags import default_of, option
from zoo.training.text_classification import TextClassificationConfig

net = functools.partial(default_of, HANClassifier)
pre = functools.partial(default_of, HANTextClassifierPreprocessor)
adapt = functools.partial(default_of, HANTextClassifierPreprocessor.adapt)
POS = "positive"
NAME = "han_classification"
EXPORT_NAME = "han"
SPLIT_SEED = 1337  # of the validation and test sets held out of the training data
# The best of four validations in two passes: IMDB's peaks within the second.
TRAINING = dict(
    epochs=2,
    batch_size=32,
    learning_rate=default_of(HANTextClassifier.default_compile, "learning_rate"),
    validations_per_epoch=2,
    monitor="val_accuracy",
    patience=4,
)
# Short generated documents: the Config's small demo limits, no early stopping.
DEMO_TRAINING = dict(
    epochs=3, patience=0, tensorboard=False, validations_per_epoch=1, monitor="val_loss"
)


@dataclasses.dataclass
class Config(TextClassificationConfig):
    """The recipe's options (the command-line flags)."""

    # fmt: off
    max_sentences: int = option(pre("max_sentences"), "sentences per document", demo=8,
        check=POS)
    max_words: int = option(pre("max_words"), "words per sentence", demo=16, check=POS)
    vocab_size: int = option(adapt("vocab_size"), "largest vocabulary, [PAD] and [UNK] "
        "included", check=POS)
    min_count: int = option(adapt("min_count"), "words seen fewer times in training "
        "map to [UNK]", demo=1, check=POS)
    embedding_dim: int = option(net("embedding_dim"), "word embedding size "
        "(--embeddings sets it)", check=POS)
    rnn_units: int = option(net("rnn_units"), "GRU units per direction, both levels",
        check=POS)
    context_units: int = option(net("context_units"), "size of the word and sentence "
        "context vectors", check=POS)
    dropout: float = option(net("dropout"), "dropout on the embeddings and the "
        "document vector", check="open_fraction")
    pooling: str = option(net("pooling"), "word and sentence pooling (mean: a "
        "baseline)", choices=("attention", "mean"))
    word2vec_epochs: int = option(None, "start from skip-gram vectors trained for N "
        "epochs on the training and validation documents, as the paper does (0: off; "
        "default 5 with --data, 0 on the demo corpus or with --embeddings); written to "
        "RUN_DIR/word2vec.txt", check="non_negative", metavar="N")
    demo_size: int = option(400, "documents in the demo corpus", check=POS, metavar="N")
    report_samples: int = option(8, "test documents drawn in attention.html",
        check="non_negative", metavar="N")
    # fmt: on

    def validate(self):
        from zoo.errors import ConfigError

        if self.embeddings and self.word2vec_epochs:
            raise ConfigError("use either --embeddings or --word2vec-epochs, not both")
        super().validate()
        if self.word2vec_epochs is None:
            self.word2vec_epochs = 0 if self.demo or self.embeddings else 5


parse = steps.parser(Config, NAME, __doc__, TRAINING, DEMO_TRAINING)


def read_texts(config):
    """The labelled documents of `--data` (or the demo corpus): `LabelledSplits`."""
    if config.demo:
        from zoo.demo.documents import demo_splits

        return demo_splits(config.demo_size, seed=config.training.seed)
    from zoo.data.labelled import load_labelled

    return load_labelled(
        config.data,
        "text" if config.text_column is None else config.text_column,  # a table
        config.label_column,
        encoding=config.encoding,
        skip_unreadable=config.skip_unreadable,
        seed=SPLIT_SEED,
    )


def load_data(config, log=print):
    """Documents -> vocabulary, `HANTextClassifierPreprocessor`, datasets and the
    initial word vectors (`--embeddings`, word2vec or none): a
    `TextClassificationInputs`."""
    from zoo.training.text_classification import initial_embeddings, prepare_inputs

    c = config
    data = prepare_inputs(
        c,
        read_texts(c),
        HANTextClassifierPreprocessor(c.max_sentences, c.max_words),
        buckets=LENGTH_BUCKETS,
        log=log,
        pad_to_limits=c.demo,  # the demo's small limits: one shape, one graph trace
    )
    texts = data.texts.train.texts + data.texts.validation.texts
    data.embeddings = initial_embeddings(
        data.vocab_file,
        c.embedding_dim,
        vectors=c.embeddings,
        word2vec_epochs=c.word2vec_epochs,
        corpus=data.preprocessor.document_ids(texts),
        seed=c.training.seed,
    )
    log(data.embeddings.description)
    return data


def build_model(config, data, run):
    """The `HANTextClassifier` (a `HANClassifier` with its embeddings set, the
    preprocessor of `data`, the class names), compiled with the run's optimizer
    (`--learning-rate`, the task's gradient-norm clipping)."""
    from zoo.models.text_classifier import compile_classifier

    backbone = HANClassifier(
        vocabulary_size=data.vocabulary_size,
        num_classes=len(data.texts.label_names),
        embedding_dim=data.embeddings.dim,
        rnn_units=config.rnn_units,
        context_units=config.context_units,
        dropout=config.dropout,
        pooling=config.pooling,
        name="han_classifier",
    )
    if data.embeddings.matrix is not None:
        backbone.set_embedding_matrix(data.embeddings.matrix)
    task = HANTextClassifier(
        backbone, data.preprocessor, list(data.texts.label_names), compile=False
    )
    clipnorm = default_of(HANTextClassifier.default_compile, "clipnorm")
    # Batches vary in shape (S, W): XLA recompiles for every new shape.
    return compile_classifier(task, run.optimizer(clipnorm=clipnorm), config.xla)


def main(argv=None):
    """Trains, evaluates, reports and exports; returns `{"model", "metric", "value",
    "export"}`."""
    config = parse(argv)
    with steps.recipe_run(NAME, config) as run:
        from zoo.training.text_classification import (
            document_report,
            evaluate_texts,
            export_classifier,
        )

        data = load_data(config, run.log)
        run.log(data.texts.description)
        with run.strategy.scope():
            task = build_model(config, data, run)
        run.fit(task, data.train, data.validation, data_fingerprint=data.fingerprint)
        data.publish()  # RUN_DIR/vocab.txt (and word2vec.txt), the run now checked
        run.log("trained")
        metrics, results = evaluate_texts(task, data.texts.test)
        run.write_metrics(data.texts.description, metrics)
        document_report(config, data, metrics, results, run.log)
        version = None
        if not config.no_export:
            version = export_classifier(run, EXPORT_NAME, task, data, metrics)
    return run.result(EXPORT_NAME, "accuracy", metrics["accuracy"], version)


if __name__ == "__main__":
    main()
