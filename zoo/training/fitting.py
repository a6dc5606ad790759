"""`fit`: `keras.Model.fit` with resumption, checkpoints, logs and early stopping.

The callbacks `fit` passes to `keras.Model.fit`, in this order (each sees the epoch's
logs as the ones before it left them; the Keras callback that each of ours would be,
and why ours stays, is in its module's docstring):

- the restore of the backup on a resume, the swap of the averaged weights into the
  model with `ema` (`zoo.training.checkpoints`, `zoo.training.weight_averaging`: not
  Keras' `BackupAndRestore` and `SwapEMAWeights`), then the caller's callbacks, so a
  metric they log can be `cfg.monitor`;
- `ElapsedTime`, `TimedSnapshots` (with a time limit or snapshots), before the
  checkpoints and the log, which then have `elapsed_seconds`;
- `BestCheckpoint`, `ResumableEarlyStopping` (`patience` > 0), the raw weights
  back in the model with `ema`, `NaNGuard`, `PlateauDecay` (`decay_factor` < 1),
  then Keras' `CSVLogger`, `TrainingCurve` and Keras' `TensorBoard`;
- `SaveBackup` last, after the log: a kill between the two trains the logged epoch
  again rather than losing its row.

Progress output is Keras' own (`verbose`): the progress bar on a terminal, its plain
lines per epoch (`verbose=2`) otherwise.
"""

import importlib.util
import os
import sys
import warnings

import keras
import tensorflow as tf

from zoo.io import remove_temporaries
from zoo.training import keras_workarounds
from zoo.training.callbacks import (
    ElapsedTime,
    NaNGuard,
    PlateauDecay,
    ResumableEarlyStopping,
    RoundsProgress,
    TimedSnapshots,
    TrainingCurve,
    maximize,
    monitor_values,
)
from zoo.training.checkpoints import Backup, BestCheckpoint, SaveBackup
from zoo.training.data import resume_rounds, validation_rounds
from zoo.training.resume import CURVE_FILE, run_identity_of, start_or_resume
from zoo.training.run_folder import kept_backups, run_lock
from zoo.training.weight_averaging import WeightAverage, averages_weights


def fit(model, train_ds, val_ds, cfg, callbacks=None, run_identity=None, **fit_kwargs):
    """Fits a compiled model with resumption, checkpoints, logs and early stopping.

    Args:
        model: a compiled, built `keras.Model` (built so a backup can be restored
            into it; Functional models always are).
        train_ds: training `tf.data.Dataset` of batches (shuffled by the caller).
        val_ds: validation dataset, or None (then `cfg.monitor` falls back to
            `"loss"`).
        cfg: a `TrainingConfig`.
        callbacks: extra Keras callbacks, run before the built-in ones.
        run_identity: a JSON-able dict saying what this run is (e.g. the recipe,
            its configuration, `fingerprint`s of its data and vocabularies), recorded
            in `run_dir/run.json` with the training options and the model's size. A
            backup is resumed only by a run of the same identity (see
            `cfg.resume`).
        **fit_kwargs: passed to `model.fit` (e.g. `steps_per_epoch`).

    Returns:
        The `keras.callbacks.History` of this run (epochs completed before a resume
        are in `log.csv`, not in the history; empty when the run's training had
        finished and its final weights were loaded instead).

    `run_dir` is locked for the call (`zoo.training.run_folder.run_lock`). Inside
    `zoo.training.run_folder.keep_final_backups`, the backup of a finished training
    is kept (its final weights) rather than deleted, and a later call of the same
    run loads those weights and returns without training.

    Raises:
        RunMismatchError: when `run_dir` holds a backup of another run (see
            `cfg.resume`).
        RunLockedError: when another process holds `run_dir`.
        NonFiniteLossError: when the loss becomes NaN or infinite.
    """
    if "initial_epoch" in fit_kwargs:
        raise ValueError(
            "`fit` sets `initial_epoch` itself (from the backup of a resumed run). "
            f"Received: initial_epoch={fit_kwargs['initial_epoch']!r}"
        )
    with run_lock(cfg.run_dir):
        remove_temporaries(cfg.run_dir)
        return _fit(model, train_ds, val_ds, cfg, callbacks, run_identity, fit_kwargs)


