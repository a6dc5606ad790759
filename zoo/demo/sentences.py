"""A small generated three-class sentiment corpus (negative / neutral / positive).

Each sentence has a subject, a verb, filler phrases and at most one sentiment word at a
random position; the label follows the sentiment word ("ordinary": neutral), so an
attention model has to find one word among several.
"""

import numpy as np

from zoo.data.labelled import LabelledSplits, LabelledTexts

DEMO_LABELS = ("negative", "neutral", "positive")
_POSITIVE = tuple(
    "wonderful brilliant moving delightful superb charming funny gorgeous".split()
)
_NEGATIVE = tuple("dull awful boring tedious clumsy bland painful terrible".split())
_SUBJECTS = tuple(
    "the film, this movie, the story, the cast, the script, the ending, the director 's "
    "work, the soundtrack, the plot, the dialogue".split(", ")
)
_FILLER = tuple(
    "in the end, for most of its running time, at times, on the whole, from start to "
    "finish, in its second half, by any measure, as expected".split(", ")
)
_VERBS = ("is", "seems", "feels", "looks", "turns out")


def demo_splits(num_sentences=1200, seed=0):
    """`LabelledSplits` of `num_sentences` seeded generated sentences (2/3 training,
    1/6 validation, 1/6 test), classes `DEMO_LABELS`."""
    rng = np.random.default_rng(seed)

    def make(n):
        texts, labels = [], []
        for _ in range(n):
            label = int(rng.integers(3))
            parts = [str(rng.choice(_SUBJECTS)), str(rng.choice(_VERBS))]
            parts += map(str, rng.choice(_FILLER, size=int(rng.integers(1, 3))))
            words = {0: _NEGATIVE, 2: _POSITIVE}.get(label)
            word = "ordinary" if words is None else str(rng.choice(words))
            parts.insert(int(rng.integers(2, len(parts) + 1)), word)
            texts.append(" ".join(parts) + " .")
            labels.append(label)
        return LabelledTexts(texts, labels, DEMO_LABELS)

    held_out = num_sentences // 6
    parts = [make(n) for n in (num_sentences - 2 * held_out, held_out, held_out)]
    return LabelledSplits(*parts, "generated demo corpus")
