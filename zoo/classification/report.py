"""Reports of a classifier's test predictions: the metrics table, example choice."""

import os

import numpy as np

from zoo.io import atomic_write


def write_classification_report(report_dir, description, report, notes=()):
    """Writes `metrics.txt` in `report_dir` (atomically); returns its table.

    Args:
        report_dir: the report folder (created).
        description: one line on the data, written first.
        report: a `zoo.metrics.classification_report` dict.
        notes: more lines written after the table.
    """
    from zoo.metrics import format_report

    text = "\n".join([format_report(report), *notes])
    os.makedirs(report_dir, exist_ok=True)
    with atomic_write(os.path.join(report_dir, "metrics.txt")) as f:
        f.write(f"{description}\n\n{text}\n")
    return text


def report_examples(results, label_names, count, seed):
    """`count` seeded test results to draw in a report, with class names added:
    `"predicted"` and `"true"` (names) and `"probability"` (of the prediction).

    Args:
        results: `evaluate_texts`'s results (`"probabilities"`, `"predicted"`,
            `"label"` and the attention maps of each text).
        label_names: the class names.
        count: how many.
        seed: the choice's seed.
    """
    chosen = np.random.default_rng(seed).permutation(len(results))[:count]
    return [
        {
            **results[i],
            "index": int(i),
            "predicted": label_names[results[i]["predicted"]],
            "probability": float(results[i]["probabilities"][results[i]["predicted"]]),
            "true": label_names[results[i]["label"]],
        }
        for i in chosen
    ]


def export_metadata(recipe, description, metrics, keys=("accuracy", "macro_f1")):
    """The manifest entries of a classifier's export: the recipe, the data and the
    headline metrics (`keys` present in `metrics`)."""
    return {
        "recipe": recipe,
        "data": description,
        "metrics": {k: metrics[k] for k in keys if k in metrics},
    }