def _fit(model, train_ds, val_ds, cfg, callbacks, run_identity, fit_kwargs):
    run_dir, strategy = cfg.run_dir, getattr(model, "distribute_strategy", None)
    monitor = cfg.monitor if val_ds is not None else cfg.monitor.removeprefix("val_")
    backup = Backup(os.path.join(run_dir, "backup"))
    csv_path = os.path.join(run_dir, "log.csv")
    verbose = fit_kwargs.pop("verbose", cfg.verbose)
    keras_verbose = _progress(verbose)

    # With weight averaging the average is put in the model first (for validation
    # and the epoch-end callbacks up to the early stopping) and the raw weights are
    # put back before the backup.
    weights = WeightAverage(model) if averages_weights(model, cfg) else None
    epochs, passes_ds, batches = cfg.epochs, train_ds, None
    if cfg.validations_per_epoch > 1:
        if "steps_per_epoch" in fit_kwargs:
            raise ValueError(
                "`validations_per_epoch` sets `steps_per_epoch` itself. Received: "
                f"steps_per_epoch={fit_kwargs['steps_per_epoch']!r}"
            )
        train_ds, cut, batches = validation_rounds(
            train_ds, cfg.epochs, cfg.validations_per_epoch
        )
        epochs, fit_kwargs["steps_per_epoch"] = cut["epochs"], cut["steps_per_epoch"]
    if cfg.decay_factor < 1:
        # The compiled rate, read before a backup is restored into the optimizer.
        rate = float(keras.ops.convert_to_numpy(model.optimizer.learning_rate))

    identity = run_identity_of(cfg, model, run_identity)
    initial_epoch, backup_path = start_or_resume(
        run_dir, cfg, identity, backup, csv_path
    )
    kept = kept_backups()
    if kept is not None:
        kept.append(backup)
    if backup.is_final(backup_path):
        backup.restore(model, backup_path)
        if kept is None:
            backup.remove()
        history = keras.callbacks.History()  # no epoch trained in this call
        history.set_model(model)
        history.on_train_begin()
        return history

    # A resumed run continues the interrupted run's clock, "best so far", early
    # stopping and decay on a plateau from its log (a fresh start deleted the log).
    monitored = monitor_values(csv_path, monitor)
    best = monitor_values(csv_path, monitor, finite=True)
    previous = (monitor_values(csv_path, "elapsed_seconds", finite=True) or [0])[-1]
    snapshots = None
    if cfg.time_limit or cfg.snapshot_minutes:
        folder = os.path.join(run_dir, "snapshots")
        snapshots = TimedSnapshots(
            folder, cfg.snapshot_minutes, cfg.time_limit, weights, previous
        )
    checkpoint = BestCheckpoint(os.path.join(run_dir, "best.keras"), monitor, cfg.mode)
    if best:
        checkpoint.best = (max if maximize(monitor, cfg.mode) else min)(best)
    curve = TrainingCurve(
        csv_path, os.path.join(run_dir, CURVE_FILE), monitor, cfg.validations_per_epoch
    )
    board = cfg.tensorboard and importlib.util.find_spec("tensorboard") is not None
    rounds = cfg.validations_per_epoch if keras_verbose else 1
    # Keras' `BackupAndRestore` and `SwapEMAWeights` cannot serve: see
    # `zoo.training.checkpoints` and `zoo.training.weight_averaging`.
    on = keras.callbacks.LambdaCallback
    all_callbacks = [
        # Loads the backup once Keras has built the model's metrics and optimizer.
        on(on_train_begin=lambda logs: backup.restore(model, backup_path))
        if backup_path
        else None,
        # Validation and the epoch-end callbacks up to `put_raw` see the average.
        on(
            on_test_begin=lambda logs: weights.put_average(),
            on_epoch_end=lambda epoch, logs: weights.put_average(),
        )
        if weights
        else None,
        *(callbacks or []),
        # Before the checkpoints and the log: their writing is not counted, and the
        # CSV log has the column.
        ElapsedTime(previous, pauses=[snapshots] if snapshots else []),
        snapshots,
        checkpoint,
        ResumableEarlyStopping(
            monitor, cfg.mode, cfg.patience, backup.folder, monitored
        )
        if cfg.patience > 0
        else None,
        # The raw weights back before the backup is written and training goes on.
        on(on_epoch_end=lambda epoch, logs: weights.put_raw()) if weights else None,
        NaNGuard(backup.folder),
        # After the restore (train begin), before the CSV log (epoch end).
        PlateauDecay(monitor, cfg, rate, monitored, verbose=int(verbose != 0))
        if cfg.decay_factor < 1
        else None,
        keras.callbacks.CSVLogger(csv_path, append=True),
        curve,
        keras.callbacks.TensorBoard(os.path.join(run_dir, "tensorboard"))
        if board
        else None,
        # After the CSV log: a kill between the two trains the logged epoch again
        # (and the resume drops its row) rather than losing the epoch's row.
        SaveBackup(backup, kept is not None, initial_epoch),
        RoundsProgress(rounds) if rounds > 1 else None,
    ]
    one_replica = isinstance(train_ds, tf.data.Dataset) and (
        strategy is None or strategy.num_replicas_in_sync == 1
    )
    steps = fit_kwargs.get("steps_per_epoch")
    if initial_epoch and one_replica and (batches or steps is None):
        # A resumed run sees each epoch's data in the order the interrupted run
        # would have: tf.data draws a shuffled pipeline's order when an iterator is
        # created, so the iterators Keras created in the completed epochs (training
        # and validation: they may be the same dataset) are created again, and
        # dropped with no element read, before Keras creates its own. With
        # validation rounds Keras reads one stream of batches through all rounds
        # (one iterator for the whole `fit`), and the resumed run starts that
        # stream where the interrupted run's next round would have
        # (`resume_rounds`).
        if batches:
            train_ds = resume_rounds(passes_ds, batches, steps, initial_epoch)
        else:
            _advance(train_ds, initial_epoch)
        _advance(val_ds, initial_epoch)
    if isinstance(train_ds, tf.data.Dataset):
        # The caller shuffles its tf.data pipeline; Keras ignores `shuffle` for
        # datasets but warns when it is True (its default) on every `fit`.
        fit_kwargs.setdefault("shuffle", False)
    try:
        with warnings.catch_warnings():
            if steps is None:
                # An epoch is one pass over the training data: for a dataset of
                # unknown length (after `filter` or `bucket_by_length`) Keras
                # learns its end when the data runs out, and warns. With
                # `steps_per_epoch` the warning means the data is too short.
                warnings.filterwarnings(
                    "ignore", "Your input ran out of data", category=UserWarning
                )
            return model.fit(
                train_ds,
                validation_data=val_ds,
                epochs=epochs,
                initial_epoch=initial_epoch,
                callbacks=[c for c in all_callbacks if c is not None],
                verbose=keras_verbose,
                **fit_kwargs,
            )
    finally:
        # Also after an error or an interruption: the curve of the epochs logged.
        curve.draw()


def _advance(ds, completed):
    """Creates, and drops with no element read, the iterators of `ds` that Keras'
    `fit` created in its first `completed` epochs (one validation per epoch)."""
    if isinstance(ds, tf.data.Dataset):
        for _ in range(keras_workarounds.epoch_iterators(ds, completed)):
            iter(ds)


def _progress(verbose, stream=None):
    """Keras' `verbose` for `cfg.verbose`: "auto" is the progress bar (1) on a
    terminal and Keras' plain lines per epoch (2) otherwise (log files, pipes)."""
    if verbose != "auto":
        return verbose
    try:
        return 1 if (stream or sys.stdout).isatty() else 2
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return 2
