import dataclasses

import numpy as np
import pytest

from zoo.demo.babi import DEMO_TASK, load_demo
from zoo.models.memn2n import MemN2N, MemN2NQuestionAnswerer
from zoo.models.memn2n.babi_arrays import build_arrays
from zoo.models.memn2n.linear_start import LinearStartSchedule
from zoo.models.memn2n.memn2n_training import (
    best_of_restarts,
    linear_start_callbacks,
    train_memn2n,
)
from zoo.training import TrainingConfig, fit


def test_linear_start_callbacks():
    model = MemN2N(10, 4, 3, embedding_dim=4, hops=1, linear_start=True)
    callbacks, linear = linear_start_callbacks(model, 0.005, 25, ls_epochs=20)
    assert isinstance(callbacks[0], LinearStartSchedule) and callbacks[1] is linear
    assert linear.max_epochs == 20 and linear.patience == float("inf")
    _, by_loss = linear_start_callbacks(model, 0.005, 25, ls_epochs=0, patience=2)
    assert by_loss.max_epochs is None and by_loss.patience == 2
    plain = MemN2N(10, 4, 3, embedding_dim=4, hops=1, linear_start=False)
    callbacks, linear = linear_start_callbacks(plain, 0.01, 25, ls_epochs=20)
    assert linear is None and len(callbacks) == 1
    assert callbacks[0].rate(25) == 0.005


@pytest.fixture(scope="module")
def demo_arrays():
    tasks = load_demo(num_stories=120, test_stories=20, memory_size=10, seed=2)
    vocab, sentence_length, arrays = build_arrays(tasks, memory_size=10)
    return len(vocab), sentence_length, arrays[DEMO_TASK]


def test_train_memn2n_learns_the_demo_and_ends_linear_start(demo_arrays, tmp_path):
    vocabulary_size, sentence_length, arrays = demo_arrays
    model = MemN2N(
        vocabulary_size, 10, sentence_length, embedding_dim=16, hops=2,
        linear_start=True,
    )  # fmt: skip
    task = MemN2NQuestionAnswerer(model, compile=False)
    task.default_compile(learning_rate=0.01, jit_compile=False)
    cfg = TrainingConfig(
        epochs=8, patience=0, run_dir=str(tmp_path), verbose=0, tensorboard=False
    )
    error, info = train_memn2n(
        task,
        arrays["train"],
        arrays["valid"],
        lambda *a, **k: fit(*a, cfg, **k),
        learning_rate=0.01,
        decay_every=25,
        seed=3,
        ls_epochs=3,
    )
    assert info["epochs"] == 8 and info["linear_start_ended"] == 3
    assert info["seed"] == 3
    assert not model.memory.linear_start_enabled
    assert 0.0 <= error < 50.0  # chance is about 83% (six places)
    assert (tmp_path / "best.keras").exists() and (tmp_path / "log.csv").exists()
    # The task was fit: its own optimizer took the steps (LS rate, then decay).
    assert int(task.optimizer.iterations) > 0


def test_best_of_restarts_keeps_the_lowest_training_error_and_reuses(tmp_path):
    calls, lines = [], []

    def train_run(run_dir, seed):
        calls.append((run_dir, seed))
        model = MemN2N(8, 3, 2, embedding_dim=2, hops=1, name=f"m{seed}")
        return model, {1: 3.0, 1001: 1.0, 2001: 2.0, 3001: 5.0}[seed], {"seed": seed}

    result = best_of_restarts(train_run, 3, tmp_path, {"hops": 1}, seed=1,
                              log=lines.append)  # fmt: skip
    assert [seed for _, seed in calls] == [1, 1001, 2001]
    assert calls[1][0] == str(tmp_path / "restart1")
    assert result["train_error_percent"] == 1.0 and result["model"].name == "m1001"
    assert [r["train_error_percent"] for r in result["runs"]] == [3.0, 1.0, 2.0]
    # The same command again reuses every run; a larger count trains the new one.
    calls.clear()
    again = best_of_restarts(train_run, 4, tmp_path, {"hops": 1}, seed=1,
                             log=lines.append)  # fmt: skip
    assert [seed for _, seed in calls] == [3001]
    assert again["train_error_percent"] == 1.0 and again["model"].name == "m1001"
    assert any("reused" in line for line in lines)
    # Another configuration trains again.
    calls.clear()
    best_of_restarts(train_run, 1, tmp_path, {"hops": 2}, seed=1, log=lines.append)
    assert len(calls) == 1
    with pytest.raises(ValueError, match="restarts=0"):
        best_of_restarts(train_run, 0, tmp_path, {}, log=lines.append)


def test_train_groups_joint_or_one_per_task(tmp_path):
    from zoo.models.memn2n.memn2n_training import train_groups

    tasks = load_demo(num_stories=20, test_stories=5, memory_size=6)
    tasks[7] = dataclasses.replace(tasks[0], task=7)
    tasks[8] = dataclasses.replace(tasks[0], task=8, train=None, missing="no file")
    _, _, arrays = build_arrays(tasks, memory_size=6)
    calls, lines = [], []

    def train_run(train, valid, run_dir, seed):
        calls.append((len(train["answer"]), len(valid["answer"]), run_dir, seed))
        model = MemN2N(8, 3, 2, embedding_dim=2, hops=1)
        return model, 2.0, {"seed": seed}

    joint = train_groups(tasks, arrays, True, train_run, 1, tmp_path / "j", {},
                         seed=5, log=lines.append)  # fmt: skip
    n_train, n_valid = len(tasks[0].train), len(tasks[0].valid)
    assert calls == [(2 * n_train, 2 * n_valid, str(tmp_path / "j/joint/restart0"), 5)]
    assert sorted(joint) == ["joint"] and joint["joint"]["tasks"] == [0, 7]
    assert joint["joint"]["train_error_percent"] == 2.0
    assert lines[0].startswith("[joint] restart 0: training error 2.0%")
    calls.clear()
    apart = train_groups(tasks, arrays, False, train_run, 1, tmp_path / "t", {},
                         log=lines.append)  # fmt: skip
    assert sorted(apart) == ["task0", "task7"] and apart["task7"]["tasks"] == [7]
    assert [c[0] for c in calls] == [n_train, n_train]
    assert train_groups({}, {}, True, train_run, 1, tmp_path / "e", {}) == {}


def test_train_memn2n_with_weight_averaging_optimizer_kwargs(demo_arrays, tmp_path):
    from zoo.training import averaging

    vocabulary_size, sentence_length, arrays = demo_arrays
    model = MemN2N(
        vocabulary_size, 10, sentence_length, embedding_dim=8, hops=1,
        linear_start=False,
    )  # fmt: skip
    cfg = TrainingConfig(
        epochs=1, patience=0, run_dir=str(tmp_path), verbose=0, tensorboard=False,
        ema=0.9,
    )  # fmt: skip
    task = MemN2NQuestionAnswerer(model, compile=False)
    task.default_compile(learning_rate=0.01, jit_compile=False, **averaging(cfg))
    small = {k: v for k, v in arrays["train"].items()}
    error, info = train_memn2n(
        task,
        small,
        arrays["valid"],
        lambda *a, **k: fit(*a, dataclasses.replace(cfg), **k),
        learning_rate=0.01,
        decay_every=25,
        noise_rate=0.0,
    )
    assert info["linear_start_ended"] is None and np.isfinite(error)
    assert task.optimizer.use_ema and task.optimizer.ema_momentum == 0.9
