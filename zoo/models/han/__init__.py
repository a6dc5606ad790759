"""The Hierarchical Attention Network family (Yang et al. 2016): document classifier.

- `HANClassifier`: word ids `(B, S, W)` -> `{"probabilities", "sentence_attention",
  "word_attention"}`; `training_model()` is the view that is fit.
- `HANPreprocessor`, `tokenize_documents`: raw text -> word ids, in the graph.
- `HANServing`, `export_han_classifier`: the exported signatures (`serving_default`,
  `explain`, `preprocess`).
- `LENGTH_BUCKETS`, `CLIPNORM`: training settings.
"""

from zoo.models.han.han_classifier import HANClassifier
from zoo.models.han.han_preprocessor import (
    MAX_SENTENCES,
    MAX_WORDS,
    HANPreprocessor,
    tokenize_documents,
)
from zoo.models.han.han_serving import HANServing, export_han_classifier
from zoo.models.han.han_training import CLIPNORM, LENGTH_BUCKETS

__all__ = [
    "CLIPNORM",
    "HANClassifier",
    "HANPreprocessor",
    "HANServing",
    "LENGTH_BUCKETS",
    "MAX_SENTENCES",
    "MAX_WORDS",
    "export_han_classifier",
    "tokenize_documents",
]
