"""Task models (Functional subclasses) built on `zoo.layers`.

Importing this package registers every model with Keras (`package="zoo"`).
"""

from zoo.models.han import HANClassifier
from zoo.models.memn2n import MemN2N
from zoo.models.sentence_embedder import (
    SelfAttentiveClassifier,
    SelfAttentiveEncoder,
)
from zoo.models.translation import Seq2SeqTranslator

__all__ = [
    "HANClassifier",
    "MemN2N",
    "SelfAttentiveClassifier",
    "SelfAttentiveEncoder",
    "Seq2SeqTranslator",
]
