"""The starting word vectors of a classifier: a vector file, word2vec, or none."""

import dataclasses

from zoo.text.vocabulary import Vocabulary


@dataclasses.dataclass
class InitialEmbeddings:
    """What `initial_embeddings` chose.

    Attributes:
        matrix: float32 `(vocabulary_size, dim)` array, or None (learned from
            scratch).
        dim: the embedding size (the vector file's, when one is read).
        description: one line saying where the vectors come from.
        coverage: with a vector file, the fraction of the vocabulary it covers.
    """

    matrix: object
    dim: int
    description: str
    coverage: float = None


def initial_embeddings(
    vocab_file,
    dim,
    vectors=None,
    word2vec_epochs=0,
    corpus=None,
    seed=0,
    save_to=None,
):
    """The embedding matrix a classifier starts from, for the words of `vocab_file`.

    - `vectors`: a word2vec/GloVe text file (`zoo.data.embeddings.load_embeddings`);
      its dimension replaces `dim`;
    - otherwise `word2vec_epochs > 0`: skip-gram vectors (`zoo.text.word2vec`) trained
      on `corpus`, the way Yang et al. 2016 initialise HAN; written to `save_to` in
      word2vec text format (so `vectors=save_to` reads them back);
    - otherwise None: the embeddings are learned from scratch.

    Args:
        vocab_file: the classifier's vocabulary file.
        dim: the embedding size (of word2vec's vectors).
        vectors: optional vector file.
        word2vec_epochs: passes of word2vec over `corpus` (0: no word2vec).
        corpus: iterable of 1-D int arrays of word ids of `vocab_file` (one per
            text), e.g. `HANPreprocessor.document_ids(texts)`.
        seed: word2vec's seed.
        save_to: optional path of the word2vec vectors written.

    Returns:
        An `InitialEmbeddings`.
    """
    vocab = Vocabulary.load(vocab_file)
    if vectors:
        from zoo.data.embeddings import load_embeddings

        matrix, stats = load_embeddings(vectors, vocab)
        return InitialEmbeddings(
            matrix, stats.dim, f"pretrained vectors {vectors}: {stats}", stats.coverage
        )
    if not word2vec_epochs:
        return InitialEmbeddings(None, dim, "embeddings learned from scratch")
    if corpus is None:
        raise ValueError("`word2vec_epochs` > 0 needs a `corpus` of word ids.")
    from zoo.text.word2vec import train_word2vec, write_word2vec

    matrix, report = train_word2vec(
        corpus,
        vocabulary_size=len(vocab),
        dim=dim,
        epochs=word2vec_epochs,
        seed=seed,
        verbose=True,
        return_report=True,
    )
    if save_to:
        write_word2vec(save_to, vocab.tokens, matrix)
    return InitialEmbeddings(
        matrix, dim, f"word2vec ({word2vec_epochs} epochs): {report}"
    )
