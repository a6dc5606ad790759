"""End to end: the demo recipe trains, evaluates, reports and exports; the export
reloads in a fresh process with the Keras model's outputs and handles bad inputs."""

import json
import os
import re

import keras
import numpy as np
import pytest
import tensorflow as tf

from recipes.han_classification import main, parse_config
from zoo.data.documents import demo_corpus
from zoo.export.testing import run_in_fresh_process
from zoo.models.han import HANPreprocessor

SENTIMENT = (
    "wonderful brilliant moving excellent delightful superb "
    "boring awful dull terrible clumsy tedious"
).split()


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("han")
    result = main(
        [
            "--export-dir",
            str(root / "saved_models"),
            "--run-dir",
            str(root / "runs"),
            "--report-dir",
            str(root / "reports"),
        ]
    )
    return root, result


TEXTS = demo_corpus(6, seed=99).texts + ["Honestly the plot is superb!", ""]


def _serve_and_check(version_dir, texts):
    """Runs in a fresh process: the reloaded export's outputs and bad-input checks."""
    from zoo.export.testing import check_bad_text_inputs, load_signature

    result = {}
    for name in ("serving_default", "explain"):
        result[name] = load_signature(version_dir, name)(text=texts)
        bad = check_bad_text_inputs(version_dir, signature=name)  # asserts inside
        result[f"bad_{name}"] = {
            case: {
                "shapes": {k: list(v.shape) for k, v in outputs.items()},
                "probabilities": outputs["probabilities"],
                "sentence_attention_sum": outputs["sentence_attention"].sum(-1),
            }
            for case, outputs in bad.items()
        }
    return result


@pytest.fixture(scope="module")
def served(demo_run):
    return run_in_fresh_process(_serve_and_check, demo_run[1]["export"], TEXTS)


def test_parse_config_demo_and_data_defaults():
    demo = parse_config([])
    assert demo.demo and demo.training.epochs == 3 and demo.max_sentences == 8
    real = parse_config(["--data", "x.csv", "--label-column", "stars"])
    assert real.training.epochs == 10 and real.max_sentences == 30
    assert (real.max_words, real.embedding_dim, real.rnn_units) == (50, 200, 50)
    assert real.context_units == 100 and real.label_column == "stars"
    # The paper's word2vec initialisation is on for real data, off for the demo and
    # when vectors are given.
    assert real.word2vec_epochs == 5 and demo.word2vec_epochs == 0


@pytest.mark.slow
def test_demo_trains_reports_and_exports(demo_run):
    root, result = demo_run
    assert result["model"] == "han" and result["metric"] == "accuracy"
    assert result["value"] >= 0.8, result
    version_dir = result["export"]
    assert os.path.isfile(os.path.join(version_dir, "saved_model.pb"))
    assert os.path.isfile(os.path.join(version_dir, "assets", "vocab.txt"))
    assert os.path.isfile(version_dir + ".keras")
    with open(os.path.join(version_dir, "assets.extra", "manifest.json")) as f:
        manifest = json.load(f)
    assert manifest["recipe"] == "han_classification" or (
        manifest.get("metadata", {}).get("recipe") == "han_classification"
    )
    metrics = json.loads((root / "reports" / "metrics.json").read_text())
    assert metrics["labels"] == ["neg", "pos"]
    assert np.array(metrics["confusion_matrix"]).sum() == 40
    assert set(metrics["per_class"]["pos"]) >= {"precision", "recall", "f1"}
    html = (root / "reports" / "attention.html").read_text()
    assert html.count('class="doc"') == 8
    assert "highest-weighted sentence" in html and "rgba(220, 40, 40" in html
    # A sentiment word is among the top words of (almost) every reported document.
    tops = re.findall(r"top words: ([^<]*)</div>", html)
    assert len(tops) == 8
    hits = [any(f"{w} (" in t for w in SENTIMENT) for t in tops]
    assert sum(hits) >= 6, tops


