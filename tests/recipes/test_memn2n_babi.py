import json
import os

import numpy as np
import pytest

from recipes import memn2n_babi
from zoo.data import babi

STORY = "Mary moved to the kitchen.\nJohn went to the garden.\nMary went to the office."


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    """The demo recipe end to end (small), exported into a temporary folder."""
    tmp = tmp_path_factory.mktemp("memn2n")
    result = memn2n_babi.main(
        [
            "--demo-stories", "250",
            "--epochs", "10",
            "--seed", "7",
            "--run-dir", str(tmp / "run"),
            "--report-dir", str(tmp / "report"),
            "--export-dir", str(tmp / "saved_models"),
            "--no-tensorboard",
            "--verbose", "0",
        ]
    )  # fmt: skip
    return tmp, result


def _reload_and_run(version_dir, stories, questions):
    """Runs in a fresh process: the reloaded export's serving_default and preprocess."""
    from zoo.export.testing import load_signature

    serve = load_signature(version_dir, "serving_default")
    pre = load_signature(version_dir, "preprocess")
    out = serve(story=stories, question=questions)
    features = pre(story=stories, question=questions)
    return {
        "answer": [a.decode() for a in out["answer"]],
        "probabilities": out["probabilities"].tolist(),
        "attention": out["attention"].tolist(),
        "memory": [[s.decode() for s in row] for row in out["memory"]],
        "story_ids": features["story"].tolist(),
    }


