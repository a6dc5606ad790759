import keras
import numpy as np
import pytest

from zoo.layers.hierarchical_attention import HierarchicalAttentionEncoder
from zoo.models.han import HANClassifier, HANTextClassifier

SMALL = {"embedding_dim": 8, "rnn_units": 4, "context_units": 5}


def _ids():
    ids = np.random.default_rng(0).integers(2, 30, size=(3, 4, 6)).astype("int32")
    ids[0, 2:] = 0  # two padded sentences
    ids[1, :, 3:] = 0  # short sentences
    ids[2] = 0  # an empty document
    return ids


def test_paper_defaults_and_config_roundtrip():
    model = HANClassifier(vocabulary_size=50, num_classes=5)
    assert model.get_layer("embedding").output_dim == 200
    encoder = model.get_layer("encoder")
    assert isinstance(encoder, HierarchicalAttentionEncoder)
    assert (encoder.rnn_type, encoder.rnn_units) == ("gru", 50)
    assert encoder.word_context_units == encoder.sentence_context_units == 100
    config = model.get_config()
    restored = HANClassifier.from_config(config)
    assert type(restored) is HANClassifier and restored.get_config() == config
    assert restored.count_params() == model.count_params()


def test_outputs_shapes_and_masking():
    model = HANClassifier(30, 3, **SMALL)
    out = {k: keras.ops.convert_to_numpy(v) for k, v in model(_ids()).items()}
    assert (
        out["probabilities"].shape == (3, 3) and out["probabilities"].dtype == "float32"
    )
    np.testing.assert_allclose(out["probabilities"].sum(-1), 1.0, rtol=1e-5)
    assert out["sentence_attention"].shape == (3, 4)
    assert out["word_attention"].shape == (3, 4, 6)
    ids = _ids()
    assert np.all(out["word_attention"][ids == 0] == 0.0)
    assert np.all(out["sentence_attention"][0, 2:] == 0.0)
    np.testing.assert_allclose(out["sentence_attention"][:2].sum(-1), 1.0, rtol=1e-5)
    assert np.all(out["sentence_attention"][2] == 0.0)
    assert np.all(np.isfinite(out["probabilities"]))


def test_keras_file_roundtrip_same_outputs(tmp_path):
    model = HANClassifier(30, 2, **SMALL)
    expected = model(_ids())
    path = tmp_path / "han.keras"
    model.save(path)
    loaded = keras.saving.load_model(path)
    assert type(loaded) is HANClassifier
    got = loaded(_ids())
    for key in ("probabilities", "sentence_attention", "word_attention"):
        np.testing.assert_allclose(
            keras.ops.convert_to_numpy(got[key]),
            keras.ops.convert_to_numpy(expected[key]),
            rtol=1e-6,
            atol=1e-7,
        )


def test_the_task_is_the_network_s_probabilities_on_the_same_weights():
    model = HANClassifier(30, 2, **SMALL)
    task = HANTextClassifier(model, compile=False)  # no preprocessor: ids in
    assert len(task.outputs) == 1
    assert [id(w) for w in task.trainable_weights] == [
        id(w) for w in model.trainable_weights
    ]
    classifier = model.get_layer("classifier")
    classifier.bias.assign([3.0, -3.0])  # changing the network changes the task
    expected = keras.ops.convert_to_numpy(model(_ids())["probabilities"])
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(task(_ids())), expected, rtol=1e-6
    )
    assert np.all(expected[2, 0] > 0.99)  # the empty document: bias only


def test_the_task_fits_the_network_and_its_file_holds_no_optimizer(tmp_path):
    model = HANClassifier(30, 2, **SMALL)
    task = HANTextClassifier(model, compile=False)
    task.compile(keras.optimizers.Adam(0.01), "sparse_categorical_crossentropy")
    x = _ids()[:2]
    loss = task.fit(x, np.array([0, 1]), epochs=3, verbose=0).history["loss"]
    assert loss[-1] < loss[0]
    model.save(tmp_path / "han.keras")
    # The network's .keras file holds its weights only, not the task's optimizer.
    import zipfile

    with zipfile.ZipFile(tmp_path / "han.keras") as archive:
        names = archive.namelist()
        weights = archive.read("model.weights.h5")
    assert "model.weights.h5" in names and b"optimizer" not in weights
    loaded = keras.saving.load_model(tmp_path / "han.keras")
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(loaded(x)["probabilities"]),
        keras.ops.convert_to_numpy(model(x)["probabilities"]),
        rtol=1e-6,
    )


def test_attention_outputs_are_float32_under_mixed_precision():
    from tests.layers.layer_test_utils import dtype_policy

    with dtype_policy("mixed_float16"):
        model = HANClassifier(30, 2, **SMALL)
        out = model(_ids())
    for key in ("probabilities", "sentence_attention", "word_attention"):
        assert out[key].dtype == "float32", key
        assert np.all(np.isfinite(keras.ops.convert_to_numpy(out[key])))
    assert np.all(keras.ops.convert_to_numpy(out["word_attention"])[_ids() == 0] == 0)


@pytest.mark.parametrize(
    "kwargs, word",
    [
        ({"vocabulary_size": 0}, "vocabulary_size"),
        ({"num_classes": 1}, "num_classes"),
        ({"pooling": "max"}, "pooling"),
    ],
)
def test_invalid_arguments_name_the_value(kwargs, word):
    args = {"vocabulary_size": 10, "num_classes": 2, **kwargs}
    with pytest.raises(ValueError, match=word):
        HANClassifier(**args)
