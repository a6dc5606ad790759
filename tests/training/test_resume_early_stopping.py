"""A resumed run continues the interrupted run's early stopping (best value, best
epoch and its weights, waiting count) and plateau decay: it stops at the same epoch
and ends with the same weights as a run that was not interrupted."""

import os

import keras
import numpy as np
import pytest

from tests.training.training_test_utils import (
    Interrupt,
    Scripted,
    dense_model,
    logged_epochs,
    logged_rates,
    regression_data,
)
from zoo import training
from zoo.training import TrainingConfig
from zoo.training.callbacks import monitor_values

# The best score is epoch 1's; with patience 3 training stops after epoch 4.
SCORES = [0.1, 0.5, 0.4, 0.45, 0.3, 0.9, 0.95, 0.99]


def _run(run_dir, interrupt_at=None, **cfg_kwargs):
    ds, _ = regression_data()
    keras.utils.set_random_seed(0)
    cfg = TrainingConfig(
        epochs=len(SCORES),
        run_dir=str(run_dir),
        verbose=0,
        tensorboard=False,
        monitor="val_score",
        mode="max",
        patience=3,
        **cfg_kwargs,
    )
    model = dense_model(keras.optimizers.SGD(cfg.learning_rate))
    history = training.fit(
        model, ds, ds, cfg, callbacks=[Scripted(SCORES, interrupt_at)]
    )
    return model, history


@pytest.mark.parametrize("interrupt_at", [2, 3, 4])
def test_a_resumed_run_stops_and_restores_as_an_uninterrupted_one(
    tmp_path, interrupt_at
):
    whole, whole_history = _run(tmp_path / "whole")
    assert whole_history.epoch == [0, 1, 2, 3, 4]  # stopped by patience 3
    with pytest.raises(Interrupt):
        _run(tmp_path / "run", interrupt_at=interrupt_at)
    best_files = [
        n for n in os.listdir(tmp_path / "run" / "backup") if n.startswith("best-")
    ]
    assert "best-00001.npz" in best_files
    resumed, history = _run(tmp_path / "run")
    assert history.epoch == list(range(interrupt_at, 5))  # the same last epoch
    assert logged_epochs(tmp_path / "run") == [0, 1, 2, 3, 4]
    for a, b in zip(resumed.get_weights(), whole.get_weights(), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_the_best_weights_are_those_of_the_best_epoch(tmp_path):
    class Weights(keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.at_end = []

        def on_epoch_end(self, epoch, logs=None):
            self.at_end.append(self.model.get_weights())

    ds, _ = regression_data()
    keras.utils.set_random_seed(0)
    cfg = TrainingConfig(
        epochs=8, run_dir=str(tmp_path / "r"), verbose=0, tensorboard=False,
        monitor="val_score", mode="max", patience=3,
    )  # fmt: skip
    model = dense_model(keras.optimizers.SGD(cfg.learning_rate))
    seen = Weights()
    training.fit(model, ds, ds, cfg, callbacks=[Scripted(SCORES), seen])
    for a, b in zip(model.get_weights(), seen.at_end[1], strict=True):
        np.testing.assert_array_equal(a, b)


def test_plateau_decay_replays_every_epoch_nan_included(tmp_path):
    scores = [1.0, float("nan"), 1.0, 2.0]
    path = tmp_path / "log.csv"
    path.write_text(
        "epoch,val_score\n"
        + "".join(f"{i},{s}\n" for i, s in enumerate(scores))
        + "4,\n"
    )
    values = monitor_values(str(path), "val_score")
    assert values[:1] + values[2:] == [1.0, 1.0, 2.0, None]
    assert np.isnan(values[1])


def test_decay_of_a_resumed_run_matches(tmp_path):
    def run(run_dir, interrupt_at=None):
        ds, _ = regression_data()
        keras.utils.set_random_seed(0)
        cfg = TrainingConfig(
            epochs=len(SCORES), run_dir=str(run_dir), verbose=0, tensorboard=False,
            monitor="val_score", mode="max", patience=0, learning_rate=0.1,
            decay_factor=0.5, decay_patience=1,
        )  # fmt: skip
        model = dense_model(keras.optimizers.SGD(cfg.learning_rate))
        training.fit(model, ds, ds, cfg, callbacks=[Scripted(SCORES, interrupt_at)])
        return model

    whole = run(tmp_path / "whole")
    with pytest.raises(Interrupt):
        run(tmp_path / "run", interrupt_at=4)
    resumed = run(tmp_path / "run")
    assert logged_rates(tmp_path / "run") == logged_rates(tmp_path / "whole")
    for a, b in zip(resumed.get_weights(), whole.get_weights(), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
