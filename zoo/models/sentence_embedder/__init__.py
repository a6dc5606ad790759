"""The structured self-attentive sentence embedding family (Lin et al. 2017).

- `SelfAttentiveTextClassifier` (the task: raw sentences in; `fit`, `predict`,
  `predict_labels`, `explain`, `embed`, `save_to_preset`, `export`) and its
  `SelfAttentiveTextClassifierPreprocessor` layer; `SentenceEmbedder` (the encoder
  as a task on raw sentences: `embed` -> the embedding matrices, the export's
  `VERSION.encoder.keras`);
- `SelfAttentiveEncoder`: word ids `(B, T)` -> `{"embedding" (B, r, 2u),
  "attention" (B, r, T)}`; saved alone, it is the reusable sentence embedder.
- `SelfAttentiveClassifier`: encoder -> MLP -> `{"probabilities", "attention"}`.
- `SentencePreprocessor`, `tokenize_sentences`: raw text -> word ids, in the graph.
- `SentenceEmbedderServing`, `export_sentence_embedder`: the exported signatures
  (`serving_default`, `embed`, `preprocess`) and the standalone encoder files.
- `LENGTH_BUCKETS`, `CLIPNORM`, `penalty_norms`: training and evaluation pieces.
"""

from zoo.models.sentence_embedder.self_attentive_classifier import (
    SelfAttentiveClassifier,
)
from zoo.models.sentence_embedder.self_attentive_encoder import SelfAttentiveEncoder
from zoo.models.sentence_embedder.self_attentive_text_classifier import (
    CLIPNORM,
    LENGTH_BUCKETS,
    SelfAttentiveTextClassifier,
    SentenceEmbedder,
    export_sentence_embedder,
    penalty_norms,
)
from zoo.models.sentence_embedder.self_attentive_text_classifier_preprocessor import (
    SelfAttentiveTextClassifierPreprocessor,
)
from zoo.models.sentence_embedder.sentence_embedder_serving import (
    SentenceEmbedderServing,
)
from zoo.models.sentence_embedder.sentence_preprocessor import (
    MAX_LENGTH,
    SentencePreprocessor,
    tokenize_sentences,
)

__all__ = [
    "CLIPNORM",
    "LENGTH_BUCKETS",
    "MAX_LENGTH",
    "SelfAttentiveClassifier",
    "SelfAttentiveEncoder",
    "SelfAttentiveTextClassifier",
    "SelfAttentiveTextClassifierPreprocessor",
    "SentenceEmbedder",
    "SentenceEmbedderServing",
    "SentencePreprocessor",
    "export_sentence_embedder",
    "penalty_norms",
    "tokenize_sentences",
]
