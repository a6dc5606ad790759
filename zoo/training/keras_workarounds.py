"""Every use of Keras' private internals in the zoo, in one place.

Each function here reaches into code that is not Keras' public API, to work around a
bug or a missing public API that its docstring names. Private code changes without
notice between releases, so each function checks, when it is used, that the installed
Keras is a release it was written for (`KERAS_VERSIONS`, the range pinned in
pyproject.toml) and that the internals it reaches exist, and raises
`UnsupportedKerasError` naming the workaround otherwise.

After a Keras upgrade: for each workaround, check whether the upstream issue is fixed
(then delete the workaround and its use) or the internals it uses are unchanged (then
widen `KERAS_VERSIONS`); `tests/training/test_keras_workarounds.py` tells which
internals are gone. Checked against Keras 3.15.1: every workaround here is still
needed.
"""

import re

import keras

# The Keras releases these workarounds were written for and tested with:
# >= KERAS_VERSIONS[0] and < KERAS_VERSIONS[1] (pyproject.toml pins keras>=3.15,<3.16).
KERAS_VERSIONS = ((3, 15), (3, 16))


class UnsupportedKerasError(RuntimeError):
    """The installed Keras is not a release a workaround was written for, or lacks
    the internals it uses."""


def keras_version():
    """The installed Keras' `(major, minor)`."""
    match = re.match(r"(\d+)\.(\d+)", keras.__version__)
    if match is None:
        raise UnsupportedKerasError(
            f"cannot read the Keras version {keras.__version__!r}"
        )
    return int(match.group(1)), int(match.group(2))


def require(workaround, upstream, *internals):
    """Checks that `workaround` may run on the installed Keras.

    Args:
        workaround: the name of the function, for the message.
        upstream: the upstream issue or code it works around, for the message.
        *internals: `(object, attribute name)` pairs that must exist.

    Raises:
        UnsupportedKerasError: outside `KERAS_VERSIONS`, or when an internal is
            missing.
    """
    low, high = KERAS_VERSIONS
    message = (
        f"zoo.training.keras_workarounds.{workaround} works around {upstream} "
        f"using Keras internals, and was written for keras>={low[0]}.{low[1]},"
        f"<{high[0]}.{high[1]}; "
    )
    if not low <= keras_version() < high:
        raise UnsupportedKerasError(
            message + f"the installed keras is {keras.__version__}. Install a keras "
            "of that range, or check the workaround against this release and widen "
            "KERAS_VERSIONS"
        )
    for owner, name in internals:
        if not hasattr(owner, name):
            raise UnsupportedKerasError(
                message + f"{type(owner).__name__} has no attribute {name!r} in the "
                f"installed keras {keras.__version__}"
            )


# --- Data order on a resume ----------------------------------------------------------


def epoch_iterators(train_ds, epochs):
    """How many iterators of `train_ds` Keras' `fit` creates in its first `epochs`
    epochs (no `steps_per_epoch`).

    tf.data draws a reshuffled pipeline's order when an iterator is created, so a
    resumed run that creates this many iterators (and reads none) before its own
    `fit` sees each later epoch in the order of a run that was not interrupted.
    There is no public API for the count: it follows `EpochIterator.
    _enumerate_iterator` (keras/src/trainers/epoch_iterator.py), which creates an
    iterator when an epoch begins and, when the dataset's cardinality is known,
    another one when the epoch's last batch is read; a dataset of unknown
    cardinality runs out instead, and the next epoch creates a new iterator (one per
    epoch). `tests/training/test_keras_workarounds.py` counts them on the installed
    Keras.
    """
    import tensorflow as tf
    from keras.src.trainers import epoch_iterator

    require(
        "epoch_iterators",
        "the missing public API for the data order of a resumed fit",
        (epoch_iterator.EpochIterator, "_enumerate_iterator"),
    )
    if epochs <= 0:
        return 0
    known = int(tf.data.experimental.cardinality(train_ds)) >= 0
    return 2 * epochs if known else epochs


# --- Weight averaging (use_ema) ----------------------------------------------------


