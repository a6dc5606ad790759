"""Argument checks shared by the zoo's layers and models.

Each raises a `ValueError` naming the argument and the value received, before any
weight or sublayer is built, e.g.
`` `units` must be a positive integer. Received: units=0 ``. Integers must be Python
`int`s (not `bool`, not floats such as `64.0`), so that a layer's config stays what
the caller wrote.
"""

import numbers


def _is_positive_int(value):
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def check_positive_ints(**values):
    """Raises a `ValueError` naming the first keyword whose value is not an `int` > 0."""
    for name, value in values.items():
        if not _is_positive_int(value):
            raise ValueError(
                f"`{name}` must be a positive integer. Received: {name}={value!r}"
            )


def check_optional_positive_ints(**values):
    """As `check_positive_ints`, but `None` (a size derived from the inputs) passes."""
    for name, value in values.items():
        if value is not None and not _is_positive_int(value):
            raise ValueError(
                f"`{name}` must be a positive integer or None. "
                f"Received: {name}={value!r}"
            )


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
            raise ValueError(f"`{name}` must be in [0, 1). Received: {name}={rate!r}")
