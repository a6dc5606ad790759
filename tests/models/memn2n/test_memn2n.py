import keras
import numpy as np

from zoo.models.memn2n import MemN2N, compile_training_model

V, M, J = 15, 6, 4


def inputs(batch=3, seed=0):
    rng = np.random.default_rng(seed)
    story = rng.integers(1, V, (batch, M, J)).astype("int32")
    story[:, 3:] = 0
    question = rng.integers(1, V, (batch, J)).astype("int32")
    return {"story": story, "question": question}


def _np(x):
    return keras.ops.convert_to_numpy(x)


def test_outputs_and_tied_answer_matrix():
    model = MemN2N(V, M, J, embedding_dim=8, hops=3)
    out = model(inputs())
    assert sorted(out) == ["attention", "probabilities"]
    probabilities, attention = _np(out["probabilities"]), _np(out["attention"])
    assert probabilities.shape == (3, V) and attention.shape == (3, 3, M)
    assert probabilities.dtype == np.float32 and attention.dtype == np.float32
    np.testing.assert_allclose(probabilities.sum(-1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(attention.sum(-1), 1.0, rtol=1e-5)
    # default "nil": the empty slots 3.. score 0 and share the leftover attention
    empty = attention[:, :, 3:]
    np.testing.assert_allclose(empty, empty[..., :1].repeat(M - 3, -1), rtol=1e-5)
    masked = MemN2N(V, M, J, embedding_dim=8, hops=3, empty_slots="mask")
    masked_attention = _np(masked(inputs())["attention"])
    np.testing.assert_array_equal(masked_attention[:, :, 3:], 0.0)
    # Adjacent tying: K + 1 embeddings + K + 1 temporal tables, W^T = C^K.
    assert len(model.trainable_weights) == 8
    assert model.memory.answer is None


def test_training_model_is_a_single_output_view_sharing_the_weights():
    model = MemN2N(V, M, J, embedding_dim=8, hops=2)
    trainer = model.training_model()
    assert model.training_model() is trainer
    assert len(trainer.outputs) == 1
    assert {id(w) for w in trainer.weights} == {id(w) for w in model.weights}
    x = inputs()
    np.testing.assert_allclose(
        _np(trainer(x)), _np(model(x)["probabilities"]), rtol=1e-6
    )
    # Training the view changes the model's outputs.
    before = _np(model(x)["probabilities"])
    trainer = compile_training_model(model, learning_rate=0.5, jit_compile=False)
    trainer.train_on_batch(x, np.array([1, 2, 3]))
    assert not np.allclose(_np(model(x)["probabilities"]), before)


def test_keras_file_round_trip_keeps_outputs_and_linear_start(tmp_path):
    model = MemN2N(V, M, J, embedding_dim=8, hops=2, linear_start=True)
    x = inputs()
    model.memory.set_linear_start(False)
    expected = model(x)
    path = tmp_path / "memn2n.keras"
    model.save(path)
    loaded = keras.saving.load_model(path)
    assert type(loaded) is MemN2N
    assert loaded.get_config() == model.get_config()
    assert loaded.empty_slots == "nil"
    assert not loaded.memory.linear_start_enabled
    got = loaded(x)
    for key in ("probabilities", "attention"):
        np.testing.assert_allclose(
            _np(got[key]), _np(expected[key]), rtol=1e-6, atol=1e-7
        )


def test_config_without_empty_slots_means_masked_slots():
    config = MemN2N(V, M, J, embedding_dim=4, hops=1).get_config()
    del config["empty_slots"]
    assert MemN2N.from_config(config).empty_slots == "mask"


def test_training_learns_a_tiny_task():
    # Answer = the word that fills the most recent sentence.
    x = inputs(batch=64, seed=1)
    answer = x["story"][:, 0, 0]
    x["story"][:, 0, :] = answer[:, None]
    x["question"][:] = [1, 2, 0, 0]
    model = MemN2N(V, M, J, embedding_dim=16, hops=1, linear_start=True)
    trainer = compile_training_model(model, learning_rate=0.01)
    before = trainer.evaluate(x, answer, verbose=0, return_dict=True)["loss"]
    trainer.fit(x, answer, epochs=15, batch_size=16, verbose=0)
    after = trainer.evaluate(x, answer, verbose=0, return_dict=True)
    assert np.isfinite(after["loss"]) and after["loss"] < 0.2 * before
    assert after["accuracy"] > 0.9
    predicted = _np(model(x)["probabilities"]).argmax(-1)
    assert np.mean(predicted == answer) > 0.9
