"""Weight averaging (Polyak averaging, as Marian's `--exponential-smoothing`).

With `cfg.ema` > 0 the optimizer, built with `**averaging(cfg)` (`use_ema=True`), keeps
after every step `a <- m_t * a + (1 - m_t) * w` of each trainable weight, with the
warmed-up momentum `m_t = min(ema, (1 + t) / (10 + t))` at step `t` (the optimizer's
iterations before the update; `m_0 = 0`: the first step copies the weights), the
`num_updates` form of `tf.train.ExponentialMovingAverage` (`average_momentum`). Keras'
own average uses `ema` from the second step on, so with 0.999 the initial weights keep
a share of `0.999^(n-1)` after `n` steps (63% after 458), and the average of a short
run, or of a long one's first epochs, is mostly the untrained model. With the warm-up
the average covers about the last ninth of the steps so far (`1 - m_t ~ 9 / t`) until
`m_t` reaches `ema` (after 8,990 steps for 0.999): a short run gets a short window and
a long one `ema`'s. `fit` makes any Keras optimizer average this way
(`warm_up_average`); `zoo.fastpath.fused_adam.FusedAdam` does it itself. `fit` puts
the average in the model for validation (the loss and any metric an extra callback
adds), the best checkpoint and early stopping, and the raw weights back before the
backup and the next epoch: training continues from the raw weights, and the backup
holds both, so a resumed run continues exactly. When training ends the model holds the
average (or, with early stopping, the average of the best epoch). `best.keras` holds
the averaged weights and, in its optimizer state, the raw weights of the same epoch
(`swap_weight_average` exchanges them).

`fit` swaps with `WeightAverage` rather than `keras.callbacks.SwapEMAWeights`: with
`swap_on_epoch=True` Keras' keeps the average in the model from an epoch's end to the
next one's beginning, so the backup written at the epoch's end would hold the average
where the raw weights belong (and a resumed run would train on from the average).
"""

import keras

from zoo.training import keras_workarounds


def averaging(cfg):
    """The optimizer arguments that make it keep the weight average of `cfg.ema`.

    `{"use_ema": True, "ema_momentum": cfg.ema}`, or `{}` when `cfg.ema` is 0: pass
    them to any Keras optimizer, e.g. `keras.optimizers.Adam(1e-3, **averaging(cfg))`.
    `fit` adds the warm-up (`warm_up_average`); call that yourself to train such an
    optimizer with `keras.Model.fit`.
    """
    return {"use_ema": True, "ema_momentum": cfg.ema} if cfg.ema > 0 else {}


def average_momentum(iterations, ema_momentum, dtype="float32"):
    """The weight average's momentum at step `iterations` (a scalar tensor).

    `min(ema_momentum, (1 + t) / (10 + t))` for `t = iterations` > 0, 0 for `t = 0`
    (the average's slots start at zero, so the first step copies the weights, as in
    Keras). `t` is the optimizer's iteration count before the update: 0 in the
    first step.
    """
    t = keras.ops.cast(iterations, dtype)
    warm = keras.ops.minimum(
        keras.ops.cast(ema_momentum, dtype), (1.0 + t) / (10.0 + t)
    )
    return keras.ops.where(keras.ops.equal(t, 0.0), keras.ops.zeros_like(t), warm)


def warm_up_average(optimizer):
    """Makes an optimizer built with `use_ema=True` average with `average_momentum`.

    Keras' optimizers use `ema_momentum` from the second step on; after this call
    the optimizer (the inner one of a loss-scale wrapper) uses the warmed-up
    momentum instead (`keras_workarounds.replace_average_momentum`). `fit` calls it;
    it does nothing without averaging, when already done, and for an optimizer whose
    class warms up itself (`average_warm_up = True`, as `zoo.fastpath.fused_adam.FusedAdam`).
    Call it before the train function is traced (before `fit`).

    Returns:
        The optimizer.
    """
    optimizer = averaging_optimizer(optimizer)
    if getattr(optimizer, "use_ema", False):
        keras_workarounds.replace_average_momentum(optimizer, average_momentum)
    return optimizer


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
    already in place. Creating one makes the optimizer's average warm up
    (`warm_up_average`).
    """

    def __init__(self, model):
        self.optimizer = warm_up_average(model.optimizer)
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
