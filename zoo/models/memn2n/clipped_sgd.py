"""`ClippedSGD`: SGD that clips each weight's summed gradient (MemN2N's optimizer)."""

import keras


def _summed(gradient):
    """A `tf.IndexedSlices` gradient as one dense tensor (repeated rows summed)."""
    if type(gradient).__name__ == "IndexedSlices":
        import tensorflow as tf

        return tf.convert_to_tensor(gradient)
    return gradient


@keras.saving.register_keras_serializable(package="zoo")
class ClippedSGD(keras.optimizers.SGD):
    """SGD whose `clipnorm` bounds the norm of each weight's whole gradient.

    Keras clips an embedding's gradient, a `tf.IndexedSlices` with one slice per
    lookup, by the norm of the unsummed slices: a word looked up `n` times in a
    batch with similar gradients gets up to `sqrt(n)` times the step the clip
    allows. The paper's code clips the summed gradient of each weight matrix, which
    is what this optimizer does (the slices are summed first; MemN2N's vocabularies
    are small, so the dense gradient is cheap).
    """

    def _clip_gradients(self, grads):
        return super()._clip_gradients([_summed(g) for g in grads])
