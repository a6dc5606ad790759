import types

import pytest

from zoo.metrics import corpus_bleu
from zoo.models.translation.validation_bleu import ValidationBleu


def test_adds_val_bleu_of_the_translations_to_the_logs():
    references = ["a dog runs .", "the cat sleeps on the mat ."]
    epochs = [["a cat .", "the dog ."], ["a dog runs .", "the cat sleeps on a mat ."]]
    calls = []

    def translate_texts(texts):
        calls.append(list(texts))
        return epochs[len(calls) - 1]

    translator = types.SimpleNamespace(translate_texts=translate_texts)
    lines = []
    callback = ValidationBleu(translator, ["x", "y"], references, log=lines.append)
    for epoch in range(2):
        logs = {"loss": 1.0}
        callback.on_epoch_end(epoch, logs)
        expected, _ = corpus_bleu(epochs[epoch], references)
        assert logs == {"loss": 1.0, "val_bleu": pytest.approx(expected)}
    assert calls == [["x", "y"], ["x", "y"]]
    assert callback.scores[0] < callback.scores[1] < 100
    assert lines[1] == f"epoch 2: validation BLEU (greedy, cased) {expected:.2f}"


def test_sources_and_references_must_align():
    with pytest.raises(ValueError, match="2 sources and 1 references"):
        ValidationBleu(object(), ["a", "b"], ["c"])


def test_choose_on_validation_takes_the_best_bleu_and_the_earlier_on_ties():
    import tensorflow as tf

    from zoo.models.translation.validation_bleu import choose_on_validation

    references = ["a dog runs .", "the cat sleeps on the mat ."]
    outputs = {
        "empty": ["", ""],
        "close": ["a dog runs .", "the cat sleeps on a mat ."],
        "exact": list(references),
        "exact again": list(references),
    }

    def search(key):
        def translate(text):  # the validation sources are the references here
            by_source = dict(zip(references, outputs[key], strict=True))
            return {
                "translation": tf.constant(
                    [by_source[t.decode()] for t in text.numpy()]
                )
            }

        return translate

    lines = []
    best, scores = choose_on_validation(
        {key: search(key) for key in outputs},
        references,
        references,
        log=lines.append,
        name=str.upper,
    )
    assert best == "exact"  # "exact again" ties and comes later
    for key, hypotheses in outputs.items():
        assert scores[key] == pytest.approx(corpus_bleu(hypotheses, references)[0])
    assert scores["empty"] < scores["close"] < scores["exact"]
    assert scores["exact"] == pytest.approx(100.0)
    assert lines[1] == f"validation BLEU (cased) {scores['close']:.2f}: CLOSE"
    with pytest.raises(ValueError, match="`searches` is empty"):
        choose_on_validation({}, references, references)


def test_choose_alpha_scores_each_beam_search():
    from tests.models.translation.test_seq2seq_text_translator import (
        SOURCES,
        TARGETS,
        make_task,
    )

    task = make_task(beam_width=3)
    alphas = [0.0, 2.0]
    scores = task.choose_alpha(SOURCES, TARGETS, alphas, log=None)
    assert list(scores) == alphas
    assert scores[task.alpha] == max(scores.values())
    for a in alphas:
        task.alpha = a
        hypotheses = task.translate(SOURCES, beam_width=3)
        assert scores[a] == pytest.approx(corpus_bleu(hypotheses, TARGETS)[0])
    # greedy (no search): tests/models/translation/test_seq2seq_text_translator.py


def test_length_penalties_of_a_command_line():
    from zoo.models.translation.validation_bleu import (
        non_negative_or_auto,
        number_or_auto,
        penalty_list,
    )

    assert penalty_list("0.6, 1,2.0") == [0.6, 1.0, 2.0]
    with pytest.raises(ValueError, match="not a number: 'x'"):
        penalty_list("0.6,x")
    with pytest.raises(ValueError, match="every value must be a finite number >= 0"):
        penalty_list("0.6,inf")
    assert (number_or_auto("auto"), number_or_auto("0.5")) == ("auto", 0.5)
    non_negative_or_auto("auto")
    non_negative_or_auto(0.0)
    with pytest.raises(ValueError, match="must be >= 0 or auto"):
        non_negative_or_auto(-0.1)
