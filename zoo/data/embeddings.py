"""Moved to `zoo.text.embeddings` (word vectors are not a data-file reader); this name
stays importable for the tests and callers not yet updated."""

from zoo.text.embeddings import (  # noqa: F401
    EmbeddingFormatError,
    EmbeddingStats,
    assign_embedding_matrix,
    load_embeddings,
)
