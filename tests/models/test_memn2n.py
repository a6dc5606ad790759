import math

import keras
import numpy as np
import pytest

from zoo.models.memn2n import (
    ClippedSGD,
    LinearStart,
    LinearStartSchedule,
    MemN2N,
    compile_memn2n,
    step_decay,
)

V, M, J = 15, 6, 4


def inputs(batch=3, seed=0):
    rng = np.random.default_rng(seed)
    story = rng.integers(1, V, (batch, M, J)).astype("int32")
    story[:, 3:] = 0
    question = rng.integers(1, V, (batch, J)).astype("int32")
    return {"story": story, "question": question}


def test_outputs_and_tied_answer_matrix():
    model = MemN2N(V, M, J, embedding_dim=8, hops=3)
    out = model(inputs())
    probabilities = keras.ops.convert_to_numpy(out["probabilities"])
    attention = keras.ops.convert_to_numpy(out["attention"])
    assert probabilities.shape == (3, V) and attention.shape == (3, 3, M)
    assert probabilities.dtype == np.float32
    np.testing.assert_allclose(probabilities.sum(-1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(attention.sum(-1), 1.0, rtol=1e-5)
    # default "nil": the empty slots 3.. score 0 and share the leftover attention
    empty = attention[:, :, 3:]
    np.testing.assert_allclose(empty, empty[..., :1].repeat(M - 3, -1), rtol=1e-5)
    masked = MemN2N(V, M, J, embedding_dim=8, hops=3, empty_slots="mask")
    masked_attention = keras.ops.convert_to_numpy(masked(inputs())["attention"])
    np.testing.assert_array_equal(masked_attention[:, :, 3:], 0.0)
    # Adjacent tying: K + 1 embeddings + K + 1 temporal tables, W^T = C^K.
    assert len(model.trainable_weights) == 8
    assert model.memory.answer is None


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
            keras.ops.convert_to_numpy(got[key]),
            keras.ops.convert_to_numpy(expected[key]),
            rtol=1e-6,
            atol=1e-7,
        )


def test_training_learns_a_tiny_task():
    # Answer = the word that fills the most recent sentence.
    x = inputs(batch=64, seed=1)
    answer = x["story"][:, 0, 0]
    x["story"][:, 0, :] = answer[:, None]
    x["question"][:] = [1, 2, 0, 0]
    model = compile_memn2n(
        MemN2N(V, M, J, embedding_dim=16, hops=1, linear_start=True),
        learning_rate=0.01,
    )
    y = MemN2N.targets(answer)
    before = model.evaluate(x, y, verbose=0, return_dict=True)["loss"]
    model.fit(x, y, epochs=15, batch_size=16, verbose=0)
    after = model.evaluate(x, y, verbose=0, return_dict=True)
    assert np.isfinite(after["loss"]) and after["loss"] < 0.2 * before
    assert after["probabilities_accuracy"] > 0.9


def test_step_decay_schedule():
    schedule = step_decay(0.01, every=25)
    assert [schedule(e) for e in (0, 24, 25, 50, 99)] == [
        0.01,
        0.01,
        0.005,
        0.0025,
        0.00125,
    ]
    assert step_decay(0.01, every=15, stop=30)(60) == 0.0025
    with pytest.raises(ValueError, match="every=0"):
        step_decay(0.01, every=0)


def test_linear_start_callback_switches_when_validation_loss_stalls():
    model = MemN2N(V, M, J, embedding_dim=4, hops=1, linear_start=True)
    callback = LinearStart(model.memory)
    callback.set_model(model)
    for epoch, loss in enumerate([3.0, 2.0, 1.5]):
        callback.on_epoch_end(epoch, {"val_loss": loss})
        assert model.memory.linear_start_enabled
    callback.on_epoch_end(3, {"val_loss": 1.6})
    assert not model.memory.linear_start_enabled and callback.switched_at == 4
    callback.on_epoch_end(4, {"val_loss": 9.0})  # stays off
    assert not model.memory.linear_start_enabled
    late = LinearStart(
        MemN2N(V, M, J, embedding_dim=4, hops=1, linear_start=True).memory,
        max_epochs=1,
    )
    late.on_epoch_end(0, {"val_loss": 1.0})
    assert not late.layer.linear_start_enabled


def test_linear_start_schedule_holds_then_restarts_the_step_decay():
    model = MemN2N(V, M, J, embedding_dim=4, hops=1, linear_start=True)
    compile_memn2n(model, learning_rate=0.005)
    linear = LinearStart(model.memory, patience=math.inf, max_epochs=3)
    schedule = LinearStartSchedule(0.005, 2, linear=linear, layer=model.memory)
    for cb in (linear, schedule):
        cb.set_model(model)
    for epoch in range(8):
        schedule.on_epoch_begin(epoch)
        linear.on_epoch_end(epoch, {"val_loss": 1.0 / (epoch + 1)})  # improving
    # LS for exactly 3 epochs at 0.005, then 0.005 halved every 2 epochs from there
    assert linear.switched_at == 3
    assert schedule.rates == [0.005] * 3 + [0.005, 0.005, 0.0025, 0.0025, 0.00125]
    np.testing.assert_allclose(
        float(keras.ops.convert_to_numpy(model.optimizer.learning_rate)), 0.00125
    )
    # without linear start it is the plain step decay
    plain = LinearStartSchedule(0.01, 25)
    assert [plain.rate(e) for e in (0, 24, 25, 50)] == [
        step_decay(0.01, 25)(e) for e in (0, 24, 25, 50)
    ]
    # a run resumed after the switch (switched_at unknown) uses fallback_start
    model.memory.set_linear_start(False)
    resumed = LinearStartSchedule(
        0.005,
        2,
        linear=LinearStart(model.memory),
        layer=model.memory,
        fallback_start=3,
    )
    assert resumed.rate(5) == 0.0025


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


def test_compiled_model_uses_clipped_sgd_and_saves(tmp_path):
    model = MemN2N(V, M, J, embedding_dim=8, hops=2)
    compile_memn2n(model, learning_rate=0.01, clipnorm=40.0, jit_compile=False)
    assert isinstance(model.optimizer, ClippedSGD)
    assert model.optimizer.clipnorm == 40.0
    x = inputs()
    model.train_on_batch(x, MemN2N.targets(np.array([1, 2, 3])))
    path = tmp_path / "trained.keras"
    model.save(path)
    assert isinstance(keras.saving.load_model(path).optimizer, ClippedSGD)
