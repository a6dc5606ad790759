"""The translation recipe end to end on its demo pair: train, evaluate, export, reload."""

import json
import os

import numpy as np
import pytest

from zoo.export.testing import check_bad_text_inputs, run_in_fresh_process

pytestmark = pytest.mark.slow

SENTENCES = ["the big dog sees a small cat .", "a red bird likes the old man ."]
EXPECTED = [
    "der hund gross ein katze klein sieht .",
    "ein vogel rot der mann alt mag .",
]


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    from recipes.translation import main

    root = tmp_path_factory.mktemp("translation")
    result = main(
        [
            "--epochs",
            "5",
            "--beam-width",
            "3",
            "--heatmaps",
            "1",
            "--select-on",
            "bleu",
            "--run-dir",
            str(root / "run"),
            "--report-dir",
            str(root / "reports"),
            "--export-dir",
            str(root / "saved_models"),
        ]
    )
    return root, result


def translate_in_fresh_process(version_dir, sentences):
    """Runs in a new process: reload the export, translate raw strings."""
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (registers the ops the graph uses)

    loaded = tf.saved_model.load(version_dir)
    out = {}
    for name in ("serving_default", "translate_greedy"):
        res = loaded.signatures[name](text=tf.constant(sentences))
        out[name] = {
            k: v.numpy().tolist()
            for k, v in res.items()
            if k in ("translation", "score")
        }
        out[name]["translation"] = [t.decode() for t in out[name]["translation"]]
        out[name]["attention_shape"] = list(res["attention"].shape)
        out[name]["target_tokens"] = [
            [t.decode() for t in row] for row in res["target_tokens"].numpy()
        ]
    return out


def test_demo_learns_and_reports(demo_run):
    root, result = demo_run
    assert result["model"] == "translation"
    assert result["value"] > 60.0, result  # the demo pair is learnable in seconds
    metrics = json.loads((root / "reports" / "metrics.json").read_text())
    assert metrics["greedy"]["bleu_signature"].startswith("nrefs:1|case:mixed")
    assert "case:lc" in metrics["beam3"]["bleu_lowercase_signature"]
    assert metrics["beam3"]["sentences_per_second"] > 0
    png = root / "reports" / "attention_0.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_validation_bleu_is_logged_every_epoch(demo_run):
    import csv

    root, _ = demo_run
    with open(root / "run" / "log.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 5
    bleu = [float(row["val_bleu"]) for row in rows]
    assert all(0.0 <= b <= 100.0 + 1e-9 for b in bleu)  # sacrebleu can give 100.00...04
    assert max(bleu) > bleu[0]  # it learned, and the metric saw it
    assert (root / "run" / "best.keras").is_file()


def test_selection_defaults():
    from recipes.translation import parse_config

    real = parse_config(["--data", "some/multi30k"])
    assert (real.select_on, real.training.monitor, real.training.mode) == (
        "bleu",
        "val_bleu",
        "max",
    )
    assert (real.training.decay_factor, real.training.decay_patience) == (0.5, 1)
    assert real.training.ema == 0.999  # weight averaging with --data
    demo = parse_config([])
    assert (demo.select_on, demo.training.monitor) == ("loss", "val_loss")
    assert demo.training.decay_factor == 1.0  # no decay in the demo
    assert demo.training.ema == 0.0  # nor weight averaging
    assert parse_config(["--data", "x", "--ema", "0"]).training.ema == 0.0
    chosen = parse_config(["--data", "x", "--select-on", "loss", "--decay-factor", "1"])
    assert chosen.training.monitor == "val_loss"
    assert chosen.training.decay_factor == 1.0
    with pytest.raises(SystemExit):
        parse_config(["--select-on", "meteor"])
    # a cosine schedule replaces the decay on a plateau; asking for both is refused
    assert real.training.schedule == "constant"
    cosine = parse_config(["--data", "x", "--schedule", "cosine"])
    assert (cosine.training.schedule, cosine.training.decay_factor) == ("cosine", 1.0)
    with pytest.raises(ValueError, match="decay_factor=0.5"):
        parse_config(["--data", "x", "--schedule", "cosine", "--decay-factor", "0.5"])


def test_tie_embeddings_flag_reaches_the_model():
    from recipes.translation import build_model, parse_config

    assert parse_config(["--data", "x"]).tie_embeddings is False
    config = parse_config(["--tie-embeddings"])
    model = build_model(config, 50, 60)
    assert model.decoder.tie_embeddings and model.decoder.output_projection is None
    assert not build_model(parse_config([]), 50, 60).decoder.tie_embeddings


def test_dropout_flags_reach_the_model():
    from recipes.translation import build_model, parse_config

    model = build_model(parse_config(["--dropout", "0.3"]), 50, 60)
    assert (model.dropout, model.embedding_dropout, model.context_dropout) == (
        0.3,
        0.3,
        0.0,
    )
    config = parse_config(
        ["--dropout", "0.4", "--embedding-dropout", "0.2", "--context-dropout", "0.4"]
    )
    model = build_model(config, 50, 60)
    assert model.decoder.embedding_dropout.rate == 0.2
    assert model.decoder.readout_dropout.rate == 0.4
    assert model.get_layer("context_dropout").rate == 0.4
    with pytest.raises(ValueError, match="Received: context_dropout=1.5"):
        build_model(parse_config(["--context-dropout", "1.5"]), 50, 60)


def test_export_reloads_in_fresh_process(demo_run):
    root, result = demo_run
    version_dir = result["export"]
    assert version_dir.endswith(os.path.join("translation", "1"))
    assert os.path.exists(version_dir + ".keras")
    manifest = json.loads(
        open(os.path.join(version_dir, "assets.extra", "manifest.json")).read()
    )
    text = json.dumps(manifest)
    assert '"beam_width": 3' in text and "coverage_penalty_beta" in text
    out = run_in_fresh_process(translate_in_fresh_process, version_dir, SENTENCES)
    for name in ("serving_default", "translate_greedy"):
        got = out[name]
        assert len(got["translation"]) == 2
        matches = sum(
            g.replace(" .", ".") == e.replace(" .", ".")
            for g, e in zip(got["translation"], EXPECTED, strict=True)
        )
        assert matches >= 1, got["translation"]
        batch, t_tgt, t_src = got["attention_shape"]
        assert batch == 2 and t_src == 8  # 7 words + "." (whole-word subwords)
        assert len(got["target_tokens"][0]) == t_tgt
        assert all(np.isfinite(got["score"])) and all(s < 0 for s in got["score"])


def test_bad_inputs_against_reloaded_export(demo_run):
    _, result = demo_run
    for signature in ("serving_default", "translate_greedy"):
        results = check_bad_text_inputs(result["export"], signature=signature)
        assert results["batch_of_zero"]["translation"].shape == (0,)
        assert results["batch_of_zero"]["attention"].shape[0] == 0
        # an empty source still decodes to a short, well-defined output
        assert results["empty"]["translation"].shape == (1,)
        assert results["one_megabyte"]["source_tokens"].shape[1] <= 24
