"""Training shared by every recipe: flags, seeds, distribution, callbacks, resumption.

A recipe gets `cfg` from its flags (`zoo.training.flags`: the training flags are made
from `TrainingConfig`'s fields) and `zoo.training.steps.recipe_run` does the rest of
this for it; by hand:

```python
cfg = TrainingConfig(epochs=10, batch_size=32, learning_rate=1e-3, run_dir="runs/x")
set_seed(cfg.seed)
strategy = get_strategy(cfg.distribute)
with strategy.scope():
    model = build_model(...)
    model.compile(...)
history = fit(model, train_ds, val_ds, cfg, run_identity={"data": fingerprint(...)})
```

Extra callbacks go in `fit(..., callbacks=[...])` and run before the built-in ones, so
one that adds a metric to the epoch logs (the translation recipe's `val_bleu`) can be
the `cfg.monitor` of the checkpoint and of early stopping. `Throughput` is such a
callback: training tokens per second per epoch, tracing and validation excluded.

`fit` adds, under `cfg.run_dir`:

- `.lock`: the run folder's lock, held while the run lasts (a second process gets a
  `RunLockedError` naming the pid that holds it: `zoo.training.run_folder`).
- `run.json`: what the folder is a run of (the training options, the model's size and
  the caller's `run_identity`). A restart resumes the backup only when they are the
  same: it prints `resuming <run_dir> from epoch N (of M)` (with validation rounds,
  `after epoch 1.5 (of M), from validation round 4/R`); a different run raises
  `RunMismatchError` naming what differs (`cfg.resume`: "force" resumes anyway,
  "never" starts afresh). `epochs`, `patience`, verbosity, devices and folders may
  change on a resume, so a run can be extended (`zoo.training.resume`).
- `backup/`: the weights and optimizer state after the last completed epoch. A run
  that is killed and started again with the same command resumes at the first epoch
  that had not completed, so at most the current epoch is lost. The backup holds the
  states of the model's random generators too (dropout), and a resumed run draws a
  reshuffled `tf.data` pipeline's order of each epoch as the interrupted run would
  have (without `steps_per_epoch`, on one replica; with `validations_per_epoch` it
  continues the stream of batches in the middle of a pass too), so with the same
  seed it trains as a run that was not interrupted (see "Randomness in tf.data"
  below for what is not restored). The backup is removed
  when training finishes, or, inside `keep_final_backups` (a recipe's run), replaced
  by the final weights until the caller's run completes (a rerun loads them).
- `best.keras`: the best model so far on `cfg.monitor`; after a resume its "best so
  far" is read back from the CSV log.
- `log.csv`: one row per epoch (a resumed run continues it; a fresh start in the same
  folder restarts it, and deletes the earlier run's `best.keras`, curve and
  TensorBoard logs), with `elapsed_seconds`: the wall-clock seconds of training
  (training steps and validation; not the checkpoints and the backup written
  between epochs) since the run started, continued by a resume.
- `training_curve.png`: loss, validation loss and the monitored value against
  epochs and against minutes (`zoo.viz.training_curve`), drawn when `fit` ends (also
  on an error) and every 5 minutes at an epoch's end; a drawing that fails is
  reported in one line and does not stop training.
- `tensorboard/`: TensorBoard logs (when the `tensorboard` package is installed).
- early stopping on `cfg.monitor` with `patience` and `restore_best_weights=True`;
  a resumed run continues its state (best value, best epoch and weights, waiting
  count), as it does the plateau decay's.
- a NaN guard, learning-rate decay on a plateau (`decay_factor` < 1), the learning
  rate in the logs (`zoo.training.callbacks`).
- with `ema` > 0, weight averaging: validation, `best.keras` and early stopping see the
  moving average of the weights, training continues from the raw ones; the momentum
  warms up, `min(ema, (1 + t) / (10 + t))` at step `t`, for any Keras optimizer
  (`zoo.training.weight_averaging`).

Randomness in tf.data: what a resumed run restores is what tf.data draws when an
iterator is created: the order of `shuffle(..., seed=S,
reshuffle_each_iteration=True)` and the state of `Dataset.random(seed=S,
rerandomize_each_iteration=True)` (`fit` creates, and drops unread, the iterators of
the completed epochs). Random ops in a pipeline are restored when they are stateless
and take their seeds from such a stream (bAbI's random noise zips a `Dataset.random`
stream of seed pairs into its batches and draws `tf.random.stateless_uniform` with
them), or from the epoch and step. Stateful ops (`tf.random.uniform`,
`tf.image.random_crop`) inside a map function are not restored: their state is a
generator in the op's kernel, created from the global and op seeds when the process
first runs the op and advanced by every call, which no checkpoint holds; a resumed
process starts it afresh (so it repeats the draws of the run's first epochs), and
under a parallel `map` the order of the calls depends on thread timing anyway. No
zoo pipeline uses them. Keras' own random layers (dropout) use
`keras.random.SeedGenerator`s, which the backup holds. With validation rounds
(`validations_per_epoch` above 1) the validation data must not share the training
data's reshuffled pipeline (e.g. be the same dataset): its iterators would draw from
the training data's shuffle between passes, in an order a resumed run does not
repeat.

Checkpoints, the backup and `run.json` are written atomically (a temporary file, then
a rename: `zoo.io`), so a kill during a save leaves the previous file intact;
`save_model_atomic` and `atomic_write` do the same for a recipe's own files.

Progress goes to standard output: Keras' progress bar on a terminal, Keras' plain
lines per epoch (`verbose=2`) otherwise (log files, pipes), as `cfg.verbose` says.

Distribution uses TensorFlow's own engine (`zoo.training.distribution`):
`get_strategy("mirrored")` for all local devices of one machine.

The modules: `config` (options and flags), `distribution`, `callbacks`,
`weight_averaging`, `checkpoints`, `resume`, `fitting` (`fit`), `data`
(tf.data helpers) and `keras_workarounds` (every use of Keras' private internals).
The package exports what a recipe or a user calls; the rest is imported from its
module. Importing `zoo.training` is cheap: `TrainingConfig`, `fingerprint` and the
run folder's errors need no TensorFlow, and each other name loads its module on
first use.
"""

import importlib

from zoo.training.config import TrainingConfig
from zoo.training.resume import RunMismatchError, fingerprint
from zoo.training.run_folder import RunLockedError

# The names that need TensorFlow, by module, loaded on first use.
_LAZY = {
    "distribution": "get_strategy set_seed",
    "callbacks": "NonFiniteLossError Throughput TimedSnapshots load_snapshot",
    "weight_averaging": "averaging swap_weight_average warm_up_average",
    "checkpoints": "save_model_atomic",
    "fitting": "fit",
    "data": "bucket_by_length validate_more_often",
}
_MODULES = {n: m for m, names in _LAZY.items() for n in names.split()}
__all__ = ["RunLockedError", "RunMismatchError", "TrainingConfig", "fingerprint"]
__all__ += sorted(_MODULES)


def __getattr__(name):
    if name not in _MODULES:
        raise AttributeError(f"module 'zoo.training' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"zoo.training.{_MODULES[name]}"), name)
    globals()[name] = value
    return value
