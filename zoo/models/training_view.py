"""`training_view`: the single-output Keras model that a multi-output model is fit as.

The task models return a dict: the prediction (`"probabilities"`) and float32
attention maps (keys ending in `attention`). Keras' `fit` wants a target for every
output that has a loss or a metric, and attention maps have none; so each model offers
`training_model()`, a view sharing its layers whose single output is the prediction.
That view is what is compiled and fit, and the model shares its trained weights.
"""

import keras


class _Holder:
    """Keeps the view out of Keras' attribute tracking and `.keras` saving: a saved
    model must not carry the view's optimizer."""

    __slots__ = ("view",)

    def __init__(self, view):
        self.view = view


def training_view(model, output, name=None):
    """The model `model.input -> output`, built on the first call, then the same object.

    Returning the same object matters: a recipe compiles the view when it builds the
    model, and the training stage fits `model.training_model()` later.

    Args:
        model: a Functional `keras.Model`.
        output: a symbolic output of `model`'s graph (e.g. `layer.output`).
        name: the view's name (default `<model name>_training`).

    Returns:
        A `keras.Model` whose weights are `model`'s.
    """
    holder = model.__dict__.get("_training_view")
    if holder is None:
        view = keras.Model(model.input, output, name=name or f"{model.name}_training")
        holder = _Holder(view)
        model._training_view = holder
    return holder.view
