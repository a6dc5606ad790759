"""bAbI results: test errors per task, their table and summary, attention heat maps.

Errors are in percent, as in the paper, and every metric that holds one says so in
its name (`test_error_percent`, `mean_test_error_percent`, ...).
"""

import os

import numpy as np

from zoo.models.memn2n.babi_arrays import error_rate, predict, select

FAILED_ABOVE = 5.0
"""A task is failed when its test error (%) is above this (the paper's threshold)."""

PAPER_1K_JOINT_PE_LS_RN = {
    1: 0.0, 2: 11.4, 3: 21.9, 4: 13.4, 5: 14.4, 6: 2.8, 7: 18.3, 8: 9.3, 9: 1.9,
    10: 6.5, 11: 0.3, 12: 0.1, 13: 0.2, 14: 6.9, 15: 0.0, 16: 2.7, 17: 40.4,
    18: 9.4, 19: 88.0, 20: 0.0,
}  # fmt: skip
"""Test error (%) of the paper (Table 1, 1k, PE LS RN, joint): mean 12.4, 11 failed.

Measured on the English bAbI 1k (`en/`): compare only with results on that data."""


def paper_errors(language, size, joint=True):
    """The paper's per-task errors to show next to a result, or None.

    Only a joint model on the English bAbI 1k (`language="en"`, `size="1k"`) is
    compared: the paper's numbers are of that data and training.
    """
    return (
        PAPER_1K_JOINT_PE_LS_RN if joint and (language, size) == ("en", "1k") else None
    )


def summarize_errors(errors):
    """Mean error and failed-task count (error > 5%) over the tasks.

    A task without a result (None) fails the summary: the mean over the tasks is
    unavailable (None) rather than taken over fewer tasks, and the task counts as
    failed. The mean of the measured tasks alone is
    `measured_mean_test_error_percent`.

    Args:
        errors: dict task -> test error (%), or None where unavailable.

    Returns:
        dict: `mean_test_error_percent` (None when any task is unavailable or none
        was measured), `failed_tasks` (unavailable tasks included),
        `measured_tasks`, `unavailable_tasks`, `measured_mean_test_error_percent`
        (None when none was measured).
    """
    measured = {t: e for t, e in errors.items() if e is not None}
    unavailable = sorted(t for t, e in errors.items() if e is None)
    mean = float(np.mean(list(measured.values()))) if measured else None
    return {
        "mean_test_error_percent": None if unavailable else mean,
        "failed_tasks": int(sum(e > FAILED_ABOVE for e in measured.values()))
        + len(unavailable),
        "measured_tasks": sorted(measured),
        "unavailable_tasks": unavailable,
        "measured_mean_test_error_percent": mean,
    }


def format_error_table(errors, paper=None, names=None):
    """Markdown table of test error per task, its mean and failed-task count.

    Args:
        errors: dict task -> test error (%), or None (shown as n/a; the mean is
            then n/a and the task counts as failed, `summarize_errors`).
        paper: optional dict task -> published error (%), shown as a column.
        names: optional dict task -> the task's name (`BabiTask.name`).

    Returns:
        The table, a string of Markdown lines.
    """
    header = "| task | name | test error (%) |" + (" paper (%) |" if paper else "")
    rule = "|---:|---|---:|" + ("---:|" if paper else "")

    def row(left, cell, published):
        return f"| {left} | {cell} |" + (f" {published} |" if paper else "")

    lines = [header, rule]
    for task, error in errors.items():
        cell = "n/a" if error is None else f"{error:.1f}"
        published = f"{paper.get(task, float('nan')):.1f}" if paper else ""
        lines.append(row(f"{task} | {(names or {}).get(task, '')}", cell, published))
    summary = summarize_errors(errors)
    missing = summary["unavailable_tasks"]
    note = f" (task{'s' * (len(missing) > 1)} {', '.join(map(str, missing))} missing)"
    note = note if missing else ""
    mean = summary["mean_test_error_percent"]
    mean = "n/a" if mean is None else f"{mean:.1f}"
    paper_mean = f"{np.mean(list(paper.values())):.1f}" if paper else ""
    lines.append(row("mean |", f"{mean}{note}", paper_mean))
    paper_failed = sum(e > FAILED_ABOVE for e in paper.values()) if paper else ""
    lines.append(
        row("failed (> 5%) |", f"{summary['failed_tasks']}{note}", paper_failed)
    )
    return "\n".join(lines)


