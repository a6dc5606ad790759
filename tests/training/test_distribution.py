import pytest
import tensorflow as tf

from zoo import training


def test_get_strategy_names():
    assert training.get_strategy("none") is tf.distribute.get_strategy()
    mirrored = training.get_strategy("mirrored")
    assert isinstance(mirrored, tf.distribute.MirroredStrategy)
    assert mirrored.num_replicas_in_sync == len(tf.config.list_logical_devices("CPU"))
    with pytest.raises(ValueError, match="distribute='multi-worker'"):
        training.get_strategy("multi-worker")


def test_set_seed_checks_its_argument():
    with pytest.raises(ValueError, match="seed='1'"):
        training.set_seed("1")
