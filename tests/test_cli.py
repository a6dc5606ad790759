"""The `zoo` command: fast help, recipes launched in a new process, predict from an
export or a server, one-line errors with exit status 2."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tests.serving import tiny_exports
from tests.serving.tiny_exports import QUESTION, STORY
from zoo import cli


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    work = tmp_path_factory.mktemp("cli")
    base_dir = work / "saved_models"
    return {
        "root": str(base_dir),
        "classifier": tiny_exports.export_classifier(base_dir, work),
        "reader": tiny_exports.export_reader(base_dir),
    }


def _zoo(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _json_lines(text):
    return [json.loads(line) for line in text.splitlines()]


_NO_HEAVY_IMPORTS = """
import os, sys
from zoo.cli import main
os.execve = lambda path, argv, env: print("EXEC", argv[:2], argv[2:], env["KERAS_BACKEND"])
for argv in (["--help"], ["train", "--help"], ["train", "--list"],
             ["predict", "--help"], ["--version"], ["train", "han", "--help"]):
    try:
        main(argv)
    except SystemExit:
        pass
heavy = ("tensorflow", "keras", "numpy", "grpc", "zoo.recipes", "zoo.serving")
print("HEAVY", sorted(m for m in heavy if m in sys.modules))
"""


def test_help_imports_nothing_heavy_and_train_runs_the_recipe_module():
    # ZOO_LAZY_IMPORT=1: `import zoo` as in the console script, which registers no
    # models (`zoo/__init__.py`)
    proc = subprocess.run(
        [sys.executable, "-c", _NO_HEAVY_IMPORTS],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, ZOO_LAZY_IMPORT="1"),
    )
    assert proc.returncode == 0, proc.stderr
    assert "HEAVY []" in proc.stdout
    assert "usage: zoo [-h] [--version] [--debug] COMMAND" in proc.stdout
    assert "han_classification        Hierarchical Attention Network" in proc.stdout
    assert "usage: zoo predict EXPORT [TEXT ...] [options]" in proc.stdout
    assert (
        f"EXEC {[sys.executable, '-m']} {['zoo.recipes.han_classification', '--help']}"
        " tensorflow"
        in (proc.stdout)
    )
    import zoo

    assert f"zoo {zoo.__version__} (tensorflow " in proc.stdout


def test_train_command_and_recipe_names(capsys, monkeypatch):
    assert cli.train_command("embedder", ["--epochs", "1"]) == [
        sys.executable,
        "-m",
        "zoo.recipes.self_attentive_embedding",
        "--epochs",
        "1",
    ]
    assert [
        cli.resolve_recipe(n)
        for n in ("han", "memn2n", "translation", "memn2n-babi", "han_classification")
    ] == [
        "han_classification",
        "memn2n_babi",
        "translation",
        "memn2n_babi",
        "han_classification",
    ]
    code, out, err = _zoo(capsys, "train", "--list")
    assert code == 0 and len(out.splitlines()) == 4
    code, out, err = _zoo(capsys, "train", "bogus", "--epochs", "1")
    assert code == 2 and out == ""
    assert err.startswith("error: unknown recipe 'bogus'; recipes: translation, ")
    assert len(err.splitlines()) == 1
    calls = []
    monkeypatch.setenv("KERAS_BACKEND", "jax")
    monkeypatch.setattr(
        cli.os, "execve", lambda path, argv, env: calls.append((argv, env))
    )
    cli.main(["--debug", "train", "memn2n", "--hops", "3"])
    assert [argv for argv, _ in calls] == [
        [sys.executable, "-m", "zoo.recipes.memn2n_babi", "--hops", "3", "--debug"]
    ]
    # the recipes train on TensorFlow whatever the shell's KERAS_BACKEND says
    assert calls[0][1]["KERAS_BACKEND"] == "tensorflow"
    assert calls[0][1]["ZOO_LAZY_IMPORT"] == "1"


def test_train_without_tensorflow_names_the_extra(capsys, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "tensorflow" else real(name, *a),
    )
    monkeypatch.setattr(cli.os, "execve", lambda *a: pytest.fail("no TensorFlow"))
    code, out, err = _zoo(capsys, "train", "han")
    assert code == 2 and out == ""
    assert err.splitlines() == [
        "error: tensorflow is not installed; this command needs the 'train' extra: "
        'pip install "attention-zoo[train]" (from a checkout: pip install ".[train]")'
    ]


def test_predict_local_texts_files_and_signatures(exports, tmp_path, capsys):
    from zoo.serving import SavedModelSession, output_rows

    texts = ["The film was good.", "awful and boring", ""]
    with SavedModelSession(exports["classifier"]) as model:
        expected = output_rows(model.predict({"text": texts}), 3)
    code, out, err = _zoo(capsys, "predict", exports["classifier"], *texts)
    assert code == 0, err
    assert _json_lines(out) == expected
    assert [row["label"] for row in expected[:2]] == ["positive", "negative"]

    txt = tmp_path / "texts.txt"
    txt.write_text("\n".join(texts) + "\n")
    out_file = tmp_path / "answers.jsonl"
    model_dir = os.path.dirname(exports["classifier"])  # the latest version
    code, out, err = _zoo(
        capsys, "predict", model_dir, "-i", txt, "--batch-size", 2, "-o", out_file
    )
    assert (code, out) == (0, "")
    # batches of 2 instead of 3: the same rows to float rounding (the matrix products
    # of another batch size may round differently in the last bit)
    rows = _json_lines(out_file.read_text())
    assert [r["label"] for r in rows] == [r["label"] for r in expected]
    np.testing.assert_allclose(
        [r["probabilities"] for r in rows],
        [r["probabilities"] for r in expected],
        rtol=1e-5,
        atol=1e-6,
    )

    code, out, err = _zoo(
        capsys, "predict", exports["classifier"], "--signature", "preprocess", "good"
    )
    assert code == 0 and list(_json_lines(out)[0]) == ["token_ids"]

    # Two inputs: --story/--question, jsonl, csv.
    code, out, err = _zoo(
        capsys,
        "predict",
        exports["reader"],
        "--story",
        STORY.split("\n")[0],
        "--story",
        STORY.split("\n")[1],
        "--question",
        QUESTION,
    )
    assert code == 0, err
    (answer,) = _json_lines(out)
    assert answer["answer"] == "Mary moved to the bathroom."
    assert len(answer["attention"]) == 2
    jsonl = tmp_path / "qa.jsonl"
    jsonl.write_text(
        json.dumps({"story": STORY, "question": QUESTION})
        + "\n"
        + json.dumps({"question": "Why?", "story": "One line."})
        + "\n"
    )
    code, out, err = _zoo(capsys, "predict", exports["reader"], "--input", jsonl)
    assert code == 0 and _json_lines(out)[0] == answer
    assert _json_lines(out)[1]["answer"] == "One line."
    csv_file = tmp_path / "qa.csv"
    csv_file.write_text(f'question,story\n{QUESTION},"{STORY}"\n')
    code, out, err = _zoo(capsys, "predict", exports["reader"], "--input", csv_file)
    assert code == 0 and _json_lines(out) == [answer]


def test_predict_errors_are_one_line_with_status_2(exports, tmp_path, capsys):
    bad_jsonl = tmp_path / "bad.jsonl"
    bad_jsonl.write_text(json.dumps({"story": STORY, "question": "q"}) + "\n{oops\n")
    missing_field = tmp_path / "missing.jsonl"
    missing_field.write_text(json.dumps({"story": STORY}) + "\n")
    cases = [
        (
            ["predict", tmp_path / "nowhere", "hello"],
            f"error: {tmp_path / 'nowhere'}: no such export folder",
        ),
        (
            ["predict", exports["classifier"], "-s", "nope", "hello"],
            f"error: {exports['classifier']} has no signature 'nope'; its "
            "signatures: preprocess, serving_default",
        ),
        (
            ["predict", exports["reader"], "-i", bad_jsonl],
            f"error: {bad_jsonl}:2: not a JSON object (Expecting property name "
            "enclosed in double quotes at column 2)",
        ),
        (
            ["predict", exports["reader"], "-i", missing_field],
            f"error: {missing_field}:1: missing input field(s) question (the "
            "signature takes question, story)",
        ),
        (
            ["predict", exports["reader"], "a text"],
            "error: the signature takes question, story: give them as --question "
            "TEXT --story TEXT or in a jsonl/csv --input file",
        ),
        (
            ["predict", exports["reader"], "--question", "q"],
            "error: the signature takes question, story; given: --question",
        ),
        (
            ["predict", exports["classifier"], "--batch-size", 300, "a"],
            "error: --batch-size must be between 1 and 256. Received: 300",
        ),
        (
            ["predict", exports["classifier"], "--model", "m", "a"],
            "error: --model needs --server HOST:PORT",
        ),
        (["predict", exports["classifier"]], "error: nothing to predict: give TEXT"),
        (
            ["predict", "--server", "127.0.0.1:1", "a"],
            "error: --server needs --model NAME",
        ),
        (
            ["verify", tmp_path / "nowhere"],
            f"error: {tmp_path / 'nowhere'}: no such export folder",
        ),
        (
            ["deploy", tmp_path / "nowhere"],
            f"error: {tmp_path / 'nowhere'}: no such export folder",
        ),
    ]
    for argv, message in cases:
        code, out, err = _zoo(capsys, *argv)
        assert code == 2, (argv, err)
        assert len(err.splitlines()) == 1, err
        assert err.startswith(message), (err, message)
        assert out == ""
    code, out, err = _zoo(capsys, "--debug", "predict", tmp_path / "nowhere", "x")
    assert code == 2
    assert "Traceback (most recent call last)" in err
    assert (
        err.splitlines()[-1] == f"error: {tmp_path / 'nowhere'}: no such export folder"
    )


def test_predict_through_servers_matches_local(exports, tmp_path, capsys):
    from zoo.serving.testing import serve_export

    inputs = {
        "classifier": ["--input", tmp_path / "texts.txt"],
        "reader": ["--input", tmp_path / "qa.jsonl"],
    }
    (tmp_path / "texts.txt").write_text("The film was good.\nawful\n\ncaf\u00e9\n")
    (tmp_path / "qa.jsonl").write_text(
        json.dumps({"story": STORY, "question": QUESTION})
        + "\n"
        + json.dumps({"story": "", "question": "Nothing?"})
        + "\n"
    )
    for key, args in inputs.items():
        code, local, err = _zoo(
            capsys, "predict", exports[key], *args, "--batch-size", 1
        )
        assert code == 0, err
        assert len(local.splitlines()) == (4 if key == "classifier" else 2)
        with serve_export(exports[key]) as served:
            for protocol in ("grpc", "rest"):
                flags = ["--rest"] if protocol == "rest" else []
                code, remote, err = _zoo(
                    capsys,
                    "predict",
                    "--server",
                    getattr(served, protocol),
                    "--model",
                    served.model,
                    *flags,
                    *args,
                    "--batch-size",
                    1,
                )
                assert code == 0, err
                assert remote == local, (key, protocol)
            code, out, err = _zoo(
                capsys,
                "predict",
                "--server",
                served.rest,
                "--rest",
                "--model",
                "absent",
                *args,
            )
            assert code == 2 and err.startswith("error: http://127.0.0.1:")
            assert "HTTP 404: Servable not found for request: Latest(absent)" in err


def test_verify_command(exports, capsys):
    code, out, err = _zoo(capsys, "verify", os.path.dirname(exports["reader"]))
    assert code == 0, err
    assert "batch limit: {'serving_default': 'refuses 9 rows'}" in out
    assert out.splitlines()[-1].startswith("OK: ")


# --- TensorFlow's C++ log lines --------------------------------------------------------


def _quiet_env(**extra):
    """The environment of a user who set no TensorFlow log level (the tests set 2)."""
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    env.update(KERAS_BACKEND="tensorflow", **extra)
    return env


def _tensorflow_lines(text):
    from zoo.tf_logging import is_tensorflow_log_line

    return [line for line in text.splitlines() if is_tensorflow_log_line(line)]


def test_recipes_run_as_python_m_does_and_quietly():
    command = cli.train_command("han", ["--help"])
    proc = subprocess.run(
        command, capture_output=True, text=True, timeout=120, env=_quiet_env()
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: python -m zoo.recipes.han_classification ")
    assert proc.stderr == ""
    proc = subprocess.run(
        cli.train_command("han", ["--epochs", "0"]),
        capture_output=True,
        text=True,
        timeout=120,
        env=_quiet_env(),
    )
    assert proc.returncode == 2 and "--epochs" in proc.stderr
    # what a recipe's process does when it imports TensorFlow
    code = (
        "from zoo import tf_logging\ntf_logging.quiet(False)\n"
        "import tensorflow\nprint('TF', tensorflow.__version__)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, "x"],
        capture_output=True,
        text=True,
        timeout=300,
        env=cli.train_environment(_quiet_env()),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("TF ") and proc.stderr == ""


def _zoo_script():
    script = os.path.join(os.path.dirname(sys.executable), "zoo")
    if not os.path.exists(script):
        pytest.skip("the zoo console script is not installed next to this Python")
    return script


def test_predict_writes_no_tensorflow_log_lines(exports):
    script = _zoo_script()
    proc = subprocess.run(
        [script, "predict", "--help"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0 and proc.stderr == ""
    proc = subprocess.run(
        [script, "predict", exports["classifier"], "The film was good."],
        capture_output=True,
        text=True,
        timeout=300,
        env=_quiet_env(),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert _json_lines(proc.stdout)[0]["label"] == "positive"
    assert proc.stderr == ""
    # a user's level is theirs: TF_CPP_MIN_LOG_LEVEL=3 is quiet too, the exit status
    # and one-line errors pass through the filter
    proc = subprocess.run(
        [script, "predict", exports["classifier"], "--signature", "absent", "x"],
        capture_output=True,
        text=True,
        timeout=300,
        env=_quiet_env(TF_CPP_MIN_LOG_LEVEL="3"),
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and len(proc.stderr.splitlines()) == 1


def test_quiet_leaves_a_users_level_and_debug_alone(monkeypatch):
    from zoo import tf_logging

    monkeypatch.delenv("TF_CPP_MIN_LOG_LEVEL", raising=False)
    assert tf_logging.quiet(debug=True) is False
    assert "TF_CPP_MIN_LOG_LEVEL" not in os.environ
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "1")
    assert tf_logging.quiet() is False and os.environ["TF_CPP_MIN_LOG_LEVEL"] == "1"
    monkeypatch.delenv("TF_CPP_MIN_LOG_LEVEL")
    assert tf_logging.quiet() is True  # TensorFlow is imported here: no import hook
    assert os.environ["TF_CPP_MIN_LOG_LEVEL"] == "3"


def test_filtered_stderr_drops_only_tensorflow_lines(capfd):
    from zoo import tf_logging

    lines = [
        b"WARNING: All log messages before absl::InitializeLog() is called are "
        b"written to STDERR\n",
        b"I0000 00:00:1796240537.869487    5744 cudart_stub.cc:31] Could not find "
        b"cuda drivers on your machine, GPU will not be used.\n",
        b"E0000 00:00:1796240544.540354    5744 cuda_platform.cc:52] failed call to "
        b"cuInit: INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)\n",
        b"W1202 19:40:25.123456   12 some_file.cc:3] a warning\n",
        b"a line of the program\n",
    ]
    with pytest.raises(RuntimeError):
        with tf_logging.filtered_stderr():
            for line in lines:
                os.write(2, line)
            print("from Python", file=sys.stderr)
            raise RuntimeError("raised inside")
    err = capfd.readouterr().err  # (capfd keeps Python's writes apart from fd 2's)
    assert sorted(err.splitlines()) == ["a line of the program", "from Python"]
    assert _tensorflow_lines(b"".join(lines).decode()) == [
        line.decode().rstrip("\n") for line in lines[:4]
    ]
