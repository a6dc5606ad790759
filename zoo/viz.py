"""Attention heat maps and training curves (matplotlib, each figure on its own Agg
canvas: no display needed, and the process's matplotlib backend is left alone)."""

import os

import numpy as np


def _figure(path, **kwargs):
    """A `Figure` on its own Agg canvas (no pyplot state); `path`'s folder made."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    os.makedirs(os.path.dirname(os.fspath(path)) or ".", exist_ok=True)
    fig = Figure(**kwargs)
    FigureCanvasAgg(fig)
    return fig


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
    weights = np.asarray(weights, dtype=np.float64)
    row_labels, col_labels = (
        [x.decode(errors="replace") if isinstance(x, bytes) else str(x) for x in xs]
        for xs in (row_labels, col_labels)
    )
    if weights.shape != (len(row_labels), len(col_labels)):
        raise ValueError(
            "`weights` must be 2-D, its shape matching the labels. Received: "
            f"shape={weights.shape!r}, {len(row_labels)} row labels, "
            f"{len(col_labels)} column labels"
        )
    if not np.all(np.isfinite(weights)):
        raise ValueError("`weights` contains NaN or infinite values.")
    rows, cols = weights.shape
    size = np.clip([2.0 + 0.35 * cols, 1.5 + 0.35 * rows], [3.0, 2.5], 40.0)
    ax = _figure(path, figsize=tuple(size), dpi=100).subplots()
    image = ax.imshow(weights, cmap=cmap, aspect="auto", vmin=0.0)
    ax.set_xticks(range(cols), col_labels, rotation=90)
    ax.set_yticks(range(rows), row_labels)
    if title:
        ax.set_title(title)
    ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    # bbox_inches="tight" grows the canvas to fit long labels (whole sentences on a
    # memory-network map) instead of clipping them as tight_layout would.
    ax.figure.savefig(path, format="png", bbox_inches="tight")
    return path


# The size of `training_curve`'s PNG: inches at `CURVE_DPI` dots per inch.
CURVE_SIZE = (12.0, 4.5)
CURVE_DPI = 100


def training_curve(csv_path, path, monitor=None, rounds_per_epoch=1):
    """Writes the loss curves of a training log as a PNG.

    Two panels: on the left against epochs (passes over the training data), on the
    right against minutes of training (`elapsed_seconds / 60`; the panel says so
    when the log has no `elapsed_seconds` column). Each shows `loss` and, when
    logged, `val_loss`; a `monitor` other than these two (e.g. `val_accuracy`) is
    drawn on a second y axis on the right of each panel. Rows of the log are Keras
    epochs; with `rounds_per_epoch > 1` (validation rounds) row `i` is at epoch
    `(i + 1) / rounds_per_epoch` (0.5, 1.0, ... for two rounds), as
    a resumed run's message names them. Values that are missing or not numbers
    leave gaps.

    The PNG is `CURVE_SIZE` inches at `CURVE_DPI` (1200 x 450 pixels), written
    atomically (`zoo.io.atomic_write`). The figure is drawn on its own Agg canvas,
    without `pyplot`, so the process's matplotlib backend is left alone.

    Args:
        csv_path: a `log.csv` as `keras.callbacks.CSVLogger` writes it (an `epoch`
            column, then one column per logged value).
        path: the PNG to write; parent folders are created.
        monitor: the monitored value to draw besides the losses, or None.
        rounds_per_epoch: Keras epochs (validation rounds) per pass over the
            training data.

    Returns:
        The plotted series, a dict of lists of floats (NaN for gaps): `epoch` (the
        x values of the left panel), `minutes` (of the right panel; None without an
        `elapsed_seconds` column), and one list per curve drawn, by column name.

    Raises:
        ValueError: when the log has no `epoch` or `loss` column, or for a
            `rounds_per_epoch` < 1.
    """
    import pandas as pd

    from zoo.io import atomic_write

    if not isinstance(rounds_per_epoch, int) or rounds_per_epoch < 1:
        raise ValueError(
            "`rounds_per_epoch` must be a positive int. Received: "
            f"rounds_per_epoch={rounds_per_epoch!r}"
        )
    # Values that are missing or not numbers are NaN.
    frame = pd.read_csv(csv_path).apply(pd.to_numeric, errors="coerce").astype(float)
    columns = {name: frame[name].tolist() for name in frame.columns}
    for needed in ("epoch", "loss"):
        if needed not in columns:
            raise ValueError(
                f"{csv_path} has no {needed!r} column. Received columns: "
                f"{sorted(columns)}"
            )
    seconds = columns.get("elapsed_seconds")
    series = {
        "epoch": [(e + 1) / rounds_per_epoch for e in columns["epoch"]],
        "minutes": None if seconds is None else [s / 60.0 for s in seconds],
    }
    losses = [name for name in ("loss", "val_loss") if name in columns]
    extra = monitor if monitor in columns and monitor not in losses else None
    series.update((name, columns[name]) for name in [*losses, extra] if name)

    fig = _figure(path, figsize=CURVE_SIZE, dpi=CURVE_DPI)
    panels = fig.subplots(1, 2)
    for ax, x_name, x_label in (
        (panels[0], "epoch", "epoch (passes over the training data)"),
        (panels[1], "minutes", "minutes of training"),
    ):
        x = series[x_name]
        ax.set_xlabel(x_label)
        if x is None:
            note = "no elapsed_seconds in the log"
            ax.text(0.5, 0.5, note, ha="center", va="center", transform=ax.transAxes)
            continue
        lines = []
        for name, style in zip(losses, ("-", "--"), strict=False):
            lines += ax.plot(x, series[name], style, marker=".", label=name)
        ax.set_ylabel("loss")
        ax.grid(True, alpha=0.3)
        if extra:
            twin = ax.twinx()
            lines += twin.plot(
                x, series[extra], ":", marker=".", color="tab:green", label=extra
            )
            twin.set_ylabel(extra)
        ax.legend(lines, [line.get_label() for line in lines], loc="best")
    fig.suptitle(os.path.basename(os.path.dirname(os.path.abspath(csv_path))))
    fig.tight_layout()
    with atomic_write(path, "wb") as f:
        fig.savefig(f, format="png", dpi=CURVE_DPI)
    return series
