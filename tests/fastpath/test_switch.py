"""The one switch: environment default, `enable`, `scope`, and what it selects."""

import os
import subprocess
import sys

import keras
import pytest

if keras.backend.backend() != "tensorflow":
    pytest.skip("the fast paths are TensorFlow code", allow_module_level=True)

from zoo import fastpath  # noqa: E402
from zoo.errors import ConfigError  # noqa: E402
from zoo.fastpath import bidirectional_loop, gru_loops  # noqa: E402
from zoo.layers import recurrence  # noqa: E402
from zoo.layers.attention_decoder import AttentionDecoder  # noqa: E402
from zoo.layers.bidirectional_rnn import BidirectionalRNN  # noqa: E402


def test_environment_default(monkeypatch):
    assert fastpath.enabled()  # unset: on
    monkeypatch.setenv("ZOO_FASTPATH", "0")
    assert not fastpath.enabled()
    monkeypatch.setenv("ZOO_FASTPATH", "1")
    assert fastpath.enabled()
    monkeypatch.setenv("ZOO_FASTPATH", "yes")
    with pytest.raises(ConfigError, match=r"ZOO_FASTPATH must be 0 or 1\. .*'yes'"):
        fastpath.enabled()


def test_enable_overrides_the_environment_and_scope_restores(monkeypatch):
    monkeypatch.setenv("ZOO_FASTPATH", "0")
    fastpath.enable()
    assert fastpath.enabled()
    with fastpath.scope(False):
        assert not fastpath.enabled()
        with pytest.raises(RuntimeError):
            with fastpath.scope(True):
                assert fastpath.enabled()
                raise RuntimeError("restored on the way out")
        assert not fastpath.enabled()
    assert fastpath.enabled()
    fastpath.enable(None)  # back to the environment
    assert not fastpath.enabled()
    with pytest.raises(ConfigError, match="Received: flag='1'"):
        fastpath.enable("1")


def test_the_switch_selects_the_loops():
    decoder = AttentionDecoder(vocab_size=30, units=8)
    encoder = BidirectionalRNN(keras.layers.GRU(8, return_sequences=True))
    encoder.build((None, None, 4))

    def selected():
        return (
            recurrence.select_loop(recurrence.DECODER_LOOP, decoder, True),
            recurrence.select_loop(recurrence.BIDIRECTIONAL_LOOP, encoder, True),
        )

    fast = (gru_loops.decoder_loop, bidirectional_loop.bidirectional_loop)
    assert selected() == fast
    with fastpath.scope(False):
        assert selected() == (None, None)
    # inference steps: the decoder's generic loop (its graph saves), the encoder's
    # loop with the input products hoisted
    assert recurrence.select_loop(recurrence.DECODER_LOOP, decoder, False) is None
    assert (
        recurrence.select_loop(recurrence.BIDIRECTIONAL_LOOP, encoder, False)
        is bidirectional_loop.bidirectional_loop
    )
    # Luong without input feeding: its own loop in training steps, behind the switch
    luong = AttentionDecoder(
        vocab_size=30, units=8, attention="luong", input_feeding=False
    )
    select = recurrence.select_loop
    assert select(recurrence.DECODER_LOOP, luong, True) is gru_loops.luong_decoder_loop
    assert select(recurrence.DECODER_LOOP, luong, False) is None
    with fastpath.scope(False):
        assert select(recurrence.DECODER_LOOP, luong, True) is None


def test_layers_load_the_fast_paths_without_an_import_by_the_caller():
    code = (
        "import sys, keras\n"
        "from zoo.layers import BidirectionalRNN\n"
        "assert 'zoo.fastpath' not in sys.modules\n"
        "layer = BidirectionalRNN(keras.layers.GRU(2, return_sequences=True))\n"
        "layer(keras.ops.ones((1, 3, 2)))\n"
        "assert 'zoo.fastpath' in sys.modules\n"
        "module = sys.modules['zoo.fastpath.bidirectional_loop']\n"
        "calls, real = [], module._direction\n"
        "module._direction = lambda *a, **k: calls.append(1) or real(*a, **k)\n"
        "layer(keras.ops.ones((1, 3, 2)))\n"
        "assert len(calls) == 2, calls\n"
    )
    env = dict(os.environ, KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-2000:]


def test_the_fast_paths_are_the_tensorflow_entry_point_of_the_layers_registry():
    from importlib.metadata import entry_points

    found = entry_points(group=recurrence.ENTRY_POINT_GROUP, name="tensorflow")
    assert [entry_point.value for entry_point in found] == ["zoo.fastpath"]
    assert [entry_point.load() for entry_point in found] == [fastpath]
