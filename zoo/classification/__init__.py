"""What the text classifiers (HAN, the sentence embedder) share around their models.

- `LabelledTexts`, `ClassificationData`: raw texts with class ids, train / validation /
  test, seeded samples;
- `build_word_vocabulary`: the word vocabulary from the model's in-graph tokenization;
- `labelled_dataset`, `labelled_datasets`: `tf.data` pipelines of raw texts through
  the preprocessor, length-bucketed for training;
- `initial_embeddings`: start from a vector file, from word2vec, or from scratch;
- `compile_classifier`: compile the model's training view;
- `predict_texts`, `evaluate_texts`: predictions and attention over raw texts, test
  metrics;
- `write_classification_report`, `report_indices`: the metrics files and the
  examples drawn in attention reports.
"""

from zoo.classification.embeddings import InitialEmbeddings, initial_embeddings
from zoo.classification.labelled_texts import ClassificationData, LabelledTexts
from zoo.classification.pipeline import (
    build_word_vocabulary,
    labelled_dataset,
    labelled_datasets,
)
from zoo.classification.prediction import evaluate_texts, predict_texts
from zoo.classification.report import report_indices, write_classification_report
from zoo.classification.training import compile_classifier

__all__ = [
    "ClassificationData",
    "InitialEmbeddings",
    "LabelledTexts",
    "build_word_vocabulary",
    "compile_classifier",
    "evaluate_texts",
    "initial_embeddings",
    "labelled_dataset",
    "labelled_datasets",
    "predict_texts",
    "report_indices",
    "write_classification_report",
]
