"""Seq2SeqTextTranslator: fit on sentence pairs, translate, saved, preset, exported."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from tests.models.task_test_utils import run_task_test
from tests.models.translation.tiny import TINY
from zoo.models.translation import (
    Seq2SeqTextTranslator,
    Seq2SeqTranslator,
    Seq2SeqTranslatorPreprocessor,
)
from zoo.models.translation.masked_sparse_crossentropy import MaskedSparseCrossentropy
from zoo.models.translation.translation_dataset import translation_dataset
from zoo.text.subword import RESERVED_TOKENS

# A tiny parallel corpus (word for word, German word order kept English).
SOURCES = [
    "the dog sees a cat .",
    "a big cat .",
    "the cat sees a dog .",
    "a big dog .",
    "the dog .",
    "a cat sees the big dog .",
]
TARGETS = [
    "der hund sieht ein katze .",
    "ein gross katze .",
    "der katze sieht ein hund .",
    "ein gross hund .",
    "der hund .",
    "ein katze sieht der gross hund .",
]
TEXTS = ["the dog sees a cat .", "a big dog .", ""]


def make_task(max_length=8, beam_width=3, **kwargs):
    """A tiny task; both penalties on, so the searches exercise them."""
    keras.utils.set_random_seed(1)
    pre = Seq2SeqTranslatorPreprocessor(max_length=max_length)
    pre.adapt(SOURCES * 4, TARGETS * 4, vocab_size=60)
    backbone = Seq2SeqTranslator(pre.source_vocab_size, pre.target_vocab_size, **TINY)
    kwargs = {"alpha": 0.6, "beta": 0.2, **kwargs}
    return Seq2SeqTextTranslator(backbone, pre, beam_width=beam_width, **kwargs)


def _rows(inputs, labels):
    """Each pair's `(source ids, decoder input, labels)` without padding."""
    rows = set()
    for s, t, y in zip(
        inputs["source_ids"].numpy(),
        inputs["target_ids"].numpy(),
        labels.numpy(),
        strict=True,
    ):
        n = int((y != 0).sum())
        assert (t[n:] == 0).all() and (y[n:] == 0).all()
        rows.add((tuple(s[s != 0]), tuple(t[:n]), tuple(y[:n])))
    return rows


def test_task_contract(tmp_path):
    run_task_test(
        make_task(), SOURCES * 4, TARGETS * 4, TEXTS, tmp_path, method="translate"
    )


def test_pairs_are_encoded_as_the_recipes_training_batches():
    task = make_task()
    inputs, labels = task.preprocess_samples(tf.constant(SOURCES), tf.constant(TARGETS))
    corpus = type("Corpus", (), {"sources": SOURCES, "targets": TARGETS})
    recipe = translation_dataset(corpus, task.preprocessor, batch_size=1)
    expected = set()
    for x, y in recipe:
        expected |= _rows(x, y)
    assert _rows(inputs, labels) == expected and len(expected) == len(SOURCES)
    first = inputs["target_ids"].numpy()[:, 0]
    assert first.tolist() == [RESERVED_TOKENS.index("[START]")] * len(SOURCES)
    # the task's loss is the recipe's: on the raw pairs, and on the batches the
    # recipe encodes (a dataset of ids is fit and evaluated as it is)
    encoded = tf.data.Dataset.from_tensors((inputs, labels))
    expected = keras.ops.convert_to_numpy(
        MaskedSparseCrossentropy(0.1)(labels, task(inputs))
    )
    np.testing.assert_allclose(
        task.evaluate(SOURCES, TARGETS, batch_size=len(SOURCES), verbose=0),
        expected,
        rtol=1e-5,
    )
    np.testing.assert_allclose(task.evaluate(encoded, verbose=0), expected, rtol=1e-5)


