"""A recipe's run folder belongs to one run: locked for the whole run, nothing of a
refused run written over the folder's own, and a run killed after training (during
evaluation, a report or the export) resumed from its trained weights."""

import hashlib
import os
import subprocess
import sys

import numpy as np
import pytest

from tests.recipe import toy_recipe as toy
from tests.recipe.test_recipe import _args
from zoo.training.run_folder import LOCK_FILE

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_HOLDER = """
import sys, time
from zoo.training.run_folder import run_lock
with run_lock(sys.argv[1]):
    print("locked", flush=True)
    time.sleep(120)
"""


class Killed(Exception):
    """Stands for a kill (not a `ZooError`: it leaves `main` as a kill would)."""


class KilledExport:
    """An export hook killed while `kills` is positive; `seen` holds the weights
    each call was given."""

    def __init__(self, kills):
        self.kills = kills
        self.seen = []

    def __call__(self, model):
        self.seen.append([w.copy() for w in model.get_weights()])
        if self.kills > 0:
            self.kills -= 1
            raise Killed
        return None


def test_a_kill_during_the_export_resumes_from_the_trained_weights(tmp_path, capsys):
    args = _args(tmp_path, "--data", str(tmp_path), "--seed", "3")
    run_dir = tmp_path / "run"
    export = KilledExport(kills=1)
    with pytest.raises(Killed):
        toy.main(args, export=export)
    assert os.listdir(run_dir / "backup") == ["final-00003.weights.h5"]
    logged = (run_dir / "log.csv").read_text()
    assert len(logged.splitlines()) == 4  # header and 3 epochs
    assert "resuming" not in capsys.readouterr().out

    # The same command again: no epoch is trained again, and the export gets the
    # weights that the killed run had trained.
    result = toy.main(args, export=export)
    out = capsys.readouterr().out
    assert (
        f"resuming {run_dir}: its training finished after 3 epochs; loading the "
        "trained weights instead of training again"
    ) in out
    assert "Epoch 1/3" not in out
    assert (run_dir / "log.csv").read_text() == logged
    killed, resumed = export.seen
    for a, b in zip(killed, resumed, strict=True):
        np.testing.assert_array_equal(a, b)
    assert result["value"] > 0.9
    assert not (run_dir / "backup").exists()  # removed once the export is written


def test_a_run_folder_in_use_is_one_line_and_exit_2(tmp_path, capsys):
    run_dir = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(run_dir)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert proc.stdout.readline().strip() == "locked"
        with pytest.raises(SystemExit) as exit_info:
            toy.main(_args(tmp_path, "--data", str(tmp_path)))
        assert exit_info.value.code == 2
        err = capsys.readouterr().err
        assert err == (
            f"error: {run_dir} is in use by another run (pid {proc.pid}): wait for "
            "it to finish, or pass another --run-dir\n"
        )
        assert os.listdir(run_dir) == [LOCK_FILE]  # nothing written before
    finally:
        proc.kill()
        proc.wait()
    result = toy.main(_args(tmp_path, "--data", str(tmp_path)))
    assert result["value"] > 0.9


def _digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def test_a_refused_configuration_leaves_the_runs_vocabulary_alone(tmp_path):
    from zoo.recipes import han_classification as han

    run_dir = tmp_path / "run"
    base = ["--run-dir", str(run_dir), "--demo-size", "60"]
    a = han.load_data(han.parse(base))
    before = _digest(a.vocab_file)
    assert os.path.dirname(os.path.dirname(a.vocab_file)) == str(
        run_dir / "vocabularies"
    )
    assert os.path.basename(a.vocab_file) == "vocab.txt"  # the export's asset name
    b = han.load_data(han.parse([*base, "--vocab-size", "20"]))
    assert b.vocab_file != a.vocab_file
    assert _digest(a.vocab_file) == before  # run A's vocabulary untouched
    assert b.vocabulary_size == 20 and a.vocabulary_size > 20
    # Nothing at RUN_DIR/vocab.txt until a run's identity is checked.
    assert not (run_dir / "vocab.txt").exists()
    assert a.publish() == str(run_dir / "vocab.txt")
    assert _digest(run_dir / "vocab.txt") == before
    # The same configuration again gives the same file.
    again = han.load_data(han.parse(base))
    assert again.vocab_file == a.vocab_file and again.fingerprint == a.fingerprint
    assert sorted(os.listdir(run_dir / "vocabularies")) == sorted(
        {os.path.basename(os.path.dirname(d.vocab_file)) for d in (a, b)}
    )


