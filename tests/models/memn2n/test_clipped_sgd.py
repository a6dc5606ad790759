import keras
import numpy as np
import pytest

from zoo.models.memn2n import ClippedSGD, MemN2N, MemN2NQuestionAnswerer


@pytest.mark.parametrize("jit_compile", [False, True])
def test_clipping_bounds_the_summed_gradient_of_an_embedding(jit_compile):
    # One word looked up 4 times: its gradient is 4 slices of ones(d). The summed
    # gradient has norm 4 sqrt(d); clipped to sqrt(d) the step is 1 per entry.
    # Keras' own SGD clips the slices' norm (2 sqrt(d)) and steps 2 per entry.
    d = 4

    def step(optimizer):
        embedding = keras.layers.Embedding(3, d, embeddings_initializer="zeros")
        ids = keras.Input((4,), dtype="int32")
        model = keras.Model(ids, keras.ops.sum(embedding(ids), axis=(1, 2)))
        model.compile(
            optimizer=optimizer,
            loss=lambda y_true, y_pred: -keras.ops.sum(y_pred),
            jit_compile=jit_compile,
        )
        model.train_on_batch(np.array([[1, 1, 1, 1]]), np.zeros((1,)))
        return keras.ops.convert_to_numpy(embedding.embeddings)

    clip = float(np.sqrt(d))
    np.testing.assert_allclose(step(ClippedSGD(1.0, clipnorm=clip))[1], np.ones(d))
    assert np.all(step(ClippedSGD(1.0, clipnorm=clip))[[0, 2]] == 0.0)
    keras_step = step(keras.optimizers.SGD(1.0, clipnorm=clip))[1]
    assert np.all(keras_step > 1.5), "Keras now sums the slices: ClippedSGD can go"


def test_the_tasks_compile_uses_clipped_sgd_and_a_summed_loss(tmp_path):
    model = MemN2N(15, 6, 4, embedding_dim=8, hops=2)
    trainer = MemN2NQuestionAnswerer(model)  # default_compile: the paper's
    assert isinstance(trainer.optimizer, ClippedSGD)
    assert trainer.optimizer.clipnorm == 40.0
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(trainer.optimizer.learning_rate), 0.005
    )
    rng = np.random.default_rng(0)
    x = {
        "story": rng.integers(1, 15, (3, 6, 4)).astype("int32"),
        "question": rng.integers(1, 15, (3, 4)).astype("int32"),
    }
    y = np.array([1, 2, 3])
    # The loss is summed over the batch: three times the mean cross-entropy.
    probabilities = keras.ops.convert_to_numpy(model(x)["probabilities"])
    expected = -np.log(probabilities[np.arange(3), y]).sum()
    logs = trainer.test_on_batch(x, y, return_dict=True)
    np.testing.assert_allclose(logs["loss"], expected, rtol=1e-5)
    trainer.train_on_batch(x, y)
    path = tmp_path / "trained.keras"
    trainer.save(path)
    assert isinstance(keras.saving.load_model(path).optimizer, ClippedSGD)
