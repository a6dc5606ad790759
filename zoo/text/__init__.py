"""In-graph text processing (TensorFlow + tensorflow-text ops).

The same functions run in the tf.data training pipelines and inside the exported
signatures, so a served model sees exactly the preprocessing it was trained with.
Import the defining module: `zoo.text.preprocessing` (normalize, split sentences and
words, truncate, pad), `zoo.text.vocabulary` (`Vocabulary`, `VocabularyLookup`),
`zoo.text.subword` (`SubwordTokenizer`, `learn_subword_vocabulary`),
`zoo.text.embeddings` (pretrained word vectors) and `zoo.text.word2vec` (skip-gram).
"""
