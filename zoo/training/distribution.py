"""Process setup: seeds and `tf.distribute` strategies.

Distribution uses TensorFlow's own engine: `get_strategy("mirrored")` builds a
`tf.distribute.MirroredStrategy` over all local GPUs (or all logical CPU devices when
there is no GPU).
"""

import keras
import tensorflow as tf

from zoo.training.config import DISTRIBUTE_CHOICES


def set_seed(seed):
    """Seeds Python's `random`, NumPy, TensorFlow and Keras (`keras.utils.set_random_seed`)."""
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ValueError(f"`seed` must be an int. Received: seed={seed!r}")
    keras.utils.set_random_seed(seed)


def get_strategy(distribute="none"):
    """Returns the `tf.distribute.Strategy` named by `distribute`.

    Args:
        distribute: "none" (the default strategy: one device) or "mirrored" (all
            local GPUs, or all logical CPU devices when there is no GPU).

    Raises:
        ValueError: for an unknown name.
    """
    if distribute == "none":
        return tf.distribute.get_strategy()
    if distribute == "mirrored":
        gpus = tf.config.list_logical_devices("GPU")
        devices = gpus or tf.config.list_logical_devices("CPU")
        return tf.distribute.MirroredStrategy(devices=[d.name for d in devices])
    raise ValueError(
        f"`distribute` must be one of {DISTRIBUTE_CHOICES}. "
        f"Received: distribute={distribute!r}"
    )
