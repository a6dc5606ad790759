"""The one switch of the TensorFlow fast paths: `enable`, `enabled`, `scope`.

The default comes from the environment variable `ZOO_FASTPATH`: `1` (or unset) turns
the fast paths on, `0` off. `enable(flag)` overrides it for the process,
`scope(flag)` inside a `with` block. Whatever the flag, the fast paths run only on
the TensorFlow backend.

The layers ask at call time, so in a traced function (`model.fit`'s train
function, a `tf.function`) the switch takes effect at the next trace: set it before
the model is compiled or called.
"""

import contextlib
import os

from zoo.errors import ConfigError

ENV_VAR = "ZOO_FASTPATH"
_ENV_VALUES = {"1": True, "0": False, "": True}

_flag = None  # None: the environment decides


def enable(flag=True):
    """Turns the fast paths on (`True`), off (`False`), or back to the environment
    default (`None`)."""
    global _flag
    if flag is not None and not isinstance(flag, bool):
        raise ConfigError(
            f"`flag` must be True, False or None. Received: flag={flag!r}"
        )
    _flag = flag


def enabled():
    """Whether the fast paths run: the switch (set by `enable`/`scope`, else by
    `ZOO_FASTPATH`) is on and the backend is TensorFlow."""
    import keras

    value = os.environ.get(ENV_VAR, "").strip()
    if _flag is None and value not in _ENV_VALUES:
        raise ConfigError(f"{ENV_VAR} must be 0 or 1. Received: {ENV_VAR}={value!r}")
    flag = _ENV_VALUES[value] if _flag is None else _flag
    return flag and keras.backend.backend() == "tensorflow"


@contextlib.contextmanager
def scope(flag=True):
    """Sets the switch inside a `with` block and restores the previous setting.

    Example:

    >>> with zoo.fastpath.scope(False):
    ...     model.fit(...)  # the generic loops and Keras' Adam
    """
    global _flag
    previous = _flag
    enable(flag)
    try:
        yield
    finally:
        _flag = previous
