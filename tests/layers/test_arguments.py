"""The shared argument checks, and the layers and models that call them."""

import importlib
import math
import re

import keras
import numpy as np
import pytest

from zoo.layers import (
    AttentionDecoder,
    AttentionPooling,
    BahdanauAttention,
    HierarchicalAttentionEncoder,
    LuongAttention,
    MemoryNetwork,
    SelfAttention,
    StructuredSelfAttention,
)
from zoo.layers.arguments import (
    check_bools,
    check_dropout_rates,
    check_one_of,
    check_optional_positive_ints,
    check_positive_ints,
)


def test_positive_ints_pass():
    check_positive_ints(units=1, heads=64)
    check_optional_positive_ints(units=None, heads=8)


@pytest.mark.parametrize("value", [0, -3, True, 2.0, "3", None, np.float32(4)])
def test_positive_ints_refused(value):
    with pytest.raises(ValueError, match=r"`size` must be a positive integer\. "):
        check_positive_ints(units=4, size=value)


@pytest.mark.parametrize("value", [0, False, 1.5, "8"])
def test_optional_positive_ints_refused(value):
    with pytest.raises(
        ValueError,
        match=r"`units` must be a positive integer or None\. Received: units=",
    ):
        check_optional_positive_ints(units=value)


@pytest.mark.parametrize("rate", [0, 0.0, 0.5, 0.999, np.float32(0.2), np.float64(0.3)])
def test_dropout_rates_pass(rate):
    check_dropout_rates(dropout=rate)


@pytest.mark.parametrize(
    "rate", [1, 1.0, -0.1, math.nan, math.inf, True, None, "0.3", "high", [0.1]]
)
def test_dropout_rates_refused(rate):
    with pytest.raises(ValueError) as error:
        check_dropout_rates(dropout=0.1, context_dropout=rate)
    assert str(error.value) == (
        f"`context_dropout` must be in [0, 1). Received: context_dropout={rate!r}"
    )


# Each constructor with one bad argument: the error names it and the value, and
# comes from the check rather than from Keras or TensorFlow further in.
BAD_ARGUMENTS = [
    (AttentionDecoder, {"vocab_size": 50, "units": True}, "units=True"),
    (AttentionDecoder, {"vocab_size": 50, "units": 8, "dropout": None}, "dropout=None"),
    (AttentionPooling, {"units": 0}, "units=0"),
    (BahdanauAttention, {"units": 16.0}, "units=16.0"),
    (LuongAttention, {"score": "dot", "window_size": 0}, "window_size=0"),
    (LuongAttention, {"score": "concat", "units": -1}, "units=-1"),
    (StructuredSelfAttention, {"units": 8, "num_hops": False}, "num_hops=False"),
    (
        MemoryNetwork,
        {"vocabulary_size": 20, "embedding_dim": 8, "memory_size": 5, "hops": 0},
        "hops=0",
    ),
    (
        SelfAttention,
        {"num_heads": 2, "key_dim": 4, "dropout": "high"},
        "dropout='high'",
    ),
    (SelfAttention, {"num_heads": 2, "key_dim": 4, "value_dim": 0}, "value_dim=0"),
    (HierarchicalAttentionEncoder, {"dropout": None}, "dropout=None"),
    (HierarchicalAttentionEncoder, {"dropout": "0.3"}, "dropout='0.3'"),
    (HierarchicalAttentionEncoder, {"rnn_units": 0}, "rnn_units=0"),
]

# The models that call the same checks: (family package, class, arguments, value).
MODEL_BAD_ARGUMENTS = [
    (
        "han",
        "HANClassifier",
        {"vocabulary_size": 30, "num_classes": 3, "dropout": 1.0},
        "dropout=1.0",
    ),
    (
        "sentence_embedder",
        "SelfAttentiveEncoder",
        {"vocabulary_size": 30, "lstm_units": 0},
        "lstm_units=0",
    ),
    (
        "sentence_embedder",
        "SelfAttentiveEncoder",
        {"vocabulary_size": 30, "embedding_dropout": -0.5},
        "embedding_dropout=-0.5",
    ),
    (
        "translation",
        "Seq2SeqTranslator",
        {"source_vocab_size": 0, "target_vocab_size": 9},
        "source_vocab_size=0",
    ),
    (
        "translation",
        "Seq2SeqTranslator",
        {"source_vocab_size": 9, "target_vocab_size": 9, "encoder_layers": True},
        "encoder_layers=True",
    ),
    (
        "translation",
        "Seq2SeqTranslator",
        {"source_vocab_size": 9, "target_vocab_size": 9, "embedding_dim": 0},
        "embedding_dim=0",
    ),
]


def _model_class(family, name):
    """A model class from its family package (which needs TensorFlow: the
    families hold in-graph tensorflow-text preprocessing)."""
    if keras.backend.backend() != "tensorflow":
        pytest.skip("the model families need the TensorFlow backend")
    return getattr(importlib.import_module(f"zoo.models.{family}"), name)


@pytest.mark.parametrize(
    ("cls", "kwargs", "received"),
    BAD_ARGUMENTS,
    ids=[f"{cls.__name__}-{received}" for cls, _, received in BAD_ARGUMENTS],
)
def test_constructors_refuse_bad_arguments(cls, kwargs, received):
    with pytest.raises(ValueError, match="Received: .*" + re.escape(received)):
        cls(**kwargs)


@pytest.mark.parametrize(
    ("family", "name", "kwargs", "received"),
    MODEL_BAD_ARGUMENTS,
    ids=[f"{name}-{received}" for _, name, _, received in MODEL_BAD_ARGUMENTS],
)
def test_model_constructors_refuse_bad_arguments(family, name, kwargs, received):
    cls = _model_class(family, name)
    with pytest.raises(ValueError, match="Received: .*" + re.escape(received)):
        cls(**kwargs)


def test_classifier_refuses_bad_dropout():
    encoder_cls = _model_class("sentence_embedder", "SelfAttentiveEncoder")
    classifier_cls = _model_class("sentence_embedder", "SelfAttentiveClassifier")
    encoder = encoder_cls(30, embedding_dim=8, lstm_units=8, num_hops=2)
    with pytest.raises(ValueError, match=r"Received: dropout=1\.5"):
        classifier_cls(encoder, num_classes=2, hidden_units=8, dropout=1.5)


def test_one_of_and_bools_name_the_value():
    check_one_of(("gru", "lstm"), cell="gru")
    check_bools(input_feeding=False)
    with pytest.raises(ValueError) as error:
        check_one_of(("gru", "lstm"), cell="rnn")
    assert str(error.value) == (
        "`cell` must be one of ('gru', 'lstm'). Received: cell='rnn'"
    )
    with pytest.raises(ValueError) as error:
        check_bools(input_feeding=0)
    assert (
        str(error.value)
        == "`input_feeding` must be True or False. Received: input_feeding=0"
    )