def test_fit_learns_the_corpus_from_a_dataset_of_pairs():
    task = make_task()
    # a larger step and no label smoothing than the defaults: seconds, not minutes
    task.compile(
        optimizer=keras.optimizers.Adam(0.02, clipnorm=5.0),
        loss=MaskedSparseCrossentropy(),
        jit_compile=False,
    )
    pairs = tf.data.Dataset.from_tensor_slices((SOURCES * 4, TARGETS * 4))
    history = task.fit(pairs.shuffle(24, seed=0).batch(8), epochs=30, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < 0.2 * losses[0], losses
    translations = task.translate(SOURCES)
    right = sum(
        got.replace(" ", "") == want.replace(" ", "")
        for got, want in zip(translations, TARGETS, strict=True)
    )
    assert right >= 4, translations
    assert task.predict(SOURCES, verbose=0) == translations  # greedy, as translate


def test_validation_pairs_and_datasets_evaluate_alike():
    task = make_task()
    history = task.fit(
        SOURCES * 4,
        TARGETS * 4,
        validation_data=(SOURCES, TARGETS),
        batch_size=8,
        epochs=1,
        verbose=0,
    )
    loss = task.evaluate(SOURCES, TARGETS, verbose=0)
    np.testing.assert_allclose(history.history["val_loss"][0], loss, rtol=1e-5)
    pairs = tf.data.Dataset.from_tensor_slices((SOURCES, TARGETS))
    np.testing.assert_allclose(task.evaluate(pairs, verbose=0), loss, rtol=1e-5)
    assert task.predict(pairs) == task.translate(SOURCES)


def test_translate_equals_the_exports_signatures(tmp_path):
    from zoo.export import load_manifest

    task = make_task()
    task.fit(SOURCES * 4, TARGETS * 4, epochs=2, verbose=0)
    version = task.export(tmp_path, warmup_texts=SOURCES[:2])
    metadata = load_manifest(version)["metadata"]
    assert metadata["decoding"]["serving_default"]["beam_width"] == 3
    served = tf.saved_model.load(version).signatures
    loaded = keras.saving.load_model(version + ".keras")
    assert isinstance(loaded, Seq2SeqTextTranslator)
    assert isinstance(loaded.backbone, Seq2SeqTranslator)
    assert loaded.beam_width == 3
    text = tf.constant(TEXTS)
    for signature, beam_width in (("translate_greedy", None), ("serving_default", 3)):
        out = served[signature](text=text)
        expected = [t.decode() for t in out["translation"].numpy()]
        assert task.translate(TEXTS, beam_width=beam_width) == expected
        assert loaded.translate(TEXTS, beam_width=beam_width) == expected
        rows = task.translate(TEXTS, beam_width=beam_width, return_attention=True)
        for i, row in enumerate(rows):
            assert row["translation"] == expected[i]
            np.testing.assert_allclose(row["score"], out["score"][i], atol=1e-4)
            ts, tt = len(row["source_tokens"]), len(row["target_tokens"])
            assert row["attention"].shape == (tt, ts)
            np.testing.assert_allclose(
                row["attention"], out["attention"][i, :tt, :ts], atol=1e-5
            )
            if ts:
                np.testing.assert_allclose(row["attention"].sum(-1), 1.0, atol=1e-4)
    # the verifier's Keras check feeds `preprocess` to the task's backbone
    inputs = served["preprocess"](text=text)
    np.testing.assert_allclose(
        loaded.backbone(dict(inputs))["logits"],
        served["teacher_forced"](text=text)["logits"],
        atol=1e-4,
    )


def test_the_serving_module_serves_the_tasks_searches(translator_model, preprocessor):
    task = Seq2SeqTextTranslator(
        translator_model, preprocessor, beam_width=4, beta=0.0, compile=False
    )
    module = task.serving_module()
    assert module.model is translator_model
    assert (task.beam_width, task.alpha, task.beta) == (4, 1.0, 0.0)
    assert task.preprocessor.max_length == preprocessor.max_length == 6
    serve = module.signatures()["serving_default"]
    served = serve(tf.constant(["the dog ."]))["translation"].numpy()
    assert task.translate(["the dog ."], beam_width=4) == [served[0].decode()]


def test_adapt_learns_both_vocabularies_and_the_longest_length():
    pre = Seq2SeqTranslatorPreprocessor(max_length=None)
    source, target = pre.adapt(SOURCES * 4, TARGETS * 4, vocab_size=60)
    assert source[:4] == target[:4] == RESERVED_TOKENS
    assert "dog" in source and "hund" in target and "hund" not in source
    assert (pre.source_vocab_size, pre.target_vocab_size) == (len(source), len(target))
    assert pre.max_length == 7  # "a cat sees the big dog ." in whole words
    assert pre.get_config()["max_length"] == 7
    ids = pre(["the dog ."])["source_ids"].numpy()
    assert ids.tolist() == [[source.index(w) for w in ("the", "dog", ".")]]


def test_call_is_source_ids_and_a_layer_needs_its_vocabularies(
    preprocessor, translator_model
):
    pre = preprocessor
    assert (pre.max_length, pre.lowercase) == (6, False)
    text = tf.constant(["the dog sees a cat .", "a big cat ."])
    np.testing.assert_array_equal(pre(text)["source_ids"], pre.source_ids(text))
    restored = Seq2SeqTranslatorPreprocessor.from_config(pre.get_config())
    assert restored.max_length == 6
    with pytest.raises(ValueError, match="has no vocabulary yet"):
        restored(text)  # Keras adds the layer's call arguments to the message
    for call in (
        lambda: restored.source_vocab_size,
        lambda: Seq2SeqTextTranslator(translator_model, restored).serving_module(),
        lambda: Seq2SeqTextTranslator(translator_model, restored).translate(["a"]),
    ):
        with pytest.raises(ValueError, match="has no vocabulary yet") as info:
            call()
        assert "\n" not in str(info.value)
    # vocabularies without a length: refused naming it (adapt learns it)
    with pytest.raises(ValueError, match="Received: max_length=None"):
        Seq2SeqTranslatorPreprocessor(assets=pre.asset_paths)


def test_bad_inputs_are_one_line_errors():
    task = make_task()
    cases = [
        (lambda: task.translate("the dog ."), "not one string"),
        (lambda: task.translate(["the dog .", 5]), r"texts\[1\] must be a string"),
        (lambda: task.translate(SOURCES, beam_width=0), "beam_width=0"),
        (lambda: task.fit(SOURCES, verbose=0), "needs the target texts"),
        (lambda: task.fit(SOURCES, [1] * 6, verbose=0), r"y\[0\] must be a string"),
        (lambda: task.fit(SOURCES, TARGETS[:2], verbose=0), "same number of examples"),
        (lambda: task.evaluate(SOURCES, "der hund ."), "not one string"),
        (lambda: task.predict(SOURCES, steps=2), "takes no Keras predict options"),
        (lambda: task.fit(tf.data.Dataset.from_tensor_slices(SOURCES)), "y=None"),
        (
            lambda: task.fit(
                SOURCES,
                TARGETS,
                validation_data=tf.data.Dataset.from_tensor_slices(SOURCES).batch(2),
            ),
            r"fit: validation_data needs a tf.data.Dataset of \(source, target\)",
        ),
        (
            lambda: Seq2SeqTextTranslator(task.backbone.decoder, task.preprocessor),
            "must be a Seq2SeqTranslator",
        ),
        (
            lambda: Seq2SeqTextTranslator(
                Seq2SeqTranslator(5, 5, **TINY), task.preprocessor
            ),
            "vocabulary sizes must be the network's",
        ),
        (lambda: Seq2SeqTranslatorPreprocessor(max_length=0), "max_length=0"),
        (
            lambda: Seq2SeqTranslatorPreprocessor().adapt(SOURCES, TARGETS[:3]),
            "6 sources, 3 targets",
        ),
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=message) as info:
            call()
        assert "\n" not in str(info.value), str(info.value)
    assert task.translate([]) == []


def test_default_compile_is_the_recipes_optimizer_with_its_options():
    from zoo.fastpath.fused_adam import FusedAdam

    task = make_task()  # compiled with the defaults
    assert type(task.optimizer) is FusedAdam and task.optimizer.clipnorm == 5.0
    assert float(task.optimizer.learning_rate) == pytest.approx(2e-3)
    assert task.loss.label_smoothing == 0.1
    # the recipe passes its rate schedule, weight averaging and XLA switch
    schedule = keras.optimizers.schedules.ExponentialDecay(0.01, 10, 0.5)
    task.default_compile(
        schedule, label_smoothing=0.2, jit_compile=True, use_ema=True, ema_momentum=0.9
    )
    task.optimizer.iterations.assign(10)
    assert float(task.optimizer.learning_rate) == pytest.approx(0.005)  # scheduled
    assert task.optimizer.use_ema and task.optimizer.ema_momentum == 0.9
    assert task.loss.label_smoothing == 0.2


def test_choose_alpha_sets_the_best_validation_length_penalty():
    from zoo.metrics import corpus_bleu

    task = make_task(beam_width=3)
    assert task.translator(3).alpha == 0.6
    lines = []
    scores = task.choose_alpha(SOURCES, TARGETS, [0.0, 2.0], log=lines.append)
    assert list(scores) == [0.0, 2.0]
    assert task.alpha == max(scores, key=scores.get)  # ties: the earlier
    assert lines[-1].startswith(f"length penalty: alpha {task.alpha} (best validation")
    # the task's searches use the chosen penalty (not the one traced before)
    assert task.translator(3).alpha == task.alpha
    hypotheses = task.translate(SOURCES, beam_width=3)
    assert scores[task.alpha] == pytest.approx(corpus_bleu(hypotheses, TARGETS)[0])
    # greedy: no search is run, the penalty changes no translation
    greedy = make_task(beam_width=1)
    assert greedy.choose_alpha(SOURCES, TARGETS, [0.6, 2.0], log=None) == {}
    assert greedy.alpha == 1.0
    greedy.preprocessor = None
    with pytest.raises(ValueError, match="choose_alpha needs the task's preprocessor"):
        greedy.choose_alpha(SOURCES, TARGETS, [0.6])
