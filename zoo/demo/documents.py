"""A small generated corpus of multi-sentence "reviews" (positive / negative).

Every document has neutral filler sentences (shared by both classes) and one or two
key sentences holding a sentiment word ("wonderful", "boring", ...) that alone decides
the label. The key sentences sit at random positions and use the same templates in
both classes, so a model must find them: its sentence attention and the sentiment
word's word attention should be high. It is learned in seconds.
"""

import random

from zoo.data import files
from zoo.data.labelled import IMDB_LABELS, LabelledSplits, LabelledTexts

_SUBJECTS = (
    "the film, the story, the cast, the director, the ending, the music, the script, "
    "the camera work, the second half, the lead actor"
).split(", ")
_FILLER = (
    "{s} runs for about two hours, i watched it on a rainy sunday with my brother, "
    "{s} takes place in a small town near the sea, "
    "there is a long scene in a train station, {s} was shot in the north of the country, "
    "my friend had already seen it twice, the cinema was almost empty that evening, "
    "{s} reminded me of an old television series, "
    "it is based on a novel from the seventies, we bought tickets a week before"
).split(", ")
_KEY_SENTENCES = [
    "{s} was {a} and {a2}",
    "honestly {s} is {a}",
    "i found {s} truly {a}",
]
_KEY_WORDS = {
    "pos": ["wonderful", "brilliant", "moving", "excellent", "delightful", "superb"],
    "neg": ["boring", "awful", "dull", "terrible", "clumsy", "tedious"],
}


def demo_corpus(num_documents=400, seed=0):
    """`num_documents` seeded documents (balanced classes `"neg"`, `"pos"`) of 3 to
    6 sentences each, as `LabelledTexts`."""
    if num_documents < 2:
        received = f"Received: num_documents={num_documents!r}"
        raise ValueError(f"`num_documents` must be at least 2. {received}")
    rng = random.Random(seed)
    texts, labels = [], [IMDB_LABELS[i % 2] for i in range(num_documents)]
    for label in labels:
        n = rng.randint(3, 6)
        num_keys = 1 if n < 4 or rng.random() < 0.6 else 2
        sentences = [
            rng.choice(_FILLER).format(s=rng.choice(_SUBJECTS))
            for _ in range(n - num_keys)
        ]
        for _ in range(num_keys):
            a, a2 = rng.sample(_KEY_WORDS[label], 2)
            key = rng.choice(_KEY_SENTENCES).format(s=rng.choice(_SUBJECTS), a=a, a2=a2)
            sentences.insert(rng.randint(0, len(sentences)), key)
        punct = [rng.choice([".", ".", ".", "!"]) for _ in sentences]
        pairs = zip(sentences, punct, strict=True)
        texts.append(" ".join(s[0].upper() + s[1:] + p for s, p in pairs))
    order = list(range(num_documents))
    rng.shuffle(order)
    sources = [f"demo document {i}" for i in range(num_documents)]
    return LabelledTexts.encode(texts, labels, sources, IMDB_LABELS).subset(order)


def demo_splits(num_documents=400, seed=0):
    """`LabelledSplits` of `demo_corpus` (80/10/10, seeded)."""
    docs = demo_corpus(num_documents, seed=seed)
    parts, _ = files.seeded_split(len(docs), (0.1, 0.1), seed, strata=docs.names)
    return LabelledSplits(
        *(docs.subset(part) for part in parts),
        f"generated demo corpus: {num_documents} documents, seed {seed}",
    )
