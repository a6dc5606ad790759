"""A toy language pair with word reordering, learned in seconds.

The source is English-like SVO with adjectives before nouns; the target is verb-final
(SOV) with adjectives after nouns and its own lexicon, so the alignment is
non-monotonic and visible in attention heat maps.
"""

import random

from zoo.data.parallel import ParallelCorpus, ReadReport

_NOUNS = dict(
    dog="hund", cat="katze", bird="vogel", man="mann", woman="frau", child="kind",
    horse="pferd", fish="fisch",
)  # fmt: skip
_ADJECTIVES = dict(
    big="gross", small="klein", red="rot", old="alt", young="jung", happy="froh"
)
_VERBS = dict(sees="sieht", likes="mag", follows="folgt", finds="findet", calls="ruft")
_DETERMINERS = {"the": "der", "a": "ein"}


def _noun_phrase(rng):
    det = rng.choice(sorted(_DETERMINERS))
    adjectives = rng.sample(sorted(_ADJECTIVES), rng.randint(0, 2))
    noun = rng.choice(sorted(_NOUNS))
    src = [det, *adjectives, noun]
    tgt = [_DETERMINERS[det], _NOUNS[noun], *[_ADJECTIVES[a] for a in adjectives]]
    return src, tgt


def demo_corpus(n=2000, seed=0):
    """`n` seeded pairs (duplicates possible) as a `ParallelCorpus`.

    Sources are `det adj* noun verb det adj* noun .` (5-11 words); the target puts
    the verb last and adjectives after their noun, with a one-to-one lexicon.
    """
    rng = random.Random(seed)
    sources, targets = [], []
    for _ in range(n):
        subj_src, subj_tgt = _noun_phrase(rng)
        obj_src, obj_tgt = _noun_phrase(rng)
        verb = rng.choice(sorted(_VERBS))
        sources.append(" ".join([*subj_src, verb, *obj_src]) + " .")
        targets.append(" ".join([*subj_tgt, *obj_tgt, _VERBS[verb]]) + " .")
    return ParallelCorpus(sources, targets, ReadReport(read=n))
