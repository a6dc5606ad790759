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

Preprocessing runs in the graph (`HANPreprocessor`): documents are truncated to
`--max-sentences` sentences of `--max-words` words (never rejected), inputs over 64 KiB
are cut first. `S` and `W` are the longest (truncated) document and sentence of the
request, at least 1. An empty or whitespace-only text has no words: all its attention
weights are 0 and its probabilities are the classifier's output for an all-zero
document vector (finite, never NaN).
"""

import dataclasses
import os

from zoo.classification.recipe import TextClassificationConfig, TextClassificationRecipe
from zoo.recipe import option


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


class HANClassification(TextClassificationRecipe):
    """Yang et al. 2016 on labelled documents: train, evaluate, report, export."""

    name = "han_classification"
    export_name = "han"
    config_class = Config
    # Two passes validated twice each, the best of the four validations kept: the
    # validation accuracy peaks within the second pass on IMDB-sized data.
    training_defaults = dict(
        epochs=2,
        batch_size=32,
        learning_rate=2e-3,
        validations_per_epoch=2,
        monitor="val_accuracy",
        patience=4,
    )
    # Short generated documents: small fixed limits (above), no early stopping.
    demo_training_defaults = dict(
        epochs=3,
        patience=0,
        tensorboard=False,
        validations_per_epoch=1,
        monitor="val_loss",
    )

    def read_texts(self):
        from zoo.classification import ClassificationData
        from zoo.data.documents import demo_splits, load_documents

        c = self.config
        if self.demo:
            documents = demo_splits(c.demo_size, seed=c.training.seed)
        else:
            documents = load_documents(
                c.data,
                text_column="text" if c.text_column is None else c.text_column,
                label_column=c.label_column,
                encoding=c.encoding,
                skip_unreadable=c.skip_unreadable,
            )
        return ClassificationData.from_documents(documents)

    def tokenize(self, text):
        from zoo.models.han import tokenize_documents

        c = self.config
        return tokenize_documents(text, c.max_sentences, c.max_words)[1]

    def make_preprocessor(self, vocab_file):
        from zoo.models.han import HANPreprocessor

        return HANPreprocessor(
            vocab_file, self.config.max_sentences, self.config.max_words
        )

    def exporter(self):
        from zoo.models.han import export_han_classifier

        return export_han_classifier

    def length_buckets(self):
        from zoo.models.han import LENGTH_BUCKETS

        return LENGTH_BUCKETS

    def preprocess_kwargs(self):
        # The demo's limits are small: one fixed shape, one graph trace.
        return {"pad_to_limits": self.demo}

    def initial_embeddings(self, data):
        from zoo.classification import initial_embeddings

        c = self.config
        texts = data.texts.train.texts + data.texts.validation.texts
        return initial_embeddings(
            data.vocab_file,
            c.embedding_dim,
            vectors=c.embeddings,
            word2vec_epochs=c.word2vec_epochs,
            corpus=data.preprocessor.document_ids(texts),
            seed=c.training.seed,
            save_to=os.path.join(c.run_dir, "word2vec.txt"),
        )

    def build_model(self, data):
        from zoo.classification import compile_classifier
        from zoo.models.han import CLIPNORM, HANClassifier

        c = self.config
        model = HANClassifier(
            vocabulary_size=data.vocabulary_size,
            num_classes=len(data.label_names),
            embedding_dim=data.embeddings.dim,
            rnn_units=c.rnn_units,
            context_units=c.context_units,
            dropout=c.dropout,
            pooling=c.pooling,
            name="han_classifier",
        )
        if data.embeddings.matrix is not None:
            model.set_embedding_matrix(data.embeddings.matrix)
        # Batches vary in shape (S, W): XLA recompiles for every new shape.
        compile_classifier(model, self.optimizer(clipnorm=CLIPNORM), c.xla)
        return model

    def report(self, model, data, metrics):
        from zoo.report import attention_report_html

        c = self.config
        text = self.write_report(data, metrics)
        name = (
            "demo documents"
            if self.demo
            else os.path.basename(os.path.normpath(str(c.data)))
        )
        path = attention_report_html(
            os.path.join(c.report_dir, "attention.html"),
            self.report_examples(data),  # seeded: right and wrong predictions
            title=f"HAN attention: {name}",
            subtitle=data.description,
            summary=text,
        )
        self.log(f"attention report: {path}")


main = HANClassification.main

if __name__ == "__main__":
    main()
