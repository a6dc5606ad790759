"""Every random weight of a layer gets a draw of its own (`fresh_initializer`)."""

import keras
import numpy as np
import pytest

from zoo.layers import (
    AttentionPooling,
    BahdanauAttention,
    LuongAttention,
    MemoryNetwork,
    SelfAttention,
    StructuredSelfAttention,
)
from zoo.layers.initializers import fresh_initializer


def _values(initializer, shape=(4, 5)):
    return keras.ops.convert_to_numpy(initializer(shape))


def test_unseeded_copies_differ():
    init = keras.initializers.RandomNormal(stddev=0.1)
    # The Keras behaviour the helper exists for: one instance repeats itself.
    np.testing.assert_array_equal(_values(init), _values(init))
    a, b = _values(fresh_initializer(init, 0)), _values(fresh_initializer(init, 0))
    assert not np.allclose(a, b)
    assert abs(float(a.std()) - 0.1) < 0.05  # still the same distribution


def test_integer_seed_gives_distinct_reproducible_draws():
    init = keras.initializers.GlorotUniform(seed=7)
    first = _values(fresh_initializer(init, 0))
    np.testing.assert_array_equal(first, _values(fresh_initializer(init, 0)))
    assert not np.allclose(first, _values(fresh_initializer(init, 1)))
    np.testing.assert_array_equal(
        _values(fresh_initializer(init, 3)),
        _values(keras.initializers.GlorotUniform(seed=10)),
    )


@pytest.mark.parametrize("name", ["zeros", "ones"])
def test_non_random_initializers_pass_through(name):
    init = keras.initializers.get(name)
    assert fresh_initializer(init, 5) is init


def test_seed_generator_passes_through():
    init = keras.initializers.RandomNormal(seed=keras.random.SeedGenerator(3))
    assert fresh_initializer(init, 2) is init


def _weights(layer):
    return {v.path.split("/")[-1]: keras.ops.convert_to_numpy(v) for v in layer.weights}


def _all_distinct(arrays):
    arrays = list(arrays)
    for i in range(len(arrays)):
        for j in range(i + 1, len(arrays)):
            if arrays[i].shape == arrays[j].shape:
                assert not np.allclose(arrays[i], arrays[j]), (i, j)


@pytest.mark.parametrize(
    "initializer", [None, keras.initializers.RandomNormal(stddev=0.1, seed=3)]
)
def test_memory_network_tables_start_different(initializer):
    layer = MemoryNetwork(20, 8, 6, hops=3, embeddings_initializer=initializer)
    layer.build(((None, 4), (None, 6, 4)))
    tables = [
        keras.ops.convert_to_numpy(v)
        for v in layer.weights
        if "embedding_" in v.path or "temporal_" in v.path
    ]
    assert len(tables) == 8  # A^1, C^1..C^3 and their temporal tables
    _all_distinct(tables)


def test_attention_kernels_of_equal_shape_start_different():
    query, value = keras.ops.ones((2, 3, 8)), keras.ops.ones((2, 5, 8))
    bahdanau = BahdanauAttention(8)
    bahdanau([query, value])
    w = _weights(bahdanau)
    _all_distinct([w["query_kernel"], w["key_kernel"]])

    concat = LuongAttention(score="concat", units=8)
    concat([query, value])
    w = _weights(concat)
    _all_distinct([w["query_kernel"], w["key_kernel"]])

    seeded = keras.initializers.GlorotUniform(seed=1)
    self_attention = SelfAttention(num_heads=2, key_dim=4, kernel_initializer=seeded)
    self_attention(value)
    w = _weights(self_attention)
    _all_distinct([w["query_kernel"], w["key_kernel"], w["value_kernel"]])


def test_single_weight_layers_still_build_with_one_instance():
    init = keras.initializers.RandomNormal(seed=0)
    pooling = AttentionPooling(6, kernel_initializer=init, context_initializer=init)
    pooling(keras.ops.ones((2, 3, 6)))
    structured = StructuredSelfAttention(units=6, num_hops=6, kernel_initializer=init)
    structured(keras.ops.ones((2, 3, 6)))
    w = _weights(pooling)
    assert not np.allclose(w["kernel"][0], w["context"])  # first rows of one stream
    w = _weights(structured)
    _all_distinct([w["w_s1"], w["w_s2"]])


def test_global_seed_still_makes_layers_reproducible():
    def build():
        keras.utils.set_random_seed(11)
        layer = BahdanauAttention(8)
        layer([keras.ops.ones((1, 2, 8)), keras.ops.ones((1, 3, 8))])
        return _weights(layer)

    first, second = build(), build()
    for name in first:
        np.testing.assert_array_equal(first[name], second[name])
