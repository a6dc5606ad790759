import json
import os
import subprocess
import sys

import numpy as np
import pytest
from zoo.recipes import memn2n_babi

from tests.serving.recipe_serving import check_local_grpc_and_rest_agree

STORY = "Mary moved to the kitchen.\nJohn went to the garden.\nMary went to the office."
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _demo_argv(tmp):
    return [
        "--demo-size", "250",
        "--epochs", "10",
        "--seed", "7",
        "--run-dir", str(tmp / "run"),
        "--report-dir", str(tmp / "report"),
        "--export-dir", str(tmp / "saved_models"),
        "--no-tensorboard",
        "--verbose", "0",
    ]  # fmt: skip


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    """The demo recipe end to end (small), exported into a temporary folder."""
    tmp = tmp_path_factory.mktemp("memn2n")
    (tmp / "warmup.txt").write_text(WARMUP_STORY, encoding="utf-8")
    argv = [*_demo_argv(tmp), "--warmup-stories", str(tmp / "warmup.txt")]
    return tmp, memn2n_babi.main(argv)


# --warmup-stories: the export's warm-up request is this story and question
WARMUP_STORY = (
    "1 Daniel went to the hallway.\n"
    "2 Sandra travelled to the bedroom.\n"
    "3 Where is Daniel?\thallway\t1\n"
)


def _reload_and_run(version_dir, stories, questions):
    """Runs in a fresh process: the reloaded export's serving_default and preprocess."""
    from tests.export.export_testing import load_signature

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


# --- Flags ------------------------------------------------------------------------------


