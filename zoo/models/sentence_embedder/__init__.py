"""The structured self-attentive sentence embedding family (Lin et al. 2017).

- `SelfAttentiveTextClassifier` (the task: raw sentences in; `fit`, `predict`,
  `predict_labels`, `explain`, `embed`, `save_to_preset`, `export`) and its
  `SelfAttentiveTextClassifierPreprocessor` layer (raw text -> word ids, in the
  graph); `SentenceEmbedder` (the encoder as a task on raw sentences: `embed` ->
  the embedding matrices, the export's `VERSION.encoder.keras`);
- `SelfAttentiveEncoder`: word ids `(B, T)` -> `{"embedding" (B, r, 2u),
  "attention" (B, r, T)}`; saved alone, it is the reusable sentence embedder.
- `SelfAttentiveClassifier`: encoder -> MLP -> `{"probabilities", "attention"}`.

The export's signatures (`serving_default`, `embed`, `preprocess`) are
`SelfAttentiveTextClassifier.serving_module()`'s (see `TextClassifier.export`).
"""

from zoo.models.sentence_embedder.self_attentive_classifier import (
    SelfAttentiveClassifier,
)
from zoo.models.sentence_embedder.self_attentive_encoder import SelfAttentiveEncoder
from zoo.models.sentence_embedder.self_attentive_text_classifier import (
    SelfAttentiveTextClassifier,
    SentenceEmbedder,
)
from zoo.models.sentence_embedder.self_attentive_text_classifier_preprocessor import (
    SelfAttentiveTextClassifierPreprocessor,
)

__all__ = [
    "SelfAttentiveClassifier",
    "SelfAttentiveEncoder",
    "SelfAttentiveTextClassifier",
    "SelfAttentiveTextClassifierPreprocessor",
    "SentenceEmbedder",
]
