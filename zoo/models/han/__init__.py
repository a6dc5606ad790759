"""The Hierarchical Attention Network family (Yang et al. 2016): document classifier.

- `HANTextClassifier` (the task: raw documents in; `fit`, `predict`, `explain`,
  `save_to_preset`, `export`) and its `HANTextClassifierPreprocessor` layer;
- `HANClassifier` (the network): word ids `(B, S, W)` -> `{"probabilities",
  "sentence_attention", "word_attention"}`.
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
from zoo.models.han.han_serving import HANServing
from zoo.models.han.han_text_classifier import (
    CLIPNORM,
    LENGTH_BUCKETS,
    HANTextClassifier,
    export_han_classifier,
)
from zoo.models.han.han_text_classifier_preprocessor import (
    HANTextClassifierPreprocessor,
)

__all__ = [
    "CLIPNORM",
    "HANClassifier",
    "HANPreprocessor",
    "HANServing",
    "HANTextClassifier",
    "HANTextClassifierPreprocessor",
    "LENGTH_BUCKETS",
    "MAX_SENTENCES",
    "MAX_WORDS",
    "export_han_classifier",
    "tokenize_documents",
]
