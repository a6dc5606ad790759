"""Readers for the standard data formats and small generated demo samples.

- `zoo.data.documents`: IMDB (folder or tar.gz), CSV/TSV documents (HAN).
- `zoo.data.sentences`: Stanford Sentiment Treebank trees, TSV/CSV sentences.
- `zoo.data.embeddings`: word2vec / GloVe text vectors.
- `zoo.data.babi`: bAbI question answering (any language of the same format).
- `zoo.data.parallel`: parallel text (Anki/Tatoeba TSV, line-aligned file pairs).

Every reader reports malformed input with the file and line (or the column) at fault.
"""
