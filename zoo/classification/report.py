"""The text report of a classifier's test metrics."""

import json
import os

import numpy as np


def write_classification_report(report_dir, description, report, notes=()):
    """Writes `metrics.txt` (and `metrics.json`) in `report_dir`; returns the text.

    Args:
        report_dir: the report folder (created).
        description: one line on the data, written first.
        report: a `zoo.metrics.classification_report` dict (and any other metrics).
        notes: more lines written after the table.
    """
    from zoo.metrics import format_report
    from zoo.recipe import write_text_atomic

    text = "\n".join([format_report(report), *notes])
    os.makedirs(report_dir, exist_ok=True)
    write_text_atomic(
        os.path.join(report_dir, "metrics.json"),
        json.dumps({"data": description, **report}, indent=2) + "\n",
    )
    write_text_atomic(
        os.path.join(report_dir, "metrics.txt"), f"{description}\n\n{text}\n"
    )
    return text


def report_indices(count, limit, seed):
    """`limit` seeded indices of `count` test examples to draw in a report."""
    return np.random.default_rng(seed).permutation(count)[:limit].tolist()