def test_a_killed_and_resumed_run_exports_what_an_uninterrupted_one_does(tmp_path):
    from tests.training.training_test_utils import Interrupt, InterruptAt

    flags = ["--data", str(tmp_path), "--seed", "3", "--epochs", "6"]
    flags += ["--patience", "2"]
    exported = []

    def export(model):
        exported.append([w.copy() for w in model.get_weights()])

    whole = toy.main(
        _args(tmp_path / "whole", *flags), callbacks=[InterruptAt(None)], export=export
    )
    with pytest.raises(Interrupt):
        toy.main(
            _args(tmp_path / "killed", *flags),
            callbacks=[InterruptAt(3)],
            export=export,
        )
    resumed = toy.main(
        _args(tmp_path / "killed", *flags), callbacks=[InterruptAt(None)], export=export
    )
    assert resumed["value"] == whole["value"]
    expected = exported[0]
    for a, b in zip(exported[-1], expected, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    logs = [(tmp_path / d / "run" / "log.csv").read_text() for d in ("whole", "killed")]
    assert len(logs[0].splitlines()) == len(logs[1].splitlines())


@pytest.mark.slow
def test_a_second_han_run_in_a_running_runs_folder_changes_nothing(tmp_path, capsys):
    """Run A (the HAN demo) trains in its process; run B, another configuration in
    the same run folder, is refused at once (one line naming A's pid, exit 2), and
    A's export carries A's vocabulary and scores what A's metrics say."""
    import json

    from zoo.recipes import han_classification as han

    run_dir = tmp_path / "run"
    a_flags = ["--run-dir", str(run_dir), "--report-dir", str(tmp_path / "a")]
    a_flags += ["--export-dir", str(tmp_path / "a_export"), "--epochs", "1"]
    a_flags += ["--demo-size", "120"]  # 92 words: more than B's 20
    proc = subprocess.Popen(
        [sys.executable, "-m", "zoo.recipes.han_classification", *a_flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
    )
    try:
        first = proc.stdout.readline()  # A holds the run folder from its first line
        assert "examples:" in first, first
        with pytest.raises(SystemExit) as exit_info:
            han.main(
                [
                    "--run-dir", str(run_dir), "--vocab-size", "20",
                    "--report-dir", str(tmp_path / "b"),
                    "--export-dir", str(tmp_path / "b_export"),
                ]
            )  # fmt: skip
        assert exit_info.value.code == 2
        err = capsys.readouterr().err
        assert f"in use by another run (pid {proc.pid})" in err
        assert len(err.strip().splitlines()) == 1
        out = first + proc.stdout.read()
        assert proc.wait(timeout=600) == 0, out
    finally:
        proc.kill()
        proc.wait()
    assert not (tmp_path / "b").exists() and not (tmp_path / "b_export").exists()
    version_dir = tmp_path / "a_export" / "han" / "1"
    words = (version_dir / "assets" / "vocab.txt").read_text().splitlines()
    assert len(words) > 20  # A's vocabulary, not B's 20 words
    assert (run_dir / "vocab.txt").read_text().splitlines() == words
    with open(tmp_path / "a" / "metrics.json") as f:
        metrics = json.load(f)
    with open(version_dir / "assets.extra" / "manifest.json") as f:
        manifest = json.load(f)
    assert manifest["metrics"]["accuracy"] == pytest.approx(metrics["accuracy"])
    assert f"accuracy: {metrics['accuracy']}" in out
