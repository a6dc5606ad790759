"""Shared checks for layer tests: config and `.keras` round trips, a fit step, float16.

Import from a test module in `tests/layers/` as

    from tests.layers.layer_test_utils import (
        assert_config_roundtrip,
        assert_keras_file_roundtrip,
    )

(`tests` is a package; pytest puts the checkout root on `sys.path`). Every function
asserts on values and returns what it computed, so a test can check more. Nothing here
imports a backend at module level: the layer tests run on TensorFlow and on JAX
(`loss_and_gradients` differentiates with the backend's own tool).
"""

import contextlib
import json

import keras
import numpy as np
from keras import ops

__all__ = [
    "assert_config_roundtrip",
    "assert_float16_finite",
    "assert_keras_file_roundtrip",
    "assert_one_fit_step",
    "assert_shapes",
    "dtype_policy",
    "loss_and_gradients",
    "symbolic_inputs",
    "to_numpy",
]


def to_numpy(x):
    """Converts a tensor, or a nested list/tuple/dict of tensors, to NumPy."""
    if isinstance(x, dict):
        return {k: to_numpy(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(to_numpy(v) for v in x)
    if x is None:
        return None
    return ops.convert_to_numpy(x)


def loss_and_gradients(fn, tensors=(), variables=()):
    """Runs `fn(*tensors) -> (loss, outputs)` and differentiates the scalar `loss`.

    The gradients are taken with respect to each of `tensors` (arrays, passed to
    `fn` as backend tensors) and each of `variables` (Keras variables that `fn`
    reads, e.g. `layer.kernel`), with `tf.GradientTape` on TensorFlow and
    `jax.grad` on JAX (the variables then enter through a
    `keras.StatelessScope`, as in Keras' JAX trainer; `layer.losses` read inside
    `fn` are the ones this call added).

    Returns:
        `(outputs, gradients)`, both as NumPy: `outputs` nested as `fn` returned
        it, `gradients` a list (the tensors' first, then the variables').
    """
    backend = keras.backend.backend()
    variables = list(variables)
    if backend == "tensorflow":
        import tensorflow as tf

        tensors = [tf.convert_to_tensor(t) for t in tensors]
        with tf.GradientTape() as tape:
            tape.watch(tensors)
            loss, outputs = fn(*tensors)
        gradients = tape.gradient(loss, [*tensors, *variables])
        return to_numpy(outputs), [to_numpy(g) for g in gradients]
    if backend == "jax":
        import jax

        def wrapped(tensor_values, variable_values):
            mapping = list(zip(variables, variable_values, strict=True))
            with keras.StatelessScope(state_mapping=mapping, collect_losses=True):
                loss, outputs = fn(*tensor_values)
            return loss, outputs

        grad_fn = jax.grad(wrapped, argnums=(0, 1), has_aux=True)
        tensor_values = [ops.convert_to_tensor(t) for t in tensors]
        (d_tensors, d_variables), outputs = grad_fn(
            tensor_values, [v.value for v in variables]
        )
        return to_numpy(outputs), [to_numpy(g) for g in [*d_tensors, *d_variables]]
    raise NotImplementedError(
        f"loss_and_gradients supports tensorflow and jax. Received: {backend!r}"
    )


def _flatten(x):
    if isinstance(x, dict):
        return [v for k in sorted(x) for v in _flatten(x[k])]
    if isinstance(x, (list, tuple)):
        return [v for item in x for v in _flatten(item)]
    return [x]


def assert_config_roundtrip(layer_cls, config):
    """`layer_cls(**config)` survives `get_config`/`from_config` and a JSON round trip.

    Checks that every argument given in `config` is reported by `get_config()` with the
    same value, that `from_config(get_config())` reproduces the config, and that
    `keras.saving.serialize_keras_object` -> JSON -> `deserialize_keras_object` (without
    `custom_objects`, so the class must be registered) gives the same class and config.

    Returns:
        The layer rebuilt from the JSON config.
    """
    layer = layer_cls(**config)
    cfg = layer.get_config()
    for key, value in config.items():
        assert key in cfg, f"get_config() lacks {key!r}: {sorted(cfg)}"
        got = cfg[key]
        if isinstance(value, tuple):
            value = list(value)
        if isinstance(got, tuple):
            got = list(got)
        if isinstance(value, (str, int, float, bool, list, type(None))):
            assert got == value, f"get_config()[{key!r}] = {got!r}, expected {value!r}"
    restored = layer_cls.from_config(cfg)
    assert type(restored) is layer_cls
    assert restored.get_config() == cfg

    text = json.dumps(keras.saving.serialize_keras_object(layer))
    from_json = keras.saving.deserialize_keras_object(json.loads(text))
    assert type(from_json) is layer_cls
    assert from_json.get_config() == cfg
    return from_json


def assert_keras_file_roundtrip(model, inputs, tmp_path, atol=1e-6, rtol=1e-6):
    """Saves `model` as `.keras`, loads it without `custom_objects`, compares outputs.

    Args:
        model: a built Keras model.
        inputs: what `model(...)` takes (array, list or dict of arrays).
        tmp_path: a folder (pytest's `tmp_path`).

    Returns:
        `(loaded_model, outputs_as_numpy)`.
    """
    path = str(tmp_path / "model.keras")
    expected = to_numpy(model(inputs, training=False))
    model.save(path)
    loaded = keras.saving.load_model(path)
    got = to_numpy(loaded(inputs, training=False))
    exp_flat, got_flat = _flatten(expected), _flatten(got)
    assert len(exp_flat) == len(got_flat)
    for e, g in zip(exp_flat, got_flat, strict=True):
        np.testing.assert_allclose(g, e, atol=atol, rtol=rtol)
    # The weights themselves must match too (not only the outputs on one input).
    for w_orig, w_new in zip(model.weights, loaded.weights, strict=True):
        np.testing.assert_array_equal(to_numpy(w_new), to_numpy(w_orig))
    return loaded, got


def assert_one_fit_step(
    model, inputs, targets, loss="mse", optimizer=None, all_weights=False
):
    """One `fit` step on one batch: the loss is finite and trainable weights move.

    Args:
        model: an uncompiled (or compiled) Keras model.
        inputs, targets: one batch.
        loss: loss used when the model is not compiled yet.
        optimizer: optimizer used when the model is not compiled yet (default SGD 0.1).
        all_weights: if True, every trainable weight must change; otherwise at least one.

    Returns:
        The loss of the step (a Python float).
    """
    if not model.compiled:
        model.compile(
            optimizer=optimizer or keras.optimizers.SGD(learning_rate=0.1), loss=loss
        )
    before = [to_numpy(w).copy() for w in model.trainable_weights]
    assert before, "the model has no trainable weights"
    batch = len(_flatten(targets)[0])
    history = model.fit(inputs, targets, epochs=1, batch_size=batch, verbose=0)
    loss_value = float(history.history["loss"][-1])
    assert np.isfinite(loss_value), f"loss is not finite: {loss_value}"
    changed = [
        not np.array_equal(b, to_numpy(w))
        for b, w in zip(before, model.trainable_weights, strict=True)
    ]
    unchanged = [
        w.path for w, c in zip(model.trainable_weights, changed, strict=True) if not c
    ]
    if all_weights:
        assert not unchanged, f"weights did not change: {unchanged}"
    else:
        assert any(changed), "no trainable weight changed after one fit step"
    return loss_value


@contextlib.contextmanager
def dtype_policy(name):
    """Sets the global Keras dtype policy inside the block and restores it afterwards."""
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy(name)
    try:
        yield
    finally:
        keras.config.set_dtype_policy(previous)


def assert_float16_finite(build_fn, inputs, expect_float16_output=True, **call_kwargs):
    """Under the "mixed_float16" policy the layer/model gives finite float16 outputs.

    Args:
        build_fn: a zero-argument callable returning a layer or model; it is called
            while the policy is active, so its variables are float32 and its compute
            dtype float16.
        inputs: what the layer/model takes.
        expect_float16_output: require at least one float16 output (set False for a
            model whose head deliberately outputs float32, e.g. a float32 softmax).
        **call_kwargs: extra call arguments (e.g. `mask=...`).

    Returns:
        The outputs as NumPy (nested like the call's result).
    """
    with dtype_policy("mixed_float16"):
        obj = build_fn()
        outputs = obj(inputs, **call_kwargs)
        compute_dtype = obj.compute_dtype
    assert compute_dtype == "float16", compute_dtype
    arrays = _flatten(to_numpy(outputs))
    floats = [a for a in arrays if np.issubdtype(a.dtype, np.floating)]
    assert floats, "no floating outputs"
    if expect_float16_output:
        assert any(a.dtype == np.float16 for a in floats), [a.dtype for a in floats]
    for a in floats:
        assert np.all(np.isfinite(a)), "float16 output has NaN/inf"
    return to_numpy(outputs)


def symbolic_inputs(arrays):
    """`keras.Input`s matching the given arrays with an unknown batch dimension."""
    if isinstance(arrays, (list, tuple)):
        return [symbolic_inputs(a) for a in arrays]
    arrays = np.asarray(arrays)
    return keras.Input(shape=arrays.shape[1:], dtype=str(arrays.dtype))


def assert_shapes(layer_fn, inputs, expected, **call_kwargs):
    """Symbolic and eager calls, and `compute_output_shape`, give the expected shapes.

    Args:
        layer_fn: zero-argument callable returning a fresh layer.
        inputs: array or list of arrays (eager inputs).
        expected: the expected eager output shape(s) (a tuple, or a list of tuples when
            the layer returns several tensors); the batch dimension is compared as
            `None` for symbolic calls.
        **call_kwargs: extra call arguments (not tensors).
    """
    multi = isinstance(expected, list)
    expected_list = expected if multi else [expected]

    def _shapes(out):
        out = out if isinstance(out, (list, tuple)) else [out]
        return [tuple(o.shape) for o in out]

    eager = _shapes(layer_fn()(inputs, **call_kwargs))
    assert eager == [tuple(e) for e in expected_list], eager

    sym = _shapes(layer_fn()(symbolic_inputs(inputs), **call_kwargs))
    assert sym == [(None,) + tuple(e)[1:] for e in expected_list], sym

    if not call_kwargs:
        layer = layer_fn()
        if isinstance(inputs, (list, tuple)):
            shapes = [tuple(np.shape(x)) for x in inputs]
        else:
            shapes = tuple(np.shape(inputs))
        computed = layer.compute_output_shape(shapes)
        if multi:
            computed = [tuple(c) for c in computed]
        else:
            computed = [tuple(computed)]
        assert computed == [tuple(e) for e in expected_list], computed