def moving_average_pairs(optimizer):
    """`(variable, average)` pairs of an optimizer built with `use_ema=True`.

    Works around a missing public API: Keras keeps the moving average of the weights
    in the private `_model_variables_moving_average`, aligned with the private
    `_trainable_variables` (keras/src/optimizers/base_optimizer.py), and offers no
    accessor; Keras' own `keras.callbacks.SwapEMAWeights` (keras-team/keras#18949,
    pull request #18978) reads the same two attributes. Its swap cannot serve here:
    the zoo validates and checkpoints the average but backs up the raw weights at
    every epoch end (see `zoo.training.weight_averaging`).
    """
    require(
        "moving_average_pairs",
        "the missing accessor of the use_ema averages (keras-team/keras#18949)",
        (optimizer, "_trainable_variables"),
        (optimizer, "_model_variables_moving_average"),
    )
    return [
        (variable, average)
        for variable, average in zip(
            optimizer._trainable_variables,
            optimizer._model_variables_moving_average,
            strict=True,
        )
        if average is not None
    ]


def replace_average_momentum(optimizer, momentum):
    """Makes a `use_ema` optimizer's weight average use `momentum(iterations,
    ema_momentum, dtype)` instead of Keras' momentum.

    Works around a missing public API: Keras' `BaseOptimizer.
    _update_model_variables_moving_average` (keras/src/optimizers/base_optimizer.py,
    called after every update by `_backend_apply_gradients` of every backend) fixes
    the momentum at `ema_momentum * (iterations != 0)`, with no option of a warm-up.
    This sets, on this optimizer only, a replacement of that private method: the
    same update, `a <- m a + (1 - m) w` for each trainable weight with an average,
    with `m = momentum(optimizer.iterations, optimizer.ema_momentum, w.dtype)`
    (`moving_average_update`). Idempotent. An optimizer whose class declares
    `average_warm_up = True` computes its own warm-up and is left alone; one whose
    class overrides the method otherwise is refused (the replacement would drop
    what it does).

    Raises:
        UnsupportedKerasError: outside `KERAS_VERSIONS`, or when the method is
            gone.
        ValueError: the optimizer's class overrides the method.
    """
    require(
        "replace_average_momentum",
        "the fixed momentum of use_ema (BaseOptimizer."
        "_update_model_variables_moving_average)",
        (optimizer, "_update_model_variables_moving_average"),
        (optimizer, "iterations"),
    )
    if getattr(type(optimizer), "average_warm_up", False):
        return
    name = "_update_model_variables_moving_average"
    if getattr(optimizer, "_zoo_average_momentum", None) is momentum:
        return
    if getattr(type(optimizer), name) is not getattr(keras.optimizers.Optimizer, name):
        raise ValueError(
            f"{type(optimizer).__name__} overrides Keras' {name}: the weight "
            "average's momentum cannot be replaced. Declare `average_warm_up = True` "
            "on the class if it computes the warm-up itself."
        )

    def update(trainable_variables):
        moving_average_update(optimizer, trainable_variables, momentum)

    # an instance attribute: this optimizer only, and never saved with it
    object.__setattr__(optimizer, name, update)
    object.__setattr__(optimizer, "_zoo_average_momentum", momentum)


def moving_average_update(optimizer, trainable_variables, momentum):
    """Keras' weight-average update with the momentum `momentum(iterations,
    ema_momentum, dtype)`: the body of `BaseOptimizer.
    _update_model_variables_moving_average` (keras/src/optimizers/base_optimizer.py)
    with its momentum replaced (see `replace_average_momentum`)."""
    require(
        "moving_average_update",
        "the fixed momentum of use_ema (BaseOptimizer."
        "_update_model_variables_moving_average)",
        (optimizer, "_model_variables_moving_average"),
    )
    if not optimizer.use_ema:
        return
    for variable, average in zip(
        trainable_variables, optimizer._model_variables_moving_average, strict=True
    ):
        if average is not None:
            m = momentum(optimizer.iterations, optimizer.ema_momentum, variable.dtype)
            average.assign(m * average + (1 - m) * variable)
