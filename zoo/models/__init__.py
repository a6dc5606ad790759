"""Networks (Functional subclasses) built on `zoo.layers`, and the tasks on raw text.

Importing this package registers every model with Keras (`package="zoo"`).
A task (`zoo.models.task.Task`) is a network with its preprocessor: it fits and
predicts on raw strings and saves its vocabularies with it.
"""

from zoo.models.han import (
    HANClassifier,
    HANTextClassifier,
    HANTextClassifierPreprocessor,
)
from zoo.models.memn2n import (
    MemN2N,
    MemN2NQuestionAnswerer,
    MemN2NQuestionAnswererPreprocessor,
)
from zoo.models.preprocessor import Preprocessor
from zoo.models.sentence_embedder import (
    SelfAttentiveClassifier,
    SelfAttentiveEncoder,
    SelfAttentiveTextClassifier,
    SelfAttentiveTextClassifierPreprocessor,
    SentenceEmbedder,
)
from zoo.models.task import Task
from zoo.models.text_classifier import TextClassifier
from zoo.models.translation import (
    Seq2SeqTextTranslator,
    Seq2SeqTranslator,
    Seq2SeqTranslatorPreprocessor,
)

__all__ = [
    "HANClassifier",
    "HANTextClassifier",
    "HANTextClassifierPreprocessor",
    "Preprocessor",
    "Task",
    "TextClassifier",
    "MemN2N",
    "MemN2NQuestionAnswerer",
    "MemN2NQuestionAnswererPreprocessor",
    "SelfAttentiveClassifier",
    "SelfAttentiveEncoder",
    "SelfAttentiveTextClassifier",
    "SelfAttentiveTextClassifierPreprocessor",
    "SentenceEmbedder",
    "Seq2SeqTextTranslator",
    "Seq2SeqTranslator",
    "Seq2SeqTranslatorPreprocessor",
]
