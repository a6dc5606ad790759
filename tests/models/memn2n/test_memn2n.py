import keras
import numpy as np

from zoo.models.memn2n import MemN2N, MemN2NQuestionAnswerer

V, M, J = 15, 6, 4


def inputs(batch=3, seed=0):
    rng = np.random.default_rng(seed)
    story = rng.integers(1, V, (batch, M, J)).astype("int32")
    story[:, 3:] = 0
    question = rng.integers(1, V, (batch, J)).astype("int32")
    return {"story": story, "question": question}


def _np(x):
    return keras.ops.convert_to_numpy(x)


def test_defaults_are_the_papers_joint_model():
    model = MemN2N(V)
    config = model.get_config()
    assert {k: config[k] for k in config if k not in ("name", "trainable")} == {
        "vocabulary_size": V, "memory_size": 50, "sentence_length": 11,
        "embedding_dim": 50, "hops": 3, "tying": "adjacent",
        "position_encoding": True, "temporal_encoding": True,
        "linear_start": True, "empty_slots": "nil",
    }  # fmt: skip
    assert model.memory.linear_start_enabled


def test_outputs_and_tied_answer_matrix():
    model = MemN2N(V, M, J, embedding_dim=8, hops=3, linear_start=False)
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
    masked = MemN2N(
        V, M, J, embedding_dim=8, hops=3, empty_slots="mask", linear_start=False
    )
    masked_attention = _np(masked(inputs())["attention"])
    np.testing.assert_array_equal(masked_attention[:, :, 3:], 0.0)
    # Adjacent tying: K + 1 embeddings + K + 1 temporal tables, W^T = C^K.
    assert len(model.trainable_weights) == 8
    assert model.memory.answer is None


def test_the_task_is_a_single_output_model_sharing_the_weights():
    model = MemN2N(V, M, J, embedding_dim=8, hops=2, linear_start=False)
    task = MemN2NQuestionAnswerer(model, compile=False)
    assert len(task.outputs) == 1 and not hasattr(model, "training_model")
    assert [id(w) for w in task.weights] == [id(w) for w in model.weights]
    x = inputs()
    np.testing.assert_allclose(_np(task(x)), _np(model(x)["probabilities"]), rtol=1e-6)
    # Training the task changes the network's outputs.
    before = _np(model(x)["probabilities"])
    task.default_compile(learning_rate=0.5, jit_compile=False)
    task.train_on_batch(x, np.array([1, 2, 3]))
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
    task = MemN2NQuestionAnswerer(model, compile=False)
    task.default_compile(learning_rate=0.01)
    before = task.evaluate(x, answer, verbose=0, return_dict=True)["loss"]
    task.fit(x, answer, epochs=15, batch_size=16, verbose=0)
    after = task.evaluate(x, answer, verbose=0, return_dict=True)
    assert np.isfinite(after["loss"]) and after["loss"] < 0.2 * before
    assert after["accuracy"] > 0.9
    predicted = _np(model(x)["probabilities"]).argmax(-1)
    assert np.mean(predicted == answer) > 0.9
