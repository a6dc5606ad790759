"""The Hierarchical Attention Network family (Yang et al. 2016): document classifier.

- `HANTextClassifier` (the task: raw documents in; `fit`, `predict`, `explain`,
  `save_to_preset`, `export`) and its `HANTextClassifierPreprocessor` layer (raw
  text -> word ids, in the graph);
- `HANClassifier` (the network): word ids `(B, S, W)` -> `{"probabilities",
  "sentence_attention", "word_attention"}`.

The export's signatures (`serving_default`, `explain`, `preprocess`) are
`HANTextClassifier.serving_module()`'s (see `TextClassifier.export`).
"""

from zoo.models.han.han_classifier import HANClassifier
from zoo.models.han.han_text_classifier import HANTextClassifier
from zoo.models.han.han_text_classifier_preprocessor import (
    HANTextClassifierPreprocessor,
)

__all__ = [
    "HANClassifier",
    "HANTextClassifier",
    "HANTextClassifierPreprocessor",
]
