"""One initializer, several weights: a separate draw for each weight.

A Keras 3 initializer seeded with an integer, or unseeded, returns the same values
at every call. A layer that passes one initializer instance to several weights of
the same shape therefore starts them equal: query and key kernels, or every
embedding table of a memory network. `fresh_initializer` gives each weight a copy
of its own; `fresh_weights` adds a layer's weights that way.
"""

import itertools

import keras


def fresh_initializer(initializer, index=0):
    """A copy of `initializer` whose values differ from those of other copies.

    - Unseeded: a new instance, with a new default seed (drawn from Python's
      random generator, which `keras.utils.set_random_seed` seeds, so runs stay
      reproducible).
    - Seeded with an integer `s`: a new instance seeded `s + index`, so weights
      given different `index` values differ and the result is still determined
      by `s`.
    - Seeded with a `keras.random.SeedGenerator` (which advances at every call)
      or not random at all (`"zeros"`, `Constant`, ...): returned as is.

    Args:
        initializer: an initializer, its name or its config.
        index: int, which weight of the layer this copy is for (used with an
            integer seed).

    Returns:
        A `keras.initializers.Initializer`.

    Example:

    >>> init = keras.initializers.RandomNormal(stddev=0.1)
    >>> a = fresh_initializer(init, 0)((2, 3))
    >>> b = fresh_initializer(init, 1)((2, 3))
    >>> bool(keras.ops.all(a == b))
    False
    """
    initializer = keras.initializers.get(initializer)
    config = initializer.get_config()
    if "seed" not in config or isinstance(config["seed"], dict):
        return initializer  # not random, or a SeedGenerator
    if config["seed"] is not None:
        config["seed"] = int(config["seed"]) + int(index)
    return initializer.__class__.from_config(config)


def fresh_weights(layer, default=None):
    """A function that adds weights to `layer`, each with a draw of its own.

    `add(name, shape, initializer=None, index=None)` is `layer.add_weight` with the
    initializer `fresh_initializer(initializer or default, index)`; without `index`,
    the weights take the indices 0, 1, 2, ... in the order they are added.

    Example:

    >>> add = fresh_weights(self)  # in a layer's build()
    >>> self.query_kernel = add("query_kernel", (dim, units), self.kernel_initializer)
    >>> self.key_kernel = add("key_kernel", (dim, units), self.kernel_initializer)
    """
    draws = itertools.count()

    def add(name, shape, initializer=None, index=None):
        index = next(draws) if index is None else index
        initializer = fresh_initializer(initializer or default, index)
        return layer.add_weight(name=name, shape=shape, initializer=initializer)

    return add
