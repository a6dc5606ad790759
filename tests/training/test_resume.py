import json
import pathlib

import numpy as np
import pytest

from tests.training.training_test_utils import (
    Interrupt,
    log_rows,
    logged_epochs,
    quick_run,
)
from zoo.errors import ConfigError, MissingPathError
from zoo.training import RunMismatchError, fingerprint

IDENTITY = {"recipe": "toy", "config": {"units": 8}, "data": "0123456789ab"}


def _interrupted(run_dir, at=2, **kwargs):
    """A run of 4 epochs killed when epoch `at` (0-based) begins."""
    with pytest.raises(Interrupt):
        quick_run(run_dir, interrupt_at=at, run_identity=IDENTITY, **kwargs)
    assert (run_dir / "backup").is_dir()
    assert logged_epochs(run_dir) == list(range(at))


def test_the_run_folder_records_what_it_is_a_run_of(tmp_path):
    quick_run(tmp_path / "run", learning_rate=0.05, run_identity=IDENTITY)
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    assert record["epochs"] == 4
    identity = record["identity"]
    assert {k: identity[k] for k in IDENTITY} == IDENTITY
    assert identity["training"]["learning_rate"] == 0.05
    assert identity["model"].startswith("4 parameters in 2 arrays (")
    assert identity["model_class"] == "Sequential"


def test_a_matching_restart_resumes_and_says_so(tmp_path, capsys):
    run_dir = tmp_path / "run"
    _interrupted(run_dir)
    capsys.readouterr()
    # epochs, patience and verbosity may change on a resume: a run can be extended
    _, history = quick_run(run_dir, epochs=6, patience=5, run_identity=IDENTITY)
    assert f"resuming {run_dir} from epoch 3 (of 6)" in capsys.readouterr().out
    assert history.epoch == [2, 3, 4, 5]
    assert logged_epochs(run_dir) == [0, 1, 2, 3, 4, 5]
    assert json.loads((run_dir / "run.json").read_text())["epochs"] == 6
    assert not (run_dir / "backup").exists()


def test_a_different_run_is_refused_naming_what_differs(tmp_path):
    run_dir = tmp_path / "run"
    _interrupted(run_dir, learning_rate=0.05)
    other = {**IDENTITY, "data": "ba9876543210"}
    with pytest.raises(RunMismatchError) as caught:
        quick_run(run_dir, learning_rate=0.001, seed=7, run_identity=other)
    message = str(caught.value)
    assert "\n" not in message  # one line
    assert str(run_dir) in message
    assert '"0123456789ab" -> "ba9876543210"' in message
    assert "training.learning_rate: 0.05 -> 0.001" in message
    assert "training.seed: 1234 -> 7" in message
    assert "--resume never" in message and "--resume force" in message
    assert "--run-dir" in message
    assert [key for key, _, _ in caught.value.differences] == [
        "data",
        "training.learning_rate",
        "training.seed",
    ]
    assert isinstance(caught.value, ConfigError)  # one line, exit status 2
    # nothing was touched: the same command as before still resumes
    assert (run_dir / "backup").is_dir()
    assert logged_epochs(run_dir) == [0, 1]
    _, history = quick_run(run_dir, learning_rate=0.05, run_identity=IDENTITY)
    assert history.epoch == [2, 3]


def test_another_model_is_refused(tmp_path):
    run_dir = tmp_path / "run"
    _interrupted(run_dir)
    record = json.loads((run_dir / "run.json").read_text())
    record["identity"]["model"] = "5 parameters in 2 arrays (feedfeedfeed)"
    (run_dir / "run.json").write_text(json.dumps(record))
    with pytest.raises(RunMismatchError, match="model: "):
        quick_run(run_dir, run_identity=IDENTITY)


def test_a_backup_of_another_model_class_is_another_run(tmp_path):
    # Run folders written before the tasks were fit hold backups of a network's
    # training view, whose weights do not load into the task.
    run_dir = tmp_path / "run"
    _interrupted(run_dir)
    record = json.loads((run_dir / "run.json").read_text())
    del record["identity"]["model_class"]
    (run_dir / "run.json").write_text(json.dumps(record))
    with pytest.raises(RunMismatchError, match='model_class: null -> "Sequential"'):
        quick_run(run_dir, run_identity=IDENTITY)


def test_force_resumes_a_different_run_with_a_warning(tmp_path, capsys):
    run_dir = tmp_path / "run"
    _interrupted(run_dir, learning_rate=0.05)
    capsys.readouterr()
    _, history = quick_run(
        run_dir, learning_rate=0.001, resume="force", run_identity=IDENTITY
    )
    out, err = capsys.readouterr()
    assert history.epoch == [2, 3]
    assert err.startswith("warning: ") and "0.05 -> 0.001" in err
    assert f"resuming {run_dir} from epoch 3 (of 4)" in out
    record = json.loads((run_dir / "run.json").read_text())
    assert record["identity"]["training"]["learning_rate"] == 0.001
    assert record["forced"][0]["after_epoch"] == 2
    assert "0.05 -> 0.001" in record["forced"][0]["differences"]


