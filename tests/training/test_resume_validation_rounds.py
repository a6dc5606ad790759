"""With `validations_per_epoch > 1`, a run resumed after any validation round (in the
middle of a pass over the training data or at its end) sees the rest of the data in
the order of a run that was not interrupted, so it ends with the same weights and
logs the same metrics."""

import json

import keras
import numpy as np
import pytest
import tensorflow as tf

from tests.training.test_resume_data_order import Batches
from tests.training.training_test_utils import (
    Interrupt,
    InterruptAt,
    epochs_seen,
    log_rows,
    run_script,
)
from zoo import training
from zoo.training import TrainingConfig


def _run(run_dir, interrupt_at=None, examples=64, known_length=True, same_val=False):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(examples, 3)).astype("float32")
    y = x @ np.array([[1.0], [-2.0], [0.5]], "float32")
    keras.utils.set_random_seed(0)
    ds = (
        tf.data.Dataset.from_tensor_slices((x, y))
        .shuffle(examples, seed=5, reshuffle_each_iteration=True)
        .batch(8)
    )
    if not known_length:
        ds = ds.filter(lambda x, y: True)
    model = keras.Sequential(
        [
            keras.Input((3,)),
            keras.layers.Dense(8),
            keras.layers.Dropout(0.2, seed=1),
            keras.layers.Dense(1),
        ]
    )
    model.compile(keras.optimizers.SGD(0.05), "mse")
    cfg = TrainingConfig(
        epochs=3,
        validations_per_epoch=2,
        run_dir=str(run_dir),
        verbose=0,
        tensorboard=False,
        patience=0,
    )
    losses = Batches()
    if same_val:
        val = ds
    else:
        val = tf.data.Dataset.from_tensor_slices((x[:16], y[:16])).batch(8)
    training.fit(model, ds, val, cfg, callbacks=[InterruptAt(interrupt_at), losses])
    return model, losses.losses


def _columns(run_dir, *names):
    rows = log_rows(run_dir)
    return {name: [float(row[name]) for row in rows] for name in names}


def _check(tmp_path, interrupt_at, **kw):
    whole, whole_losses = _run(tmp_path / "whole", **kw)
    with pytest.raises(Interrupt):
        _run(tmp_path / "run", interrupt_at=interrupt_at, **kw)
    resumed, losses = _run(tmp_path / "run", **kw)
    # 8 batches a pass (7 with 56 examples), 4 steps a validation round
    np.testing.assert_allclose(losses, whole_losses[interrupt_at * 4 :], rtol=1e-5)
    for a, b in zip(resumed.get_weights(), whole.get_weights(), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    logged = _columns(tmp_path / "run", "epoch", "loss", "val_loss")
    expected = _columns(tmp_path / "whole", "epoch", "loss", "val_loss")
    assert logged["epoch"] == expected["epoch"] == list(range(6))
    np.testing.assert_allclose(logged["loss"], expected["loss"], rtol=1e-5)
    np.testing.assert_allclose(logged["val_loss"], expected["val_loss"], rtol=1e-5)


@pytest.mark.parametrize("interrupt_at", [1, 2, 3, 5])
def test_resumed_after_a_validation_round(tmp_path, interrupt_at):
    # 1: after the first half of pass 1; 2: after pass 1; 3: in the middle of pass 2;
    # 5: in the middle of the last pass (more rounds completed than passes asked for)
    _check(tmp_path, interrupt_at)


@pytest.mark.parametrize("interrupt_at", [1, 2, 3])
def test_rounds_across_the_end_of_a_pass(tmp_path, interrupt_at):
    # 7 batches a pass in rounds of 4: the second round of pass 1 ends after the
    # first batch of pass 2
    _check(tmp_path, interrupt_at, examples=56)


def test_data_of_unknown_length(tmp_path):
    _check(tmp_path, 3, known_length=False)


@pytest.mark.slow
def test_a_process_killed_in_the_middle_of_a_round(tmp_path):
    """tiny_training.py (8 shuffled batches a pass, 2 rounds of 4 batches) killed in
    round 4 (the second half of pass 2) and started again with the same command
    ends as the same run not killed."""
    flags = ["--batch-size", 8, "--validations-per-epoch", 2, "--shuffle"]
    flags += ["--patience", 0, "--verbose", 0]
    whole = run_script(
        [tmp_path / "whole.json", "--run-dir", tmp_path / "whole"] + flags
    )
    assert whole.returncode == 0, whole.stderr[-2000:]
    out, run_dir = tmp_path / "out.json", tmp_path / "run"
    cmd = [out, "--run-dir", run_dir, "--kill-epoch", 3] + flags
    first = run_script(cmd)
    assert first.returncode == 3, first.stderr[-2000:]  # killed
    second = run_script(cmd)
    assert second.returncode == 0, second.stderr[-2000:]
    assert (
        f"resuming {run_dir} after epoch 1.5 (of 5), from validation round 4/10"
        in second.stdout
    )
    assert epochs_seen(out) == [0, 1, 2, 3, 3, 4, 5, 6, 7, 8, 9]
    expected = json.load(open(tmp_path / "whole.json"))
    np.testing.assert_allclose(
        json.load(open(out))["weights"], expected["weights"], rtol=1e-5, atol=1e-7
    )
    logged = _columns(run_dir, "epoch", "loss", "val_loss")
    wanted = _columns(tmp_path / "whole", "epoch", "loss", "val_loss")
    assert logged["epoch"] == wanted["epoch"] == list(range(10))
    np.testing.assert_allclose(logged["loss"], wanted["loss"], rtol=1e-5)
    np.testing.assert_allclose(logged["val_loss"], wanted["val_loss"], rtol=1e-5)
