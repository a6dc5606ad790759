"""`Recipe`: the stages every task runs, from raw data to a verified export.

A recipe script subclasses `Recipe`, names its `Config` (a `RecipeConfig` dataclass) and
fills in the stages; `Recipe.run` calls them in this order:

1. `load_data()` -> an object with a `description` (and, for a resumable run, a
   `fingerprint` of the data and vocabularies: `zoo.training.fingerprint`);
2. `build_model(data)` -> the model, built inside the distribution strategy's scope;
3. `train(model, data)`; the default fits `model.training_model()` on `data.train`
   and `data.validation` with `self.fit` (which checks the run folder's identity);
   then `data.publish()`, when the data has one, writes what the run folder shows
   of the data (e.g. `RUN_DIR/vocab.txt`): nothing is written there before the
   identity check but the lock;
4. `evaluate(model, data)` -> a dict of test metrics holding `self.metric`;
   `report_dir/metrics.json` is then written from it;
5. `report(model, data, metrics)`: attention maps and other reports;
6. `export(model, data, metrics)` -> the export's version folder (not with
   `--no-export`).

`Recipe.main(argv)` parses the flags (argparse errors exit with status 2), runs the
stages and returns `{"model", "metric", "value", "export"}`. An error the user can act
on (`zoo.errors.ZooError`: a missing file, a malformed line, a run folder of another run)
is printed as one line and exits with status 2; `--debug` shows its traceback.

Module-level imports are stdlib-only: the recipe's `--help` needs no TensorFlow.
"""

import json
import os
import sys
import time

from zoo.errors import ZooError, one_line
from zoo.recipes.config import RecipeConfig, parse_config


