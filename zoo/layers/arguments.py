"""Argument checks, configs and symbolic outputs shared by the zoo's layers and models.

Each check raises a `ValueError` naming the argument and the value received, before
any weight or sublayer is built, e.g.
`` `units` must be a positive integer. Received: units=0 ``. Integers must be Python
`int`s (not `bool`, not floats such as `64.0`), so that a layer's config stays what
the caller wrote.

`argument_config` and `output_spec` write the two parts of a layer that repeat its
arguments and its outputs: the `get_config` entries and the `KerasTensor`s of
`compute_output_spec`.
"""

import inspect
import numbers

import keras


def _is_positive_int(value):
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _refuse(name, value, requirement):
    raise ValueError(f"`{name}` must be {requirement}. Received: {name}={value!r}")


def check_positive_ints(**values):
    """Raises a `ValueError` naming the first keyword whose value is not an `int` > 0."""
    for name, value in values.items():
        if not _is_positive_int(value):
            _refuse(name, value, "a positive integer")


def check_optional_positive_ints(**values):
    """As `check_positive_ints`, but `None` (a size derived from the inputs) passes."""
    for name, value in values.items():
        if value is not None and not _is_positive_int(value):
            _refuse(name, value, "a positive integer or None")


def check_dropout_rates(**rates):
    """Raises a `ValueError` naming the first rate (keyword) that is not a real number
    in `[0, 1)` (`bool`, `None`, strings and NaN included)."""
    for name, rate in rates.items():
        valid = (
            isinstance(rate, numbers.Real)
            and not isinstance(rate, bool)
            and 0.0 <= rate < 1.0
        )
        if not valid:
            _refuse(name, rate, "in [0, 1)")


def check_one_of(choices, **values):
    """Raises a `ValueError` naming the first keyword whose value is not in `choices`,
    e.g. `` `cell` must be one of ('gru', 'lstm'). Received: cell='rnn' ``."""
    for name, value in values.items():
        if value not in choices:
            _refuse(name, value, f"one of {choices}")


def check_bools(**values):
    """Raises a `ValueError` naming the first keyword whose value is not a `bool`."""
    for name, value in values.items():
        if not isinstance(value, bool):
            _refuse(name, value, "True or False")


def argument_config(layer, **renamed):
    """The `get_config` entries of every argument of `type(layer).__init__` (all but
    `**kwargs`), each read from the attribute of its name, or of the name `renamed`
    gives it (`cell="cell_type"`); initializers serialized."""
    config = {}
    for name, parameter in inspect.signature(type(layer).__init__).parameters.items():
        if name == "self" or parameter.kind is parameter.VAR_KEYWORD:
            continue
        value = getattr(layer, renamed.get(name, name))
        if isinstance(value, keras.initializers.Initializer):
            value = keras.initializers.serialize(value)
        config[name] = value
    return config


def output_spec(layer, shapes, return_scores):
    """The symbolic output of `layer` in its compute dtype: that of `shapes[0]`, or
    with `return_scores=True` the tuple of those of all `shapes` (the output, then
    the attention scores)."""
    specs = tuple(
        keras.KerasTensor(tuple(s), dtype=layer.compute_dtype) for s in shapes
    )
    return specs if return_scores else specs[0]
