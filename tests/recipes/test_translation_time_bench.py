"""The time-to-quality benchmark (bench.translation_time) on a tiny corpus."""

import json

import pytest


def test_bad_budgets_are_argparse_errors(capsys):
    from bench.translation_time import parse_args

    for argv, message in (
        (["--minutes", "0"], "--minutes must be > 0"),
        (["--every", "-1"], "--every must be > 0"),
        (["--minutes", "1", "--every", "2"], "--every (2.0) must not exceed"),
    ):
        with pytest.raises(SystemExit):
            parse_args(["--data", "x", *argv])
        assert message in capsys.readouterr().err


def test_table_lines_up_the_minutes_of_both_systems():
    from bench.translation_time import table

    results = {
        "peer": {"points": [{"minutes": 1.0, "bleu_lowercase": 3.0},
                            {"minutes": 2.0, "bleu_lowercase": 5.5}]},
        "zoo": {"points": [{"minutes": 1.0, "bleu_lowercase": 7.25}],
                "end": {"minutes": 1.4, "search": "beam5", "bleu_lowercase": 9.0}},
    }  # fmt: skip
    assert table(results, 1.0).splitlines()[2:] == [
        "| 1 | 3.00 | 7.25 |",
        "| 2 | 5.50 |  |",
        "| 1.4 (zoo's end, beam5) |  | 9.00 |",
    ]


def test_peer_standardization_can_keep_every_letter():
    import tensorflow as tf

    from bench.translation_peer import standardize

    out = standardize(tf.constant(["Mädchen läuft, Tiếng Việt!"]), letters="unicode")
    assert out.numpy()[0].decode() == "[START] mädchen läuft ,  tiếng việt ! [END]"


@pytest.mark.slow
def test_both_systems_train_snapshot_and_score(tmp_path):
    from bench.translation_time import main
    from zoo.data.parallel import demo_corpus

    corpus = demo_corpus(600, seed=0)
    data = tmp_path / "pairs.tsv"
    data.write_text(
        "".join(
            f"{t}\t{s}\n" for s, t in zip(corpus.sources, corpus.targets, strict=True)
        ),
        encoding="utf-8",
    )
    tiny = (
        "--epochs 1000 --patience 0 --embedding-dim 8 --encoder-units 8 "
        "--decoder-units 8 "
        "--vocab-size 60 --beam-width 2 --select-on loss --no-tensorboard"
    )
    argv = ["--data", str(data), "--source", "xx", "--target", "en",
            "--minutes", "0.3", "--every", "0.1", "--units", "8",
            "--zoo-flags", tiny, "--run-dir", str(tmp_path / "run"),
            "--out", str(tmp_path / "out")]  # fmt: skip
    results = main(argv)
    for name in ("peer", "zoo"):
        minutes = [p["minutes"] for p in results[name]["points"]]
        assert minutes[:3] == pytest.approx([0.1, 0.2, 0.3])
        assert all(0 <= p["bleu_lowercase"] <= 100 for p in results[name]["points"])
    assert results["zoo"]["end"]["search"] == "beam2"
    for name in ("peer", "zoo"):  # speed over complete epochs, by the same meter
        speed = results[name]["speed"]
        assert speed["tokens_per_second"] and min(speed["tokens_per_second"]) > 0
        rates = speed["tokens_per_second"]
        assert min(rates) <= speed["median_tokens_per_second"] <= max(rates)
    assert results["peer"]["speed"]["padded_to"] == 40
    saved = json.loads((tmp_path / "out" / "xx-en.json").read_text())
    assert saved["table"].startswith("| minutes | peer | zoo |")
    assert (tmp_path / "out" / "xx-en.png").stat().st_size > 1000
    # --rescore: the same snapshots scored again, no training; speeds carried over
    again = main([*argv, "--rescore"])
    for name in ("peer", "zoo"):
        assert [p["minutes"] for p in again[name]["points"]] == [
            p["minutes"] for p in results[name]["points"]
        ]
        assert again[name]["speed"] == results[name]["speed"]
    assert [p["bleu_lowercase"] for p in again["peer"]["points"]] == pytest.approx(
        [p["bleu_lowercase"] for p in results["peer"]["points"]]
    )


def test_peer_words_are_detokenized_before_scoring():
    from bench.translation_time import detokenize

    spaced = ["¿ qué hora es ? no lo sé .", "ein mann , der „ hallo “ sagt ."]
    assert detokenize(spaced[:1], "es") == ["¿qué hora es? no lo sé."]
    assert detokenize(spaced[1:], "de") == ["ein mann, der „hallo“ sagt."]
