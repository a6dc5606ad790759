"""bench.translation_test_sets: an export scored on extra test sets read from raw
Multi30k-style files; the numbers recomputed from the same translations."""

import gzip
import json

import pytest


@pytest.mark.slow
def test_an_export_is_scored_on_every_set(tmp_path):
    import keras
    from zoo.recipes.translation import main

    from bench import translation_test_sets as bench
    from bench.translation_time import score
    from zoo.demo.parallel import demo_corpus

    result = main(
        ["--epochs", "3", "--run-dir", str(tmp_path / "run"), "--report-dir",
         str(tmp_path / "reports"), "--export-dir", str(tmp_path / "export")]
    )  # fmt: skip
    data = tmp_path / "m30k" / "data" / "task1" / "raw"
    data.mkdir(parents=True)
    corpus = demo_corpus(60, seed=99)
    pairs = list(zip(corpus.sources, corpus.targets, strict=True))
    parts = {"test_2017_flickr": pairs[:40], "test_2017_mscoco": pairs[40:]}
    for name, part in parts.items():
        for side, lang in ((0, "src"), (1, "tgt")):
            with gzip.open(data / f"{name}.{lang}.gz", "wt", encoding="utf-8") as f:
                f.writelines(pair[side] + "\n" for pair in part)
    out = tmp_path / "sets.json"
    argv = [result["export"], "--data", str(tmp_path / "m30k"), "--source", "src"]
    argv += ["--target", "tgt", "--sets", "test_2017_flickr,test_2017_mscoco"]
    argv += ["--beam-width", "3", "--out", str(out)]
    record = bench.main(argv)
    assert json.loads(out.read_text())["results"] == json.loads(
        json.dumps(record["results"], default=float)
    )
    task = keras.saving.load_model(result["export"] + ".keras", compile=False)
    for name, part in parts.items():
        got = record["results"][name]
        assert got["pairs"] == len(part)
        sources, targets = [p[0] for p in part], [p[1] for p in part]
        again = score(task.translate(sources, beam_width=3), targets, "tgt")
        assert got["beam3"]["bleu_moses_lowercase"] == pytest.approx(
            again["bleu_moses_lowercase"]
        )
    with pytest.raises(SystemExit):  # never overwrites its output
        bench.main(argv)
    with pytest.raises(SystemExit, match="no test_2018_flickr"):
        bench.main([*argv[:-2], "--sets", "test_2018_flickr"])
    # --alpha: the beam's length penalty instead of the export's
    assert record["alpha"] == task.alpha == 0.6
    longer = bench.main([*argv[:-2], "--sets", "test_2017_mscoco", "--alpha", "2.0"])
    assert longer["alpha"] == 2.0
    task = keras.saving.load_model(result["export"] + ".keras", compile=False)
    task.alpha = 2.0  # before its first translation (each search is traced once)
    part = parts["test_2017_mscoco"]
    again = score(
        task.translate([p[0] for p in part], beam_width=3), [p[1] for p in part], "tgt"
    )
    assert longer["results"]["test_2017_mscoco"]["beam3"]["bleu_lowercase"] == (
        pytest.approx(again["bleu_lowercase"])
    )
    with pytest.raises(SystemExit):
        bench.main([*argv[:-2], "--alpha", "-1"])