def test_never_starts_afresh_and_restarts_the_log(tmp_path, capsys):
    run_dir = tmp_path / "run"
    _interrupted(run_dir, learning_rate=0.05)
    capsys.readouterr()
    _, history = quick_run(
        run_dir, learning_rate=0.001, resume="never", run_identity=IDENTITY
    )
    assert "resuming" not in capsys.readouterr().out
    assert history.epoch == [0, 1, 2, 3]
    assert logged_epochs(run_dir) == [0, 1, 2, 3]  # one run, not two
    record = json.loads((run_dir / "run.json").read_text())
    assert record["identity"]["training"]["learning_rate"] == 0.001


def test_a_fresh_start_replaces_the_previous_runs_outputs(tmp_path):
    run_dir = tmp_path / "run"
    quick_run(run_dir, learning_rate=0.05, run_identity=IDENTITY)
    first = log_rows(run_dir)
    # the run completed (no backup): the same folder starts afresh, whatever the run
    _, history = quick_run(run_dir, epochs=2, learning_rate=0.01)
    assert history.epoch == [0, 1]
    assert logged_epochs(run_dir) == [0, 1]
    assert log_rows(run_dir)[0]["loss"] != first[0]["loss"]
    record = json.loads((run_dir / "run.json").read_text())
    assert "recipe" not in record["identity"]


def test_a_backup_without_a_record_is_refused(tmp_path):
    run_dir = tmp_path / "run"
    _interrupted(run_dir)
    (run_dir / "run.json").unlink()
    with pytest.raises(RunMismatchError, match="no run.json"):
        quick_run(run_dir, run_identity=IDENTITY)
    _, history = quick_run(run_dir, resume="force", run_identity=IDENTITY)
    assert history.epoch == [2, 3]


def test_fewer_epochs_than_completed_is_refused(tmp_path):
    run_dir = tmp_path / "run"
    _interrupted(run_dir, at=3)
    with pytest.raises(RunMismatchError, match="after 3 epochs, more than the 2"):
        quick_run(run_dir, epochs=2, run_identity=IDENTITY)


def test_a_resume_drops_the_log_rows_of_epochs_not_backed_up(tmp_path):
    # killed after the CSV row of epoch 2 was written, before its backup
    run_dir = tmp_path / "run"
    _interrupted(run_dir)
    with open(run_dir / "log.csv", "a") as f:
        f.write("2,9.0,9.0\n")
    quick_run(run_dir, run_identity=IDENTITY)
    assert logged_epochs(run_dir) == [0, 1, 2, 3]
    assert float(log_rows(run_dir)[2]["loss"]) != 9.0


def test_run_identity_must_be_json_and_keep_fits_own_keys(tmp_path):
    with pytest.raises(TypeError, match="JSON-able"):
        quick_run(tmp_path / "a", run_identity={"data": object()})
    with pytest.raises(ValueError, match="'training'"):
        quick_run(tmp_path / "b", run_identity={"training": {}})


def test_resumed_weights_continue_the_interrupted_run(tmp_path):
    whole, _ = quick_run(tmp_path / "whole", run_identity=IDENTITY)
    _interrupted(tmp_path / "run")
    resumed, _ = quick_run(tmp_path / "run", run_identity=IDENTITY)
    for a, b in zip(resumed.get_weights(), whole.get_weights(), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5)


def test_fingerprint_of_files_strings_and_arrays(tmp_path):
    a = tmp_path / "a.txt"
    a.write_text("hello\n")
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "train.txt").write_text("one\n")
    (folder / "test.txt").write_text("two\n")
    digest = fingerprint(a, "vocab", np.arange(3), folder)
    assert len(digest) == 12 and int(digest, 16) >= 0
    assert digest == fingerprint(pathlib.Path(a), "vocab", np.arange(3), folder)
    a.write_text("hello!\n")  # the file's contents count, not its name
    assert fingerprint(a) != fingerprint(tmp_path / "corpus" / "train.txt")
    changed = fingerprint(a, "vocab", np.arange(3), folder)
    assert changed != digest
    (folder / "test.txt").write_text("three\n")
    assert fingerprint(a, "vocab", np.arange(3), folder) != changed
    # framed: the split between parts, a part's type, an array's dtype all count
    assert fingerprint("ab", "c") != fingerprint("a", "bc")
    assert fingerprint("1") != fingerprint(1)
    assert fingerprint(np.arange(3, dtype="int32")) != fingerprint(
        np.arange(3, dtype="int64")
    )
    assert fingerprint({"b": 1, "a": 2}) == fingerprint({"a": 2, "b": 1})
    # strings of an object array (a tf.string tensor's) by value, not by address
    words = ["".join(["word", str(i)]) for i in range(2)]
    assert fingerprint(np.array(words, dtype=object)) == fingerprint(
        np.array([w + "" for w in "word0 word1".split()], dtype=object)
    )
    assert fingerprint(np.array(words, dtype=object)) != fingerprint(
        np.array(["word0", "word2"], dtype=object)
    )
    assert len(fingerprint("x", length=64)) == 64
    with pytest.raises(MissingPathError):
        fingerprint(tmp_path / "missing.txt")
    with pytest.raises(TypeError, match="Received: object"):
        fingerprint(object())
