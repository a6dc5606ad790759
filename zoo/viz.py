"""Attention heat maps (matplotlib, Agg backend: no display needed)."""

import os

import numpy as np


def attention_heatmap(
    weights, row_labels, col_labels, path, title=None, cmap="viridis"
):
    """Writes an attention matrix as a PNG heat map.

    Args:
        weights: array-like `(R, C)`, e.g. target tokens x source tokens.
        row_labels: R labels (y axis, top to bottom).
        col_labels: C labels (x axis, left to right, written vertically).
        path: output file; parent folders are created.
        title: optional figure title.
        cmap: matplotlib colour map name.

    Returns:
        `path`.
    """
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    weights = np.asarray(weights, dtype=np.float64)
    if weights.ndim != 2:
        raise ValueError(
            f"`weights` must be 2-D (rows, columns). Received: shape={weights.shape!r}"
        )
    row_labels = [_label(x) for x in row_labels]
    col_labels = [_label(x) for x in col_labels]
    if weights.shape != (len(row_labels), len(col_labels)):
        raise ValueError(
            "`weights` shape must match the labels. Received: "
            f"shape={weights.shape!r}, {len(row_labels)} row labels, "
            f"{len(col_labels)} column labels"
        )
    if not np.all(np.isfinite(weights)):
        raise ValueError("`weights` contains NaN or infinite values.")
    rows, cols = weights.shape
    fig_w = min(2.0 + 0.35 * cols, 40.0)
    fig_h = min(1.5 + 0.35 * rows, 40.0)
    fig, ax = plt.subplots(figsize=(max(fig_w, 3.0), max(fig_h, 2.5)), dpi=100)
    try:
        image = ax.imshow(weights, cmap=cmap, aspect="auto", vmin=0.0)
        ax.set_xticks(range(cols))
        ax.set_xticklabels(col_labels, rotation=90)
        ax.set_yticks(range(rows))
        ax.set_yticklabels(row_labels)
        if title:
            ax.set_title(title)
        fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
        os.makedirs(os.path.dirname(os.fspath(path)) or ".", exist_ok=True)
        # bbox_inches="tight" grows the canvas to fit long labels (whole sentences on
        # a memory-network map) instead of clipping them as tight_layout would.
        fig.savefig(path, format="png", bbox_inches="tight")
    finally:
        plt.close(fig)
    return path


def _label(x):
    if isinstance(x, (bytes, np.bytes_)):
        return x.decode("utf-8", errors="replace")
    return str(x)
