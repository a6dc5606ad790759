"""The `zoo` command: fast help, recipes launched in a new process, predict from an
export or a server, one-line errors with exit status 2."""

import contextlib
import functools
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tests.serving import tiny_exports
from tests.serving.tiny_exports import QUESTION, STORY
from zoo import cli
from zoo.errors import DataError


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
def execve(path, argv, env):  # prints what would run; like execve, never returns
    print("EXEC", argv[:2], argv[2:], env["KERAS_BACKEND"])
    raise SystemExit(0)
os.execve = execve
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
    assert "usage: zoo predict EXPORT [options] [--] [TEXT ...]" in proc.stdout
    assert (
        f"EXEC {[sys.executable, '-m']} {['zoo.recipes.han_classification', '--help']}"
        " tensorflow" in (proc.stdout)
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

    def execve(path, argv, env):  # like execve, never returns: nothing trains here
        calls.append((argv, env))
        raise SystemExit(0)

    monkeypatch.setenv("KERAS_BACKEND", "jax")
    monkeypatch.setattr(cli.os, "execve", execve)
    with pytest.raises(SystemExit):
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
    from zoo.serving import SavedModelSession
    from zoo.serving.outputs import output_rows

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
            ["predict", missing_field, "hello"],
            f"error: {missing_field}: is a file; give the export folder (NAME or "
            "NAME/VERSION)",
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
    from tests.serving.fake_serving import serve_export

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


# --- hostile inputs, files and environments ----------------------------------------


def test_texts_that_start_with_a_dash_are_never_options(exports, tmp_path, capsys):
    from zoo.serving import SavedModelSession
    from zoo.serving.outputs import output_rows

    secret = tmp_path / "secret.txt"
    secret.write_text("The film was good.\n")
    text = f"-i{secret}"
    code, out, err = _zoo(capsys, "predict", exports["classifier"], text)
    assert (code, out) == (2, "")
    assert err == (
        f"error: '{text}' reads as the option -i with the value '{secret}': give the "
        "option apart from its value (-i VALUE), or put -- before texts that start "
        "with '-' (zoo predict EXPORT -- TEXT ...)\n"
    )
    written = tmp_path / "x.jsonl"
    code, out, err = _zoo(capsys, "predict", exports["classifier"], f"-o{written}")
    assert code == 2 and "reads as the option -o" in err and not written.exists()
    # after --, every argument is a text
    with SavedModelSession(exports["classifier"]) as model:
        expected = output_rows(model.predict({"text": [text, "--batch-size"]}), 2)
    code, out, err = _zoo(
        capsys, "predict", exports["classifier"], "--", text, "--batch-size"
    )
    assert code == 0, err
    assert _json_lines(out) == expected
    # no abbreviations, unknown options name the way out
    code, out, err = _zoo(capsys, "predict", exports["classifier"], "--inp", "x")
    assert code == 2 and err == (
        "error: unrecognized arguments: --inp x (put -- before texts that start with "
        "'-': zoo predict EXPORT -- TEXT ...)\n"
    )
    with pytest.raises(SystemExit) as exited:
        cli.main(["predict", "--help"])
    assert exited.value.code == 0 and "Options end at --" in capsys.readouterr().out


def test_output_is_written_whole_or_not_at_all(exports, tmp_path, capsys):
    texts = tmp_path / "t.jsonl"
    lines = [json.dumps({"text": f"a fine film {i}"}) for i in range(4)]
    texts.write_text("\n".join(lines) + '\n{"text": 5}\n')
    before = texts.read_bytes()
    answers = tmp_path / "answers.jsonl"
    answers.write_text("old answers\n")
    model = exports["classifier"]
    # a bad line 5 after two batches of 2: the previous file is kept
    code, out, err = _zoo(
        capsys, "predict", model, "-i", texts, "-o", answers, "--batch-size", 2
    )
    assert (code, out) == (2, "")
    assert err == (
        f"error: {texts}:5: input field 'text' must be a string, found a number (5); "
        f"stopped after 4 rows answered ({answers} is left as it was)\n"
    )
    assert answers.read_text() == "old answers\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["answers.jsonl", "t.jsonl"]
    # on stdout, the rows answered are there, and the error says so
    code, out, err = _zoo(capsys, "predict", model, "-i", texts, "--batch-size", 2)
    assert code == 2 and len(_json_lines(out)) == 4
    assert err.endswith("; stopped after 4 rows answered (on stdout above)\n")
    # --output naming the input (the same path, a symlink, a hard link) is refused
    # before anything is read
    (tmp_path / "link.jsonl").symlink_to(texts)
    os.link(texts, tmp_path / "hard.jsonl")
    for output in (texts, tmp_path / "link.jsonl", tmp_path / "hard.jsonl"):
        code, out, err = _zoo(capsys, "predict", model, "-i", texts, "-o", output)
        assert code == 2 and err == (
            f"error: --output {output} is the input file; write the answers to "
            "another file\n"
        )
    assert texts.read_bytes() == before
    # a missing folder, a folder
    code, out, err = _zoo(capsys, "predict", model, "x", "-o", tmp_path / "no" / "a")
    assert code == 2 and err == (
        f"error: --output {tmp_path / 'no' / 'a'}: no such folder {tmp_path / 'no'}\n"
    )
    code, out, err = _zoo(capsys, "predict", model, "x", "-o", tmp_path)
    assert code == 2 and err == f"error: --output {tmp_path} is a folder; name a file\n"
    # a run that completes replaces the file, with no temporary file left
    texts.write_text("\n".join(lines) + "\n")
    code, out, err = _zoo(capsys, "predict", model, "-i", texts, "-o", answers)
    assert (code, out, err) == (0, "", "")
    assert len(_json_lines(answers.read_text())) == 4
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".tmp-")]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_an_output_that_cannot_be_written_is_one_line(exports, capsys, monkeypatch):
    model = exports["classifier"]
    code, out, err = _zoo(capsys, "predict", model, "a", "b", "-o", "/dev/full")
    assert (code, out) == (2, "")
    assert err == (
        "error: --output /dev/full: cannot write the answers (No space left on "
        "device)\n"
    )
    full = open("/dev/full", "w", encoding="utf-8")  # noqa: SIM115
    monkeypatch.setattr(sys, "stdout", full)
    code = cli.main(["predict", model, "a"])
    with contextlib.suppress(OSError):  # what stayed in its buffer
        full.close()
    assert code == 2
    assert capsys.readouterr().err == (
        "error: stdout: cannot write the answers (No space left on device)\n"
    )
    monkeypatch.setattr(sys, "stdout", None)  # started with it closed
    assert cli.main(["predict", model, "a"]) == 2
    assert capsys.readouterr().err == "error: stdout is closed; give --output FILE\n"


