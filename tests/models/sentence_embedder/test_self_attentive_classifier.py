import zipfile

import keras
import numpy as np
import pytest

from tests.models.sentence_embedder.tiny import IDS, tiny_encoder
from zoo.layers.structured_self_attention import orthogonality_penalty
from zoo.models.sentence_embedder import (
    SelfAttentiveClassifier,
    SelfAttentiveEncoder,
    SelfAttentiveTextClassifier,
)


def test_outputs_follow_the_attention_convention():
    encoder = tiny_encoder()
    model = SelfAttentiveClassifier(encoder, num_classes=4, hidden_units=7)
    out = model(IDS)
    assert sorted(out) == ["attention", "probabilities"]
    probs = out["probabilities"].numpy()
    assert probs.shape == (3, 4) and probs.dtype == np.float32
    np.testing.assert_allclose(probs.sum(-1), np.ones(3), rtol=1e-5)
    # the classifier's attention is its encoder's
    np.testing.assert_array_equal(out["attention"].numpy(), encoder(IDS)["attention"])
    assert out["attention"].dtype == "float32"


def test_keras_roundtrip_same_outputs(tmp_path):
    encoder = tiny_encoder(penalty=0.5)
    model = SelfAttentiveClassifier(encoder, num_classes=4, hidden_units=7)
    expected = model(IDS)
    model.save(tmp_path / "c.keras")
    loaded = keras.saving.load_model(tmp_path / "c.keras")
    assert type(loaded) is SelfAttentiveClassifier
    assert isinstance(loaded.encoder, SelfAttentiveEncoder)
    assert loaded.encoder.penalty == 0.5 and loaded.get_config()["hidden_units"] == 7
    got = loaded(IDS)
    for key in ("probabilities", "attention"):
        np.testing.assert_allclose(got[key].numpy(), expected[key].numpy(), atol=1e-6)


def test_the_task_fits_every_weight_with_the_penalty(tmp_path):
    encoder = tiny_encoder()
    model = SelfAttentiveClassifier(encoder, num_classes=3, hidden_units=8, dropout=0)
    trainer = SelfAttentiveTextClassifier(model, compile=False)  # ids in
    assert len(trainer.outputs) == 1
    trainer.compile(keras.optimizers.Adam(0.01), "sparse_categorical_crossentropy")
    x = np.random.randint(1, 20, (16, 6)).astype("int32")
    y = (x[:, 0] % 3).astype("int32")
    before = [w.numpy().copy() for w in model.trainable_weights]
    loss = trainer.fit(x, y, batch_size=16, epochs=6, verbose=0).history["loss"]
    assert np.all(np.isfinite(loss)) and loss[-1] < loss[0]
    assert all(
        not np.array_equal(b, w.numpy())
        for b, w in zip(before, model.trainable_weights, strict=True)
    )
    # the training loss holds the penalty: it is above the cross entropy alone
    probs = model(x)["probabilities"].numpy()
    ce = -np.mean(np.log(probs[np.arange(16), y]))
    pen = np.mean(orthogonality_penalty(encoder(x)["attention"]).numpy())
    assert pen > 0.1 and loss[-1] > ce
    # the task's optimizer is not saved with the network
    model.save(tmp_path / "c.keras")
    with zipfile.ZipFile(tmp_path / "c.keras") as archive:
        assert b"optimizer" not in archive.read("model.weights.h5")


def test_invalid_arguments():
    with pytest.raises(ValueError, match="num_classes=1"):
        SelfAttentiveClassifier(tiny_encoder(), num_classes=1)
    with pytest.raises(ValueError, match="SelfAttentiveEncoder"):
        SelfAttentiveClassifier(keras.layers.Dense(3), num_classes=2)


def test_mixed_float16_is_finite():
    from tests.layers.layer_test_utils import dtype_policy

    with dtype_policy("mixed_float16"):
        model = SelfAttentiveClassifier(tiny_encoder(), num_classes=2, hidden_units=4)
        out = model(IDS)
    for key in ("probabilities", "attention"):
        assert out[key].dtype == "float32"
        assert np.all(np.isfinite(out[key].numpy()))
