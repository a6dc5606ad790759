import keras
import numpy as np
import pytest
import tensorflow as tf

from zoo.optimizers import FusedAdam, summed_gradient

# ids with repeats, so the embedding's gradient has duplicate slices
IDS = np.array([[1, 1, 2, 3], [4, 1, 0, 2]], dtype="int32")
TARGETS = np.array([[0.5, -1.0, 2.0], [1.5, 0.0, -0.5]], dtype="float32")


def _model(optimizer, jit_compile=False):
    keras.utils.set_random_seed(3)
    ids = keras.Input((4,), dtype="int32")
    x = keras.layers.Embedding(6, 5, name="embedding")(ids)
    x = keras.layers.Flatten()(x)
    out = keras.layers.Dense(3, name="dense")(x)
    model = keras.Model(ids, out)
    model.compile(optimizer=optimizer, loss="mse", jit_compile=jit_compile)
    return model


def _train(optimizer, steps=6, jit_compile=False, scale=1.0):
    model = _model(optimizer, jit_compile)
    for _ in range(steps):
        model.train_on_batch(IDS, TARGETS * scale)
    return [keras.ops.convert_to_numpy(w) for w in model.weights], model


class SummedAdam(keras.optimizers.Adam):
    """Keras' Adam given each weight's summed gradient (the reference)."""

    def update_step(self, gradient, variable, learning_rate):
        super().update_step(summed_gradient(gradient), variable, learning_rate)


@pytest.mark.parametrize("jit_compile", [False, True])
def test_fused_update_equals_keras_adam_on_summed_gradients(jit_compile, monkeypatch):
    calls = []
    fused_op = tf.raw_ops.ResourceApplyAdam

    def counting(**kwargs):
        calls.append(kwargs["var"])
        return fused_op(**kwargs)

    monkeypatch.setattr(tf.raw_ops, "ResourceApplyAdam", counting)
    kwargs = {"learning_rate": 0.05, "beta_1": 0.8, "beta_2": 0.95, "epsilon": 1e-6}
    fused, model = _train(FusedAdam(**kwargs), jit_compile=jit_compile)
    reference, _ = _train(SummedAdam(**kwargs), jit_compile=jit_compile)
    # the fused kernel ran for every weight (embeddings, kernel, bias)
    assert len(calls) >= len(model.trainable_weights) == 3
    for got, want in zip(fused, reference, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # and the weights moved: the comparison is not between two untouched models
    initial = [keras.ops.convert_to_numpy(w) for w in _model("sgd").weights]
    assert all(np.abs(f - i).max() > 0.05 for f, i in zip(fused, initial, strict=True))


def test_keras_adam_squares_an_embeddings_unsummed_slices():
    # one row looked up 3 times with gradient 1 each: Adam's v is (1 - b2) * 3^2;
    # Keras' Adam accumulates 3 * 1^2 from the slices
    slices = tf.IndexedSlices(
        tf.ones((3, 2)), tf.constant([1, 1, 1]), tf.constant([3, 2])
    )

    def second_moment(optimizer):
        weight = keras.Variable(np.zeros((3, 2), "float32"))
        optimizer.build([weight])
        optimizer.apply_gradients([(slices, weight)])
        return keras.ops.convert_to_numpy(optimizer._velocities[0])[1]

    np.testing.assert_allclose(
        second_moment(FusedAdam(beta_2=0.9)), [0.9, 0.9], rtol=1e-6
    )
    keras_v = second_moment(keras.optimizers.Adam(beta_2=0.9))
    assert np.allclose(keras_v, [0.3, 0.3]), "Keras now squares the summed gradient"


def test_clipnorm_bounds_each_weights_summed_gradient():
    # word 1 looked up 3 times: 3 slices of ones(d); summed, norm 3 sqrt(d)
    d = 4
    slices = tf.IndexedSlices(
        tf.ones((4, d)), tf.constant([1, 1, 1, 2]), tf.constant([3, d])
    )
    dense = tf.constant([[3.0, 4.0]])  # norm 5
    small = tf.constant([[0.3, 0.4]])  # norm 0.5: unchanged
    clipped = FusedAdam(clipnorm=1.0)._clip_gradients([slices, dense, small, None])
    summed = np.zeros((3, d), "float32")
    summed[1], summed[2] = 3.0, 1.0
    np.testing.assert_allclose(clipped[0], summed / np.linalg.norm(summed), rtol=1e-6)
    np.testing.assert_allclose(clipped[1], [[0.6, 0.8]], rtol=1e-6)
    np.testing.assert_allclose(clipped[2], [[0.3, 0.4]], rtol=1e-6)
    assert clipped[3] is None
    # Keras' Adam takes the norm of the unsummed slices (2 sqrt(d) here, not
    # sqrt(10 d)), so the clipped rows differ
    keras_clipped = keras.optimizers.Adam(clipnorm=1.0)._clip_gradients([slices])
    keras_rows = np.asarray(tf.convert_to_tensor(keras_clipped[0]))
    assert not np.allclose(keras_rows, clipped[0])


class ClippedSummedAdam(SummedAdam):
    def _clip_gradients(self, grads):
        return super()._clip_gradients([summed_gradient(g) for g in grads])


def test_clipped_training_equals_keras_adam_on_summed_gradients():
    # big targets make every gradient exceed the clip
    kwargs = {"learning_rate": 0.01, "clipnorm": 0.1}
    fused, _ = _train(FusedAdam(**kwargs), scale=100.0)
    reference, _ = _train(ClippedSummedAdam(**kwargs), scale=100.0)
    for got, want in zip(fused, reference, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_summed_gradient_passes_dense_tensors_through():
    dense = tf.ones((2, 2))
    assert summed_gradient(dense) is dense
    slices = tf.IndexedSlices(tf.ones((2, 2)), tf.constant([0, 0]), tf.constant([3, 2]))
    np.testing.assert_array_equal(summed_gradient(slices), [[2, 2], [0, 0], [0, 0]])


def test_saves_and_restores_with_its_state(tmp_path):
    _, model = _train(FusedAdam(learning_rate=0.01, clipnorm=1.0), steps=2)
    path = tmp_path / "model.keras"
    model.save(path)
    loaded = keras.saving.load_model(path)
    assert isinstance(loaded.optimizer, FusedAdam)
    assert loaded.optimizer.clipnorm == 1.0
    assert int(loaded.optimizer.iterations) == 2
    for a, b in zip(loaded.optimizer.variables, model.optimizer.variables, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_falls_back_to_keras_inside_a_distribution_strategy(monkeypatch):
    def fail(**kwargs):
        raise AssertionError("the fused kernel must not run on distributed variables")

    monkeypatch.setattr(tf.raw_ops, "ResourceApplyAdam", fail)
    with tf.distribute.MirroredStrategy(["/cpu:0"]).scope():
        fused, _ = _train(FusedAdam(learning_rate=0.05), steps=3)
    monkeypatch.undo()
    reference, _ = _train(SummedAdam(learning_rate=0.05), steps=3)
    for got, want in zip(fused, reference, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
