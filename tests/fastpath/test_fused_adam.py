"""`FusedAdam` against `keras.optimizers.Adam`."""

import keras
import numpy as np
import pytest

if keras.backend.backend() != "tensorflow":
    pytest.skip("the fast paths are TensorFlow code", allow_module_level=True)
tf = pytest.importorskip("tensorflow")

from zoo import fastpath  # noqa: E402
from zoo.fastpath.fused_adam import FusedAdam  # noqa: E402
from zoo.training import warm_up_average  # noqa: E402

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


def _train(optimizer, steps=6, jit_compile=False, scale=1.0, record=None):
    model = _model(optimizer, jit_compile)
    # Keras' optimizers get the zoo's weight-average warm-up, as zoo.training.fit
    # gives them; FusedAdam has it built in
    warm_up_average(optimizer)
    for _ in range(steps):
        model.train_on_batch(IDS, TARGETS * scale)
        if record is not None:
            record.append(_numpy(model.weights, optimizer))
    return [keras.ops.convert_to_numpy(w) for w in model.weights], model


def _numpy(weights, optimizer):
    """The weights and (with use_ema) their averages, as NumPy arrays."""
    averages = getattr(optimizer, "_model_variables_moving_average", None) or []
    return [keras.ops.convert_to_numpy(w) for w in [*weights, *averages]]


def _count_fused_calls(monkeypatch):
    calls = []
    fused_op = tf.raw_ops.ResourceApplyAdam

    def counting(**kwargs):
        calls.append(tuple(kwargs["grad"].shape))
        return fused_op(**kwargs)

    monkeypatch.setattr(tf.raw_ops, "ResourceApplyAdam", counting)
    return calls


