import keras
import numpy as np
import pytest

from tests.models.sentence_embedder.tiny import IDS, tiny_encoder
from zoo.layers.structured_self_attention import orthogonality_penalty
from zoo.models.sentence_embedder import SelfAttentiveEncoder


def test_encoder_shapes_masking_and_penalty():
    encoder = tiny_encoder()
    out = encoder(IDS)
    emb, att = out["embedding"].numpy(), out["attention"].numpy()
    assert emb.shape == (3, 3, 12) and att.shape == (3, 3, 5)
    assert np.all(att[0, :, 3:] == 0.0)  # padding gets exactly zero weight
    np.testing.assert_allclose(att[:2].sum(-1), np.ones((2, 3)), rtol=1e-5)
    assert np.all(att[2] == 0.0) and np.all(emb[2] == 0.0)  # empty sentence
    assert np.all(np.isfinite(emb))
    expected = np.mean(orthogonality_penalty(att, IDS != 0).numpy())
    assert len(encoder.losses) == 1
    np.testing.assert_allclose(encoder.losses[0].numpy(), expected, rtol=1e-5)
    assert encoder.output_dim == 12
    # symbolic shapes
    sym = encoder(keras.Input((None,), dtype="int32"))
    assert tuple(sym["embedding"].shape) == (None, 3, 12)
    assert tuple(sym["attention"].shape) == (None, 3, None)


def test_encoder_keras_roundtrip(tmp_path):
    encoder = tiny_encoder(penalty=0.5)
    encoder.save(tmp_path / "e.keras")
    reloaded = keras.saving.load_model(tmp_path / "e.keras")
    assert type(reloaded) is SelfAttentiveEncoder and reloaded.penalty == 0.5
    assert reloaded.get_config() == encoder.get_config()
    for key in ("embedding", "attention"):
        np.testing.assert_allclose(
            reloaded(IDS)[key].numpy(), encoder(IDS)[key].numpy(), atol=1e-6
        )


def test_set_embedding_matrix():
    encoder = tiny_encoder()
    matrix = np.random.randn(20, 8).astype("float32")
    encoder.set_embedding_matrix(matrix)
    np.testing.assert_array_equal(encoder.token_embedding.embeddings.numpy(), matrix)
    with pytest.raises(ValueError, match=r"matrix.shape=\(20, 7\)"):
        encoder.set_embedding_matrix(np.zeros((20, 7), "float32"))


def test_invalid_arguments():
    with pytest.raises(ValueError, match="vocabulary_size=0"):
        SelfAttentiveEncoder(0)
    with pytest.raises(ValueError, match="num_hops=0"):
        tiny_encoder(num_hops=0)


def test_mixed_float16_embedding_in_float16_attention_in_float32():
    from tests.layers.layer_test_utils import dtype_policy

    with dtype_policy("mixed_float16"):
        encoder = tiny_encoder()
        out = encoder(IDS)
    assert out["embedding"].dtype == "float16"
    assert out["attention"].dtype == "float32"
    att = out["attention"].numpy()
    assert (
        np.all(np.isfinite(att)) and np.all(att[0, :, 3:] == 0) and np.all(att[2] == 0)
    )
    assert np.all(np.isfinite(out["embedding"].numpy()))
    assert np.isfinite(float(encoder.losses[0]))
