"""The paper's training protocol for `MemN2NQuestionAnswerer`: fit, best of restarts.

- `linear_start_callbacks`: linear start (LS) and the step schedule around it.
- `train_memn2n`: one run of the compiled task on bAbI arrays (random-noise
  empty memories, LS, the schedule); returns the training error.
- `best_of_restarts`: several runs from different seeds, the one with the lowest
  training error kept (the paper's protocol), finished runs reused from their folder.
- `train_groups`: the best of restarts of each model to train (one joint model, or
  one per task).
"""

import functools
import math
import os
import time

from zoo.models.memn2n.babi_arrays import concat_arrays, error_rate, make_dataset
from zoo.models.memn2n.linear_start import LinearStart, LinearStartSchedule
from zoo.models.memn2n.run_cache import RunCache, run_key


def linear_start_callbacks(model, learning_rate, decay_every, ls_epochs=0, patience=1):
    """The learning-rate schedule and, for a linear-start model, the LS switch.

    Args:
        model: a `MemN2N`; linear start applies when built with `linear_start`.
        learning_rate: the initial rate, held during linear start.
        decay_every: epochs between halvings of the rate once the softmax is on.
        ls_epochs: > 0: linear start lasts exactly this many epochs (the authors'
            code); 0: until validation loss stops falling (the paper's wording).
        patience: with `ls_epochs=0`, epochs without a lower validation loss that
            end linear start.

    Returns:
        `(callbacks, linear)`: the callbacks for `fit` and the `LinearStart`
        callback (None without linear start), whose `switched_at` tells when the
        softmax came back.
    """
    linear = None
    if model.linear_start:
        patience = math.inf if ls_epochs else patience
        linear = LinearStart(
            model.memory, patience=patience, max_epochs=ls_epochs or None
        )
    schedule = LinearStartSchedule(learning_rate, decay_every, linear, ls_epochs)
    return [schedule] + ([linear] if linear else []), linear


def train_memn2n(
    task,
    train_arrays,
    valid_arrays,
    fit,
    *,
    learning_rate,
    decay_every,
    batch_size=32,
    seed=0,
    noise_rate=0.1,
    ls_epochs=0,
    ls_patience=1,
):
    """Trains the compiled task on bAbI arrays with the paper's protocol.

    Feeds the task shuffled batches of word ids (its preprocessed `tf.data`
    pipeline) with random-noise empty memories at `noise_rate`, runs linear start
    and the schedule (`linear_start_callbacks`) and leaves the softmax on at the end
    (a linear model is never served).

    Args:
        task: a `MemN2NQuestionAnswerer`, compiled (`default_compile`, with the
            rate `learning_rate`).
        train_arrays, valid_arrays: `babi_arrays.vectorize` outputs.
        fit: `fit(task, train_ds, valid_ds, callbacks=...)` -> Keras `History`,
            e.g. `zoo.training.fit` with its configuration bound.
        learning_rate, decay_every, ls_epochs, ls_patience: see
            `linear_start_callbacks`.
        batch_size: int (a last smaller batch is dropped when there is a full one).
        seed: shuffle and random-noise seed.
        noise_rate: random-noise (RN) rate, 0 = off.

    Returns:
        `(train_error, info)`: the training error in percent and a dict
        (`epochs`, `seconds`, `linear_start_ended`, `seed`).
    """
    drop = len(train_arrays["answer"]) >= batch_size
    train_ds = make_dataset(train_arrays, batch_size, True, seed, noise_rate, drop)
    valid_ds = make_dataset(valid_arrays, batch_size=512)
    callbacks, linear = linear_start_callbacks(
        task.backbone, learning_rate, decay_every, ls_epochs, ls_patience
    )
    start = time.time()
    history = fit(task, train_ds, valid_ds, callbacks=callbacks)
    task.backbone.memory.set_linear_start(False)
    info = {
        "epochs": len(history.history.get("loss", [])),
        "seconds": round(time.time() - start, 1),
        "linear_start_ended": linear.switched_at if linear else None,
        "seed": seed,
    }
    return error_rate(task, train_arrays), info


def best_of_restarts(train_run, restarts, run_dir, key, seed=0, log=print):
    """Trains `restarts` runs and keeps the one with the lowest training error.

    Restart `r` runs in `run_dir/restart<r>` with seed `seed + 1000 r`. A finished
    run is kept there (`RunCache`: `final.keras`, `result.json`) under a key made
    of `key`, `r` and the library version, so a rerun of the same command reuses
    it, and a larger `restarts` trains only the new ones.

    Args:
        train_run: `train_run(run_dir, seed)` -> `(task, train_error, info)`, the
            training error in percent.
        restarts: int >= 1.
        run_dir: the group's folder.
        key: JSON-able description of what is trained (configuration, data).
        seed: the first restart's seed.
        log: a function taking one line of text.

    Returns:
        dict: `model` (the kept task), `train_error_percent` (its), `runs` (one
        dict per restart: `train_error_percent` and the run's info).
    """
    if not isinstance(restarts, int) or restarts < 1:
        raise ValueError(
            f"`restarts` must be a positive int. Received: restarts={restarts!r}"
        )
    best, runs = None, []
    for restart in range(restarts):
        restart_dir = os.path.join(run_dir, f"restart{restart}")
        cache = RunCache(restart_dir, run_key(key, restart))
        cached = cache.load()
        if cached is not None and "train_error_percent" in cached[1]:
            model, result = cached
            log(f"restart {restart}: reused {cache.model_path}")
        else:
            model, train_error, info = train_run(restart_dir, seed + 1000 * restart)
            result = {"train_error_percent": train_error, "info": info}
            cache.save(model, result)
        error = result["train_error_percent"]
        log(f"restart {restart}: training error {error:.1f}% {result['info']}")
        runs.append({"train_error_percent": error, **result["info"]})
        if best is None or error < best[1]:
            best = (model, error)
    return {"model": best[0], "train_error_percent": best[1], "runs": runs}


def train_groups(tasks, arrays, joint, train_run, restarts, run_dir, key, seed=0,
                 log=print):  # fmt: skip
    """Trains one model for every task with training data (`joint`, the label
    `"joint"`) or one per such task (`"task<N>"`), each the best of `restarts` runs.

    Args:
        tasks: dict task -> `zoo.data.babi.BabiTask`.
        arrays: `build_arrays`' arrays (`arrays[task][split]`).
        joint: one model for every task with training data, else one per task.
        train_run: `train_run(train_arrays, valid_arrays, run_dir, seed)` ->
            `(task, train_error, info)`, the training error in percent.
        restarts: int >= 1.
        run_dir: the models' folders are `run_dir/joint` or `run_dir/task<N>`.
        key: JSON-able description of what is trained; the model's label is added.
        seed: the first restart's seed.
        log: a function taking one line of text (prefixed with the label).

    Returns:
        dict label -> `best_of_restarts`' result plus `"tasks"`, the tasks its
        model answers.
    """
    groups = [(f"task{t}", [t]) for t, entry in tasks.items() if entry.train]
    if joint and groups:
        groups = [("joint", [t for _, (t,) in groups])]
    results = {}
    for label, group in groups:
        train, valid = (
            concat_arrays([arrays[t][split] for t in group])
            for split in ("train", "valid")
        )
        results[label] = {"tasks": group} | best_of_restarts(
            functools.partial(train_run, train, valid),
            restarts,
            os.path.join(run_dir, label),
            {**key, "label": label},
            seed=seed,
            log=lambda line, label=label: log(f"[{label}] {line}"),
        )
    return results
