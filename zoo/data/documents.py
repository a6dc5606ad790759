"""Labelled documents for classification: `load_documents` and a generated demo.

`load_documents` is `zoo.data.labelled.load_labelled` with the defaults of document
classification (columns `text` and `label`, seed 1337): every layout of that module
(CSV/TSV/JSON lines, one folder per class, split files, IMDB as a folder or
`.tar.gz`), with the validation and test sets the data lacks held out of its training
data (stratified by label, seeded).

`demo_corpus` generates a small, seeded, multi-sentence corpus whose label depends on a
few key words only, so a model learns it in seconds and its attention maps can be
checked by eye.
"""

import random

from zoo.data import files
from zoo.data.labelled import (
    IMDB_LABELS,
    Documents,
    DocumentSplits,
    encode_labels,
    load_labelled,
    read_class_folder,
    read_imdb,
)

__all__ = [
    "DocumentSplits",
    "Documents",
    "demo_corpus",
    "demo_splits",
    "encode_labels",
    "load_documents",
    "read_class_folder",
    "read_imdb",
]

DEFAULT_SPLIT_SEED = 1337


def load_documents(
    path,
    text_column="text",
    label_column=None,
    seed=DEFAULT_SPLIT_SEED,
    validation_fraction=0.1,
    test_fraction=0.1,
    label_names=None,
    *,
    format=None,
    pattern="*.txt",
    encoding="utf-8",
    skip_unreadable=False,
):
    """`DocumentSplits` of a data set in any layout of `zoo.data.labelled`.

    `text_column` and `label_column` (`None`: `"label"`) name the columns of table
    files (or give 0-based positions without a header row); the other arguments are
    those of `zoo.data.labelled.load_labelled`.
    """
    return load_labelled(
        path,
        text_column,
        "label" if label_column is None else label_column,
        label_names=label_names,
        format=format,
        pattern=pattern,
        encoding=encoding,
        skip_unreadable=skip_unreadable,
        validation_fraction=validation_fraction,
        test_fraction=test_fraction,
        seed=seed,
    )


# --- Demo corpus ---------------------------------------------------------------------

_SUBJECTS = [
    "the film",
    "the story",
    "the cast",
    "the director",
    "the ending",
    "the music",
    "the script",
    "the camera work",
    "the second half",
    "the lead actor",
]
_FILLER = [
    "{s} runs for about two hours",
    "i watched it on a rainy sunday with my brother",
    "{s} takes place in a small town near the sea",
    "there is a long scene in a train station",
    "{s} was shot in the north of the country",
    "my friend had already seen it twice",
    "the cinema was almost empty that evening",
    "{s} reminded me of an old television series",
    "it is based on a novel from the seventies",
    "we bought tickets a week before",
]
_KEY_SENTENCES = {
    "pos": ["{s} was {a} and {a2}", "honestly {s} is {a}", "i found {s} truly {a}"],
    "neg": ["{s} was {a} and {a2}", "honestly {s} is {a}", "i found {s} truly {a}"],
}
_KEY_WORDS = {
    "pos": ["wonderful", "brilliant", "moving", "excellent", "delightful", "superb"],
    "neg": ["boring", "awful", "dull", "terrible", "clumsy", "tedious"],
}


def demo_corpus(num_documents=400, seed=0, min_sentences=3, max_sentences=6):
    """A small, seeded, learnable corpus of multi-sentence "reviews".

    Every document has `min_sentences`..`max_sentences` sentences: neutral filler
    sentences (shared by both classes) and one or two key sentences holding a
    sentiment word ("wonderful", "boring", ...) that alone decides the label
    (`"pos"` or `"neg"`). The key sentence sits at a random position, so a model must
    find it: its sentence attention and the sentiment word's word attention should
    be high. Key sentences use the same templates in both classes, so only the
    sentiment words carry the label.

    Args:
        num_documents: number of documents (balanced classes).
        seed: random seed; the same seed gives the same corpus.
        min_sentences, max_sentences: sentences per document.

    Returns:
        `Documents` with labels `"neg"` / `"pos"`.
    """
    if num_documents < 2:
        raise ValueError(
            f"`num_documents` must be at least 2. Received: num_documents={num_documents!r}"
        )
    if not 1 <= min_sentences <= max_sentences:
        raise ValueError(
            "Expected 1 <= min_sentences <= max_sentences. Received: "
            f"min_sentences={min_sentences!r}, max_sentences={max_sentences!r}"
        )
    rng = random.Random(seed)
    texts, labels = [], []
    for i in range(num_documents):
        label = IMDB_LABELS[i % 2]
        n = rng.randint(min_sentences, max_sentences)
        num_keys = 1 if n < 4 or rng.random() < 0.6 else 2
        sentences = []
        for _ in range(n - num_keys):
            sentences.append(rng.choice(_FILLER).format(s=rng.choice(_SUBJECTS)))
        for _ in range(num_keys):
            a, a2 = rng.sample(_KEY_WORDS[label], 2)
            key = rng.choice(_KEY_SENTENCES[label]).format(
                s=rng.choice(_SUBJECTS), a=a, a2=a2
            )
            sentences.insert(rng.randint(0, len(sentences)), key)
        punct = [rng.choice([".", ".", ".", "!"]) for _ in sentences]
        text = " ".join(
            s[0].upper() + s[1:] + p for s, p in zip(sentences, punct, strict=True)
        )
        texts.append(text)
        labels.append(label)
    order = list(range(num_documents))
    rng.shuffle(order)
    docs = Documents(
        texts, labels, [f"demo document {i}" for i in range(num_documents)]
    )
    return docs.subset(order)


def demo_splits(num_documents=400, seed=0):
    """`DocumentSplits` of `demo_corpus` (80/10/10, seeded)."""
    docs = demo_corpus(num_documents, seed=seed)
    parts, _ = files.seeded_split(len(docs), (0.1, 0.1), seed, strata=docs.labels)
    return DocumentSplits(
        *(docs.subset(part) for part in parts),
        list(IMDB_LABELS),
        f"generated demo corpus: {num_documents} documents, seed {seed}",
    )