@pytest.mark.parametrize("jit_compile", [False, True])
@pytest.mark.parametrize("clipnorm", [None, 0.1])
def test_same_training_as_keras_adam(jit_compile, clipnorm, monkeypatch):
    # with clipnorm 0.1 and targets x 100 every gradient is clipped
    calls = _count_fused_calls(monkeypatch)
    kwargs = {"learning_rate": 0.05, "beta_1": 0.8, "beta_2": 0.95, "epsilon": 1e-6}
    kwargs["clipnorm"] = clipnorm
    scale = 100.0 if clipnorm else 1.0
    fused, _ = _train(FusedAdam(**kwargs), jit_compile=jit_compile, scale=scale)
    # the fused kernel updates the dense kernel and bias; the embedding's
    # IndexedSlices gradient (6 x 5) goes through Keras' update
    assert set(calls) == {(20, 3), (3,)}
    reference, _ = _train(
        keras.optimizers.Adam(**kwargs), jit_compile=jit_compile, scale=scale
    )
    for got, want in zip(fused, reference, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # and the weights moved: the comparison is not between two untouched models
    initial = [keras.ops.convert_to_numpy(w) for w in _model("sgd").weights]
    assert all(np.abs(f - i).max() > 0.05 for f, i in zip(fused, initial, strict=True))


def test_switched_off_is_keras_adam(monkeypatch):
    calls = _count_fused_calls(monkeypatch)
    xla_calls = _count_xla_updates(monkeypatch)
    kwargs = {"learning_rate": 0.05, "clipnorm": 0.1, "use_ema": True}
    assert FusedAdam.average_warm_up and "average_warm_up" not in vars(
        keras.optimizers.Adam
    )
    with fastpath.scope(False):
        fused, _ = _train(FusedAdam(**kwargs), scale=100.0)
    assert calls == [] and xla_calls == []
    reference, _ = _train(keras.optimizers.Adam(**kwargs), scale=100.0)
    for got, want in zip(fused, reference, strict=True):
        np.testing.assert_array_equal(got, want)
    # switched on again: the fused kernel runs
    _train(FusedAdam(**kwargs), steps=1, scale=100.0)
    assert set(calls) == {(20, 3), (3,)}


def test_embedding_second_moment_is_keras_sum_of_squared_slices():
    # one row looked up 3 times with gradient 1 each: Keras' Adam adds 3 * 1^2
    # (textbook Adam would add 3^2); FusedAdam keeps Keras' update for such rows
    slices = tf.IndexedSlices(
        tf.ones((3, 2)), tf.constant([1, 1, 1]), tf.constant([3, 2])
    )

    def second_moment(optimizer):
        weight = keras.Variable(np.zeros((3, 2), "float32"))
        optimizer.build([weight])
        optimizer.apply_gradients([(slices, weight)])
        return keras.ops.convert_to_numpy(optimizer._velocities[0])[1]

    np.testing.assert_allclose(
        second_moment(FusedAdam(beta_2=0.9)), [0.3, 0.3], rtol=1e-6
    )
    keras_v = second_moment(keras.optimizers.Adam(beta_2=0.9))
    np.testing.assert_allclose(keras_v, [0.3, 0.3], rtol=1e-6)


def test_dense_clipping_rescales_only_above_the_norm():
    optimizer = FusedAdam(clipnorm=1.0)
    dense = tf.constant([[3.0, 4.0]])  # norm 5
    small = tf.constant([[0.3, 0.4]])  # norm 0.5: unchanged
    clipped = optimizer._clip_gradients([dense, small, None])
    np.testing.assert_allclose(clipped[0], [[0.6, 0.8]], rtol=1e-6)
    np.testing.assert_allclose(clipped[1], [[0.3, 0.4]], rtol=1e-6)
    assert clipped[2] is None


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
    calls = _count_fused_calls(monkeypatch)
    with tf.distribute.MirroredStrategy(["/cpu:0"]).scope():
        fused, _ = _train(FusedAdam(learning_rate=0.05), steps=3)
    assert calls == []  # distributed variables update through Keras
    reference, _ = _train(keras.optimizers.Adam(learning_rate=0.05), steps=3)
    for got, want in zip(fused, reference, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def _count_xla_updates(monkeypatch):
    """Counts the XLA-compiled embedding and weight-average updates."""
    import zoo.fastpath.fused_adam as module

    calls, real = [], module._xla_functions

    def counting():
        functions = real()

        def wrap(name):
            def call(*args):
                calls.append((name, tuple(args[0].shape)))
                return functions[name](*args)

            return call

        return {name: wrap(name) for name in functions}

    monkeypatch.setattr(module, "_xla_functions", counting)
    return calls


@pytest.mark.parametrize("jit_compile", [False, True])
@pytest.mark.parametrize("ema", [0.9, 0.3])
def test_same_weight_average_and_embedding_update_as_keras(
    jit_compile, ema, monkeypatch
):
    # 0.9: the warm-up (1 + t) / (10 + t) < 0.9 holds the momentum in all six steps;
    # 0.3: the warm-up reaches 0.3 at t = 3, then the momentum is 0.3
    calls = _count_xla_updates(monkeypatch)
    kwargs = {"learning_rate": 0.05, "use_ema": True, "ema_momentum": ema}
    fused, fused_model = _train(FusedAdam(**kwargs), jit_compile=jit_compile)
    # the embedding (6 x 5) through the XLA update; the average of every weight
    assert ("adam", (6, 5)) in calls
    assert {c for c in calls if c[0] == "average"} == {
        ("average", (6, 5)),
        ("average", (20, 3)),
        ("average", (3,)),
    }
    reference, reference_model = _train(
        keras.optimizers.Adam(**kwargs), jit_compile=jit_compile
    )
    # XLA may contract `a * b + c` into one fused multiply-add (one rounding):
    # equal to float32 rounding after six steps, not bit for bit
    for got, want in zip(fused, reference, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    averages = [
        [
            keras.ops.convert_to_numpy(a)
            for a in m.optimizer._model_variables_moving_average
        ]
        for m in (fused_model, reference_model)
    ]
    for got, want in zip(*averages, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    # the averages lag the weights: the comparison is not of copies of the weights
    assert any(
        np.abs(a - w).max() > 1e-3 for a, w in zip(averages[0], fused, strict=True)
    )


@pytest.mark.parametrize("fused", [True, False])
def test_weight_average_warms_up(fused):
    # the average after steps 1, 2, 3 against the formula written out by hand:
    # a_1 = w_1, a_2 = 2/11 a_1 + 9/11 w_2, a_3 = 3/12 a_2 + 9/12 w_3 (ema 0.999),
    # in the XLA pass and in the fallback (fast paths off)
    steps = []
    optimizer = FusedAdam(learning_rate=0.05, use_ema=True, ema_momentum=0.999)
    with fastpath.scope(fused):
        _train(optimizer, steps=3, record=steps)
    n = len(optimizer._model_variables_moving_average)
    for i in range(n):
        (w1, a1), (w2, a2), (w3, a3) = ((s[i], s[n + i]) for s in steps)
        np.testing.assert_allclose(a1, w1, rtol=1e-6)
        np.testing.assert_allclose(a2, 2 / 11 * w1 + 9 / 11 * w2, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(a3, 3 / 12 * a2 + 9 / 12 * w3, rtol=1e-5, atol=1e-7)
        # the weights moved: Keras' fixed 0.999 would leave a_3 near w_1
        assert np.abs(a3 - w1).max() > 0.5 * np.abs(w3 - w1).max() > 0