def plot_attention(
    model, examples, arrays, vocab, report_dir, samples, prefix, grids=None
):
    """Per-hop attention heat maps of the first `samples` test questions.

    Rows are hops, columns the story's sentences oldest to newest, supporting facts
    marked with `*` (the paper's Figure 2).

    Args:
        model: a `MemN2NQuestionAnswerer` (or its `MemN2N`).
        examples: the `BabiExample`s that `arrays` hold.
        arrays: their `vectorize` output.
        vocab: the `Vocabulary` (for the predicted answer).
        report_dir: folder of the PNGs, named `attention_<prefix>_<i>.png`.
        samples: int, how many.
        prefix: str.
        grids: optional list; each drawn question is appended to it as an example
            of `zoo.report.attention_grid_html` (rows: the story's sentences, oldest
            to newest, with their whole text; columns: the hops).

    Returns:
        The paths written.
    """
    from zoo.viz import attention_heatmap

    if samples <= 0 or not examples:
        return []
    count = min(samples, len(examples))
    predicted, _, attention = predict(model, select(arrays, slice(count)))
    paths = []
    for row, example in enumerate(examples[:count]):
        sentences = [s for s in example.story if s.strip()]
        n = min(len(sentences), attention.shape[-1])
        if not n:
            continue
        # Slot 0 is the most recent sentence: reverse to oldest -> newest.
        weights = attention[row, :, :n][:, ::-1]
        offset = len(sentences) - n
        marks = ["* " if i + offset in example.supporting else "" for i in range(n)]
        hops = [f"hop {h + 1}" for h in range(weights.shape[0])]
        answer = vocab.id_to_token(int(predicted[row]))
        truth = f"(true: {example.answer})"
        if grids is not None:
            grids.append(
                {
                    "rows": [m + t for m, t in zip(marks, sentences[-n:], strict=True)],
                    "columns": hops,
                    "weights": weights.T.tolist(),  # (sentences, hops)
                    "caption": f"question: {example.question}\nanswer: {answer} {truth}",
                    "ok": answer == example.answer,
                }
            )
        short = [t if len(t) <= 32 else t[:29] + "..." for t in sentences[-n:]]
        labels = [m + t for m, t in zip(marks, short, strict=True)]
        path = os.path.join(report_dir, f"attention_{prefix}_{row}.png")
        title = f"{example.question} -> {answer} {truth}"
        paths.append(attention_heatmap(weights, hops, labels, path, title=title))
    return paths


def evaluate_tasks(results, tasks, arrays):
    """Test errors of trained models on their tasks, summarized, as metrics.

    Args:
        results: dict label -> `best_of_restarts` result plus `"tasks"` (the tasks
            its model answers).
        tasks: dict task -> `zoo.data.babi.BabiTask`.
        arrays: `arrays[task]["test"]`, the `vectorize` output of each test split.

    Returns:
        A JSON-able dict: `test_error_percent` (task as str -> % or None, for
        tasks no model answers), `summarize_errors`' entries,
        `train_error_percent` and `runs` per label, `unavailable` (task as str ->
        why), `task_names` (task as str -> name).
    """
    model_of = {t: r["model"] for r in results.values() for t in r["tasks"]}
    errors = {
        t: error_rate(model_of[t], arrays[t]["test"]) if t in model_of else None
        for t in tasks
    }
    return {
        "test_error_percent": {str(t): e for t, e in errors.items()},
        **summarize_errors(errors),
        "train_error_percent": {
            label: r["train_error_percent"] for label, r in results.items()
        },
        "runs": {label: r["runs"] for label, r in results.items()},
        "unavailable": {str(t): e.missing for t, e in tasks.items() if e.missing},
        "task_names": {str(t): e.name for t, e in tasks.items()},
    }


def write_error_report(path, title, metrics, paper=None):
    """Writes the error table of `evaluate_tasks`' metrics as Markdown; returns it.

    Args:
        path: the Markdown file (written whole or not at all).
        title: the heading.
        metrics: `evaluate_tasks`' result.
        paper: optional dict task -> published error (%), a column of the table
            (only for results on the data the paper measured).

    Returns:
        The table (`format_error_table`).
    """
    from zoo.io import atomic_write

    errors = {int(t): e for t, e in metrics["test_error_percent"].items()}
    names = {int(t): name for t, name in metrics.get("task_names", {}).items()}
    paper = {t: paper[t] for t in errors if t in paper} if paper else None
    table = format_error_table(errors, paper, names)
    notes = "".join(
        f"\nTask {t}: n/a ({why}).\n" for t, why in metrics["unavailable"].items()
    )
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with atomic_write(path) as f:
        f.write(f"# {title}\n\n{table}\n{notes}")
    return table


def write_task_reports(
    report_dir,
    results,
    tasks,
    arrays,
    vocab,
    metrics,
    *,
    description,
    data_name,
    joint,
    samples,
    log=print,
):
    """The run's reports in `report_dir`: `test_errors.md` (printed; the paper's
    column only on the data it measured), `samples` attention PNGs per task and
    `attention.html` (each task's sample questions, the hops over the sentences).

    Args:
        results, tasks, arrays, vocab: as `evaluate_tasks` and `plot_attention`
            take them; task 0 (the generated demo) names its files `demo`.
        metrics: `evaluate_tasks`' metrics and `data_source` (`BabiFolder.to_dict`,
            or None for the demo).
        description: the data's description, for headings.
        data_name: a short name of the data, for the page's title.
        joint: whether one model answers every task (the paper's column).
        samples: test questions drawn per task.
    """
    from zoo.report import attention_grid_html

    source = metrics.get("data_source") or {}
    paper = paper_errors(source.get("language"), source.get("size"), joint)
    path = os.path.join(report_dir, "test_errors.md")
    table = write_error_report(
        path, f"MemN2N test error, {description}", metrics, paper
    )
    print(table, flush=True)
    if source and paper is None:
        log("no paper column: the paper measured a joint model on bAbI en 1k")

    sections, pngs = [], []
    for r in results.values():
        for t in r["tasks"]:
            grids = []
            pngs += plot_attention(
                r["model"], tasks[t].test, arrays[t]["test"], vocab, report_dir,
                samples, f"task{t}" if t else "demo", grids,
            )  # fmt: skip
            if grids:
                sections.append({"heading": f"task {t}", "examples": grids})
    log(f"attention plots: {len(pngs)} in {report_dir}")
    if sections:
        page = attention_grid_html(
            os.path.join(report_dir, "attention.html"),
            sections,
            title=f"MemN2N attention: {data_name}",
            subtitle=description,
            summary=table,
            legend="Rows: the story's sentences, oldest first (* marks the "
            "supporting facts); columns: the hops; the darker a cell, the more "
            "weight that hop gave that sentence.",
        )
        log(f"attention report: {page}")