def test_demo_trains_evaluates_and_exports(demo_run):
    tmp, result = demo_run
    assert result["model"] == "memn2n"
    assert result["metric"] == "mean_test_error_percent"
    assert 0.0 <= result["value"] < 10.0  # the demo task is learnable
    version_dir = result["export"]
    assert version_dir and os.path.isdir(version_dir)
    assert os.path.exists(version_dir + ".keras")
    assert os.path.exists(os.path.join(version_dir, "assets", "vocab.txt"))
    with open(tmp / "report" / "metrics.json") as f:
        metrics = json.load(f)
    assert metrics["test_error"]["0"] == pytest.approx(result["value"])
    pngs = [p for p in os.listdir(tmp / "report") if p.endswith(".png")]
    assert len(pngs) == 2
    with open(tmp / "report" / pngs[0], "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_export_in_fresh_process_matches_keras(demo_run):
    import keras

    from zoo.export.testing import run_in_fresh_process
    from zoo.text.vocabulary import Vocabulary

    _, result = demo_run
    version_dir = result["export"]
    stories = [STORY, STORY, ""]
    questions = ["Where is Mary?", "Where is John?", "Where is Mary?"]
    served = run_in_fresh_process(_reload_and_run, version_dir, stories, questions)
    assert served["answer"][:2] == ["office", "garden"]
    assert served["memory"][0][:3] == [
        "mary went to the office",
        "john went to the garden",
        "mary moved to the kitchen",
    ]
    model = keras.saving.load_model(version_dir + ".keras")
    ids = np.array(served["story_ids"], dtype="int32")
    vocab = Vocabulary.load(os.path.join(version_dir, "assets", "vocab.txt"))
    question_ids = np.zeros((3, ids.shape[-1]), "int32")
    for row, q in enumerate(questions):
        words = vocab.encode(["where", "is", q.split()[-1].rstrip("?").lower()])
        question_ids[row, :3] = words
    out = model({"story": ids, "question": question_ids}, training=False)
    np.testing.assert_allclose(
        served["probabilities"], keras.ops.convert_to_numpy(out["probabilities"]),
        rtol=1e-4, atol=1e-5,
    )  # fmt: skip
    np.testing.assert_allclose(
        served["attention"], keras.ops.convert_to_numpy(out["attention"]),
        rtol=1e-4, atol=1e-5,
    )  # fmt: skip
    # Hop attention over a story of three sentences: slots 3.. are empty nil
    # memories (the recipe's default): they share one score (0), so equal weights.
    attention = np.array(served["attention"])
    np.testing.assert_allclose(attention.sum(-1), 1.0, rtol=1e-5)
    empty = attention[:2, :, 3:]
    np.testing.assert_allclose(empty, empty[..., :1].repeat(47, -1), rtol=1e-5)
    np.testing.assert_allclose(attention[2], 1.0 / 50, rtol=1e-5)  # empty story


def test_bad_inputs_against_the_reloaded_export(demo_run):
    from zoo.export.testing import check_bad_text_inputs, load_signature

    _, result = demo_run
    version_dir = result["export"]
    for name in ("story", "question"):
        other = {"question": "Where is Mary?"} if name == "story" else {"story": STORY}
        outputs = check_bad_text_inputs(
            version_dir, input_name=name, extra_inputs=other
        )
        assert outputs["batch_of_zero"]["probabilities"].shape[0] == 0
        assert outputs["batch_of_zero"]["attention"].shape[1:] == (3, 50)
    serve = load_signature(version_dir)
    long_story = "\n".join(f"Sandra went to the hallway{i}." for i in range(80))
    out = serve(
        story=["", STORY, long_story + "\nMary moved to the bedroom.", "Zorg blarped."],
        question=["Where is Mary?", "", "Where is Mary?", "Where is Zorg?"],
    )
    probabilities = out["probabilities"]
    assert np.all(np.isfinite(probabilities))
    np.testing.assert_allclose(probabilities.sum(-1), 1.0, rtol=1e-5)
    # Empty story: only nil memories, evenly attended; the output reads nothing.
    np.testing.assert_allclose(out["attention"][0], 1.0 / 50, rtol=1e-5)
    # Empty question: u = 0, so in the first hop every slot scores 0 (uniform).
    np.testing.assert_allclose(out["attention"][1][0], 1.0 / 50, rtol=1e-5)
    np.testing.assert_allclose(out["attention"][1].sum(-1), 1.0, rtol=1e-5)
    # Longer than the memory: the most recent 50 sentences are kept.
    memory = [s.decode() for s in out["memory"][2]]
    assert memory[0] == "mary moved to the bedroom"
    assert memory[-1] == "sandra went to the hallway31"
    # Unknown words map to [UNK] and still give a well-defined answer.
    pre = load_signature(version_dir, "preprocess")
    ids = pre(story=["Zorg blarped."], question=["Where is Zorg?"])
    assert ids["story"][0, 0, 0] == 1 and ids["question"][0, 2] == 1


def test_parse_tasks_and_error_table():
    assert memn2n_babi.parse_tasks("1-3,7") == (1, 2, 3, 7)
    with pytest.raises(ValueError, match="'0-2'"):
        memn2n_babi.parse_tasks("0-2")
    table = memn2n_babi.format_error_table(
        {1: 0.0, 3: None, 4: 10.0}, memn2n_babi.PAPER_1K_JOINT_PE_LS_RN
    )
    assert "| 3 | three-supporting-facts | n/a |" in table
    assert "| mean | | 5.0 |" in table
    assert "| failed (> 5%) | | 1 |" in table
    summary = memn2n_babi.summarize({1: 0.0, 3: None, 4: 10.0})
    assert summary["unavailable_tasks"] == [3] and summary["failed"] == 1


def test_cached_runs_are_keyed_by_configuration_and_library_version(monkeypatch):
    config = memn2n_babi.parse_config(["--data", "x", "--tasks", "1"])
    key = memn2n_babi._fingerprint(config, "task1", 0, 30, 6)
    assert key == memn2n_babi._fingerprint(config, "task1", 0, 30, 6)
    assert key != memn2n_babi._fingerprint(config, "task1", 1, 30, 6)
    other = memn2n_babi.parse_config(["--data", "x", "--tasks", "1", "--hops", "2"])
    assert key != memn2n_babi._fingerprint(other, "task1", 0, 30, 6)
    # A run finished by another version of the library is not reused.
    monkeypatch.setattr(memn2n_babi, "zoo_version", "0.0.0")
    assert key != memn2n_babi._fingerprint(config, "task1", 0, 30, 6)


def test_concat_arrays_reindexes_sentences():
    examples = babi.parse_babi(babi.generate_demo_lines(10, seed=1))
    vocab = babi.build_vocabulary(examples)
    a = babi.vectorize(examples[:5], vocab, 10, 6)
    b = babi.vectorize(examples[5:], vocab, 10, 6)
    joined = memn2n_babi.concat_arrays([a, b])
    np.testing.assert_array_equal(
        babi.dense_stories(joined),
        np.concatenate([babi.dense_stories(a), babi.dense_stories(b)]),
    )


def test_real_task_1_data_pipeline(shared_data):
    config = memn2n_babi.parse_config(
        ["--data", str(shared_data / "babi"), "--tasks", "1", "--no-export"]
    )
    # the authors' code: 20 linear-start epochs, then the 100-epoch schedule
    assert config.ls_epochs == 20 and config.training.epochs == 120
    assert config.embedding_dim == 20 and config.empty_slots == "nil"
    assert config.training.learning_rate == 0.005 and config.decay_every == 25
    joint = memn2n_babi.parse_config(["--data", "x", "--joint"])
    assert (joint.ls_epochs, joint.training.epochs, joint.decay_every) == (30, 90, 15)
    val_ls = memn2n_babi.parse_config(["--data", "x", "--joint", "--ls-epochs", "0"])
    assert (val_ls.ls_epochs, val_ls.training.epochs) == (0, 60)
    with pytest.raises(ValueError, match="--ls-epochs must be >= 0"):
        memn2n_babi.parse_config(["--data", "x", "--ls-epochs", "-1"])
    with pytest.raises(ValueError, match=r"--ls-epochs \(30\) must be smaller"):
        memn2n_babi.parse_config(["--data", "x", "--joint", "--epochs", "20"])
    tasks = memn2n_babi.load_tasks(config)
    assert len(tasks[1].train) == 900
