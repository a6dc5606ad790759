"""Predictions of a text classifier over raw texts, and their test metrics."""

import numpy as np
import tensorflow as tf


def predict_texts(model, preprocessor, texts, batch_size=64, extra=None):
    """Runs preprocessor + model over raw texts; returns one dict per text.

    The texts are run in order of length (less padding), in batches, inside one
    `tf.function`; results come back in the order of `texts`. Every output of the
    model (`"probabilities"` and the attention maps) and every string output of the
    preprocessor (the words the attention refers to) is returned, as that text's row
    of its padded batch (strings decoded; padding is `""` and zero weight).

    Args:
        model: a classifier following the models' convention: `model(token_ids)`
            returns a dict holding `"probabilities"`.
        preprocessor: string tensor `[B]` -> dict holding `"token_ids"`.
        texts: list of str.
        batch_size: texts per batch.
        extra: optional `extra(outputs, features) -> dict` of more per-text tensors
            computed in the same graph (e.g. a penalty norm).

    Returns:
        A list of `{name: NumPy row}` dicts.
    """

    @tf.function(reduce_retracing=True)
    def run(text):
        features = preprocessor(text)
        outputs = dict(model(features["token_ids"], training=False))
        if extra is not None:
            outputs.update(extra(outputs, features))
        for key, value in features.items():
            if value.dtype == tf.string:
                outputs[key] = value
        return outputs

    texts = list(texts)
    order = np.argsort([len(t) for t in texts], kind="stable")
    results = [None] * len(texts)
    for start in range(0, len(texts), batch_size):
        index = order[start : start + batch_size]
        batch = {
            k: v.numpy() for k, v in run(tf.constant([texts[i] for i in index])).items()
        }
        for j, i in enumerate(index):
            results[i] = {k: _decoded(v[j]) for k, v in batch.items()}
    return results


def _decoded(row):
    if isinstance(row, bytes):
        return row.decode("utf-8")
    if row.dtype == object:
        return np.vectorize(lambda b: b.decode("utf-8"), otypes=[object])(row)
    return row


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