class Recipe:
    """Base class of the recipes: one task wired from data to export.

    Class attributes:
        name: the recipe's name (`runs/<name>/`, `reports/<name>/`, `python -m
            recipes.<name>`).
        export_name: the export's model name (`saved_models/<export_name>/VERSION/`).
        metric: the key of `evaluate()`'s result that is the headline number.
        metric_description: how the headline number is described in the result.
        config_class: the recipe's `RecipeConfig` dataclass.
        training_defaults: defaults of the training flags with `--data`.
        demo_training_defaults: defaults of the training flags on the demo corpus.
        description: the `--help` text (by default the recipe module's docstring).
    """

    name = None
    export_name = None
    metric = None
    metric_description = None
    config_class = RecipeConfig
    training_defaults = {}
    demo_training_defaults = {}
    description = None

    def __init__(self, config):
        self.config = config
        self._start = time.perf_counter()

    # --- Entry points ------------------------------------------------------------------

    @classmethod
    def parse(cls, argv=None):
        """The `config_class` instance of `argv` (argparse errors exit with 2)."""
        description = cls.description
        if description is None:
            description = sys.modules[cls.__module__].__doc__
        return parse_config(
            cls.config_class,
            argv,
            prog=f"python -m zoo.recipes.{cls.name}",
            description=description,
            name=cls.name,
            training_defaults=cls.training_defaults,
            demo_training_defaults=cls.demo_training_defaults,
        )

    @classmethod
    def main(cls, argv=None):
        """Parses `argv`, runs the recipe, returns its result dict.

        A `zoo.errors.ZooError` is printed as one line and exits with status 2
        (its traceback with `--debug`).
        """
        config = cls.parse(argv)
        from zoo import tf_logging

        tf_logging.quiet(config.debug)  # before TensorFlow is imported
        try:
            return cls(config).run()
        except ZooError as error:
            if config.debug:
                raise
            print(one_line(error), file=sys.stderr, flush=True)
            raise SystemExit(getattr(error, "exit_code", 2)) from None

    def run(self):
        """Runs the stages in order; returns `{"model", "metric", "value", "export"}`.

        The run folder is locked for the whole run (`zoo.training.run_folder`): a
        second process asking for it gets one line and exit status 2, naming the
        pid that holds it. The backup of a finished training is kept until the
        export is written, so a run killed during evaluation, a report or the
        export is resumed by the same command from its trained weights.
        """
        from zoo.training import get_strategy, set_seed
        from zoo.training.distribution import worker_run_dir
        from zoo.training.run_folder import keep_final_backups, run_lock

        config = self.config
        set_seed(config.training.seed)
        strategy = get_strategy(config.training.distribute)
        run_dir = worker_run_dir(config.training.run_dir, strategy)
        with run_lock(run_dir), keep_final_backups() as kept:
            data = self.load_data()
            self.log(getattr(data, "description", "data loaded"))
            with strategy.scope():
                model = self.build_model(data)
            self.train(model, data)
            publish = getattr(data, "publish", None)
            if callable(publish):  # the run's identity is checked: RUN_DIR is ours
                publish()
            self.log("trained")
            metrics = self.evaluate(model, data)
            self.write_metrics(data, metrics)
            self.report(model, data, metrics)
            version_dir = None
            if not config.no_export:
                version_dir = self.export(model, data, metrics)
                if version_dir is not None:
                    version_dir = str(version_dir)
                    self.log(f"exported: {version_dir}")
            for backup in kept:
                backup.remove()
        name, value = self.headline(metrics)
        self.log(f"{name}: {value}")
        return {
            "model": self.export_name,
            "metric": name,
            "value": value,
            "export": version_dir,
        }

    # --- Stages ------------------------------------------------------------------------

    def load_data(self):
        """The data: an object with `description` (and `train`, `validation`)."""
        raise NotImplementedError

    def build_model(self, data):
        """The model (called inside the distribution strategy's scope)."""
        raise NotImplementedError

    def train(self, model, data):
        """Fits `model.training_model()` on `data.train` / `data.validation`."""
        return self.fit(
            model.training_model(),
            data.train,
            data.validation,
            data_fingerprint=getattr(data, "fingerprint", None),
        )

    def evaluate(self, model, data):
        """The test metrics, a JSON-able dict holding `self.metric`."""
        raise NotImplementedError

    def report(self, model, data, metrics):
        """Writes the attention maps and other reports (nothing by default)."""

    def export(self, model, data, metrics):
        """Exports the model; returns the version folder."""
        raise NotImplementedError

    def headline(self, metrics):
        """`(description, value)` of the headline metric (value None when unmeasured)."""
        value = metrics.get(self.metric)
        return self.metric_description or self.metric, (
            None if value is None else float(value)
        )

    # --- Helpers -----------------------------------------------------------------------

    @property
    def demo(self):
        """True on the generated demo corpus (no `--data`)."""
        return self.config.demo

    def log(self, message):
        """Prints `[elapsed s] message`, flushed (one line, plain text)."""
        elapsed = time.perf_counter() - self._start
        print(f"[{elapsed:7.1f} s] {message}", flush=True)

    def run_identity(self, data_fingerprint=None):
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
        """`zoo.training.fit` with the recipe's training options and run identity.

        `trainer` is the compiled Keras model; `callbacks` run before the built-in
        ones (so one that adds a metric can be the monitored quantity).
        """
        import inspect

        from zoo.training import fit

        if "run_identity" in inspect.signature(fit).parameters:
            kw["run_identity"] = self.run_identity(data_fingerprint)
        return fit(
            trainer, train_ds, val_ds, self.config.training, callbacks=callbacks, **kw
        )

    def optimizer(self, cls=None, **kwargs):
        """The optimizer of `cls` (Adam by default) with the configured learning rate,
        schedule (`--schedule`) and weight averaging (`--ema`); `kwargs` go to `cls`."""
        import keras

        from zoo.training import averaging, scheduled_learning_rate

        cls = cls or keras.optimizers.Adam
        training = self.config.training
        kwargs.setdefault("learning_rate", scheduled_learning_rate(training))
        return cls(**kwargs, **averaging(training))

    def sample_indices(self, count, limit):
        """Sorted, seeded indices of at most `limit` of `count` items (None: all)."""
        if limit is None or count <= limit:
            return None
        import numpy as np

        rng = np.random.default_rng(self.config.training.seed)
        return sorted(rng.permutation(count)[:limit].tolist())

    def write_metrics(self, data, metrics, filename="metrics.json"):
        """Writes `{"recipe", "data", **metrics}` to `report_dir/filename` atomically."""
        path = os.path.join(self.config.report_dir, filename)
        payload = {
            "recipe": self.name,
            "data": getattr(data, "description", None),
            **metrics,
        }
        from zoo.io import atomic_write

        os.makedirs(self.config.report_dir, exist_ok=True)
        with atomic_write(path) as f:
            f.write(json.dumps(payload, indent=2, default=_jsonable) + "\n")
        return path


def _jsonable(value):
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "item"):
        return value.item()
    return str(value)