class _FlakyClient:
    """A server stand-in that answers `good` requests, then fails."""

    made = []

    def __init__(
        self, address, model, version=None, timeout=60.0, max_answer_bytes=None
    ):
        self.options = {"timeout": timeout, "max_answer_bytes": max_answer_bytes}
        self.good = 1
        _FlakyClient.made.append(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def close(self):
        pass

    def signature_spec(self, signature):
        return {"inputs": {"text": "string"}, "outputs": {"label": "string"}}

    def predict(self, inputs, signature):
        from zoo.serving.errors import ServingError

        if not self.good:
            raise ServingError("http://127.0.0.1:1: HTTP 503: overloaded")
        self.good -= 1
        return {"label": np.array([t.encode() for t in inputs["text"]], dtype=object)}


def test_a_failing_server_leaves_the_output_and_says_how_far_it_got(
    tmp_path, capsys, monkeypatch
):
    from zoo.serving import rest_client

    monkeypatch.setattr(rest_client, "RestClient", _FlakyClient)
    answers = tmp_path / "answers.jsonl"
    argv = ["predict", "--server", "127.0.0.1:1", "--model", "m", "--rest"]
    code, out, err = _zoo(
        capsys,
        *argv,
        "a",
        "b",
        "c",
        "--batch-size",
        2,
        "-o",
        answers,
        "--max-answer-mb",
        1.5,
        "--timeout",
        7,
    )
    assert (code, out) == (2, "")
    assert err == (
        "error: http://127.0.0.1:1: HTTP 503: overloaded; stopped after 2 rows "
        f"answered ({answers} was not written)\n"
    )
    assert not answers.exists() and os.listdir(tmp_path) == []
    assert _FlakyClient.made[-1].options == {
        "timeout": 7.0,
        "max_answer_bytes": int(1.5 * 2**20),
    }


def test_flag_values_and_manifests_are_checked(exports, tmp_path, capsys):
    model = exports["classifier"]
    for value in ("0", "-1", "nan", "1e400", "abc"):
        code, out, err = _zoo(capsys, "predict", model, "x", f"--timeout={value}")
        assert code == 2 and err == (
            "error: argument --timeout: must be a number of seconds above 0 and at "
            f"most 86400. Received: '{value}'\n"
        ), value
    code, out, err = _zoo(capsys, "predict", model, "x", "--max-line-mb=0")
    assert code == 2 and "argument --max-line-mb: must be a number of MiB" in err
    code, out, err = _zoo(capsys, "predict", model, "x", "--batch-size", 0)
    assert (code, out, err) == (
        2,
        "",
        "error: --batch-size must be between 1 and 256. Received: 0\n",
    )
    # an empty question, text arguments and --story that are not UTF-8
    reader = exports["reader"]
    cases = [
        (
            ["--story", "s", "--question", "  "],
            "--question is empty; give the question to answer",
        ),
        (
            ["--story", "caf\udce9", "--question", "q"],
            "--story is not valid UTF-8 (byte 0xe9 at character 3)",
        ),
        (
            [model, "ok", "\udcff"],
            "TEXT argument 2 is not valid UTF-8 (byte 0xff at character 0)",
        ),
    ]
    for argv, message in cases:
        target = [] if argv[0] == model else [reader]
        code, out, err = _zoo(capsys, "predict", *target, *argv)
        assert (code, out, err) == (2, "", f"error: {message}\n")
    # a "\ud800" in a JSON line
    bad = tmp_path / "surrogate.jsonl"
    bad.write_text('{"text": "fine"}\n{"text": "\\ud800"}\n')
    code, out, err = _zoo(capsys, "predict", model, "-i", bad)
    assert (code, out) == (2, "") and err == (
        f"error: {bad}:2: input field 'text' holds a lone surrogate \\ud800 at "
        "character 0 (not valid Unicode text)\n"
    )
    # a line over --max-line-mb
    long = tmp_path / "long.txt"
    long.write_text("short\n" + "x" * 200 + "\n")
    code, out, err = _zoo(capsys, "predict", model, "-i", long, "--max-line-mb", 0.0001)
    assert code == 2 and err == (
        f"error: {long}:2: the line is longer than 104 bytes, the limit per line "
        "(--max-line-mb raises it)\n"
    )


def test_manifest_limits(tmp_path):
    """The limits read as `zoo.export.manifest` reads them (verify, deploy)."""
    version_dir = tmp_path / "m" / "1"
    (version_dir / "assets.extra").mkdir(parents=True)
    manifest = version_dir / "assets.extra" / "manifest.json"
    limits = functools.partial(cli._local_limits, str(version_dir))
    assert limits("serving_default") == (None, 1 << 20)
    manifest.write_text(
        json.dumps({"limits": {"max_batch_size": 256, "max_story_bytes": 262144}})
    )
    assert limits("serving_default") == (256, 262144 + 65536)
    # a limit past what a read can take is held to --max-line-mb's ceiling
    manifest.write_text(json.dumps({"limits": {"max_story_bytes": 2**63 - 1}}))
    assert limits("serving_default") == (None, 65536 << 20)
    # a signature's own limit comes first; its null is no limit
    for own, expected in ((8, 8), (None, None)):
        signatures = {"serving_default": {"max_batch_size": own}, "other": {}}
        manifest.write_text(
            json.dumps({"limits": {"max_batch_size": 256}, "signatures": signatures})
        )
        assert limits("serving_default")[0] == expected
        assert limits("other")[0] == 256
        assert limits("unlisted")[0] == 256
    for value in ("abc", 0, 2.5, True):
        for key in ("max_batch_size", "max_text_bytes"):
            manifest.write_text(json.dumps({"limits": {key: value}}))
            with pytest.raises(DataError) as refused:
                limits("x")
            assert str(refused.value) == (
                f"{manifest}: limits.{key} must be a positive integer or null. "
                f"Received: {value!r}"
            )
    manifest.write_text("{oops")
    with pytest.raises(DataError) as refused:
        limits("x")
    assert str(refused.value) == (
        f"{manifest}:1: invalid JSON (Expecting property name enclosed in double "
        "quotes)"
    )
    # a manifest that nests without end, a link to an endless device
    manifest.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(DataError, match=r"manifest.json: the manifest's JSON nests "):
        limits("x")
    manifest.unlink()
    manifest.symlink_to("/dev/zero")
    with pytest.raises(DataError) as refused:
        limits("x")
    assert str(refused.value) == (
        f"{manifest}: is not a file (a folder, a pipe, a device)"
    )
    manifest.unlink()
    with open(manifest, "wb") as f:
        f.truncate((16 << 20) + 1)  # sparse: no 16 MiB written
    with pytest.raises(DataError) as refused:
        limits("x")
    assert str(refused.value) == (
        f"{manifest}: larger than 16 MiB: not an export manifest"
    )


def test_a_damaged_export_is_one_line(exports, tmp_path, capsys):
    import shutil

    source = exports["classifier"]
    damages = {
        "truncated": "Read less bytes than requested",
        "no-index": "The passed save_path is not a valid checkpoint",
        "garbage-pb": "Error parsing message with type 'tensorflow.SavedModel'",
    }
    for damage, reason in damages.items():
        version_dir = tmp_path / damage / "1"
        shutil.copytree(source, version_dir)
        variables = version_dir / "variables"
        if damage == "truncated":
            (data,) = variables.glob("variables.data-*")
            os.truncate(data, data.stat().st_size // 2)
        elif damage == "no-index":
            (variables / "variables.index").unlink()
        else:
            (version_dir / "saved_model.pb").write_bytes(b"\x00garbage\xff" * 50)
        code, out, err = _zoo(capsys, "predict", version_dir, "a fine film")
        assert (code, out) == (2, ""), damage
        assert err.startswith(f"error: {version_dir}: cannot load the export ("), err
        assert reason in err and len(err.splitlines()) == 1, err
    # a named pipe in the export: loading would wait for a writer forever
    version_dir = tmp_path / "piped" / "1"
    shutil.copytree(source, version_dir)
    (version_dir / "variables" / "variables.index").unlink()
    os.mkfifo(version_dir / "variables" / "variables.index")
    for argv in (["predict", version_dir.parent, "x"], ["verify", version_dir]):
        code, out, err = _zoo(capsys, *argv)
        assert (code, out) == (2, "") and err == (
            f"error: {version_dir / 'variables' / 'variables.index'}: is a named "
            "pipe or a device, not a file: loading the export would never end; "
            "export it again\n"
        )


def test_a_missing_extra_names_the_pip_install(exports, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "grpc", None)
    code, out, err = _zoo(
        capsys, "predict", "--server", "127.0.0.1:1", "--model", "m", "x"
    )
    assert (code, out) == (2, "")
    assert err == (
        "error: grpcio is not installed (no module 'grpc'); this command needs the "
        "'serve' extra: pip install \"attention-zoo[serve]\" (from a checkout: pip "
        'install ".[serve]")\n'
    )
    # the core install: no TensorFlow at all
    code = (
        "import sys; sys.modules['tensorflow'] = None\n"
        "from zoo.cli import main\n"
        f"sys.exit(main(['predict', {exports['classifier']!r}, 'x']))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, ZOO_LAZY_IMPORT="1"),
    )
    assert proc.returncode == 2
    assert proc.stderr == (
        "error: tensorflow is not installed (no module 'tensorflow'); this command "
        "needs the 'serve' extra: pip install \"attention-zoo[serve]\" (from a "
        'checkout: pip install ".[serve]")\n'
    )


def test_predict_runs_on_tensorflow_whatever_keras_backend_says(exports):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "zoo.cli",
            "predict",
            exports["classifier"],
            "The film was good.",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(_quiet_env(), KERAS_BACKEND="jax"),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert _json_lines(proc.stdout)[0]["label"] == "positive"
    assert proc.stderr == ""
