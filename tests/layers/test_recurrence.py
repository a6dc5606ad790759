"""The loop registry, and the layers' independence from any backend's code."""

import ast
import pathlib
import sys

import keras
import numpy as np
import pytest

from tests.layers.layer_test_utils import to_numpy
from zoo.layers import recurrence
from zoo.layers.attention_decoder import AttentionDecoder

LAYERS = pathlib.Path(__file__).resolve().parents[2] / "zoo" / "layers"
B, TT, TS, D, U, V = 3, 4, 5, 6, 8, 13


def _decoder_inputs():
    rng = np.random.default_rng(0)
    ids = rng.integers(1, V, (B, TT)).astype("int32")
    memory = rng.normal(size=(B, TS, D)).astype("float32")
    mask = np.ones((B, TS), bool)
    mask[1, 3:] = False
    h0 = rng.normal(size=(B, U)).astype("float32")
    return [ids, memory, mask, h0]


def test_the_decoder_runs_a_registered_loop_where_it_applies():
    decoder = AttentionDecoder(V, U, attention="luong")
    inputs = _decoder_inputs()
    expected = to_numpy(decoder(inputs, return_attention=True, training=True))
    calls = []

    def loop(layer, projected, state, memory_bundle, weights, training):
        calls.append((layer, training))
        return layer._scan_recurrence(
            projected, state, memory_bundle, weights, training
        )

    def applies(layer, training):
        return layer is decoder and bool(training)

    recurrence.register_loop(recurrence.DECODER_LOOP, loop, applies)
    try:
        got = to_numpy(decoder(inputs, return_attention=True, training=True))
        assert calls == [(decoder, True)]
        decoder(inputs, training=False)
        AttentionDecoder(V, U, attention="luong")(inputs, training=True)
        assert len(calls) == 1  # `applies` was False for both
    finally:
        recurrence.unregister_loop(recurrence.DECODER_LOOP, loop)
    assert loop not in recurrence.registered_loops(recurrence.DECODER_LOOP)
    for e, g in zip(expected, got, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-6)


def test_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="Received: kind='lstm'"):
        recurrence.select_loop("lstm", None, True)
    with pytest.raises(ValueError, match="Received: kind='lstm'"):
        recurrence.register_loop("lstm", print, lambda *args: True)


def _imports(path):
    """The modules a source file imports (absolute names)."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield node.module or ""


def test_layers_import_only_keras_numpy_and_themselves():
    allowed = ("keras", "numpy", "zoo.layers", "zoo.errors")
    stdlib = set(sys.stdlib_module_names)
    found = {}
    for path in sorted(LAYERS.glob("*.py")):
        for name in _imports(path):
            top = name.split(".")[0]
            if top in stdlib or name == "keras" or name.startswith(allowed):
                continue
            found.setdefault(path.name, []).append(name)
    assert found == {}
    assert len(list(LAYERS.glob("*.py"))) > 10  # the files were read


def test_other_backends_load_no_backend_loops():
    if keras.backend.backend() == "tensorflow":
        pytest.skip("checks a backend other than TensorFlow")
    layer = AttentionDecoder(V, U)
    layer(_decoder_inputs(), training=True)
    loops = {kind: recurrence.registered_loops(kind) for kind in recurrence.LOOP_KINDS}
    assert "zoo.fastpath" not in sys.modules and "tensorflow" not in sys.modules
    assert loops == {kind: () for kind in recurrence.LOOP_KINDS}
