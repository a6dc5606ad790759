"""The steps every recipe takes, as plain functions and one context manager.

A recipe is a script that reads top to bottom:

```python
from zoo.training import steps

parse = steps.parser(Config, NAME, __doc__, TRAINING, DEMO_TRAINING)  # the flags

def main(argv=None):
    config = parse(argv)
    with steps.recipe_run(NAME, config) as run:
        data = load_data(config, run.log)     # read, split, vocabulary, tf.data
        with run.strategy.scope():
            task = build_model(config, data, run.optimizer())  # compiled
        run.fit(task, data.train, data.validation,
                data_fingerprint=data.fingerprint)
        metrics = evaluate(task, data)
        run.write_metrics(data.description, metrics)
        version = None if config.no_export else export(...)
    return run.result(EXPORT_NAME, "accuracy", metrics["accuracy"], version)
```

`recipe_run` quiets TensorFlow's C++ logging (before TensorFlow is imported; `--debug`
shows it), seeds the random generators, picks the distribution strategy, and holds
the run folder's lock for the whole body (a second process gets one line and exit
status 2 naming the holder's pid). The backup of a finished training is kept until
the body ends without an error, so a run killed during evaluation, a report or the
export is resumed by the same command from its trained weights. The output folders
(`--run-dir`, `--report-dir`, `--export-dir`) are checked to be writable before any
work. An error the user can act on (`zoo.errors.ZooError`: a missing file, a
malformed line, a run folder of another run, a folder that cannot be written), a
training loss that became NaN and a full disk (any writer: the CSV log, TensorBoard,
a checkpoint, a report) are printed as one line and exit with status 2; `--debug`
shows the traceback.

Module-level imports are stdlib-only: a recipe's `--help` needs no TensorFlow.
"""

import contextlib
import functools
import json
import os
import sys
import time

from zoo.errors import ZooError, one_line
from zoo.training.flags import parse_config


def parser(config_class, name, description, training=None, demo_training=None):
    """The `parse(argv=None)` function of recipe `name`: its `config_class` from the
    flags (`sys.argv[1:]` when `argv` is None); argparse errors exit with status 2.

    Args:
        config_class: the recipe's `RecipeConfig` dataclass.
        name: the recipe's name (`runs/<name>/`, `reports/<name>/`,
            `python -m zoo.recipes.<name>`).
        description: the `--help` text (the recipe module's docstring).
        training: defaults of the training flags with `--data`.
        demo_training: defaults of the training flags on the demo corpus.
    """

    return functools.partial(
        parse_config,
        config_class,
        prog=f"python -m zoo.recipes.{name}",
        description=description,
        name=name,
        training_defaults=training,
        demo_training_defaults=demo_training,
    )


class RecipeRun:
    """What a recipe's body uses while its run folder is held (`recipe_run`).

    Attributes:
        name: the recipe's name.
        config: the recipe's configuration.
        strategy: the `tf.distribute` strategy (`--distribute`).
        run_dir: the run folder.
    """

    def __init__(self, name, config, strategy, run_dir):
        self.name = name
        self.config = config
        self.strategy = strategy
        self.run_dir = run_dir
        self._start = time.perf_counter()

    def log(self, message):
        """Prints `[elapsed s] message`, flushed (one line, plain text)."""
        elapsed = time.perf_counter() - self._start
        print(f"[{elapsed:7.1f} s] {message}", flush=True)

    def identity(self, data_fingerprint=None):
        """What the run folder holds a run of: the recipe, its configuration (less
        the fields that may change on resumption) and the data's fingerprint."""
        return {
            "recipe": self.name,
            "config": self.config.identity(),
            "data": data_fingerprint,
        }

    def fit(
        self, trainer, train_ds, val_ds, callbacks=None, data_fingerprint=None, **kw
    ):
        """`zoo.training.fit` with the configured training options and this run's
        identity (checked against the run folder before anything is written there).

        `trainer` is the compiled Keras model; `callbacks` run before the built-in
        ones (so one that adds a metric can be the monitored quantity).
        """
        from zoo.training.fitting import fit

        cfg, identity = self.config.training, self.identity(data_fingerprint)
        return fit(trainer, train_ds, val_ds, cfg, callbacks, identity, **kw)

    def optimizer(self, cls=None, **kwargs):
        """The optimizer of `cls` (Adam by default) with the configured learning rate
        and weight averaging (`--ema`); `kwargs` go to `cls`."""
        import keras

        from zoo.training.weight_averaging import averaging

        cls = cls or keras.optimizers.Adam
        training = self.config.training
        kwargs.setdefault("learning_rate", training.learning_rate)
        return cls(**kwargs, **averaging(training))

    def write_metrics(self, description, metrics, filename="metrics.json"):
        """Writes `{"recipe", "data", **metrics}` to `report_dir/filename` atomically;
        returns its path."""
        from zoo.io import atomic_write

        report_dir = self.config.report_dir
        path = os.path.join(report_dir, filename)
        payload = {"recipe": self.name, "data": description, **metrics}
        os.makedirs(report_dir, exist_ok=True)
        with atomic_write(path) as f:
            f.write(json.dumps(payload, indent=2, default=_jsonable) + "\n")
        return path

    def result(self, model, metric, value, export):
        """The recipe's result, `{"model", "metric", "value", "export"}`, logged."""
        value = None if value is None else float(value)
        if export is not None:
            export = str(export)
            self.log(f"exported: {export}")
        self.log(f"{metric}: {value}")
        return {"model": model, "metric": metric, "value": value, "export": export}


