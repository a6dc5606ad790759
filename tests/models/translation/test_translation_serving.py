import numpy as np
import pytest
import tensorflow as tf

from zoo.export.serving_module import BATCH_CHECK_SCOPE
from zoo.models.translation import Seq2SeqTextTranslator
from zoo.models.translation.translator import Translator

TEXTS = ["the dog sees a cat .", "a big cat ."]

# The export's contract: signature -> (outputs: name -> (dtype, rank)).
SIGNATURES = {
    "serving_default": {
        "translation": (tf.string, 1),
        "score": (tf.float32, 1),
        "attention": (tf.float32, 3),
        "source_tokens": (tf.string, 2),
        "target_tokens": (tf.string, 2),
    },
    "preprocess": {"source_ids": (tf.int32, 2), "target_ids": (tf.int32, 2)},
    "teacher_forced": {"logits": (tf.float32, 3)},
}
SIGNATURES["translate_greedy"] = SIGNATURES["serving_default"]


def _task(translator_model, preprocessor, **kwargs):
    return Seq2SeqTextTranslator(
        translator_model, preprocessor, compile=False, **kwargs
    )


@pytest.fixture
def task(translator_model, preprocessor):
    return _task(translator_model, preprocessor, beam_width=3)


@pytest.fixture
def module(task):
    return task.serving_module().signatures()


def test_signatures_keep_their_names_inputs_and_outputs(task):
    signatures = task.serving_module().signatures()
    assert list(signatures) == [
        "serving_default", "translate_greedy", "preprocess", "teacher_forced"
    ]  # fmt: skip
    assert sorted(signatures) == sorted(SIGNATURES)
    for name, outputs in SIGNATURES.items():
        concrete = signatures[name].get_concrete_function()
        args, kwargs = concrete.structured_input_signature
        assert args == (tf.TensorSpec([None], tf.string, name="text"),) and not kwargs
        got = {
            key: (spec.dtype, spec.shape.rank)
            for key, spec in concrete.structured_outputs.items()
        }
        assert got == outputs, name
        # every signature bounds the request's batch first (ServingModule.check_batch)
        scopes = {op.name.split("/")[0] for op in concrete.graph.get_operations()}
        assert BATCH_CHECK_SCOPE in scopes, name


def test_outputs_match_the_translators_and_the_keras_model(
    module, translator_model, preprocessor
):
    text = tf.constant(TEXTS)
    beam = Translator(translator_model, preprocessor, beam_width=3)(text)
    greedy = Translator(translator_model, preprocessor, beam_width=1)(text)
    served = module["serving_default"](text)
    assert "target_ids" not in served
    for key in ("translation", "score", "attention", "target_tokens"):
        np.testing.assert_array_equal(served[key], beam[key])
        np.testing.assert_array_equal(
            module["translate_greedy"](text)[key], greedy[key]
        )
    inputs = module["preprocess"](text)
    np.testing.assert_array_equal(inputs["source_ids"], preprocessor.source_ids(text))
    np.testing.assert_array_equal(
        inputs["target_ids"], preprocessor.decoder_inputs(greedy["target_ids"])
    )
    logits = module["teacher_forced"](text)["logits"]
    np.testing.assert_allclose(logits, translator_model(inputs)["logits"], atol=1e-5)
    # teacher forcing on the greedy translation picks the greedy tokens again
    ids = greedy["target_ids"].numpy()
    picked = logits.numpy().argmax(-1)
    for row in range(len(TEXTS)):
        n = int((ids[row] != 0).sum())
        ended = list(ids[row]).index(3) if 3 in ids[row] else n
        np.testing.assert_array_equal(picked[row, :ended], ids[row, :ended])


def test_requests_over_the_batch_limit_are_refused(translator_model, preprocessor):
    task = _task(translator_model, preprocessor)
    greedy = task.serving_module(max_batch_size=2).signatures()["translate_greedy"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="max_batch_size=2"):
        greedy(tf.constant(["a", "b", "c"]))
    assert greedy(tf.constant(TEXTS))["translation"].shape == (2,)


@pytest.mark.slow
def test_export_reloads_with_the_vocabularies_as_assets(task, module, tmp_path):
    from zoo.export import load_manifest
    from zoo.models.translation import Seq2SeqTranslatorPreprocessor

    version_dir = task.export(str(tmp_path), warmup_texts=TEXTS)
    assert version_dir == str(tmp_path / "translation" / "1")
    assets = sorted(
        p.name for p in (tmp_path / "translation" / "1" / "assets").iterdir()
    )
    assert assets == ["source_vocabulary.txt", "target_vocabulary.txt"]
    metadata = load_manifest(version_dir)["metadata"]
    assert metadata["decoding"]["serving_default"]["beam_width"] == 3
    assert metadata["model"]["decoder_units"] == 16
    # the preprocessor and the model come back from the export
    pre = Seq2SeqTranslatorPreprocessor.from_export(version_dir)
    assert (pre.max_length, pre.lowercase, pre.target_vocab_size) == (6, False, 11)
    text = tf.constant(TEXTS)
    np.testing.assert_array_equal(
        pre.source_ids(text), task.preprocessor.source_ids(text)
    )
    # VERSION.keras is the task on raw text; its backbone is the network
    import keras

    from zoo.models.translation import Seq2SeqTranslator

    restored = keras.saving.load_model(version_dir + ".keras")
    assert isinstance(restored, Seq2SeqTextTranslator) and restored.beam_width == 3
    assert isinstance(restored.backbone, Seq2SeqTranslator)
    served = module["serving_default"](tf.constant(TEXTS))["translation"].numpy()
    assert restored.translate(TEXTS, beam_width=3) == [t.decode() for t in served]
    loaded = tf.saved_model.load(version_dir)
    for name in ("serving_default", "teacher_forced"):
        got = loaded.signatures[name](text=text)
        expected = module[name](text)
        assert sorted(got) == sorted(expected)
        for key in expected:
            if expected[key].dtype == tf.string:
                np.testing.assert_array_equal(got[key], expected[key])
            else:
                np.testing.assert_allclose(got[key], expected[key], atol=1e-5)
