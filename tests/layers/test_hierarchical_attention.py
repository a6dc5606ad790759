import keras
import numpy as np
import pytest

from tests.layers.layer_test_utils import (
    assert_config_roundtrip,
    assert_float16_finite,
    assert_keras_file_roundtrip,
    assert_one_fit_step,
    to_numpy,
)
from zoo.layers.attention_pooling import AttentionPooling
from zoo.layers.hierarchical_attention import HierarchicalAttentionEncoder

SMALL = {"rnn_units": 4, "word_context_units": 5, "sentence_context_units": 6}


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(3, 4, 5, 6)).astype("float32")  # (B, S, W, E)
    mask = np.ones((3, 4, 5), bool)
    mask[0, 1, 3:] = False  # a short sentence
    mask[0, 3] = False  # a padded sentence
    mask[1, 2:] = False  # two padded sentences
    mask[2] = False  # an empty document
    return x, mask


def test_config_roundtrip():
    config = {
        "rnn_type": "lstm",
        "rnn_units": 3,
        "word_context_units": 7,
        "sentence_context_units": 9,
        "dropout": 0.1,
        "pooling": "mean",
    }
    restored = assert_config_roundtrip(HierarchicalAttentionEncoder, config)
    assert restored.rnn_type == "lstm" and restored.pooling == "mean"


def test_shapes_eager_and_symbolic():
    x, mask = _inputs()
    layer = HierarchicalAttentionEncoder(**SMALL)
    doc, s_att, w_att = layer(x, mask=mask, return_attention_scores=True)
    assert tuple(doc.shape) == (3, 8)
    assert tuple(s_att.shape) == (3, 4) and tuple(w_att.shape) == (3, 4, 5)
    assert tuple(layer(x).shape) == (3, 8)
    assert layer.compute_output_shape((None, 4, 5, 6)) == (None, 8)

    sym = keras.Input((None, None, 6))
    outs = HierarchicalAttentionEncoder(**SMALL)(sym, return_attention_scores=True)
    assert [tuple(o.shape) for o in outs] == [
        (None, 8),
        (None, None),
        (None, None, None),
    ]


def test_masking_exact_zeros_and_normalised_weights():
    x, mask = _inputs()
    doc, s_att, w_att = to_numpy(
        HierarchicalAttentionEncoder(**SMALL)(
            x, mask=mask, return_attention_scores=True
        )
    )
    assert np.all(np.isfinite(doc))
    # Padded words and padded sentences get exactly zero weight.
    assert np.all(w_att[~mask] == 0.0)
    sentence_mask = mask.any(-1)
    assert np.all(s_att[~sentence_mask] == 0.0)
    # Real sentences' word weights and real documents' sentence weights sum to 1.
    np.testing.assert_allclose(w_att.sum(-1)[sentence_mask], 1.0, rtol=1e-5)
    np.testing.assert_allclose(s_att[:2].sum(-1), [1.0, 1.0], rtol=1e-5)
    # The empty document: zero vector and zero maps, not NaN.
    np.testing.assert_array_equal(doc[2], np.zeros(8))
    assert np.all(s_att[2] == 0.0) and np.all(w_att[2] == 0.0)


def test_padding_does_not_change_real_documents():
    x, mask = _inputs()
    layer = HierarchicalAttentionEncoder(**SMALL)
    doc_a, s_a, w_a = to_numpy(layer(x, mask=mask, return_attention_scores=True))
    x2 = x.copy()
    x2[~mask] = 50.0  # garbage in padded slots
    doc_b, s_b, w_b = to_numpy(layer(x2, mask=mask, return_attention_scores=True))
    np.testing.assert_allclose(doc_a, doc_b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w_a, w_b, rtol=1e-5, atol=1e-6)
    # A document alone equals the same document inside a padded batch.
    doc_0 = to_numpy(layer(x[:1, :3, :5], mask=mask[:1, :3, :5]))
    np.testing.assert_allclose(doc_0[0], doc_a[0], rtol=1e-5, atol=1e-6)