def test_paper_defaults_per_task_and_joint(tmp_path):
    data = ["--data", str(tmp_path)]
    config = memn2n_babi.parse([*data, "--tasks", "1,3-4", "--no-joint"])
    # the authors' code: 20 linear-start epochs, then the 100-epoch schedule
    assert config.task_list == (1, 3, 4)
    assert config.ls_epochs == 20 and config.training.epochs == 120
    assert config.embedding_dim == 20 and config.empty_slots == "nil"
    assert config.training.learning_rate == 0.005 and config.decay_every == 25
    assert config.training.batch_size == 32 and config.training.patience == 0
    assert config.xla and config.report_samples == 2 and config.restarts == 1
    for argv in ([], ["--joint"]):  # joint by default with --data
        joint = memn2n_babi.parse([*data, *argv])
        assert joint.joint and joint.embedding_dim == 50
        assert (joint.ls_epochs, joint.training.epochs, joint.decay_every) == (
            30,
            90,
            15,
        )
    val_ls = memn2n_babi.parse([*data, "--joint", "--ls-epochs", "0"])
    assert (val_ls.ls_epochs, val_ls.training.epochs) == (0, 60)
    no_ls = memn2n_babi.parse(
        [*data, "--no-joint", "--no-ls", "--no-xla", "--epochs", "7"]
    )
    assert (no_ls.ls_epochs, no_ls.training.epochs) == (0, 7)
    assert no_ls.training.learning_rate == 0.01 and not no_ls.xla
    demo = memn2n_babi.parse([])
    assert demo.demo and demo.task_list == (0,) and demo.demo_size == 400
    assert not demo.joint and demo.embedding_dim == 20
    assert (demo.ls_epochs, demo.training.epochs, demo.xla) == (0, 15, False)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--hops", "0"], "--hops: must be > 0"),
        (["--memory-size", "-1"], "--memory-size: must be > 0"),
        (["--restarts", "0"], "--restarts: must be > 0"),
        (["--tasks", "0-2"], "--tasks: bAbI tasks are 1..20"),
        (["--tasks", "a"], "--tasks: takes e.g. 1-20"),
        (["--random-noise", "1"], "--random-noise: must be in [0, 1)"),
        (["--ls-epochs", "-1"], "--ls-epochs: must be >= 0"),
        (["--report-samples", "-1"], "--report-samples: must be >= 0"),
        (["--empty-slots", "zero"], "--empty-slots: invalid choice"),
        (["--joint", "--epochs", "20"], r"--ls-epochs (30) must be smaller"),
        (["--samples", "2"], "unrecognized arguments: --samples"),
    ],
)
def test_bad_values_are_argparse_errors(tmp_path, capsys, argv, message):
    with pytest.raises(SystemExit) as exit_info:
        memn2n_babi.parse(["--data", str(tmp_path), *argv])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_help_shows_the_constructors_defaults():
    out = subprocess.run(
        [sys.executable, "-m", "zoo.recipes.memn2n_babi", "--help"],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "--report-samples" in out.stdout and "--ls-epochs" in out.stdout
    text = " ".join(out.stdout.split())
    # --epochs: 15 on the demo; with --data derived, as the description says
    derived = "(None: --ls-epochs + 60 (--no-joint: + 100), the paper's)"
    assert (
        f"training epochs {derived} [with --data: None; demo: 15] (default: 15)" in text
    )
    assert "then `--epochs` 100 (60 joint) more at `--learning-rate` 0.005" in text
    assert "(None: 0.005, or 0.01 with --no-ls, the paper's) (default: None)" in text
    assert "--hops HOPS memory hops K (default: 3)" in text
    assert "gradient clip per weight (default: 40.0)" in text
    assert "--embedding-dim EMBEDDING_DIM size d [None: 20, joint 50]" in text


def test_parse_tasks():
    from zoo.data.babi import parse_tasks

    assert parse_tasks("1-3,7, 2") == (1, 2, 3, 7)
    for bad in ("0-2", "21", "", "x"):
        with pytest.raises(ValueError):
            parse_tasks(bad)


def _model_config(layer):
    """`get_config()` less the name and the data-dependent sizes."""
    data_sizes = {"name", "vocabulary_size", "sentence_length"}
    return {k: v for k, v in layer.get_config().items() if k not in data_sizes}


def test_task_built_with_defaults_is_the_one_trained_with_data(tmp_path):
    """The task built with its defaults (network, preprocessor and its `adapt`,
    compile) has the configuration the recipe trains with `--data`, apart from the
    vocabulary size and the sentence length, which the data set."""
    import keras
    import tensorflow as tf

    from zoo.data.babi import TASK_NAMES
    from zoo.demo.babi import generate_demo_lines
    from zoo.models.memn2n import (
        ClippedSGD,
        MemN2N,
        MemN2NQuestionAnswerer,
        MemN2NQuestionAnswererPreprocessor,
    )
    from zoo.training.steps import RecipeRun

    folder = tmp_path / "babi"
    folder.mkdir()
    for task, name in TASK_NAMES.items():  # 20 tasks of generated stories
        for split, seed in (("train", task), ("test", 100 + task)):
            path = folder / f"qa{task}_{name}_{split}.txt"
            path.write_text("\n".join(generate_demo_lines(3, seed)) + "\n")
    config = memn2n_babi.parse(
        ["--data", str(folder), "--run-dir", str(tmp_path / "r")]
    )
    assert config.joint and config.training.epochs == 90  # 30 LS epochs, then 60
    data = memn2n_babi.load_data(config, lambda line: None)
    run = RecipeRun(memn2n_babi.NAME, config, tf.distribute.get_strategy(), "")
    recipe = memn2n_babi.build_task(config, data, run)

    # As a user builds it: the training and validation examples, raw.
    examples = [ex for t in data.tasks.values() for ex in t.training_examples()]
    stories = ["\n".join(ex.story) for ex in examples]
    preprocessor = MemN2NQuestionAnswererPreprocessor()
    vocabulary = preprocessor.adapt(
        stories, [ex.question for ex in examples], [ex.answer for ex in examples]
    )
    task = MemN2NQuestionAnswerer(
        MemN2N(
            preprocessor.vocabulary_size, sentence_length=preprocessor.sentence_length
        ),
        preprocessor,
    )

    assert _model_config(task.backbone) == _model_config(recipe.backbone) == {
        "trainable": True, "memory_size": 50, "embedding_dim": 50, "hops": 3,
        "tying": "adjacent", "position_encoding": True, "temporal_encoding": True,
        "linear_start": True, "empty_slots": "nil",
    }  # fmt: skip
    assert _model_config(preprocessor) == _model_config(recipe.preprocessor)
    assert vocabulary.tokens == recipe.preprocessor.vocabulary == data.vocab.tokens
    assert preprocessor.sentence_length == data.sentence_length
    # The compile: ClippedSGD at 0.005, clipped at 40, the loss summed; the
    # recipe's also with XLA (--xla, on by default with --data).
    assert type(task.optimizer) is type(recipe.optimizer) is ClippedSGD
    assert {**task.optimizer.get_config(), "name": None} == {
        **recipe.optimizer.get_config(),
        "name": None,
    }
    assert task.optimizer.get_config()["learning_rate"] == pytest.approx(0.005)
    assert task.optimizer.get_config()["clipnorm"] == 40.0
    for compiled in (task, recipe):
        loss = compiled.loss
        assert isinstance(loss, keras.losses.SparseCategoricalCrossentropy)
        assert loss.reduction == "sum"
    assert recipe.jit_compile and config.xla


# --- The demo end to end ----------------------------------------------------------------


@pytest.mark.slow
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
    assert metrics["test_error_percent"]["0"] == pytest.approx(result["value"])
    assert metrics["mean_test_error_percent"] == pytest.approx(result["value"])
    assert metrics["runs"]["task0"][0]["epochs"] == 10
    assert metrics["data_source"] is None  # generated
    with open(tmp / "report" / "test_errors.md") as f:
        assert "| 0 | demo-where-is |" in f.read()
    pngs = [p for p in os.listdir(tmp / "report") if p.endswith(".png")]
    assert sorted(pngs) == ["attention_demo_0.png", "attention_demo_1.png"]
    with open(tmp / "report" / pngs[0], "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    from zoo.export import load_manifest

    manifest = load_manifest(version_dir)
    assert manifest["limits"]["memory_slots"] == 50
    assert manifest["limits"]["max_batch_size"] >= 1
    assert manifest["metrics"]["failed_tasks"] == metrics["failed_tasks"]
    assert manifest["metrics"]["mean_test_error_percent"] == pytest.approx(
        result["value"]
    )
    assert manifest["data"].startswith("generated bAbI-style demo")


@pytest.mark.slow
def test_attention_report_shows_the_hops_over_the_story(demo_run, tmp_path):
    import shutil

    tmp, _ = demo_run
    path = tmp / "report" / "attention.html"
    page = path.read_text(encoding="utf-8")
    # one table per drawn question (the two PNGs), the demo model's hops as columns
    assert page.count('<table class="att">') == 2
    assert "<h2>task 0</h2>" in page and "question: " in page
    if shutil.which("chromium"):
        from tests.chromium import dump_dom, screenshot

        assert screenshot(path, tmp_path / "s.png", tmp_path / "u") > 5000
        assert dump_dom(path, tmp_path / "v").count("<table") == 2


@pytest.mark.slow
def test_warmup_request_is_the_given_story(demo_run):
    from zoo.export.warmup import read_warmup

    _, result = demo_run
    path = os.path.join(result["export"], "assets.extra", "tf_serving_warmup_requests")
    records = list(read_warmup(path))
    assert records
    for _, inputs in records:
        assert [q.decode() for q in inputs["question"]] == ["Where is Daniel?"]
        story = inputs["story"][0].decode()
        assert "Daniel went to the hallway." in story and "Sandra" in story


@pytest.mark.parametrize("missing", [False, True])
def test_a_warmup_file_without_a_question_is_refused(tmp_path, capsys, missing):
    path = tmp_path / "w.txt"
    if not missing:
        path.write_text("1 Daniel went to the hallway.\n")
    with pytest.raises(SystemExit) as exit_info:
        memn2n_babi.parse(["--warmup-stories", str(path)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    if missing:
        assert f"--warmup-stories: no such file: {path}" in err
    else:
        assert "w.txt: no question in the file" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_export_verifies_and_matches_keras_in_a_fresh_process(demo_run):
    import keras

    from tests.export.export_testing import run_in_fresh_process
    from zoo.text.vocabulary import Vocabulary

    _, result = demo_run
    version_dir = result["export"]
    verify = subprocess.run(
        [sys.executable, "-m", "zoo.export.verify", version_dir],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert verify.returncode == 0, verify.stdout + verify.stderr
    stories = [STORY, STORY, ""]
    questions = ["Where is Mary?", "Where is John?", "Where is Mary?"]
    served = run_in_fresh_process(_reload_and_run, version_dir, stories, questions)
    assert served["answer"][:2] == ["office", "garden"]
    assert served["memory"][0][:3] == [
        "mary went to the office",
        "john went to the garden",
        "mary moved to the kitchen",
    ]
    # VERSION.keras is the task on raw text; its backbone is the network that reads
    # the `preprocess` signature's ids.
    task = keras.saving.load_model(version_dir + ".keras")
    assert type(task).__name__ == "MemN2NQuestionAnswerer"
    raw = {"story": stories, "question": questions}
    np.testing.assert_allclose(
        served["probabilities"], task.predict(raw, verbose=0), rtol=1e-4, atol=1e-5
    )
    assert task.predict_answers(raw)[:2] == ["office", "garden"]
    model = task.backbone
    ids = np.array(served["story_ids"], dtype="int32")
    vocab = Vocabulary.load(os.path.join(version_dir, "assets", "vocab.txt"))
    question_ids = np.zeros((3, ids.shape[-1]), "int32")
    for row, q in enumerate(questions):
        words = vocab.encode(["where", "is", q.split()[-1].rstrip("?").lower()])
        question_ids[row, :3] = words
    out = model({"story": ids, "question": question_ids}, training=False)
    for key in ("probabilities", "attention"):
        np.testing.assert_allclose(
            served[key], keras.ops.convert_to_numpy(out[key]), rtol=1e-4, atol=1e-5
        )
    # Slots 3.. are empty nil memories (the default): one score (0), equal weights.
    attention = np.array(served["attention"])
    np.testing.assert_allclose(attention.sum(-1), 1.0, rtol=1e-5)
    empty = attention[:2, :, 3:]
    np.testing.assert_allclose(empty, empty[..., :1].repeat(47, -1), rtol=1e-5)
    np.testing.assert_allclose(attention[2], 1.0 / 50, rtol=1e-5)  # empty story


@pytest.mark.slow
def test_bad_inputs_against_the_reloaded_export(demo_run):
    from tests.export.export_testing import check_bad_text_inputs, load_signature

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
    # Longer than the memory: the most recent 50 sentences are kept.
    memory = [s.decode() for s in out["memory"][2]]
    assert memory[0] == "mary moved to the bedroom"
    assert memory[-1] == "sandra went to the hallway31"
    # Unknown words map to [UNK] and still give a well-defined answer.
    pre = load_signature(version_dir, "preprocess")
    ids = pre(story=["Zorg blarped."], question=["Where is Zorg?"])
    assert ids["story"][0, 0, 0] == 1 and ids["question"][0, 2] == 1


@pytest.mark.slow
def test_the_same_command_again_reuses_the_finished_run(demo_run, capsys):
    tmp, result = demo_run
    again = memn2n_babi.main([*_demo_argv(tmp), "--no-export"])
    assert "restart 0: reused" in capsys.readouterr().out
    assert again["value"] == pytest.approx(result["value"])
    assert again["export"] is None


@pytest.mark.data
def test_real_task_pipeline_with_sample_limits(shared_data, tmp_path):
    config = memn2n_babi.parse(
        ["--data", str(shared_data / "babi"), "--tasks", "1,3", "--size", "10k",
         "--max-train-samples", "100", "--max-eval-samples", "30",
         "--run-dir", str(tmp_path)]
    )  # fmt: skip
    data = memn2n_babi.load_data(config, print)
    assert len(data.tasks[1].train) == 100 and len(data.tasks[1].test) == 30
    assert data.tasks[3].train is None and data.tasks[3].missing  # no 10k train file
    assert data.arrays[1]["train"]["memory"].shape == (100, 50)
    assert data.description.startswith("bAbI en 10k (") and data.folder.language == "en"
    # written where only its contents can be; RUN_DIR/vocab.txt only once the
    # run's identity is checked (`publish_vocabulary`)
    assert not (tmp_path / "vocab.txt").exists() and "mary" in data.vocab
    assert open(data.vocab_file).read().splitlines() == data.vocab.tokens
    memn2n_babi.publish_vocabulary(config, data)
    assert (tmp_path / "vocab.txt").read_text() == open(data.vocab_file).read()


@pytest.mark.slow
def test_local_grpc_and_rest_answers_agree(demo_run):
    story = ["Mary moved to the bathroom.", "John went to the hallway."]
    args = ["--story", story[0], "--story", story[1], "--question", "Where is Mary?"]
    check_local_grpc_and_rest_agree(
        demo_run[1]["export"], "memn2n", {"serving_default": args}
    )
