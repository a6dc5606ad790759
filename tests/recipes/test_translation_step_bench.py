"""The training-step benchmark (bench.translation_step) on the generated demo corpus."""

import pytest


def test_times_real_training_steps_on_the_demo_corpus():
    from bench.translation_step import main

    result = main(["--units", "16", "--batches", "3", "--rounds", "2"])
    assert result["batches"] == 3
    assert result["target_tokens"] > 3 * 2  # real (non-padding) labels were counted
    assert len(result["seconds"]) == 2 and min(result["seconds"]) > 0
    assert result["median_tokens_per_second"] > 0
    assert result["loss_after"] > 0


@pytest.mark.parametrize("flag", ["--batches", "--rounds", "--units"])
def test_counts_must_be_positive(flag, capsys):
    from bench.translation_step import parse_args

    with pytest.raises(SystemExit):
        parse_args([flag, "0"])
    assert f"{flag} must be >= 1. Received: 0" in capsys.readouterr().err
