"""Keras 3 attention layers, backend-agnostic: `keras.ops` only, no backend imports.

The layers that run recurrences (`AttentionDecoder`, `BidirectionalRNN`) ask
`zoo.layers.recurrence` for their loop, where backend-specific code computing the
same function may register (the TensorFlow fast paths in `zoo.fastpath`); otherwise
they run their generic loops, on any backend.

Importing this package registers every layer with Keras (`package="zoo"`), so
`keras.saving.load_model` needs no `custom_objects`. The package exports the layers;
helpers (masking, scores, argument checks) are imported from their modules.
"""

from zoo.layers.attention_decoder import AttentionDecoder
from zoo.layers.attention_pooling import AttentionPooling
from zoo.layers.bahdanau_attention import BahdanauAttention
from zoo.layers.bidirectional_rnn import BidirectionalRNN
from zoo.layers.hierarchical_attention import HierarchicalAttentionEncoder
from zoo.layers.luong_attention import LuongAttention
from zoo.layers.memory_encoding import PositionEncoding, TemporalEncoding
from zoo.layers.memory_network import MemoryNetwork
from zoo.layers.self_attention import SelfAttention
from zoo.layers.structured_self_attention import StructuredSelfAttention

__all__ = [
    "AttentionDecoder",
    "AttentionPooling",
    "BahdanauAttention",
    "BidirectionalRNN",
    "HierarchicalAttentionEncoder",
    "LuongAttention",
    "MemoryNetwork",
    "PositionEncoding",
    "SelfAttention",
    "StructuredSelfAttention",
    "TemporalEncoding",
]
