import numpy as np

from zoo.demo.documents import demo_corpus, demo_splits


def test_demo_corpus_is_seeded_balanced_and_keyword_labelled():
    docs = demo_corpus(60, seed=5)
    assert docs.texts == demo_corpus(60, seed=5).texts
    assert docs.texts != demo_corpus(60, seed=6).texts
    assert docs.counts() == {"neg": 30, "pos": 30}
    for text, label in zip(docs.texts, docs.names, strict=True):
        assert text.count(".") + text.count("!") >= 3  # multi-sentence
        lower = text.lower()
        pos = any(w in lower for w in ("wonderful", "brilliant", "superb", "moving"))
        neg = any(w in lower for w in ("boring", "awful", "dull", "terrible"))
        assert (pos, neg) != (True, True)
        if pos or neg:
            assert label == ("pos" if pos else "neg")
    splits = demo_splits(50, seed=1)
    assert splits.label_names == ("neg", "pos")
    assert len(splits.train) == 40
    assert splits.test.counts() == {"neg": 2, "pos": 3}
    assert splits.description == "generated demo corpus: 50 documents, seed 1"
    texts, labels = splits.train  # what `fit` takes
    assert texts == splits.train.texts and labels.dtype == np.int32
