import numpy as np
import pytest
import tensorflow as tf

from zoo.decoding import greedy_search
from zoo.models.translation.translator import Translator, as_text, translate_corpus

TEXTS = ["the dog sees a cat .", "a big cat .", "", "the dog"]


def test_translate_corpus_batches_by_length_and_keeps_the_input_order():
    batches = []

    def fake_translate(text):
        batches.append([t.decode() for t in text.numpy()])
        return {"translation": tf.strings.upper(text), "n": tf.strings.length(text)}

    texts = ["a b c d e", "a", "a b c", "a b", "a b c d", "x"]
    outputs = translate_corpus(fake_translate, texts, batch_size=2)
    assert [o["translation"].decode() for o in outputs] == [t.upper() for t in texts]
    assert [int(o["n"]) for o in outputs] == [len(t) for t in texts]
    assert batches == [["a", "x"], ["a b", "a b c"], ["a b c d", "a b c d e"]]


def test_greedy_translator_is_the_search_on_the_preprocessed_source(
    translator_model, preprocessor
):
    search = dict(alpha=0.6, beta=0.2)  # both penalties on: the scores use them
    translator = Translator(translator_model, preprocessor, beam_width=1, **search)
    out = translator(tf.constant(TEXTS))
    source_ids = preprocessor.source_ids(tf.constant(TEXTS))
    memory, state, mask = translator_model.encode(source_ids)
    step = translator_model.decoder.step
    search = greedy_search(step, state, memory, mask, 6, **search)
    longest = int(tf.reduce_max(search["lengths"]))
    ids = search["tokens"][:, :longest]
    np.testing.assert_array_equal(out["target_ids"], ids)
    np.testing.assert_array_equal(out["translation"], preprocessor.detokenize(ids))
    np.testing.assert_allclose(out["score"], search["scores"], atol=1e-6)
    assert out["attention"].shape == (4, longest, source_ids.shape[1])
    assert out["source_tokens"].numpy()[1].tolist()[:3] == [b"a", b"big", b"cat"]
    assert out["target_tokens"].shape == (4, longest)
    assert longest <= 6  # preprocessor.max_length bounds the search


def test_translate_texts_matches_the_traced_function(translator_model, preprocessor):
    translator = Translator(translator_model, preprocessor, beam_width=3)
    texts = translator.translate_texts(TEXTS, batch_size=3)
    assert all(isinstance(t, str) for t in texts) and len(texts) == 4
    direct = translator(tf.constant(TEXTS))["translation"].numpy()
    assert texts == [as_text(t) for t in direct]
    # one trace serves every batch size
    assert translator._function.experimental_get_tracing_count() == 1


def test_as_text_and_bad_beam_width(translator_model, preprocessor):
    assert as_text("ä".encode()) == "ä" and as_text(b"\xff") == "\ufffd"
    for bad in (0, 2.0):
        try:
            Translator(translator_model, preprocessor, beam_width=bad)
        except ValueError as error:
            assert f"Received: beam_width={bad!r}" in str(error)
        else:
            raise AssertionError(f"beam_width={bad!r} was accepted")


def test_evaluate_translations_scores_times_and_keeps_examples():
    from zoo.models.translation.translator import evaluate_translations

    calls = []

    def echo(text):  # a perfect "translation" of every other sentence
        calls.append(len(text))
        keep = tf.range(tf.shape(text)[0]) % 2 == 0
        return {"translation": tf.where(keep, text, tf.fill(tf.shape(text), "x"))}

    sources = [f"sentence number {i} is here ." for i in range(10)]
    scores, outputs = evaluate_translations(
        echo, sources, sources, target_lang="en", batch_size=4, examples=2
    )
    assert calls == [2, 4, 4, 2]  # two traced first, then 10 in batches of 4
    assert len(outputs) == 10 and scores["hypotheses"][1] in ("x", sources[1])
    assert 0 < scores["bleu"] < 100 and "bleu_moses_lowercase" in scores
    assert scores["sentences_per_second"] > 0
    assert scores["examples"] == [
        {"source": s, "reference": s, "hypothesis": h}
        for s, h in zip(sources[:2], scores["hypotheses"][:2], strict=True)
    ]
    perfect, _ = evaluate_translations(lambda t: {"translation": t}, sources, sources)
    assert perfect["bleu"] == pytest.approx(100.0)
    assert "bleu_moses_lowercase" not in perfect


def test_evaluate_searches_scores_each_and_reports_the_last():
    from zoo.models.translation.translator import evaluate_searches

    sources = [f"sentence number {i} is here ." for i in range(6)]
    searches = {
        "perfect": lambda t: {"translation": t},
        "constant": lambda t: {"translation": tf.fill(tf.shape(t), "x")},
    }
    lines = []
    metrics, outputs = evaluate_searches(searches, sources, sources, log=lines.append)
    assert list(metrics) == ["perfect", "constant", "search", "bleu"]
    assert metrics["perfect"]["bleu"] == pytest.approx(100.0)
    assert metrics["search"] == "constant"
    assert metrics["bleu"] == metrics["constant"]["bleu"] == pytest.approx(0.0)
    assert "hypotheses" not in metrics["perfect"]
    assert [o["translation"] for o in outputs] == [b"x"] * 6
    assert [line.split(":")[0] for line in lines] == ["perfect", "constant"]
    assert lines[0].startswith("perfect: bleu 100.00, ")
