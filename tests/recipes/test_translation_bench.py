"""bench.translation: the recipe runs it starts, its choice of decoding settings."""

import json
import types

import pytest

from bench import translation as bench


def _fake_translator(val_bleu, decoded):
    """Translators whose validation BLEU depends on the setting only (`val_bleu`):
    every hypothesis is the reference when the setting's score is 100, else empty."""
    import tensorflow as tf

    def translator(width, alpha, beta):
        def translate(text):
            decoded.append(
                ((width, alpha, beta), tuple(t.decode() for t in text.numpy()))
            )
            good = val_bleu[(width, alpha, beta)] == 100.0
            return {"translation": text if good else tf.fill(tf.shape(text), "")}

        return translate

    return translator


def test_tune_decoding_takes_the_best_validation_setting():
    args = bench.parse_args(
        ["--tune-beams", "1,5", "--tune-alphas", "0.6,1.0", "--tune-betas", "0"]
    )
    assert args.tune_grid == [
        (1, 0.6, 0.0),
        (1, 1.0, 0.0),
        (5, 0.6, 0.0),
        (5, 1.0, 0.0),
    ]
    val_bleu = {(1, 0.6, 0.0): 0.0, (1, 1.0, 0.0): 0.0, (5, 0.6, 0.0): 0.0}
    val_bleu[(5, 1.0, 0.0)] = 100.0
    decoded = []
    sources = ["a dog runs on the grass .", "two men sit on a bench ."]
    val = types.SimpleNamespace(sources=sources, targets=sources)
    chosen = bench.tune_decoding(args, _fake_translator(val_bleu, decoded), val)
    assert chosen == (5, 1.0, 0.0)
    # every setting decoded the validation sources (batched by length), nothing else
    assert [setting for setting, _ in decoded] == args.tune_grid
    assert {texts for _, texts in decoded} == {tuple(sorted(sources, key=len))}


def test_tune_ties_keep_the_earlier_setting():
    args = bench.parse_args(["--tune-beams", "5,10", "--tune-alphas", "0.6"])
    val_bleu = {(w, 0.6, b): 100.0 for w in (5, 10) for b in (0.0, 0.2)}
    val = types.SimpleNamespace(sources=["x y z"], targets=["x y z"])
    chosen = bench.tune_decoding(args, _fake_translator(val_bleu, []), val)
    assert chosen == (5, 0.6, 0.0)


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--tune-beams", "5,x"], "invalid literal"),
        (["--tune-beams", "0"], "must be >= 1"),
        (["--tune-alphas", "-1"], "'-1'"),
    ],
)
def test_tune_grid_bad_values(flags, message, capsys):
    with pytest.raises(SystemExit):
        bench.parse_args(flags)
    assert message in capsys.readouterr().err


def test_raw_weights_needs_decode_only(capsys):
    with pytest.raises(SystemExit):
        bench.main(["--raw-weights", "--directions", "de-en"])
    assert "--raw-weights scores a saved checkpoint" in capsys.readouterr().err


def test_recipe_flags_are_the_recipes():
    from zoo.recipes.translation import parse

    args = bench.parse_args(
        ["--units", "128", "--limit", "500", "--extra=--dropout 0.4 --ema 0.99"]
    )
    args.data = "corpus"
    flags = bench.recipe_flags(args, "de", "en", "luong-general-local-p", "RUN")
    assert flags[flags.index("--data") :][:6] == [
        "--data", "corpus", "--source", "de", "--target", "en"
    ]  # fmt: skip
    args.data = None  # the demo: no --data, --source or --target
    demo_flags = bench.recipe_flags(args, "src", "tgt", "none", "RUN")
    assert "--data" not in demo_flags
    # the recipe accepts them and they mean what the benchmark says
    config = parse(demo_flags)
    assert (config.embedding_dim, config.decoder_units, config.attention) == (
        128,
        128,
        "none",
    )
    assert (config.max_train_samples, config.dropout, config.training.ema) == (
        500,
        0.4,
        0.99,
    )
    assert (config.training.patience, config.beam_width, config.run_dir) == (
        0,
        5,
        "RUN",
    )
    assert flags[flags.index("--window") + 1] == "local-p"


@pytest.mark.slow
def test_trains_with_the_recipe_then_scores_its_export(tmp_path):
    argv = ["--directions", "src-tgt", "--attentions", "bahdanau", "--epochs", "2"]
    argv += ["--units", "16", "--vocab-size", "200", "--beam-width", "2"]
    argv += ["--eval-limit", "30", "--run-dir", str(tmp_path / "runs")]
    rows = bench.main([*argv, "--out", str(tmp_path / "out.json")])
    assert [r["search"] for r in rows] == ["greedy", "beam2"]
    greedy = rows[0]
    # the bench's splits are the recipe's: its training pairs, its test set
    splits = bench.load_splits(bench.parse_args([]), "src", "tgt")
    assert greedy["test_pairs"] == 30
    assert greedy["train_pairs"] == len(splits["train"])
    assert greedy["train_tokens_per_second"] > 0 and greedy["train_seconds"] > 0
    assert greedy["decode_sentences_per_second"] > 0
    run_dir = tmp_path / "runs" / "src-tgt-bahdanau"
    hypotheses = (run_dir / "hypotheses.greedy.tgt.txt").read_text().splitlines()
    assert len(hypotheses) == 30 and hypotheses[0] == greedy["example"]["hypothesis"]
    # the rows' BLEU is that of these hypotheses, in test order, against the first
    # 30 test references of the recipe's split (and not of any other order)
    from zoo.metrics import corpus_bleu

    test = splits["test"].take(30)
    cased, _ = corpus_bleu(hypotheses, test.targets)
    lowercase, _ = corpus_bleu(hypotheses, test.targets, lowercase=True)
    assert (greedy["bleu"], greedy["bleu_lowercase"]) == (
        round(cased, 2),
        round(lowercase, 2),
    )
    shifted, _ = corpus_bleu(hypotheses, test.targets[1:] + test.targets[:1])
    assert round(shifted, 2) != greedy["bleu"] or greedy["bleu"] == 0
    saved = json.loads((tmp_path / "out.json").read_text())
    assert saved["rows"] == rows
    # the best epoch's checkpoint in the architecture of the export
    again = bench.main([*argv, "--decode-only", "--out", str(tmp_path / "again.json")])
    assert again[0]["weights"] == "best validation epoch"
    assert again[0]["train_tokens_per_second"] is None
