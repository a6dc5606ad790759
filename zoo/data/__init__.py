"""Readers for the standard data formats and small generated demo samples.

- `zoo.data.documents`: `load_documents` for documents in CSV/TSV/JSON lines, one
  folder per class, split files, IMDB (folder or tar.gz).
- `zoo.data.sentences`: `load_sentences` for SST trees, TSV/CSV/JSON lines, one folder
  per class, split files.
- `zoo.data.embeddings`: word2vec / GloVe text vectors.
- `zoo.data.babi`: bAbI question answering (any language of the same format).
- `zoo.data.parallel`: `load_parallel` for line-aligned file pairs, TSV pairs in either
  column order, explicit files per split.
- `zoo.data.files`: what every reader shares: UTF-8 with an optional byte-order mark,
  `.gz`, CSV/TSV/JSON-lines tables, split-file folders.

Every reader reports malformed input as a `zoo.errors.DataError` naming the file and
line (or the column) at fault, and a missing path as a `zoo.errors.MissingPathError`.
"""
