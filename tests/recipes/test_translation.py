"""The translation recipe end to end on its demo pair: train, evaluate, export, reload."""

import json
import os
import types

import numpy as np
import pytest

from tests.export.export_testing import check_bad_text_inputs, run_in_fresh_process
from tests.serving.recipe_serving import check_local_grpc_and_rest_agree

SENTENCES = ["the big dog sees a small cat .", "a red bird likes the old man ."]
EXPECTED = [
    "der hund gross ein katze klein sieht .",
    "ein vogel rot der mann alt mag .",
]


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    from zoo.recipes.translation import main

    root = tmp_path_factory.mktemp("translation")
    (root / "warmup.txt").write_text("\n".join(WARMUP) + "\n", encoding="utf-8")
    result = main(
        [
            "--warmup-texts",
            str(root / "warmup.txt"),
            "--epochs",
            "5",
            "--beam-width",
            "3",
            "--alpha",  # chosen on validation, as with --data
            "auto",
            "--alpha-grid",
            "0.6,1.5",
            "--report-samples",
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


# --warmup-texts: the export's warm-up requests are these source sentences
WARMUP = ["a sentence of my own", "und noch einer"]


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


@pytest.mark.slow
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


@pytest.mark.slow
def test_alpha_auto_exports_the_best_validation_length_penalty(demo_run):
    from zoo.export import load_manifest

    root, result = demo_run
    with open(root / "reports" / "metrics.json") as f:
        metrics = json.load(f)
    scores = metrics["alpha_validation_bleu"]  # one beam search per alpha tried
    assert sorted(scores) == ["0.6", "1.5"]
    best = max(scores, key=lambda alpha: (scores[alpha], -float(alpha)))
    assert metrics["alpha"] == float(best)
    manifest = load_manifest(result["export"])
    decoding = manifest["metadata"]["decoding"]["serving_default"]
    assert decoding["length_penalty_alpha"] == metrics["alpha"]


@pytest.mark.slow
def test_validation_bleu_is_logged_every_epoch(demo_run):
    import csv

    root, _ = demo_run
    with open(root / "run" / "log.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 5
    bleu = [float(row["val_bleu"]) for row in rows]
    assert min(bleu) >= 0.0 and max(bleu) > 20.0  # the demo pair is learned in 5 epochs
    assert max(bleu) > bleu[0]  # it learned, and the metric saw it
    assert (root / "run" / "best.keras").is_file()


def parse(argv):
    from zoo.recipes.translation import parse

    return parse(argv)


def build(config, source_vocab_size=50, target_vocab_size=60):
    """The network of the recipe's task for `config` on vocabularies of the given
    sizes."""
    return build_task(config, source_vocab_size, target_vocab_size).backbone


def build_task(config, source_vocab_size=50, target_vocab_size=60):
    """The recipe's compiled task for `config` on vocabularies of the given sizes."""
    import tempfile

    import tensorflow as tf
    from zoo.recipes.translation import NAME, build_task

    from zoo.models.translation import Seq2SeqTranslatorPreprocessor
    from zoo.text.subword import RESERVED_TOKENS, save_vocabulary
    from zoo.training.steps import RecipeRun

    folder = tempfile.mkdtemp(prefix="translation-vocab-")
    files = [
        save_vocabulary(
            RESERVED_TOKENS + [f"{side}{i}" for i in range(size - 4)],
            os.path.join(folder, f"{side}.txt"),
        )
        for side, size in (("s", source_vocab_size), ("t", target_vocab_size))
    ]
    assets = dict(zip(Seq2SeqTranslatorPreprocessor.asset_names, files, strict=True))
    pre = Seq2SeqTranslatorPreprocessor(max_length=64, assets=assets)
    data = types.SimpleNamespace(preprocessor=pre)
    run = RecipeRun(NAME, config, tf.distribute.get_strategy(), config.run_dir)
    return build_task(config, data, run, log=lambda line: None)


def test_selection_and_training_defaults(tmp_path):
    from zoo.models.translation.validation_bleu import penalty_list

    data = ["--data", str(tmp_path)]
    real = parse(data)
    assert (real.select_on, real.training.monitor, real.training.mode) == (
        "bleu",
        "val_bleu",
        "max",
    )
    assert (real.training.decay_factor, real.training.decay_patience) == (0.5, 1)
    assert real.training.ema == 0.999  # weight averaging with --data
    assert (real.training.patience, parse([]).training.patience) == (6, 3)
    assert (real.training.epochs, real.training.learning_rate) == (22, 2e-3)
    assert (real.embedding_dim, real.vocab_size, real.max_length) == (256, 8000, None)
    assert (real.source, real.target, real.dropout) == ("en", "de", 0.4)
    # the regularisation of the best measured configuration
    assert (real.embedding_dropout, real.context_dropout) == (0.2, 0.4)
    assert real.tie_embeddings and real.training_logits_dtype == "auto"
    # Luong general without input feeding with --data; Bahdanau on the demo
    assert (real.attention, real.score, real.input_feeding) == (
        "luong",
        "general",
        False,
    )
    assert (parse([]).attention, parse([]).input_feeding) == ("bahdanau", False)
    assert parse([*data, "--input-feeding"]).input_feeding
    assert not parse([*data, "--input-feeding", "--no-input-feeding"]).input_feeding
    # beam search without the coverage penalty with --data (chosen on validation)
    # the length penalty chosen on validation after training with --data
    assert (real.beam_width, real.alpha, real.beta) == (5, "auto", 0.0)
    assert penalty_list(real.alpha_grid) == [0.6, 1.0, 1.3, 1.6, 2.0]
    assert (parse([]).alpha, parse([]).beta) == (0.6, 0.2)
    assert parse([*data, "--alpha", "0.8"]).alpha == 0.8
    assert parse(["--alpha", "auto"]).alpha == "auto"
    # the layer-normalized readout for real data and the demo alike
    assert real.readout == parse([]).readout == "layer_norm"
    demo = parse([])
    assert (demo.select_on, demo.training.monitor) == ("loss", "val_loss")
    assert demo.training.decay_factor == 1.0  # no decay in the demo
    assert demo.training.ema == 0.0  # nor weight averaging
    assert (demo.training.epochs, demo.training.learning_rate) == (6, 5e-3)
    assert (demo.encoder_units, demo.decoder_units, demo.demo_size) == (32, 64, 2400)
    assert (demo.dropout, demo.embedding_dropout, demo.context_dropout) == (0, None, 0)
    assert not demo.tie_embeddings and demo.training_logits_dtype == "float32"
    assert parse([*data, "--ema", "0"]).training.ema == 0.0
    chosen = parse([*data, "--select-on", "loss", "--decay-factor", "1"])
    assert chosen.training.monitor == "val_loss"
    assert chosen.training.decay_factor == 1.0
    # a time limit keeps the decay on a plateau
    assert parse([*data, "--time-limit", "30"]).training.decay_factor == 0.5
    assert type(real.training.decay_factor) is float  # a plain number in the identity
    assert parse([*data, "--decay-factor", "0.7"]).training.decay_factor == 0.7


def test_help_names_the_decay_default_with_data(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        parse(["--data", str(tmp_path), "--help"])
    assert exit_info.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    flag = text[text.index("--decay-factor FACTOR multiply") :]
    flag = flag[: flag.index(" --decay-patience N ")]
    assert flag.endswith("(1 disables it) [with --data: 0.5; demo: 1] (default: 0.5)")
    assert "--schedule" not in text


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--select-on", "meteor"], "--select-on: invalid choice: 'meteor'"),
        (["--beam-width", "0"], "--beam-width: must be > 0"),
        (["--context-dropout", "1.5"], "--context-dropout: must be in [0, 1)"),
        (["--alpha", "-1"], "--alpha: must be >= 0 or auto, got '-1'"),
        (["--alpha", "best"], "--alpha: invalid number_or_auto value: 'best'"),
        (["--alpha-grid", "0.6,x"], "--alpha-grid: not a number: 'x'"),
        (["--alpha-grid", "0.6,-1"], "--alpha-grid: every value must be a finite"),
        (["--alpha-grid", ""], "--alpha-grid: not a number: ''"),
        (["--readout", "relu"], "--readout: invalid choice: 'relu'"),
        (["--attention", "luong", "--tie-embeddings"], "--embedding-dim must be"),
        (["--attention", "luong", "--score", "dot", "--decoder-units", "48"], "2 x"),
        (["--score", "cosine"], "apply to --attention luong"),
        (["--window", "local-m"], "apply to --attention luong"),
        (["--attention", "luong", "--attention-normalize"], "applies to --attention"),
        (["--attention", "bahdanau", "--input-feeding"], "--input-feeding applies to"),
        (["--attention-probability", "argmax"], "invalid choice: 'argmax'"),
        (["--data", "/no/such/corpus"], "no such file or folder"),
    ],
)
def test_bad_values_are_argparse_errors(flags, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        parse(flags)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_model_flags_reach_the_model():
    model = build(parse(["--tie-embeddings", "--rnn", "lstm", "--window-size", "4"]))
    assert model.decoder.tie_embeddings and model.decoder.output_projection is None
    assert (model.rnn, model.window_size, model.window) == ("lstm", 4, None)
    assert (model.source_vocab_size, model.target_vocab_size) == (50, 60)
    assert not build(parse([])).decoder.tie_embeddings
    assert build(parse([])).decoder.readout_type == "layer_norm"
    assert build(parse(["--readout", "tanh"])).decoder.readout_type == "tanh"
    model = build(parse(["--attention", "luong", "--window", "local-p"]))
    assert (model.attention, model.window) == ("luong", "local-p")
    # the task that is fit is compiled by its default_compile: the fused Adam,
    # clipped per weight, at the flags' rate; its preprocessor has the vocabularies
    task = build_task(parse(["--label-smoothing", "0.2", "--learning-rate", "0.01"]))
    assert type(task).__name__ == "Seq2SeqTextTranslator"
    assert task.preprocessor.source_vocab_size == task.backbone.source_vocab_size == 50
    optimizer = task.optimizer
    assert type(optimizer).__name__ == "FusedAdam" and optimizer.clipnorm == 5.0
    assert float(optimizer.learning_rate) == pytest.approx(0.01)
    assert task.loss.label_smoothing == 0.2
    # the searches are the flags' ("auto": the task's alpha until it is chosen)
    assert (task.beam_width, task.alpha, task.beta) == (5, 0.6, 0.2)
    task = build_task(parse(["--data", "/tmp", "--beam-width", "3"]))
    assert (task.beam_width, task.alpha, task.beta) == (3, 1.0, 0.0)


@pytest.mark.parametrize(
    "flags, expected",
    [
        (["--attention", "luong", "--window", "local-m"], {"window": "local-m"}),
        (
            ["--attention", "luong", "--score", "location"],
            {"score": "location", "max_source_length": 64},
        ),
        (["--attention", "luong", "--score", "cosine"], {"score": "cosine"}),
        (["--attention", "luong", "--input-feeding"], {"input_feeding": True}),
        (["--attention", "luong", "--no-input-feeding"], {"input_feeding": False}),
        (
            ["--attention", "luong", "--attention-probability", "gumbel"],
            {"attention_probability": "gumbel"},
        ),
        (
            ["--attention-probability", "hardmax", "--attention-normalize"],
            {"attention_probability": "hardmax", "attention_normalize": True},
        ),
    ],
)
def test_every_attention_variant_is_reachable_from_the_recipe(flags, expected):
    model = build(parse(flags))
    for key, value in expected.items():
        assert getattr(model.decoder, key) == value, key
    layer = model.decoder.attention_layer
    probability = expected.get("attention_probability", "softmax")
    assert layer.probability == probability


def test_dropout_flags_reach_the_model():
    model = build(parse(["--dropout", "0.3"]))
    assert (model.dropout, model.embedding_dropout, model.context_dropout) == (
        0.3,
        0.3,
        0.0,
    )
    flags = ["--dropout", "0.4", "--embedding-dropout", "0.2", "--context-dropout"]
    model = build(parse([*flags, "0.4"]))
    assert model.decoder.embedding_dropout.rate == 0.2
    assert model.decoder.readout_dropout.rate == 0.4
    assert model.get_layer("context_dropout").rate == 0.4


def test_load_data_samples_and_learns_vocabularies(tmp_path):
    from zoo.recipes.translation import load_data

    flags = ["--demo-size", "400", "--max-train-samples", "100"]
    flags += ["--max-eval-samples", "10", "--run-dir", str(tmp_path)]
    data = load_data(parse(flags))
    sizes = {name: len(corpus) for name, corpus in data.splits.items()}
    assert sizes == {"train": 100, "val": 10, "test": 10}
    assert sorted(p.name for p in tmp_path.glob("vocab.*")) == [
        "vocab.source.src.ddd78e22.txt",
        "vocab.target.tgt.ddd78e22.txt",
    ]
    inputs, labels = next(iter(data.train))
    assert inputs["source_ids"].shape[0] == labels.shape[0] <= 64
    again = load_data(parse(flags))  # same sample, same vocabularies
    assert again.fingerprint == data.fingerprint
    assert again.splits["train"].sources == data.splits["train"].sources


@pytest.mark.slow
def test_export_reloads_in_fresh_process(demo_run):
    root, result = demo_run
    version_dir = result["export"]
    assert version_dir.endswith(os.path.join("translation", "1"))
    assert os.path.exists(version_dir + ".keras")
    import keras

    from zoo.models.translation import Seq2SeqTextTranslator, Seq2SeqTranslator

    task = keras.saving.load_model(version_dir + ".keras")  # the task on raw text
    assert isinstance(task, Seq2SeqTextTranslator) and task.beam_width == 3
    assert isinstance(task.backbone, Seq2SeqTranslator)
    manifest = json.loads(
        open(os.path.join(version_dir, "assets.extra", "manifest.json")).read()
    )
    text = json.dumps(manifest)
    assert '"beam_width": 3' in text and "coverage_penalty_beta" in text
    # the precision the logits product trained in (the demo: float32)
    assert manifest["metadata"]["training_logits_dtype"] == "float32"
    from zoo.export.verify import verify_in_fresh_process

    report = verify_in_fresh_process(version_dir, timeout=600)
    assert report["ok"], report["errors"]
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
    # the task's translate is the export's greedy and beam search
    assert task.translate(SENTENCES) == out["translate_greedy"]["translation"]
    assert (
        task.translate(SENTENCES, beam_width=3) == out["serving_default"]["translation"]
    )


@pytest.mark.slow
def test_bad_inputs_against_reloaded_export(demo_run):
    _, result = demo_run
    for signature in ("serving_default", "translate_greedy"):
        results = check_bad_text_inputs(result["export"], signature=signature)
        assert results["batch_of_zero"]["translation"].shape == (0,)
        assert results["batch_of_zero"]["attention"].shape[0] == 0
        # an empty source still decodes to a short, well-defined output
        assert results["empty"]["translation"].shape == (1,)
        assert results["one_megabyte"]["source_tokens"].shape[1] <= 24


def test_explicit_split_files_are_checked_one_by_one(tmp_path, capsys):
    for name in ("train.en", "train.vi", "test.tsv"):
        (tmp_path / name).write_text("hello\n")
    pair = f"{tmp_path / 'train.en'},{tmp_path / 'train.vi'}"
    config = parse(["--data", pair, "--test-data", str(tmp_path / "test.tsv")])
    assert config.data == pair and config.source_column is None
    missing = str(tmp_path / "valid.vi")
    with pytest.raises(SystemExit) as exit_info:
        parse(["--data", pair, "--valid-data", f"{tmp_path / 'train.en'},{missing}"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"--valid-data: no such file or folder: {missing}" in err
    assert len(err.strip().splitlines()) == 1
    with pytest.raises(SystemExit):
        parse(["--data", pair, "--source-column", "2"])


@pytest.mark.slow
def test_warmup_requests_are_the_given_sources(demo_run):
    from zoo.export.warmup import read_warmup

    _, result = demo_run
    path = os.path.join(result["export"], "assets.extra", "tf_serving_warmup_requests")
    records = list(read_warmup(path))
    assert records
    for _, inputs in records:
        (texts,) = [v for v in inputs.values() if v.dtype == object]
        assert [t.decode("utf-8") for t in texts] == WARMUP


@pytest.mark.parametrize(
    "content, message",
    [
        (b"caf\xe9\n", "not UTF-8 text"),
        (b"\n \n", "no example text"),
        (None, "--warmup-texts: no such file"),
    ],
)
def test_a_bad_warmup_file_is_refused_before_training(
    tmp_path, capsys, content, message
):
    from zoo.recipes.translation import parse

    path = tmp_path / "w.txt"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(SystemExit) as exit_info:
        parse(["--warmup-texts", str(path)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "w.txt" in err and len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_local_grpc_and_rest_answers_agree(demo_run):
    check_local_grpc_and_rest_agree(
        demo_run[1]["export"],
        "translation",
        {
            "serving_default": ["a red house", "the small dog runs"],
            "translate_greedy": ["a red house"],
        },
    )
