"""`TextClassificationRecipe`: the stages the text-classifier recipes share.

A text-classifier recipe (HAN, the sentence embedder) extends
`TextClassificationConfig` with its model's options and `TextClassificationRecipe`
with: `read_texts` (its data as `ClassificationData`), `tokenize` and
`make_preprocessor` (its in-graph preprocessing), `build_model`, `report` (its
attention maps) and `exporter` (its family's export function). The rest is here:

- `load_data`: seeded samples (`--max-train-samples`, `--max-eval-samples`), the word
  vocabulary of the training texts, the preprocessor, the length-bucketed datasets and
  the initial word vectors (`--embeddings`; `initial_embeddings` may do more);
- `evaluate`: predictions and attention over the raw test texts, the test metrics
  (kept in `self.results` for the report);
- `export`: the family's export with the recipe's manifest entries and warm-up texts;
- `write_report`, `report_examples`, `export_metadata`: `metrics.txt`, the seeded
  test examples drawn in attention reports, the manifest entries of the export.

This module imports nothing heavy: a recipe's `--help` needs no TensorFlow.
"""

import dataclasses
import os

from zoo.recipe import Recipe, RecipeConfig, option


def column(text):
    """A column flag: a name, or a 0-based position when it is a number."""
    return int(text) if text.isdigit() else text


@dataclasses.dataclass
class TextClassificationConfig(RecipeConfig):
    """The options every text-classifier recipe has (see `RecipeConfig` for more)."""

    text_column: str = option(
        None,
        "text column of CSV/TSV/JSON-lines data, a name or a 0-based position "
        "(default: text)",
        type=column,
    )
    label_column: str = option(
        None,
        "label column, a name or a 0-based position (default: label)",
        type=column,
    )
    vocab_size: int = option(
        30000, "largest vocabulary, [PAD] and [UNK] included", check="positive"
    )
    min_count: int = option(
        1, "words seen fewer times in training map to [UNK]", check="positive"
    )
    embedding_dim: int = option(
        200, "word embedding size (--embeddings sets it)", check="positive"
    )
    embeddings: str = option(
        None,
        "initial word vectors, a word2vec/GloVe text file (sets --embedding-dim)",
        metavar="FILE",
    )

    def validate(self):
        from zoo.errors import ConfigError

        super().validate()
        if self.embeddings and not os.path.isfile(self.embeddings):
            raise ConfigError(f"--embeddings: no such file: {self.embeddings}")


class TextClassificationRecipe(Recipe):
    """A `Recipe` for a text classifier over raw labelled texts.

    Class attributes (besides `Recipe`'s):
        export_metrics: the metrics written into the export's manifest.
    """

    metric = "accuracy"
    config_class = TextClassificationConfig
    export_metrics = ("accuracy", "macro_f1")

    # --- What a recipe provides ---------------------------------------------------------

    def read_texts(self):
        """The data (`--data`, or the demo corpus) as a `ClassificationData`."""
        raise NotImplementedError

    def tokenize(self, text):
        """The preprocessor's in-graph tokenization: string `[B]` -> ragged words."""
        raise NotImplementedError

    def make_preprocessor(self, vocab_file):
        """The in-graph preprocessor on `vocab_file`."""
        raise NotImplementedError

    def length_buckets(self):
        """Byte-length bucket boundaries of the training batches (None: no buckets)."""
        return None

    def preprocess_kwargs(self):
        """Keyword arguments of the preprocessor's call in the training pipelines."""
        return {}

    def initial_embeddings(self, data):
        """The `InitialEmbeddings` the model starts from (`--embeddings` or none)."""
        from zoo.classification.embeddings import initial_embeddings

        c = self.config
        return initial_embeddings(data.vocab_file, c.embedding_dim, c.embeddings)

    def exporter(self):
        """The family's export function, called as `export(model, preprocessor,
        label_names, base_dir=, name=, warmup_texts=, metadata=)` (e.g.
        `zoo.models.han.export_han_classifier`)."""
        raise NotImplementedError

    def evaluation_outputs(self, outputs, features):
        """More per-text values computed with the test predictions (none here); see
        `predict_texts`'s `extra`."""
        return {}

    # --- Stages -------------------------------------------------------------------------

    def load_data(self):
        """Texts, vocabulary, preprocessor, datasets and initial word vectors: a
        `TextClassificationInputs`."""
        from zoo.classification.inputs import prepare_inputs

        c = self.config
        texts = self.read_texts().sample(
            c.max_train_samples, c.max_eval_samples, c.training.seed
        )
        counts = [0] * len(texts.label_names)
        for label in texts.train.labels:
            counts[int(label)] += 1
        per_class = ", ".join(
            f"{name} {n}" for name, n in zip(texts.label_names, counts, strict=True)
        )
        self.log(
            f"examples: {texts.sizes()}; classes: {list(texts.label_names)}; "
            f"training examples per class: {per_class}"
        )
        data = prepare_inputs(
            texts,
            self.tokenize,
            self.make_preprocessor,
            os.path.join(c.run_dir, "vocab.txt"),
            c.vocab_size,
            c.min_count,
            c.training.batch_size,
            c.training.seed,
            self.length_buckets(),
            self.preprocess_kwargs(),
        )
        self.log(f"vocabulary: {data.vocabulary_size} words")
        data.embeddings = self.initial_embeddings(data)
        self.log(data.embeddings.description)
        return data

    def evaluate(self, model, data):
        """The test metrics of `zoo.metrics.classification_report`."""
        from zoo.classification.prediction import evaluate_texts

        report, self.results = evaluate_texts(
            model,
            data.preprocessor,
            data.texts.test,
            data.label_names,
            extra=self.evaluation_outputs,
        )
        return report

    def export(self, model, data, metrics):
        """Exports with `self.exporter()`; four test texts are the warm-up requests."""
        return self.exporter()(
            model,
            data.preprocessor,
            data.label_names,
            base_dir=self.config.export_dir,
            name=self.export_name,
            warmup_texts=data.texts.test.texts[:4],
            metadata=self.export_metadata(data, metrics),
        )

    # --- Helpers ------------------------------------------------------------------------

    def write_report(self, data, metrics, notes=()):
        """Writes `metrics.txt`, prints its table and returns it."""
        from zoo.classification.report import write_classification_report

        text = write_classification_report(
            self.config.report_dir, data.description, metrics, notes
        )
        print(text, flush=True)
        return text

    def report_examples(self, data):
        """The seeded test results drawn in attention reports (`--report-samples`)."""
        from zoo.classification.report import report_examples

        c = self.config
        return report_examples(
            self.results, data.label_names, c.report_samples, c.training.seed
        )

    def export_metadata(self, data, metrics):
        """The export manifest's `recipe`, `data` and `metrics` entries."""
        from zoo.classification.report import export_metadata

        return export_metadata(
            self.name, data.description, metrics, self.export_metrics
        )
