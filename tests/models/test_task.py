"""Task: preprocessed datasets, `from_preset` keyword arguments (keras-hub's) and the
TensorFlow-only methods."""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from tests.models.han import test_han_text_classifier as han
from tests.models.memn2n import test_memn2n_question_answerer as memn2n
from tests.models.sentence_embedder import test_self_attentive_text_classifier as sa
from tests.models.translation import test_seq2seq_text_translator as translation
from zoo.errors import ConfigError, ZooError
from zoo.models.han import HANTextClassifier
from zoo.models.sentence_embedder import SelfAttentiveTextClassifier, SentenceEmbedder
from zoo.models.task import Task, check_tensorflow_backend
from zoo.models.translation import (
    Seq2SeqTextTranslator,
    Seq2SeqTranslator,
    Seq2SeqTranslatorPreprocessor,
)

TEXTS = ["What a wonderful film.", "Boring. I hated it."]


# --- A tf.data.Dataset of preprocessed batches is used as it is ------------------------


def _twin_tasks():
    """Two HAN tasks with the same vocabulary and the same initial weights."""
    first, second = han.make_task(), han.make_task()
    second.set_weights(first.get_weights())
    return first, second


def _fit(task, ds):
    keras.utils.set_random_seed(7)
    history = task.fit(ds, validation_data=ds, epochs=2, verbose=0).history
    return history, task.evaluate(ds, verbose=0)


def test_a_preprocessed_dataset_trains_and_predicts_as_raw_text_does():
    raw_task, ids_task = _twin_tasks()
    raw = tf.data.Dataset.from_tensor_slices((han.TEXTS, han.LABELS)).batch(8)
    label_ids = [raw_task.label_names.index(label) for label in han.LABELS]
    token_ids = raw_task.preprocessor(han.TEXTS)["token_ids"]
    ids = tf.data.Dataset.from_tensor_slices((token_ids, label_ids)).batch(8)
    assert ids_task._pipeline(ids) is ids  # used as it is, no preprocessing map

    raw_history, raw_scores = _fit(raw_task, raw)
    ids_history, ids_scores = _fit(ids_task, ids)

    assert sorted(ids_history) == ["accuracy", "loss", "val_accuracy", "val_loss"]
    for key, values in raw_history.items():
        np.testing.assert_allclose(ids_history[key], values, rtol=1e-6, err_msg=key)
    np.testing.assert_allclose(ids_scores, raw_scores, rtol=1e-6)
    expected = raw_task.predict(TEXTS, verbose=0)
    assert expected.shape == (2, 2)
    assert not np.allclose(expected, han.make_task().predict(TEXTS, verbose=0))
    features = tf.data.Dataset.from_tensor_slices(
        raw_task.preprocessor(TEXTS)["token_ids"]
    ).batch(2)
    np.testing.assert_allclose(ids_task.predict(TEXTS, verbose=0), expected, atol=1e-6)
    np.testing.assert_allclose(
        ids_task.predict(features, verbose=0), expected, atol=1e-6
    )


def test_ids_with_class_names_have_only_their_targets_mapped():
    task = han.make_task()
    token_ids = task.preprocessor(han.TEXTS[:4])["token_ids"]
    ds = tf.data.Dataset.from_tensor_slices((token_ids, han.LABELS[:4])).batch(4)
    x, y = next(iter(task._pipeline(ds)))
    np.testing.assert_array_equal(x.numpy(), token_ids.numpy())
    assert y.numpy().tolist() == [1, 1, 0, 0]
    raw = tf.data.Dataset.from_tensor_slices((han.TEXTS[:4], han.LABELS[:4])).batch(4)
    np.testing.assert_allclose(
        task.evaluate(ds, verbose=0), task.evaluate(raw, verbose=0), rtol=1e-6
    )


# --- from_preset ---------------------------------------------------------------------


def _saved_preset(task, path):
    """Gives every weight of `task`'s backbone a value no initialiser gives (so a
    weight loaded from the preset is told apart from a fresh one), saves the preset
    and returns the weights it holds."""
    rng = np.random.default_rng(0)
    for v in task.backbone.weights:
        v.assign(rng.uniform(0.5, 1.0, v.shape).astype(v.dtype))
    task.save_to_preset(path)
    return [keras.ops.convert_to_numpy(v) for v in task.backbone.weights]


def _head_and_rest(backbone, head_layer, weights=None):
    """`(head weights, other weights)` of `backbone` (or of `weights`, its saved
    values in the same order) as NumPy arrays."""
    head = {id(v) for v in head_layer.weights}
    values = weights or [keras.ops.convert_to_numpy(v) for v in backbone.weights]
    pairs = list(zip(backbone.weights, values, strict=True))
    return (
        [a for v, a in pairs if id(v) in head],
        [a for v, a in pairs if id(v) not in head],
    )


