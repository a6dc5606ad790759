"""Readers for the standard data formats (the generated demo corpora are `zoo.demo`).

- `zoo.data.labelled`: one reader for labelled text, `load_labelled` /
  `read_labelled` -> `LabelledSplits` / `LabelledTexts` (texts, class ids, class
  names): CSV/TSV tables (Python's `csv`), JSON lines, `label<TAB>sentence` lines,
  SST trees, one folder per class, split files, IMDB (folder or tar.gz). Its
  generated demo corpora are in `zoo.demo`.
- `zoo.data.parallel`: `load_parallel` / `read_pairs` for line-aligned file pairs, TSV
  pairs in either column order, explicit files per split.
- `zoo.data.babi`: bAbI question answering (any language of the same format).
- `zoo.data.files`: what every reader shares: UTF-8 with an optional byte-order mark,
  `.gz`, split-file folders, the one seeded split.

Every reader reports malformed input as a `zoo.errors.DataError` naming the file and
line (or the column) at fault, and a missing path as a `zoo.errors.MissingPathError`.
The validation split is `validation` in code; files named valid/val/dev are read as it.
Word vectors are read by `zoo.text.embeddings`.
"""
