"""What the text classifiers (HAN, the sentence embedder) share around their models.

- `LabelledTexts`, `ClassificationData`: raw texts with class ids, train / validation /
  test, seeded samples;
- `build_word_vocabulary`: the word vocabulary from the model's in-graph tokenization;
- `labelled_dataset`, `labelled_datasets`: `tf.data` pipelines of raw texts through
  the preprocessor, length-bucketed for training;
- `prepare_inputs`, `TextClassificationInputs`: the three above in one step;
- `initial_embeddings`: start from a vector file, from word2vec, or from scratch;
- `compile_classifier`: compile the model's training view;
- `predict_texts`, `evaluate_texts`: predictions and attention over raw texts, test
  metrics;
- `write_classification_report`, `report_examples`, `export_metadata`: the metrics
  table, the test examples drawn in attention reports, the export's manifest entries;
- `TextClassifierServing`: the base of their serving modules (`preprocess`, labels);
- `TextClassificationConfig`, `TextClassificationRecipe`
  (`zoo.classification.recipe`): the options and stages the text-classifier recipes
  share.

Each name loads its module on first use: the recipe base needs no TensorFlow, so a
recipe's `--help` stays fast.
"""

import importlib

# Public name -> the module that defines it.
_EXPORTS = {
    "InitialEmbeddings": "zoo.classification.embeddings",
    "initial_embeddings": "zoo.classification.embeddings",
    "TextClassificationInputs": "zoo.classification.inputs",
    "prepare_inputs": "zoo.classification.inputs",
    "ClassificationData": "zoo.classification.labelled_texts",
    "LabelledTexts": "zoo.classification.labelled_texts",
    "build_word_vocabulary": "zoo.classification.pipeline",
    "labelled_dataset": "zoo.classification.pipeline",
    "labelled_datasets": "zoo.classification.pipeline",
    "evaluate_texts": "zoo.classification.prediction",
    "predict_texts": "zoo.classification.prediction",
    "TEXT_SPEC": "zoo.classification.serving",
    "TextClassifierServing": "zoo.classification.serving",
    "TextClassificationConfig": "zoo.classification.recipe",
    "TextClassificationRecipe": "zoo.classification.recipe",
    "export_metadata": "zoo.classification.report",
    "report_examples": "zoo.classification.report",
    "write_classification_report": "zoo.classification.report",
    "compile_classifier": "zoo.classification.training",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'zoo.classification' has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
