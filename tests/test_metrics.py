import numpy as np
import pytest

from zoo.metrics import (
    bleu_scores,
    classification_report,
    corpus_bleu,
    format_report,
    moses_bleu,
)


def test_classification_report_hand_computed():
    report = classification_report(
        ["pos", "pos", "neg", "neg", "neg"],
        ["pos", "neg", "neg", "neg", "pos"],
        labels=["neg", "pos"],
    )
    assert report["accuracy"] == pytest.approx(0.6)
    assert report["confusion_matrix"] == [[2, 1], [1, 1]]
    assert report["per_class"]["neg"]["precision"] == pytest.approx(2 / 3)
    assert report["per_class"]["pos"]["recall"] == pytest.approx(0.5)
    assert report["per_class"]["pos"]["f1"] == pytest.approx(0.5)
    assert report["macro_f1"] == pytest.approx((2 / 3 + 0.5) / 2)
    text = format_report(report)
    assert "accuracy" in text and "0.6000" in text and "confusion matrix" in text


def test_classification_report_indices_and_never_predicted_class():
    report = classification_report(
        np.array([0, 1, 2]), [0, 0, 0], labels=["a", "b", "c"]
    )
    assert report["per_class"]["b"] == {
        "precision": 0.0,
        "recall": 0.0,
        "f1": 0.0,
        "support": 1,
    }
    assert report["per_class"]["a"]["precision"] == pytest.approx(1 / 3)


def test_classification_report_errors():
    with pytest.raises(ValueError, match="'zzz'"):
        classification_report(["zzz"], ["a"], labels=["a"])
    with pytest.raises(ValueError, match="len\\(y_pred\\)=2"):
        classification_report(["a"], ["a", "a"], labels=["a"])


def test_corpus_bleu_perfect_and_signature():
    score, signature = corpus_bleu(
        ["the cat sat on the mat ."], ["the cat sat on the mat ."]
    )
    assert score == pytest.approx(100.0)
    assert "tok:13a" in signature and "case:mixed" in signature
    low, sig = corpus_bleu(["The Cat"], [["the cat"]], lowercase=True)
    assert "case:lc" in sig
    assert low == pytest.approx(corpus_bleu(["the cat"], ["the cat"])[0])
    with pytest.raises(ValueError, match="stream of 2"):
        corpus_bleu(["a"], [["a", "b"]])


def test_moses_bleu_lowercases_and_splits_punctuation_like_moses():
    hyp = ["A dog's toy, on the bike."]
    ref = ["the dog's toy is on the bike."]
    score, signature = moses_bleu(hyp, ref, "en")
    # Moses (en) splits "dog's" -> "dog 's" and "toy," -> "toy ,"; scored untouched
    expected, _ = corpus_bleu(
        ["a dog 's toy , on the bike ."],
        ["the dog 's toy is on the bike ."],
        tokenize="none",
    )
    assert score == pytest.approx(expected) and 0 < score < 100
    assert signature.startswith("moses:en|") and "case:lc" in signature
    assert "tok:none" in signature
    assert moses_bleu(["The Dog runs home."], ["the dog runs home ."], "en")[
        0
    ] == pytest.approx(100.0)
    assert (
        moses_bleu(
            ["The Dog runs home."], ["the dog runs home."], "en", lowercase=False
        )[0]
        < 100
    )
    with pytest.raises(ValueError, match="1 hypotheses and 2 references"):
        moses_bleu(hyp, ref * 2, "en")


def test_bleu_scores_cased_lowercased_and_moses():
    hyp, ref = ["The dog runs home."], ["the dog runs home ."]
    scores = bleu_scores(hyp, ref)
    assert sorted(scores) == [
        "bleu",
        "bleu_lowercase",
        "bleu_lowercase_signature",
        "bleu_signature",
    ]
    assert scores["bleu"] == pytest.approx(corpus_bleu(hyp, ref)[0])
    assert scores["bleu"] < 100  # "The" is not "the" in cased BLEU
    assert scores["bleu_lowercase"] == pytest.approx(100.0)
    assert "case:lc" in scores["bleu_lowercase_signature"]
    scores = bleu_scores(hyp, ref, target_lang="en")
    assert scores["bleu_moses_lowercase"] == pytest.approx(100.0)
    assert scores["bleu_moses_lowercase_signature"].startswith("moses:en|")
