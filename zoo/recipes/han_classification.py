"""Document classification with a Hierarchical Attention Network, servable on TF Serving.

Task: classify whole documents (reviews) and show which sentences and words decided.
Paper: Yang et al., 2016, "Hierarchical Attention Networks for Document
Classification" (NAACL). Model: `zoo.models.han.HANClassifier` (word BiGRU + word
attention per sentence, sentence BiGRU + sentence attention, softmax).
Metric: test accuracy (plus per-class precision/recall/F1 and the confusion matrix).

Commands:

    python -m zoo.recipes.han_classification                 # generated demo corpus, < 1 min
    python -m zoo.recipes.han_classification --data ../shared/data/aclImdb   # IMDB (folder
        # or its .tar.gz), binary
    python -m zoo.recipes.han_classification --data ../shared/data/yelp_10k/yelp.csv \\
        --label-column stars                                # Yelp, 5 classes
    python -m zoo.recipes.han_classification --data ... --word2vec-epochs 0
        # embeddings from scratch; by default real data first trains skip-gram
        # vectors for 5 epochs on the training + validation documents (the paper's
        # initialisation; also written to RUN_DIR/word2vec.txt)
    python -m zoo.recipes.han_classification --data ... --embeddings vectors.txt
        # start from your own word2vec/GloVe text vectors

Data: the IMDB layout, CSV/TSV/JSON lines (columns by name or 0-based position),
split files or one folder per class (`zoo.data.documents.load_documents`).

Training with `--data`: 2 epochs at learning rate 2e-3, batches of 32, validated twice
per epoch, the weights of the best validation accuracy kept (the best measured per
minute of training on 2 CPU cores, see BENCHMARKS.md).

Outputs: `runs/han_classification/` (vocabulary, checkpoints, logs),
`reports/han_classification/` (`metrics.json`, `metrics.txt`, `attention.html`: the
highest-weighted sentences and words of sample test documents, as in the paper's
Figure 5), and `saved_models/han/VERSION/` with the signatures of
`zoo.models.han.HANServing`: `serving_default(text)` -> `probabilities`, `label`,
`sentence_attention` [None, S], `word_attention` [None, S, W]; `explain(text)` -> the
same plus the `sentences` and `words` the weights refer to; `preprocess(text)` ->
`token_ids`, the Keras model's input.

Preprocessing runs in the graph (`HANPreprocessor`); truncation, limits and empty
texts are described in `zoo.models.han.HANServing`.
"""

import dataclasses
import os

from zoo.recipes import steps
from zoo.recipes.config import option
from zoo.recipes.text_classification import TextClassificationConfig

NAME = "han_classification"
EXPORT_NAME = "han"
# Two passes validated twice each, the best of the four validations kept: the
# validation accuracy peaks within the second pass on IMDB-sized data.
TRAINING = dict(
    epochs=2,
    batch_size=32,
    learning_rate=2e-3,
    validations_per_epoch=2,
    monitor="val_accuracy",
    patience=4,
)
# Short generated documents: small fixed limits (the Config's demo values), no early
# stopping.
DEMO_TRAINING = dict(
    epochs=3,
    patience=0,
    tensorboard=False,
    validations_per_epoch=1,
    monitor="val_loss",
)


@dataclasses.dataclass
class Config(TextClassificationConfig):
    """The recipe's options (the command-line flags)."""

    max_sentences: int = option(
        30,
        "sentences kept per document (later ones are dropped)",
        demo=8,
        check="positive",
    )
    max_words: int = option(
        50,
        "words kept per sentence (later ones are dropped)",
        demo=16,
        check="positive",
    )
    min_count: int = option(
        2, "words seen fewer times in training map to [UNK]", demo=1, check="positive"
    )
    rnn_units: int = option(
        50, "GRU units per direction (both levels)", check="positive"
    )
    context_units: int = option(
        100, "size of the word and sentence context vectors", check="positive"
    )
    dropout: float = option(
        0.0, "dropout on the embeddings and the document vector", check="open_fraction"
    )
    pooling: str = option(
        "attention",
        "word and sentence pooling (mean: a baseline)",
        choices=("attention", "mean"),
    )
    word2vec_epochs: int = option(
        None,
        "first train skip-gram vectors on the training and validation documents for "
        "N epochs and start from them, as the paper does (0: off; default 5 with "
        "--data, 0 on the demo corpus or with --embeddings)",
        check="non_negative",
        metavar="N",
    )
    encoding: str = option(
        "utf-8", "text encoding of a class-folder data set's files (e.g. latin-1)"
    )
    skip_unreadable: bool = option(
        False,
        "skip files of a class-folder data set that are not text in --encoding "
        "(one line each, counted at the end) instead of stopping",
    )
    demo_size: int = option(
        400, "documents in the generated demo corpus", check="positive", metavar="N"
    )
    report_samples: int = option(
        8, "test documents drawn in attention.html", check="non_negative", metavar="N"
    )

    def validate(self):
        from zoo.errors import ConfigError

        if self.embeddings and self.word2vec_epochs:
            raise ConfigError("use either --embeddings or --word2vec-epochs, not both")
        super().validate()
        if self.word2vec_epochs is None:
            self.word2vec_epochs = 0 if self.demo or self.embeddings else 5