def test_num_classes_builds_a_new_head_on_the_saved_backbone(tmp_path):
    task = han.make_task()
    saved = _saved_preset(task, tmp_path / "preset")
    _, saved_rest = _head_and_rest(task.backbone, task.backbone.classifier, saved)

    loaded = HANTextClassifier.from_preset(tmp_path / "preset", num_classes=3)

    assert loaded.predict(TEXTS, verbose=0).shape == (2, 3)
    assert loaded.backbone.num_classes == 3
    assert loaded.label_names == ["0", "1", "2"]
    head, rest = _head_and_rest(loaded.backbone, loaded.backbone.classifier)
    assert [a.shape for a in head] == [(8, 3), (3,)]  # 2u = 8 -> 3 classes
    assert np.all(head[1] == 0.0)  # a fresh Dense: zero bias
    assert head[0].min() < 0.5  # Glorot on (8, 3), not the saved 0.5 .. 1
    assert len(rest) == len(saved_rest) > 0
    for got, expected in zip(rest, saved_rest, strict=True):
        np.testing.assert_array_equal(got, expected)
    # The new task trains and predicts names of its own.
    named = HANTextClassifier.from_preset(
        tmp_path / "preset", num_classes=3, label_names=["a", "b", "c"]
    )
    assert named.label_names == ["a", "b", "c"]
    assert set(named.predict_labels(TEXTS)) <= {"a", "b", "c"}


def test_the_same_num_classes_keeps_the_saved_head_and_labels(tmp_path):
    task = han.make_task()
    saved = _saved_preset(task, tmp_path / "preset")
    loaded = HANTextClassifier.from_preset(tmp_path / "preset", num_classes=2)
    assert loaded.label_names == ["neg", "pos"]
    for got, expected in zip(loaded.backbone.get_weights(), saved, strict=True):
        np.testing.assert_array_equal(got, expected)


def test_num_classes_on_the_self_attentive_classifier_keeps_the_encoder(tmp_path):
    task = sa.make_task()
    saved = _saved_preset(task, tmp_path / "preset")
    _, saved_rest = _head_and_rest(task.backbone, task.backbone.output_dense, saved)

    loaded = SelfAttentiveTextClassifier.from_preset(tmp_path / "preset", num_classes=4)

    assert loaded.predict(sa.PREDICT, verbose=0).shape == (3, 4)
    head, rest = _head_and_rest(loaded.backbone, loaded.backbone.output_dense)
    assert [a.shape for a in head] == [(8, 4), (4,)]
    assert np.all(head[1] == 0.0)
    assert head[0].min() < 0.5
    assert len(rest) == len(saved_rest) > len(loaded.backbone.encoder.weights) > 0
    for got, expected in zip(rest, saved_rest, strict=True):
        np.testing.assert_array_equal(got, expected)


def test_num_classes_without_weights_is_a_fresh_task(tmp_path):
    task = han.make_task()
    _saved_preset(task, tmp_path / "preset")
    loaded = HANTextClassifier.from_preset(
        tmp_path / "preset", load_weights=False, num_classes=3
    )
    assert loaded.predict(TEXTS, verbose=0).shape == (2, 3)
    # Fresh embeddings (uniform +-0.05), not the saved values (0.5 .. 1).
    assert np.all(np.abs(loaded.backbone.embedding.embeddings.numpy()) < 0.5)


def test_task_arguments_replace_the_saved_ones(tmp_path):
    task = han.make_task()
    saved = _saved_preset(task, tmp_path / "preset")
    loaded = HANTextClassifier.from_preset(
        tmp_path / "preset", label_names=["bad", "good"], name="renamed", compile=False
    )
    assert loaded.label_names == ["bad", "good"]
    assert loaded.name == "renamed"
    assert not loaded.compiled
    for got, expected in zip(loaded.backbone.get_weights(), saved, strict=True):
        np.testing.assert_array_equal(got, expected)
    # preprocessor=None: the task reads token ids, as keras-hub allows.
    bare = HANTextClassifier.from_preset(tmp_path / "preset", preprocessor=None)
    assert bare.preprocessor is None
    ids = task.preprocessor(TEXTS)["token_ids"]
    np.testing.assert_allclose(
        bare.predict(ids, verbose=0), task.predict(TEXTS, verbose=0), atol=1e-6
    )


def test_unknown_keyword_arguments_are_one_line_errors(tmp_path):
    task = han.make_task()
    task.save_to_preset(tmp_path / "han")
    with pytest.raises(ConfigError) as error:
        HANTextClassifier.from_preset(tmp_path / "han", foo=1)
    assert str(error.value) == (
        "from_preset: HANTextClassifier takes no argument 'foo'. Accepted: "
        "compile, label_names, load_weights, name, num_classes, preprocessor"
    )
    assert isinstance(error.value, ZooError) and error.value.exit_code == 2
    # Through the base class too (the task class is read from the preset).
    with pytest.raises(ConfigError, match="takes no argument 'foo'"):
        Task.from_preset(tmp_path / "han", foo=1, num_classes=3)

    # An encoder has no head: num_classes is not one of its arguments.
    classifier = sa.make_task()
    SentenceEmbedder(
        classifier.backbone.encoder, classifier.preprocessor
    ).save_to_preset(tmp_path / "embedder")
    with pytest.raises(ConfigError) as error:
        SentenceEmbedder.from_preset(tmp_path / "embedder", num_classes=3)
    assert str(error.value) == (
        "from_preset: SentenceEmbedder takes no argument 'num_classes'. Accepted: "
        "load_weights, name, preprocessor"
    )
    # A bad value is the backbone's own one-line error.
    with pytest.raises(ValueError, match="`num_classes` must be at least 2"):
        HANTextClassifier.from_preset(tmp_path / "han", num_classes=1)