@pytest.mark.slow
def test_export_in_fresh_process_matches_keras_model(demo_run, served):
    version_dir = demo_run[1]["export"]
    serving, explain = served["serving_default"], served["explain"]
    model = keras.saving.load_model(version_dir + ".keras")
    pre = HANPreprocessor(os.path.join(version_dir, "assets", "vocab.txt"), 8, 16)
    features = pre(tf.constant(TEXTS))
    expected = model(features["token_ids"])
    for key in ("probabilities", "sentence_attention", "word_attention"):
        want = keras.ops.convert_to_numpy(expected[key])
        np.testing.assert_allclose(np.array(serving[key]), want, atol=1e-5)
        np.testing.assert_allclose(np.array(explain[key]), want, atol=1e-5)
    probs = np.array(serving["probabilities"])
    assert serving["label"] == [["neg", "pos"][i] for i in probs.argmax(-1)]
    assert serving["label"][6] == "pos"
    # `explain` names the sentences and words the weights refer to.
    assert explain["words"] == [
        [[w.decode() for w in s] for s in doc] for doc in features["words"].numpy()
    ]
    assert explain["sentences"][6][0] == "honestly the plot is superb!"
    # Sentence attention mostly points at a sentence holding a sentiment word.
    s_att = np.array(explain["sentence_attention"])
    best = [explain["sentences"][i][int(s_att[i].argmax())] for i in range(6)]
    assert sum(any(w in b for w in SENTIMENT) for b in best) >= 3, best
    # The empty document: no words, zero attention, finite probabilities.
    assert np.all(s_att[7] == 0) and np.all(np.isfinite(probs[7]))


@pytest.mark.slow
@pytest.mark.parametrize("signature", ["serving_default", "explain"])
def test_bad_inputs_against_reloaded_export(served, signature):
    results = served[f"bad_{signature}"]
    assert results["batch_of_zero"]["shapes"]["probabilities"] == [0, 2]
    assert results["batch_of_zero"]["shapes"]["label"] == [0]
    for case in ("empty", "whitespace"):
        assert results[case]["sentence_attention_sum"] == [0.0]
        np.testing.assert_allclose(
            results[case]["probabilities"], results["empty"]["probabilities"]
        )
    # The 1 MB input (one long run of words, no sentence end) is truncated to the
    # documented limits (64 KiB, then one sentence of max_words words), not rejected.
    assert results["one_megabyte"]["shapes"]["word_attention"] == [1, 1, 16]
    np.testing.assert_allclose(
        results["one_megabyte"]["sentence_attention_sum"], [1.0], rtol=1e-5
    )
    assert results["invalid_utf8"]["shapes"]["label"] == [1]
    np.testing.assert_allclose(
        results["invalid_utf8"]["sentence_attention_sum"], [1.0], rtol=1e-5
    )
    # 2000 sentences of 5 tokens: truncated to max_sentences (8) sentences.
    assert results["mixed_lengths"]["shapes"]["word_attention"] == [2, 8, 5]
    np.testing.assert_allclose(
        results["mixed_lengths"]["sentence_attention_sum"], [1.0, 1.0], rtol=1e-5
    )
    if signature == "explain":
        assert results["mixed_lengths"]["shapes"]["words"] == [2, 8, 5]


def test_word2vec_initialisation(tmp_path):
    from recipes.han_classification import (
        build_datasets,
        build_model,
        initial_embeddings,
        load_splits,
    )

    config = parse_config(
        ["--word2vec-epochs", "1", "--run-dir", str(tmp_path), "--demo-documents", "60"]
    )
    splits = load_splits(config)
    vocab_file = str(tmp_path / "vocab.txt")
    preprocessor, _ = build_datasets(config, splits, vocab_file)
    matrix, how = initial_embeddings(config, splits, preprocessor, vocab_file)
    size = preprocessor.lookup.size
    assert matrix.shape == (size, 200) and "word2vec (1 epochs)" in how
    assert not matrix[:2].any() and np.isfinite(matrix).all()
    # The vectors are also written for reuse, and `--embeddings` reads them back.
    from zoo.data.embeddings import load_embeddings
    from zoo.text.vocabulary import Vocabulary

    again, stats = load_embeddings(
        tmp_path / "word2vec.txt", Vocabulary.load(vocab_file)
    )
    assert stats.coverage == 1.0
    np.testing.assert_allclose(again[2:], matrix[2:], rtol=1e-4, atol=1e-6)
    model, _ = build_model(config, size, len(splits.label_names), matrix)
    np.testing.assert_array_equal(
        keras.ops.convert_to_numpy(model.embedding.embeddings), matrix
    )
    with pytest.raises(ValueError, match="must have shape"):
        model.set_embedding_matrix(matrix[:-1])


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--word2vec-epochs", "-1"], "--word2vec-epochs must be >= 0"),
        (["--embeddings", "v.txt", "--word2vec-epochs", "2"], "either --embeddings"),
        (["--embeddings", "/nonexistent/v.txt"], "no such file"),
    ],
)
def test_embedding_flags_are_checked(argv, message, capsys):
    with pytest.raises(SystemExit):
        parse_config(argv)
    assert message in capsys.readouterr().err


def test_given_vectors_turn_word2vec_off(tmp_path):
    vectors = tmp_path / "v.txt"
    vectors.write_text("good 0.1 0.2\n")
    config = parse_config(["--data", "x.csv", "--embeddings", str(vectors)])
    assert config.word2vec_epochs == 0 and config.embeddings == str(vectors)