@contextlib.contextmanager
def recipe_run(name, config):
    """Holds the run folder of recipe `name` while the body runs; yields a
    `RecipeRun`.

    A `zoo.errors.ZooError` raised in the body is printed as one line and exits
    with its status (2); `--debug` shows its traceback instead.
    """
    from zoo import tf_logging

    tf_logging.quiet(config.debug)  # before TensorFlow is imported
    try:
        from zoo.training.distribution import get_strategy, set_seed
        from zoo.training.run_folder import keep_final_backups, run_lock

        check_output_folders(config)
        set_seed(config.training.seed)
        strategy = get_strategy(config.training.distribute)
        run_dir = config.training.run_dir
        with run_lock(run_dir), keep_final_backups() as kept:
            yield RecipeRun(name, config, strategy, run_dir)
            # The run is complete: its trained weights are no longer needed.
            for backup in kept:
                backup.remove()
    except Exception as error:
        message = _failure_line(error, config)
        if message is None or config.debug:
            raise
        print(message, file=sys.stderr, flush=True)
        raise SystemExit(getattr(error, "exit_code", 2)) from None


def check_output_folders(config):
    """Refuses, before any work, an output folder the recipe could not write in:
    `--run-dir`, `--report-dir`, and `--export-dir` unless `--no-export`
    (`zoo.io.check_writable_dir`: a `ConfigError` naming the flag and the folder)."""
    from zoo.io import check_writable_dir

    folders = {"--run-dir": config.training.run_dir, "--report-dir": config.report_dir}
    if not config.no_export:
        folders["--export-dir"] = config.export_dir
    for flag, folder in folders.items():
        if folder is not None:
            check_writable_dir(folder, flag)


def _failure_line(error, config):
    """The one line `recipe_run` prints for `error`, or None for a bug (kept as a
    traceback): a `ZooError`; a training loss that became NaN; a full disk (an
    `OSError` with ENOSPC or EDQUOT from any writer: the CSV log, TensorBoard, a
    report), said with what the run folder keeps for the same command to resume."""
    from zoo.errors import is_disk_full

    if isinstance(error, ZooError):  # NonFiniteLossError too
        return one_line(error)
    if not is_disk_full(error):
        return None
    where = getattr(error, "filename", None)
    reason = getattr(error, "strerror", None) or str(error)
    reason = " ".join(reason.split())[:120]
    return one_line(
        f"the disk is full ({reason})"
        + (f" writing {where}" if where else "")
        + f"; {_resumable(config.training.run_dir)}"
    )


def _resumable(run_dir):
    """What `run_dir` keeps for the same command after a failure, in words."""
    from zoo.training.checkpoints import Backup

    backup = Backup(os.path.join(run_dir, "backup"))
    finished, path = backup.final()
    if path is None:
        finished, path = backup.latest()
        if path is None:
            return (
                f"no epoch had completed, {run_dir} holds no backup: free some space "
                "and run the same command to start again"
            )
        held = f"the backup after epoch {finished}"
    else:
        held = f"the trained weights ({finished} epochs)"
    return (
        f"{run_dir} keeps {held}: free some space and run the same command to "
        "resume from there"
    )


def data_name(config, demo):
    """A short name of the data for titles: the last part of `--data`, or `demo`
    on the generated demo corpus."""
    if config.demo:
        return demo
    return os.path.basename(os.path.normpath(str(config.data))) or str(config.data)


def read_example_texts(path, limit=64, flag="--warmup-texts"):
    """The non-empty lines of the UTF-8 file `path` (at most `limit`), for warm-up
    requests. A path that is no file is a `ConfigError` naming `flag`; a file that
    cannot be read, is not UTF-8 text or holds no line is a `DataError`."""
    from zoo.errors import ConfigError, DataError

    if not os.path.isfile(path):
        raise ConfigError(f"{flag}: no such file: {path}")
    texts = []
    try:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if "\x00" in line:
                    raise DataError("NUL byte in a text line", path=path, line=number)
                if line.strip():
                    texts.append(line.rstrip("\r\n"))
                if len(texts) == limit:
                    break
    except UnicodeDecodeError as error:
        raise DataError(f"not UTF-8 text ({error.reason})", path=path) from None
    except OSError as error:
        raise DataError(f"cannot be read ({error.strerror})", path=path) from None
    if not texts:
        raise DataError("no example text (one per line expected)", path=path)
    return texts


def sample_indices(count, limit, seed):
    """Sorted, seeded indices of at most `limit` of `count` items (None: all)."""
    if limit is None or count <= limit:
        return None
    import numpy as np

    rng = np.random.default_rng(seed)
    return sorted(rng.permutation(count)[:limit].tolist())


def _jsonable(value):
    """NumPy arrays and scalars as lists and numbers; anything else as text."""
    return value.tolist() if hasattr(value, "tolist") else str(value)
