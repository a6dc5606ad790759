"""The training-step benchmark (bench.translation_step) on the generated demo corpus."""

import pytest


def test_times_real_training_steps_on_the_demo_corpus(tmp_path):
    from bench.translation_step import main

    argv = ["--units", "16", "--batches", "3", "--rounds", "2", "--vocab-size", "200"]
    result = main([*argv, "--run-dir", str(tmp_path)])
    assert result["batches"] == 3
    assert result["target_tokens"] > 3 * 2  # real (non-padding) labels were counted
    assert len(result["seconds"]) == 2 and min(result["seconds"]) > 0
    assert result["median_tokens_per_second"] > 0
    assert result["loss_after"] > 0
    assert sorted(p.name.split(".")[1] for p in tmp_path.glob("vocab.*")) == [
        "source",
        "target",
    ]


@pytest.mark.parametrize("flag", ["--batches", "--rounds", "--units"])
def test_counts_must_be_positive(flag, capsys):
    from bench.translation_step import parse_args

    with pytest.raises(SystemExit):
        parse_args([flag, "0"])
    assert f"{flag} must be >= 1. Received: 0" in capsys.readouterr().err


def test_defaults_are_the_recipes_with_data_and_extra_adds_flags(tmp_path):
    from zoo.recipes.translation import parse

    from bench.translation_step import parse_args

    args = parse_args(["--extra=--training-logits-dtype bfloat16 --ema 0"])
    assert (args.training_logits_dtype, args.ema) == ("bfloat16", 0.0)
    args = parse_args([])
    recipe = parse(["--data", str(tmp_path)])
    shared = (
        "vocab_size max_length max_words attention input_feeding rnn dropout "
        "embedding_dropout "
        "context_dropout training_logits_dtype tie_embeddings label_smoothing readout"
    ).split()
    assert {k: getattr(args, k) for k in shared} == {
        k: getattr(recipe, k) for k in shared
    }
    assert args.units == recipe.embedding_dim == recipe.decoder_units
    training = recipe.training
    assert (args.batch_size, args.learning_rate, args.ema, args.seed) == (
        training.batch_size,
        training.learning_rate,
        training.ema,
        training.seed,
    )