def test_sentence_level_equals_manual_composition():
    """The encoder is word BiGRU -> pooling per sentence -> sentence BiGRU -> pooling."""
    x, mask = _inputs(3)
    layer = HierarchicalAttentionEncoder(**SMALL)
    doc, s_att, w_att = to_numpy(layer(x, mask=mask, return_attention_scores=True))
    b, s, w, e = x.shape
    words = x.reshape(b * s, w, e)
    wmask = mask.reshape(b * s, w)
    states = layer.word_rnn(words, mask=wmask)
    sents, w_ref = layer.word_pooling(states, mask=wmask, return_attention_scores=True)
    sents = to_numpy(sents).reshape(b, s, -1)
    smask = mask.any(-1)
    states = layer.sentence_rnn(sents, mask=smask)
    doc_ref, s_ref = to_numpy(
        layer.sentence_pooling(states, mask=smask, return_attention_scores=True)
    )
    np.testing.assert_allclose(doc, doc_ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(s_att, s_ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w_att, to_numpy(w_ref).reshape(b, s, w), atol=1e-6)
    assert isinstance(layer.word_pooling, AttentionPooling)


def test_mean_pooling_gives_uniform_weights():
    x, mask = _inputs()
    _, s_att, w_att = to_numpy(
        HierarchicalAttentionEncoder(pooling="mean", **SMALL)(
            x, mask=mask, return_attention_scores=True
        )
    )
    np.testing.assert_allclose(w_att[0, 1], [1 / 3, 1 / 3, 1 / 3, 0, 0], rtol=1e-6)
    np.testing.assert_allclose(s_att[1], [0.5, 0.5, 0, 0], rtol=1e-6)


def _model():
    ids = keras.Input((None, None), dtype="int32")
    emb = keras.layers.Embedding(20, 6, mask_zero=True)(ids)
    doc, s_att, w_att = HierarchicalAttentionEncoder(**SMALL)(
        emb, return_attention_scores=True
    )
    probs = keras.layers.Dense(2, activation="softmax")(doc)
    return keras.Model(ids, [probs, s_att, w_att])


def _ids():
    ids = np.random.default_rng(0).integers(1, 20, size=(3, 4, 5))
    ids[0, 2:] = 0
    ids[1, 1, 2:] = 0
    ids[2] = 0
    return ids.astype("int32")


def test_keras_file_roundtrip(tmp_path):
    loaded, (probs, s_att, w_att) = assert_keras_file_roundtrip(
        _model(), _ids(), tmp_path
    )
    assert probs.shape == (3, 2) and w_att.shape == (3, 4, 5)
    np.testing.assert_array_equal(s_att[0, 2:], [0.0, 0.0])
    assert any(
        isinstance(layer, HierarchicalAttentionEncoder) for layer in loaded.layers
    )


def test_fit_step_updates_every_weight():
    model = _model()
    trainer = keras.Model(model.inputs, model.outputs[0])
    y = np.array([0, 1, 1])
    loss = assert_one_fit_step(
        trainer, _ids(), y, loss="sparse_categorical_crossentropy", all_weights=True
    )
    assert loss > 0


def test_float16_finite():
    x, mask = _inputs()
    doc, s_att, w_att = assert_float16_finite(
        lambda: HierarchicalAttentionEncoder(**SMALL),
        x * 100,
        mask=mask,
        return_attention_scores=True,
    )
    assert np.all(w_att[~mask] == 0) and np.all(doc[2] == 0)


@pytest.mark.parametrize(
    "kwargs, word",
    [
        ({"rnn_type": "rnn"}, "rnn_type"),
        ({"pooling": "max"}, "pooling"),
        ({"rnn_units": 0}, "rnn_units"),
        ({"word_context_units": -1}, "word_context_units"),
        ({"dropout": 1.5}, "dropout"),
    ],
)
def test_invalid_arguments_name_the_value(kwargs, word):
    with pytest.raises(ValueError, match=word):
        HierarchicalAttentionEncoder(**kwargs)


def test_wrong_rank_is_an_error():
    with pytest.raises(ValueError, match="input_shape"):
        HierarchicalAttentionEncoder(**SMALL)(np.zeros((2, 3, 4), "float32"))


def test_rnn_mask_gives_fully_masked_rows_one_step():
    """cuDNN rejects rows without any step; such rows get their first step only."""
    from zoo.layers.hierarchical_attention import _rnn_mask

    mask = np.array([[1, 1, 0], [0, 0, 0], [1, 0, 0]], dtype=bool)
    got = to_numpy(_rnn_mask(mask))
    np.testing.assert_array_equal(got, [[1, 1, 0], [1, 0, 0], [1, 0, 0]])
