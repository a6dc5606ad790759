"""The learning-rate schedule: cosine decay to zero over the run's steps (`--schedule
cosine`).

With `schedule="cosine"` and an optimizer built with `scheduled_learning_rate(cfg)`,
the learning rate follows a cosine from `cfg.learning_rate` to zero at the last step
(`CosineToZero`), logged as `learning_rate`. `fit` sets the run's length from the
training data's cardinality, or `fit_schedule_to_run` does when it is unknown. The
schedule follows the optimizer's step count, which the backup keeps, so a resumed run
continues on it. (Keras' `CosineDecay` needs its `decay_steps` when it is made;
`CosineToZero` takes them when the data's length is known.)
"""

import math

import keras

from zoo.training import keras_workarounds
from zoo.training.weight_averaging import averaging_optimizer


@keras.saving.register_keras_serializable(package="zoo")
class CosineToZero(keras.optimizers.schedules.LearningRateSchedule):
    """Cosine decay from `learning_rate` to zero over a run of `total_steps` steps.

    `learning_rate * (1 + cos(pi * min(step / total_steps, 1))) / 2` (Loshchilov and
    Hutter's SGDR without restarts). `total_steps` may be left unset when the
    optimizer is built and set before training (`fit_schedule_to_run`, or `fit`
    itself when the training data's length is known), because the number of batches
    of a length-bucketed dataset is only known after a pass over it.
    """

    def __init__(self, learning_rate, total_steps=None):
        if not (learning_rate > 0 and math.isfinite(learning_rate)):
            raise ValueError(
                "`learning_rate` must be a positive number. "
                f"Received: learning_rate={learning_rate!r}"
            )
        self.learning_rate = float(learning_rate)
        self.total_steps = None
        if total_steps is not None:
            self.set_total_steps(total_steps)

    def set_total_steps(self, total_steps):
        if not isinstance(total_steps, int) or total_steps < 1:
            raise ValueError(
                "`total_steps` must be a positive int. "
                f"Received: total_steps={total_steps!r}"
            )
        self.total_steps = total_steps

    def __call__(self, step):
        if self.total_steps is None:
            raise ValueError(
                "The cosine schedule's length is not set: call "
                "`zoo.training.fit_schedule_to_run(model, steps)` before training."
            )
        progress = keras.ops.minimum(
            keras.ops.cast(step, "float32") / float(self.total_steps), 1.0
        )
        return self.learning_rate * 0.5 * (1.0 + keras.ops.cos(math.pi * progress))

    def get_config(self):
        return {"learning_rate": self.learning_rate, "total_steps": self.total_steps}


def scheduled_learning_rate(cfg):
    """The optimizer's `learning_rate` for `cfg`: `cfg.learning_rate` itself, or with
    `cfg.schedule == "cosine"` a `CosineToZero` from it (its length set later by
    `fit_schedule_to_run` or by `fit`)."""
    cosine = cfg.schedule == "cosine"
    return CosineToZero(cfg.learning_rate) if cosine else cfg.learning_rate


def model_schedule(model):
    """The model's optimizer's `CosineToZero`, or None."""
    optimizer = averaging_optimizer(model.optimizer)
    rate = keras_workarounds.learning_rate_schedule(optimizer)
    return rate if isinstance(rate, CosineToZero) else None


def fit_schedule_to_run(model, steps):
    """Sets the length of the optimizer's `CosineToZero` to a run of `steps` steps.

    Call it before `fit` when the training data's length is unknown to TensorFlow
    (e.g. after `bucket_by_length`); `fit` sets it itself from the dataset's
    cardinality otherwise. No-op for a constant learning rate.

    Returns:
        The schedule, or None.
    """
    schedule = model_schedule(model)
    if schedule is not None:
        schedule.set_total_steps(int(steps))
    return schedule


def fit_schedule(model, train_ds, epochs, fit_kwargs):
    """Gives an unset `CosineToZero` the length of a run of `epochs` Keras epochs when
    TensorFlow knows it (or `fit_kwargs` has `steps_per_epoch`)."""
    schedule = model_schedule(model)
    if schedule is None or schedule.total_steps is not None:
        return schedule
    # The cardinality is negative when TensorFlow does not know it.
    per_epoch = fit_kwargs.get("steps_per_epoch") or int(train_ds.cardinality())
    if per_epoch < 1:
        raise ValueError(
            "The cosine schedule needs the run's length and the training data's "
            "number of batches is unknown: call "
            "`zoo.training.fit_schedule_to_run(model, batches_per_epoch * epochs)` "
            "before `fit`, or pass `steps_per_epoch`."
        )
    schedule.set_total_steps(per_epoch * epochs)
    return schedule
