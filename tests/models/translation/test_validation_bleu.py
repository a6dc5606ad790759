import types

import pytest

from zoo.metrics import corpus_bleu
from zoo.models.translation import ValidationBleu


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