parse = steps.parser(Config, NAME, __doc__, TRAINING, DEMO_TRAINING)


def read_texts(config):
    """The labelled documents of `--data` (or the demo corpus), a
    `ClassificationData`."""
    from zoo.data.documents import demo_splits, load_documents
    from zoo.recipes.labelled_texts import ClassificationData

    if config.demo:
        documents = demo_splits(config.demo_size, seed=config.training.seed)
    else:
        documents = load_documents(
            config.data,
            text_column="text" if config.text_column is None else config.text_column,
            label_column=config.label_column,
            encoding=config.encoding,
            skip_unreadable=config.skip_unreadable,
        )
    return ClassificationData.from_documents(documents)


def load_data(config, log=print):
    """Documents -> vocabulary, `HANPreprocessor`, datasets and the initial word
    vectors (`--embeddings`, word2vec or none): a `TextClassificationInputs`."""
    from zoo.models.han import LENGTH_BUCKETS, HANPreprocessor, tokenize_documents
    from zoo.recipes.text_classification import initial_embeddings, prepare_inputs

    c = config
    data = prepare_inputs(
        c,
        read_texts(c),
        lambda text: tokenize_documents(text, c.max_sentences, c.max_words)[1],
        lambda vocab: HANPreprocessor(vocab, c.max_sentences, c.max_words),
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


def save_word2vec(config, data):
    """Writes the skip-gram vectors the model started from (`--word2vec-epochs`) to
    `RUN_DIR/word2vec.txt`, for `--embeddings` or other programs; called once the
    run's identity is checked (a refused run writes nothing into the folder).
    Returns the path, or None when no vectors were trained."""
    if not config.word2vec_epochs or data.embeddings.matrix is None:
        return None
    from zoo.text.vocabulary import Vocabulary
    from zoo.text.word2vec import write_word2vec

    path = os.path.join(config.run_dir, "word2vec.txt")
    tokens = Vocabulary.load(data.vocab_file).tokens
    write_word2vec(path, tokens, data.embeddings.matrix)
    return path


def build_model(config, data, optimizer):
    """The `HANClassifier`, its embeddings set, its training view compiled."""
    from zoo.models.han import HANClassifier
    from zoo.models.text_classifier import compile_classifier

    model = HANClassifier(
        vocabulary_size=data.vocabulary_size,
        num_classes=len(data.label_names),
        embedding_dim=data.embeddings.dim,
        rnn_units=config.rnn_units,
        context_units=config.context_units,
        dropout=config.dropout,
        pooling=config.pooling,
        name="han_classifier",
    )
    if data.embeddings.matrix is not None:
        model.set_embedding_matrix(data.embeddings.matrix)
    # Batches vary in shape (S, W): XLA recompiles for every new shape.
    compile_classifier(model, optimizer, config.xla)
    return model


def report(config, data, metrics, results, log=print):
    """`metrics.txt` and `attention.html` (seeded right and wrong test documents)."""
    from zoo.recipes.text_classification import write_report
    from zoo.report import attention_report_html

    text, examples = write_report(config, data, metrics, results)
    path = attention_report_html(
        os.path.join(config.report_dir, "attention.html"),
        examples,
        title=f"HAN attention: {steps.data_name(config, 'demo documents')}",
        subtitle=data.description,
        summary=text,
    )
    log(f"attention report: {path}")


def main(argv=None):
    """Trains, evaluates, reports and exports; returns `{"model", "metric", "value",
    "export"}`."""
    config = parse(argv)
    with steps.recipe_run(NAME, config) as run:
        from zoo.models.han import CLIPNORM, export_han_classifier
        from zoo.recipes.text_classification import evaluate_texts, export_classifier

        data = load_data(config, run.log)
        run.log(data.description)
        with run.strategy.scope():
            model = build_model(config, data, run.optimizer(clipnorm=CLIPNORM))
        run.fit(
            model.training_model(),
            data.train,
            data.validation,
            data_fingerprint=data.fingerprint,
        )
        data.publish()  # RUN_DIR/vocab.txt, now that the run's identity is checked
        save_word2vec(config, data)
        run.log("trained")
        metrics, results = evaluate_texts(
            model, data.preprocessor, data.texts.test, data.label_names
        )
        run.write_metrics(data.description, metrics)
        report(config, data, metrics, results, run.log)
        version = None
        if not config.no_export:
            version = export_classifier(
                run, export_han_classifier, EXPORT_NAME, model, data, metrics
            )
    return run.result(EXPORT_NAME, "accuracy", metrics["accuracy"], version)


if __name__ == "__main__":
    main()
