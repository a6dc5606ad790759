"""Weight averaging (Polyak averaging, as Marian's `--exponential-smoothing`).

With `cfg.ema` > 0 the optimizer, built with `**averaging(cfg)` (`use_ema=True`), keeps
after every step `a <- ema * a + (1 - ema) * w` of each trainable weight. `fit` puts
the average in the model for validation (the loss and any metric an extra callback
adds), the best checkpoint and early stopping, and the raw weights back before the
backup and the next epoch: training continues from the raw weights, and the backup
holds both, so a resumed run continues exactly. When training ends the model holds the
average (or, with early stopping, the average of the best epoch). `best.keras` holds
the averaged weights and, in its optimizer state, the raw weights of the same epoch
(`swap_weight_average` exchanges them). `fit_average_to_run` shortens the window of a
short run to a fifth of it.
"""

import keras

from zoo.training import keras_workarounds


def averaging(cfg):
    """The optimizer arguments that make it keep the weight average of `cfg.ema`.

    `{"use_ema": True, "ema_momentum": cfg.ema}`, or `{}` when `cfg.ema` is 0: pass
    them to any Keras optimizer, e.g. `keras.optimizers.Adam(1e-3, **averaging(cfg))`.
    """
    return {"use_ema": True, "ema_momentum": cfg.ema} if cfg.ema > 0 else {}


def fit_average_to_run(model, steps):
    """Caps the weight average's window at a fifth of a run of `steps` steps.

    The optimizer's momentum becomes `min(momentum, 1 - 5 / steps)`, so the first
    steps' weights keep a share of at most about e^-5 (0.7%) of the average at the end:
    a momentum of 0.999 (a thousand-step window) is kept for runs of 5,000 steps or
    more, and a short run (a pipeline check, a small sample) gets a shorter window
    instead of an average that is still mostly its first weights. Call it before `fit`
    (the momentum is read when the training step is traced). No-op without averaging.

    Returns:
        The momentum in use.
    """
    optimizer = averaging_optimizer(model.optimizer)
    if not getattr(optimizer, "use_ema", False):
        return None
    if steps > 0:
        optimizer.ema_momentum = min(optimizer.ema_momentum, max(0.0, 1 - 5 / steps))
    return optimizer.ema_momentum


def swap_weight_average(model):
    """Exchanges a model's weights with its optimizer's moving average of them.

    A `best.keras` written by an `ema` run holds the average in the model and the
    raw weights of the same epoch in the optimizer: after loading it, one call puts
    the raw weights in the model (to measure what the averaging gives).

    Raises:
        ValueError: when the model's optimizer keeps no average (`use_ema=False`).
    """
    optimizer = averaging_optimizer(getattr(model, "optimizer", None))
    if not getattr(optimizer, "use_ema", False) or not optimizer.built:
        raise ValueError(
            "The model's optimizer keeps no weight average (it was not built with "
            f"use_ema=True). Received: optimizer={type(optimizer).__name__}"
        )
    WeightAverage(model).swap()


def averaging_optimizer(optimizer):
    """The optimizer that holds the weight average (inside a loss-scale wrapper)."""
    return getattr(optimizer, "inner_optimizer", optimizer)


def averages_weights(model, cfg):
    """Whether the model's optimizer keeps a weight average (required by `cfg.ema`)."""
    optimizer = averaging_optimizer(model.optimizer)
    keeps = bool(getattr(optimizer, "use_ema", False))
    if cfg.ema > 0 and not keeps:
        raise ValueError(
            f"`ema={cfg.ema}` needs an optimizer that keeps the weight average: "
            "build it with `**zoo.training.averaging(cfg)` (use_ema=True). Received: "
            f"{type(optimizer).__name__}(use_ema=False)"
        )
    return keeps


class WeightAverage:
    """Swaps the optimizer's moving average of the weights with the weights.

    `put_average()` puts the average in the model (and the raw weights in the
    average's slots), `put_raw()` swaps them back; each does nothing when its side is
    already in place.
    """

    def __init__(self, model):
        self.optimizer = averaging_optimizer(model.optimizer)
        self.average_in_model = False

    def swap(self):
        for variable, average in keras_workarounds.moving_average_pairs(self.optimizer):
            raw = keras.ops.convert_to_numpy(variable)
            variable.assign(average)
            average.assign(raw)
        self.average_in_model = not self.average_in_model

    def put_average(self):
        if not self.average_in_model:
            self.swap()

    def put_raw(self):
        if self.average_in_model:
            self.swap()


class AverageIn(keras.callbacks.Callback):
    """Early in the callbacks: validation and the epoch-end callbacks after it see
    the averaged weights."""

    def __init__(self, weights):
        super().__init__()
        self.weights = weights

    def on_test_begin(self, logs=None):
        self.weights.put_average()

    def on_epoch_end(self, epoch, logs=None):
        self.weights.put_average()


class AverageOut(keras.callbacks.Callback):
    """Puts the raw weights back before the backup is written and training goes on."""

    def __init__(self, weights):
        super().__init__()
        self.weights = weights

    def on_epoch_end(self, epoch, logs=None):
        self.weights.put_raw()
