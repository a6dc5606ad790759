"""bench.attention_variants: the entropy of attention weights, the table, and one
small run of two variants end to end (numbers recomputed from what it wrote, the
HTML page rendered in headless Chromium)."""

import json
import math
import shutil

import numpy as np
import pytest

from bench import attention_variants as av


def _row(weights, source):
    return {"attention": np.asarray(weights, "float32"), "source_tokens": source}


def test_attention_entropy_is_zero_for_one_hot_and_log_n_for_uniform():
    uniform = _row([[0.25] * 4, [0.25] * 4], ["a", "b", "c", "d"])
    one_hot = _row([[0, 1, 0, 0, 0, 0]], ["a", "b", "c", "d", "", ""])  # padded
    entropy, normalized = av.attention_entropy([uniform])
    assert entropy == pytest.approx(math.log(4)) and normalized == pytest.approx(1.0)
    entropy, normalized = av.attention_entropy([one_hot])
    assert entropy == pytest.approx(0.0) and normalized == pytest.approx(0.0)
    # rows of zero weight (padding of the target) are left out of the mean
    mixed = _row([[0.5, 0.5, 0, 0], [0, 0, 0, 0]], ["a", "b", "c", "d"])
    entropy, normalized = av.attention_entropy([mixed, one_hot])
    assert entropy == pytest.approx(math.log(2) / 2)
    assert normalized == pytest.approx(math.log(2) / math.log(4) / 2)
    assert av.attention_entropy([]) == (None, None)


def test_unknown_variants_and_budgets_are_refused(capsys):
    with pytest.raises(SystemExit) as exit_info:
        av.parse_args(["--variants", "bahdanau,luong-magic"])
    assert exit_info.value.code == 2
    assert "luong-magic" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        av.parse_args(["--minutes", "0"])


@pytest.mark.parametrize("with_data", [False, True], ids=["demo", "data"])
def test_every_variant_is_a_valid_recipe_command(tmp_path, with_data):
    from zoo.recipes import translation

    data = []
    if with_data:  # the recipe's real-data sizes: 2 x 256 encoder, 256 decoder
        (tmp_path / "pairs.tsv").write_text("a house\tein Haus\n", encoding="utf-8")
        data = ["--data", str(tmp_path / "pairs.tsv"), "--source", "en"]
        data += ["--target", "de"]
    for variant in av.VARIANTS:
        args = av.parse_args(["--variants", variant, "--out", str(tmp_path), *data])
        command = av.recipe_command(args, variant)
        config = translation.parse(command[3:])  # after `python -m MODULE`
        assert config.training.time_limit == args.minutes
        assert config.attention == (
            "none" if variant == "none" else variant.split("-")[0]
        )
        matched = with_data and variant in ("luong-dot", "luong-cosine")
        assert config.encoder_units == (128 if matched else 256 if with_data else 32)


@pytest.mark.slow
def test_two_variants_end_to_end(tmp_path):
    from bench.translation_time import score

    out = tmp_path / "av"
    # a minute: two demo epochs end well before it, even on a loaded machine,
    # so each variant has a complete timed epoch (its training rate)
    argv = ["--quick", "--minutes", "1", "--variants", "none,bahdanau"]
    argv += ["--out", str(out), "--examples", "2", "--extra=--epochs 2"]
    results = av.main(argv)
    written = json.loads((out / "variants.json").read_text())
    assert [r["variant"] for r in written["results"]] == ["none", "bahdanau"]
    test = av.test_pairs(av.parse_args(argv))
    for result in written["results"]:
        hypotheses = (
            (out / result["variant"] / "hypotheses.tgt.txt")
            .read_text(encoding="utf-8")
            .splitlines()
        )
        assert len(hypotheses) == result["test_pairs"] == len(test.sources)
        again = score(hypotheses, test.targets, "en")
        assert result["bleu_lowercase"] == pytest.approx(again["bleu_lowercase"])
        assert result["train_tokens_per_second"] > 0
        assert result["decode_sentences_per_second"] > 0
    none, bahdanau = results
    assert none["attention_entropy"] is None
    # the entropies are those of the export's own attention over the test set
    import keras

    task = keras.saving.load_model(bahdanau["export"] + ".keras", compile=False)
    rows = task.translate(test.sources, return_attention=True)
    entropy, normalized = av.attention_entropy(rows)
    assert bahdanau["attention_entropy"] == pytest.approx(entropy, rel=1e-4)
    assert bahdanau["attention_entropy_normalized"] == pytest.approx(
        normalized, rel=1e-4
    )
    table = (out / "variants.md").read_text()
    assert "| none |" in table and "| bahdanau |" in table
    page = (out / "attention.html").read_text(encoding="utf-8")
    assert page.count('<table class="att">') == 2  # bahdanau's two sentences
    # the results table above the maps, as HTML cells
    bleu = f"<td>{bahdanau['bleu_lowercase']:.2f}</td>"
    assert '<table class="summary">' in page and "<td>bahdanau</td>" + bleu in page
    assert page.count("no attention: the decoder reads a fixed mean context") == 2
    if shutil.which("chromium"):
        from tests.chromium import dump_dom, screenshot

        assert (
            screenshot(out / "attention.html", tmp_path / "s.png", tmp_path / "u")
            > 5000
        )
        assert (
            dump_dom(out / "attention.html", tmp_path / "v").count("<table") == 3
        )  # results + maps
