"""In-graph text processing (TensorFlow + tensorflow-text ops).

The same functions run in the tf.data training pipelines and inside the exported
signatures, so a served model sees exactly the preprocessing it was trained with.
"""

from zoo.text.preprocessing import (
    MAX_INPUT_BYTES,
    normalize,
    pad_ragged,
    split_sentences,
    truncate,
    word_tokenize,
)
from zoo.text.subword import SubwordTokenizer, learn_subword_vocabulary
from zoo.text.vocabulary import Vocabulary, VocabularyLookup

__all__ = [
    "MAX_INPUT_BYTES",
    "SubwordTokenizer",
    "Vocabulary",
    "VocabularyLookup",
    "learn_subword_vocabulary",
    "normalize",
    "pad_ragged",
    "split_sentences",
    "truncate",
    "word_tokenize",
]
