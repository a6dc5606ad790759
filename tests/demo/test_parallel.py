from zoo.demo.parallel import demo_corpus

VERBS = {"sees": "sieht", "likes": "mag", "follows": "folgt", "finds": "findet"}
VERBS["calls"] = "ruft"
WORDS = {"the": "der", "a": "ein", "dog": "hund", "cat": "katze", "bird": "vogel"}
WORDS |= {"man": "mann", "woman": "frau", "child": "kind", "horse": "pferd"}
WORDS |= {"fish": "fisch", "big": "gross", "small": "klein", "red": "rot"}
WORDS |= {"old": "alt", "young": "jung", "happy": "froh"}
NOUNS = {"dog", "cat", "bird", "man", "woman", "child", "horse", "fish"}


def translate(source):
    """The demo grammar by hand: noun phrases det noun adj*, the verb last."""
    words = source.split()[:-1]
    i = next(i for i, w in enumerate(words) if w in VERBS)
    phrases = []
    for phrase in (words[:i], words[i + 1 :]):
        det, *adjectives, noun = phrase
        assert noun in NOUNS and len(adjectives) <= 2
        phrases += [WORDS[det], WORDS[noun], *(WORDS[a] for a in adjectives)]
    return " ".join([*phrases, VERBS[words[i]], "."])


def test_demo_corpus_is_the_reordering_grammar_seeded():
    corpus = demo_corpus(50, seed=1)
    assert len(corpus) == 50 and corpus.report.read == 50
    assert corpus.targets == [translate(s) for s in corpus.sources]
    assert demo_corpus(50, seed=1).sources == corpus.sources
    assert demo_corpus(50, seed=2).sources != corpus.sources
