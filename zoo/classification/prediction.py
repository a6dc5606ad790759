"""Predictions of a text classifier over raw texts, and their test metrics."""

import numpy as np

from zoo.models.text_classifier import predict_texts  # noqa: F401  (public here too)


def evaluate_texts(model, preprocessor, texts, label_names, batch_size=64, extra=None):
    """Test metrics of a classifier on `LabelledTexts`, and its predictions.

    Returns:
        `(report, results)`: `zoo.metrics.classification_report` of the predictions
        (accuracy, macro F1, per-class precision / recall / F1, confusion matrix),
        and `predict_texts`'s results, each with `"predicted"` (class id) and
        `"label"` (the true class id) added.
    """
    from zoo.metrics import classification_report

    results = predict_texts(model, preprocessor, texts.texts, batch_size, extra)
    for result, label in zip(results, texts.labels, strict=True):
        result["predicted"] = int(np.argmax(result["probabilities"]))
        result["label"] = int(label)
    report = classification_report(
        [r["label"] for r in results],
        [r["predicted"] for r in results],
        list(label_names),
    )
    return report, results
