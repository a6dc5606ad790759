import numpy as np

from zoo.data import babi
from zoo.demo.babi import DEMO_TASK, load_demo
from zoo.models.memn2n import MemN2N, MemN2NQuestionAnswerer, babi_arrays
from zoo.models.memn2n.babi_report import (
    PAPER_1K_JOINT_PE_LS_RN,
    format_error_table,
    paper_errors,
    plot_attention,
    summarize_errors,
)


def test_error_table_and_summary():
    errors = {1: 0.0, 3: None, 4: 10.0}
    names = {t: babi.TASK_NAMES[t] for t in errors}
    table = format_error_table(errors, PAPER_1K_JOINT_PE_LS_RN, names)
    lines = table.splitlines()
    assert lines[0] == "| task | name | test error (%) | paper (%) |"
    assert "| 3 | three-supporting-facts | n/a | 21.9 |" in lines
    assert "| 4 | two-arg-relations | 10.0 | 13.4 |" in lines
    # a missing task: no mean over the others, and it counts as failed
    assert "| mean | | n/a (task 3 missing) | 12.4 |" in lines
    assert "| failed (> 5%) | | 2 (task 3 missing) | 11 |" in lines
    assert format_error_table({0: 2.5}).splitlines()[2] == "| 0 |  | 2.5 |"
    summary = summarize_errors(errors)
    assert summary == {
        "mean_test_error_percent": None,
        "failed_tasks": 2,
        "measured_tasks": [1, 4],
        "unavailable_tasks": [3],
        "measured_mean_test_error_percent": 5.0,
    }
    complete = summarize_errors({1: 0.0, 4: 10.0})
    assert complete["mean_test_error_percent"] == 5.0
    assert complete["failed_tasks"] == 1
    lines = format_error_table({1: 0.0, 4: 10.0}).splitlines()
    assert lines[-2:] == ["| mean | | 5.0 |", "| failed (> 5%) | | 1 |"]
    assert summarize_errors({1: None})["mean_test_error_percent"] is None
    assert summarize_errors({1: None, 2: None})["failed_tasks"] == 2


def test_the_paper_is_compared_only_on_its_data():
    assert paper_errors("en", "1k") is PAPER_1K_JOINT_PE_LS_RN
    assert paper_errors("en", "1k", joint=False) is None
    for language, size in (
        ("en", "10k"),
        ("hn", "1k"),
        ("shuffled", "1k"),
        (None, None),
    ):
        assert paper_errors(language, size) is None


def test_plot_attention_writes_one_png_per_sample(tmp_path):
    tasks = load_demo(num_stories=20, test_stories=5, memory_size=6)
    test = tasks[DEMO_TASK].test
    vocab, _ = babi_arrays.build_vocabulary(test)
    arrays = babi_arrays.vectorize(test, vocab, 6, 6)
    model = MemN2N(len(vocab), 6, 6, embedding_dim=4, hops=2, linear_start=False)
    paths = plot_attention(model, test, arrays, vocab, tmp_path, 2, "demo")
    assert [p.rsplit("/", 1)[-1] for p in map(str, paths)] == [
        "attention_demo_0.png",
        "attention_demo_1.png",
    ]
    with open(paths[0], "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert plot_attention(model, test, arrays, vocab, tmp_path, 0, "demo") == []
    # the same questions as tables: rows the story's sentences, columns the hops
    grids = []
    plot_attention(model, test, arrays, vocab, tmp_path, 2, "demo", grids)
    assert len(grids) == 2
    for grid, example in zip(grids, test, strict=False):
        sentences = [s for s in example.story if s.strip()][-6:]
        assert [r.removeprefix("* ") for r in grid["rows"]] == sentences
        assert grid["columns"] == ["hop 1", "hop 2"]
        weights = np.asarray(grid["weights"])  # (sentences, hops)
        assert weights.shape == (len(sentences), 2)
        assert np.all(weights.sum(axis=0) <= 1.0 + 1e-5) and np.all(weights >= 0)
        assert example.question in grid["caption"]


def test_evaluate_tasks_and_the_written_report(tmp_path):
    import dataclasses

    from zoo.models.memn2n.babi_arrays import build_arrays, error_rate
    from zoo.models.memn2n.babi_report import evaluate_tasks, write_error_report

    tasks = load_demo(num_stories=20, test_stories=5, memory_size=6)
    vocab, length, arrays = build_arrays(tasks, memory_size=6)
    tasks[7] = dataclasses.replace(tasks[0], task=7, train=None, missing="no file")
    # the recipe's results hold the trained task
    network = MemN2N(len(vocab), 6, length, embedding_dim=4, hops=1)
    model = MemN2NQuestionAnswerer(network, compile=False)
    results = {"task0": {"model": model, "tasks": [0], "train_error_percent": 9.0,
                         "runs": [{"train_error_percent": 9.0}]}}  # fmt: skip
    metrics = evaluate_tasks(results, tasks, arrays)
    expected = error_rate(model, arrays[0]["test"])
    assert metrics["test_error_percent"] == {"0": expected, "7": None}
    assert metrics["mean_test_error_percent"] is None
    assert metrics["unavailable_tasks"] == [7]
    assert metrics["measured_mean_test_error_percent"] == expected
    assert metrics["failed_tasks"] >= 1
    assert metrics["train_error_percent"] == {"task0": 9.0}
    assert metrics["unavailable"] == {"7": "no file"}
    assert metrics["task_names"] == {"0": "demo-where-is", "7": "demo-where-is"}
    # every key that holds a percentage says so
    for key, value in metrics.items():
        if isinstance(value, float) or "error" in key:
            assert key.endswith("_percent"), key
    path = tmp_path / "report" / "test_errors.md"
    table = write_error_report(path, "Title", metrics, PAPER_1K_JOINT_PE_LS_RN)
    text = path.read_text()
    assert text.startswith("# Title\n\n| task | name | test error (%) | paper (%) |")
    assert table in text and "| 7 | demo-where-is | n/a | 18.3 |" in text
    assert text.endswith("Task 7: n/a (no file).\n")
