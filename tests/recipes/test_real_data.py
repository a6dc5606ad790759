"""The document and sentence recipes train, evaluate, report and export on the real
data sets of `../shared/data` (small samples, small models: this checks the whole path
on real files, not accuracy). Skipped when the data is absent."""

import json
import os

import numpy as np
import pytest


def _out_args(root):
    return [
        "--export-dir",
        str(root / "saved_models"),
        "--run-dir",
        str(root / "runs"),
        "--report-dir",
        str(root / "reports"),
    ]


def _check_export(result, name, report_dir):
    version_dir = result["export"]
    assert os.path.basename(os.path.dirname(version_dir)) == name
    assert os.path.isfile(os.path.join(version_dir, "saved_model.pb"))
    warmup = os.path.join(version_dir, "assets.extra", "tf_serving_warmup_requests")
    assert os.path.getsize(warmup) > 0
    # the headline accuracy is the share of right answers in the test confusion matrix
    with open(os.path.join(report_dir, "metrics.json")) as f:
        confusion = np.asarray(json.load(f)["confusion_matrix"])
    assert result["value"] == pytest.approx(np.trace(confusion) / confusion.sum())
    with open(os.path.join(version_dir, "assets.extra", "manifest.json")) as f:
        manifest = json.load(f)
    assert manifest["metrics"]["accuracy"] == pytest.approx(result["value"])


@pytest.mark.slow
@pytest.mark.parametrize(
    "data, extra",
    [
        ("aclImdb", ["--word2vec-epochs", "1"]),
        ("yelp_10k/yelp.csv", ["--label-column", "stars"]),
    ],
)
def test_han_on_real_documents(shared_data, tmp_path, data, extra):
    from zoo.recipes.han_classification import main

    result = main(
        ["--data", str(shared_data / data), *extra, *_out_args(tmp_path)]
        + ["--max-train-samples", "160", "--max-eval-samples", "64"]
        + ["--epochs", "1", "--max-sentences", "6", "--max-words", "16"]
        + ["--embedding-dim", "16", "--rnn-units", "8", "--context-units", "8"]
    )
    _check_export(result, "han", tmp_path / "reports")
    html = list((tmp_path / "reports").glob("*.html"))
    assert html and html[0].stat().st_size > 0
    if "--word2vec-epochs" in extra:
        assert (tmp_path / "runs" / "word2vec.txt").stat().st_size > 0


@pytest.mark.slow
@pytest.mark.parametrize(
    "data, extra",
    [
        ("sst", ["--task", "sst2"]),
        ("yelp_10k/yelp.csv", ["--task", "csv", "--label-column", "stars"]),
    ],
)
def test_sentence_embedder_on_real_data(shared_data, tmp_path, data, extra):
    from zoo.recipes.self_attentive_embedding import main

    result = main(
        ["--data", str(shared_data / data), *extra, *_out_args(tmp_path)]
        + ["--max-train-samples", "160", "--epochs", "1", "--max-length", "24"]
        + ["--embedding-dim", "16", "--lstm-units", "8", "--attention-units", "8"]
        + ["--num-hops", "2", "--hidden-units", "16", "--report-samples", "1"]
    )
    _check_export(result, "sentence_embedder", tmp_path / "reports")
