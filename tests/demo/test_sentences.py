from zoo.demo.sentences import DEMO_LABELS, demo_splits


def test_demo_corpus_is_deterministic_and_balanced():
    a, b = demo_splits(seed=1), demo_splits(seed=1)
    assert a.train.texts == b.train.texts and a.test.texts == b.test.texts
    assert a.train.texts != demo_splits(seed=2).train.texts
    assert a.label_names == DEMO_LABELS and a.description == "generated demo corpus"
    assert a.sizes() == {"train": 800, "validation": 200, "test": 200}
    assert a.train.counts() == {"negative": 261, "neutral": 277, "positive": 262}
    # the label is carried by one sentiment word
    for text, label in zip(a.test.texts[:50], a.test.labels[:50], strict=True):
        assert ("ordinary" in text) == (label == 1)