# --- Methods that need TensorFlow ------------------------------------------------------


def _translator():
    pre = Seq2SeqTranslatorPreprocessor(max_length=8)
    pre.adapt(translation.SOURCES * 4, translation.TARGETS * 4, vocab_size=60)
    backbone = Seq2SeqTranslator(
        pre.source_vocab_size,
        pre.target_vocab_size,
        embedding_dim=8,
        encoder_units=8,
        decoder_units=8,
    )
    return Seq2SeqTextTranslator(backbone, pre)


def _sa_embedder():
    task = sa.make_task()
    return SentenceEmbedder(task.backbone.encoder, task.preprocessor)


TENSORFLOW_METHODS = [
    ("HANTextClassifier", han.make_task, "explain", (TEXTS,)),
    ("HANTextClassifier", han.make_task, "export", ()),
    ("SelfAttentiveTextClassifier", sa.make_task, "explain", (TEXTS,)),
    ("SelfAttentiveTextClassifier", sa.make_task, "embed", (TEXTS,)),
    ("SelfAttentiveTextClassifier", sa.make_task, "export", ()),
    ("SentenceEmbedder", _sa_embedder, "embed", (TEXTS,)),
    ("MemN2NQuestionAnswerer", memn2n.make_task, "explain", (memn2n.PREDICT_X,)),
    (
        "MemN2NQuestionAnswerer",
        memn2n.make_task,
        "predict_answers",
        (memn2n.PREDICT_X,),
    ),
    ("MemN2NQuestionAnswerer", memn2n.make_task, "export", ()),
    ("Seq2SeqTextTranslator", _translator, "translate", (TEXTS,)),
    ("Seq2SeqTextTranslator", _translator, "predict", (TEXTS,)),
    ("Seq2SeqTextTranslator", _translator, "translator", ()),
    ("Seq2SeqTextTranslator", _translator, "serving_module", ()),
    ("Seq2SeqTextTranslator", _translator, "export", ()),
]


@pytest.mark.parametrize(
    "name, make_task, method, args",
    TENSORFLOW_METHODS,
    ids=[f"{name}.{method}" for name, _, method, _ in TENSORFLOW_METHODS],
)
def test_tensorflow_methods_say_so_in_one_line_on_another_backend(
    monkeypatch, tmp_path, name, make_task, method, args
):
    task = make_task()
    assert type(task).__name__ == name
    monkeypatch.chdir(tmp_path)  # an export that ran anyway would land here
    monkeypatch.setattr(keras.backend, "backend", lambda: "jax")
    with pytest.raises(ConfigError) as error:
        getattr(task, method)(*args)
    assert str(error.value) == (
        f"{name}.{method} needs the TensorFlow backend "
        "(KERAS_BACKEND=tensorflow); running on jax"
    )
    assert list(tmp_path.iterdir()) == []


def test_the_backend_check_passes_on_tensorflow(monkeypatch):
    assert keras.backend.backend() == "tensorflow"
    check_tensorflow_backend("zoo predict")  # no error
    monkeypatch.setattr(keras.backend, "backend", lambda: "torch")
    with pytest.raises(ConfigError, match=r"^zoo predict needs .* running on torch$"):
        check_tensorflow_backend("zoo predict")


def test_a_preset_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    import errno

    from zoo.errors import DiskFullError

    task = han.make_task()
    target = tmp_path / "presets" / "han"

    def full(directory):
        with open(os.path.join(directory, "vocabulary.txt"), "w") as f:
            f.write("[PAD]\n")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(task.preprocessor, "save_assets", full)
    with pytest.raises(DiskFullError) as error:
        task.save_to_preset(target)
    assert str(error.value) == (
        f"{target}: the disk is full (No space left on device); no preset written"
    )
    assert os.listdir(tmp_path / "presets") == []  # no staging folder, no preset
    monkeypatch.undo()
    # The same call again writes the preset, which is then never overwritten.
    task.save_to_preset(target)
    assert sorted(os.listdir(target)) == [
        "assets", "config.json", "metadata.json", "model.weights.h5",
        "preprocessor.json", "task.json",
    ]  # fmt: skip
    with pytest.raises(ConfigError, match="exists and is not empty"):
        task.save_to_preset(target)
    (tmp_path / "a_file").write_text("x")
    with pytest.raises(ConfigError, match="a_file exists and is not empty"):
        task.save_to_preset(tmp_path / "a_file")
